# ctest package.deb.system_install: install the /usr DEBs on this machine as a
# user would (dpkg -i, apt to resolve dependencies), use them: the library from
# a separate CMake project through find_package(hotswap) with the default search
# path, the command line (hotswap doctor finds the installed tool and its COMGR;
# man finds and renders its page); then remove them (dpkg -r, then --purge for
# dpkg's database) and check that nothing is left behind.
#
# This changes the system, which is only acceptable on disposable machines: it
# runs when CI is true or HOTSWAP_TEST_SYSTEM_INSTALL is true (the project's
# truthiness rule), as root, and refuses to touch an existing installation.
# Inputs: SCRATCH (package.build.usr's), LIBDIR, CONSUMER_SOURCE_DIR, GENERATOR,
#         BUILD_TYPE, VERSION, CLI (the command line's package is expected), DPKG,
#         DPKG_DEB, DPKG_QUERY, APT_GET, LDCONFIG, READELF, DPKG_SHLIBDEPS, MAN,
#         STANDIN and STANDIN_OBJECTS (optional: the ROCr stand-in of tests/standin
#         and its code objects).
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

hotswap_truthy(_opt_in "$ENV{HOTSWAP_TEST_SYSTEM_INSTALL}")
if(NOT HOTSWAP_IN_CI AND NOT _opt_in)
  message(STATUS "SKIP: installs packages into the system; runs only with CI=true or HOTSWAP_TEST_SYSTEM_INSTALL=1")
  return()
endif()
hotswap_require_tools(DPKG DPKG_DEB DPKG_QUERY APT_GET LDCONFIG READELF)
capture(_uid id -u)
if(NOT _uid STREQUAL "0")
  message(FATAL_ERROR "package.deb.system_install must run as root (dpkg -i); uid is ${_uid}")
endif()

set(_release "$ENV{HOTSWAP_PACKAGE_RELEASE}")
if(_release STREQUAL "")
  set(_release 1)
endif()
capture(_arch "${DPKG}" --print-architecture)
set(_packages hsa-hotswap hsa-hotswap-dev)
if(CLI)
  hotswap_require_tools(MAN)
  list(APPEND _packages hsa-hotswap-cli)
endif()
set(_debs)
set(_payload)
foreach(_pkg IN LISTS _packages)
  set(_deb "${SCRATCH}/packages/${_pkg}_${VERSION}-${_release}_${_arch}.deb")
  if(NOT EXISTS "${_deb}")
    message(FATAL_ERROR "missing ${_deb} (package.build.usr builds it)")
  endif()
  list(APPEND _debs "${_deb}")
  capture(_listing "${DPKG_DEB}" -c "${_deb}")
  string(REGEX MATCHALL "\\./[^\n]*[^/\n]\n" _files "${_listing}\n")
  foreach(_f IN LISTS _files)
    string(REGEX REPLACE "^\\.(.*)\n$" "\\1" _f "${_f}")
    list(APPEND _payload "${_f}")
  endforeach()
endforeach()
set(_tool "/usr/${LIBDIR}/libhsa-hotswap.so")
# Directories that belong to these packages alone, which removal must delete.
set(_own_dirs /usr/include/hotswap /usr/${LIBDIR}/cmake/hotswap
              /usr/share/doc/hsa-hotswap /usr/share/doc/hsa-hotswap-dev)
if(CLI)
  list(APPEND _own_dirs /usr/share/doc/hsa-hotswap-cli)
endif()

function(package_status pkg out_var)
  execute_process(COMMAND "${DPKG_QUERY}" -W "-f=\${db:Status-Abbrev}" "${pkg}"
                  OUTPUT_VARIABLE _s ERROR_QUIET)
  string(STRIP "${_s}" _s)
  set(${out_var} "${_s}" PARENT_SCOPE)
endfunction()

function(ldconfig_knows_tool out_var)
  capture(_cache "${LDCONFIG}" -p)
  # /lib is /usr/lib on merged-/usr systems: either spelling is the same file.
  if(_cache MATCHES "libhsa-hotswap\\.so[^\n]*=> (/usr)?/${LIBDIR}/libhsa-hotswap\\.so")
    set(${out_var} TRUE PARENT_SCOPE)
  else()
    set(${out_var} FALSE PARENT_SCOPE)
  endif()
endfunction()

# --- Preconditions: nothing of ours is installed ---------------------------------
foreach(_pkg IN LISTS _packages)
  package_status(${_pkg} _status)
  if(_status MATCHES "^.i")
    message(FATAL_ERROR "${_pkg} is already installed (${_status}); this test will not replace it")
  endif()
endforeach()
foreach(_path IN LISTS _payload _own_dirs)
  if(EXISTS "${_path}")
    message(FATAL_ERROR "${_path} exists before installation; this test will not overwrite it")
  endif()
endforeach()

# --- Install -------------------------------------------------------------------
set(_error "")
message(STATUS "dpkg -i ${_debs}")
execute_process(COMMAND "${DPKG}" -i ${_debs} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(STATUS "dpkg -i left dependencies to resolve: apt-get -f install")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env DEBIAN_FRONTEND=noninteractive
                          "${APT_GET}" -f install -y --no-install-recommends
                  RESULT_VARIABLE _rc)
endif()
foreach(_pkg IN LISTS _packages)
  package_status(${_pkg} _status)
  if(NOT _status STREQUAL "ii")
    set(_error "${_error}${_pkg} is not installed after dpkg -i (status '${_status}')\n")
  endif()
endforeach()

# --- Use it as a user would -------------------------------------------------------
if(NOT _error)
  foreach(_path IN LISTS _payload)
    if(NOT EXISTS "${_path}")
      set(_error "${_error}${_path} missing after installation\n")
    endif()
  endforeach()
  ldconfig_knows_tool(_known)
  if(NOT _known)
    set(_error "${_error}the ldconfig trigger did not put ${_tool} in ld.so's cache\n")
  endif()
endif()
if(NOT _error)
  # No CMAKE_PREFIX_PATH, no hotswap_DIR: the default search must find
  # /usr/<libdir>/cmake/hotswap.
  set(_consumer "${SCRATCH}/system-consumer")
  file(REMOVE_RECURSE "${_consumer}")
  macro(step)
    if(NOT _error)
      string(REPLACE ";" " " _step "${ARGN}")
      message(STATUS "${_step}")
      execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        set(_error "${_error}failed (${_rc}): ${_step}\n")
      endif()
    endif()
  endmacro()
  step("${CMAKE_COMMAND}" -E env --unset=CMAKE_PREFIX_PATH --unset=hotswap_DIR
       "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_consumer}" -G "${GENERATOR}"
       "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
       "-DEXPECTED_TOOL_LIBRARY=${_tool}")
  step("${CMAKE_COMMAND}" --build "${_consumer}" --config "${BUILD_TYPE}")
  foreach(_exe IN ITEMS consumer_c consumer_cxx consumer_dlopen consumer_gate)
    step("${_consumer}/${_exe}")
  endforeach()
  if(STANDIN)
    # The ROCr stand-in loads the tool as ROCr does, by the bare name that
    # HSA_TOOLS_LIB usually holds: only the installed copy can be found (through
    # ld.so's cache). No rewriter is configured, as on a system with Debian's
    # COMGR: the tool must load and let every code object through unchanged.
    step("${CMAKE_COMMAND}" -E env --unset=HSA_HOTSWAP_REWRITER --unset=LD_LIBRARY_PATH
         "HSA_TOOLS_LIB=libhsa-hotswap.so" "STANDIN_CODE_OBJECTS=${STANDIN_OBJECTS}"
         "${STANDIN}" fallback)
  else()
    message(STATUS "no ROCr stand-in in this tree: loading the installed tool through it is not tested")
  endif()
endif()
if(NOT _error AND CLI)
  # The program where the package puts it, on every PATH.
  execute_process(COMMAND /usr/bin/hotswap --version RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "hotswap --version: ${_out}")
  if(NOT _rc EQUAL 0 OR NOT _out STREQUAL "hotswap ${VERSION}")
    set(_error "${_error}hotswap --version (${_rc}): '${_out}' ${_err}, expected 'hotswap ${VERSION}'\n")
  endif()
  # doctor, with the tool named as a user names it: it finds the installed tool
  # where ROCr's dlopen finds it and beside the program, and the COMGR the tool
  # links.
  set(_doctor_env "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH --unset=HSA_HOTSWAP_REWRITER
                  --unset=HSA_HOTSWAP_DISABLE "HSA_TOOLS_LIB=libhsa-hotswap.so")
  execute_process(COMMAND ${_doctor_env} /usr/bin/hotswap doctor RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  message(STATUS "hotswap doctor (exit ${_rc}):\n${_out}${_err}")
  if(NOT _rc EQUAL 0)
    set(_error "${_error}hotswap doctor failed (${_rc})\n")
  endif()
  execute_process(COMMAND ${_doctor_env} /usr/bin/hotswap doctor --json RESULT_VARIABLE _rc OUTPUT_VARIABLE _json ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    set(_error "${_error}hotswap doctor --json failed (${_rc}): ${_err}\n")
  else()
    string(JSON _beside ERROR_VARIABLE _e GET "${_json}" tool installed_with_cli)
    string(JSON _found_by ERROR_VARIABLE _e GET "${_json}" tools_lib entries 0 found found_by)
    string(JSON _found ERROR_VARIABLE _e GET "${_json}" tools_lib entries 0 found real_path)
    string(JSON _comgr_from ERROR_VARIABLE _e GET "${_json}" comgr soname_from)
    message(STATUS "doctor: tool beside the program: ${_beside}; HSA_TOOLS_LIB entry: ${_found} "
                   "(${_found_by}); COMGR SONAME from: ${_comgr_from}")
    if(NOT _beside STREQUAL _tool)
      set(_error "${_error}hotswap doctor did not find ${_tool} beside /usr/bin/hotswap: '${_beside}'\n")
    endif()
    # By name, as ROCr's dlopen finds it: through ROCr's RUNPATH (Debian's has
    # one), ld.so's cache or a default directory, not LD_LIBRARY_PATH.
    if(NOT _found_by MATCHES "^(runpath|rpath|ld-so-cache|default-path)$" OR NOT _found STREQUAL _tool)
      set(_error "${_error}hotswap doctor: HSA_TOOLS_LIB=libhsa-hotswap.so not found as ROCr finds it: '${_found}' (${_found_by})\n")
    endif()
    if(NOT _comgr_from STREQUAL "tool")
      set(_error "${_error}hotswap doctor did not read the COMGR from the installed tool: '${_comgr_from}'\n")
    endif()
  endif()
  # The manual page, where man looks for it, and rendered without a warning.
  execute_process(COMMAND "${MAN}" -w hotswap RESULT_VARIABLE _rc OUTPUT_VARIABLE _page ERROR_VARIABLE _err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "man -w hotswap: ${_page}")
  if(NOT _rc EQUAL 0 OR NOT _page STREQUAL "/usr/share/man/man1/hotswap.1.gz")
    set(_error "${_error}man -w hotswap (${_rc}): '${_page}' ${_err}\n")
  else()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat
                            "${MAN}" --warnings hotswap
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _text ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0 OR _err OR NOT _text MATCHES "EXIT STATUS" OR NOT _text MATCHES "hotswap doctor")
      set(_error "${_error}man hotswap (${_rc}) rendered with warnings or without its sections: ${_err}\n${_text}\n")
    endif()
  endif()
endif()
if(NOT _error AND DPKG_SHLIBDEPS)
  # A package of the consumer gets its dependency on the installed hsa-hotswap
  # from dpkg's database (the package's symbols file).
  set(_pkgtree "${SCRATCH}/system-consumer-package")
  file(REMOVE_RECURSE "${_pkgtree}")
  file(MAKE_DIRECTORY "${_pkgtree}/debian/hotswap-consumer/usr/bin")
  file(WRITE "${_pkgtree}/debian/control"
       "Source: hotswap-consumer\n\nPackage: hotswap-consumer\nArchitecture: any\n")
  file(COPY "${_consumer}/consumer_c" DESTINATION "${_pkgtree}/debian/hotswap-consumer/usr/bin")
  execute_process(COMMAND "${DPKG_SHLIBDEPS}" -O -e debian/hotswap-consumer/usr/bin/consumer_c
                  WORKING_DIRECTORY "${_pkgtree}" OUTPUT_VARIABLE _deps ERROR_VARIABLE _err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "dpkg-shlibdeps of a consumer: ${_deps}")
  if(NOT _deps MATCHES "hsa-hotswap \\(>= ${VERSION}\\)")
    set(_error "${_error}dpkg-shlibdeps gave a consumer no 'hsa-hotswap (>= ${VERSION})': ${_deps}\n${_err}\n")
  endif()
endif()
if(NOT _error)
  # The programs find the installed library through the system's loader path.
  capture(_dynamic "${READELF}" -d -W "${_consumer}/consumer_c")
  if(_dynamic MATCHES "R(UN)?PATH")
    set(_error "${_error}consumer_c carries an RPATH; it must find ${_tool} through ld.so's cache\n")
  endif()
endif()

# --- Remove, whatever happened above ------------------------------------------------
set(_remove ${_packages})
list(REVERSE _remove)
list(JOIN _remove " " _remove_text)
message(STATUS "dpkg -r ${_remove_text}")
execute_process(COMMAND "${DPKG}" -r ${_remove} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  set(_error "${_error}dpkg -r failed (${_rc})\n")
endif()
# CPack's generated postrm (ldconfig) keeps a removed package in dpkg's
# database as "rc" until it is purged; that state is fine as long as the package
# has no conffiles (nothing of it stays on disk). Purge it afterwards so that
# the database is as it was.
set(_config_files_only)
foreach(_pkg IN LISTS _packages)
  package_status(${_pkg} _status)
  if(_status STREQUAL "rc")
    capture(_conffiles "${DPKG_QUERY}" -W "-f=\${Conffiles}" "${_pkg}")
    if(_conffiles)
      set(_error "${_error}${_pkg} left conffiles behind: ${_conffiles}\n")
    endif()
    list(APPEND _config_files_only ${_pkg})
  elseif(_status AND NOT _status MATCHES "^[ur]n")
    set(_error "${_error}${_pkg} is still installed after dpkg -r (status '${_status}')\n")
  endif()
endforeach()
if(_config_files_only)
  execute_process(COMMAND "${DPKG}" --purge ${_config_files_only})
endif()
foreach(_pkg IN LISTS _packages)
  package_status(${_pkg} _status)
  if(_status AND NOT _status MATCHES "^[ur]n")
    set(_error "${_error}${_pkg} is still known to dpkg after purging (status '${_status}')\n")
  endif()
endforeach()
foreach(_path IN LISTS _payload _own_dirs)
  if(EXISTS "${_path}" OR IS_SYMLINK "${_path}")
    set(_error "${_error}${_path} left behind after dpkg -r\n")
  endif()
endforeach()
ldconfig_knows_tool(_known)
if(_known)
  set(_error "${_error}ld.so's cache still lists ${_tool} after removal\n")
endif()

if(_error)
  message(FATAL_ERROR "${_error}")
endif()
list(JOIN _packages ", " _packages_text)
message(STATUS "installed, used and removed the /usr DEBs (${_packages_text}); nothing left behind")
