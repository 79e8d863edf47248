# DEB and RPM packages with CPack (`cpack` in the build tree).
#
#   package            DEB                  RPM                 contents
#   runtime            hsa-hotswap          hsa-hotswap         libhsa-hotswap.so, licence notices
#   development        hsa-hotswap-dev      hsa-hotswap-devel   hotswap/hotswap.h, hotswap_gate.h,
#                                                               <libdir>/cmake/hotswap/
#   command line       hsa-hotswap-cli      hsa-hotswap-cli     bin/hotswap, man1/hotswap.1.gz,
#   (HOTSWAP_BUILD_CLI)                                         licence notices
#   debug information  -                    hsa-hotswap-debuginfo, hsa-hotswap-cli-debuginfo
#                                           (RelWithDebInfo and Debug builds)
#
# The packages hold exactly what `cmake --install` puts under CMAKE_INSTALL_PREFIX
# (components `runtime`, `devel` and `cli`), so the prefix and libdir chosen at
# configure time are those of the packages. Three layouts:
#   -DCMAKE_INSTALL_PREFIX=/usr                            Debian: DEB only, libdir
#        lib/<multiarch> (GNUInstallDirs' choice on Debian), Multi-Arch: same
#   -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib64  RPM distributions: RPM
#        only, libdir %{_libdir}
#   -DCMAKE_INSTALL_PREFIX=/opt/rocm                       ROCm: DEB and RPM, libdir lib
# A /usr package of the other family would put the library where that
# distribution does not look, so cpack refuses it (CPackProjectConfig.cmake).
# Configure with -DHOTSWAP_BUILD_TESTS=OFF: the tests' tools are not needed.
#
# Package-only files live in components excluded from `cmake --install`, under
# /usr/share whatever the prefix: Debian's copyright, changelog, notices and
# lintian overrides (/usr/share/doc/<pkg>, /usr/share/lintian/overrides), the RPM
# licence files (/usr/share/licenses/<pkg>). Each package that ships Rust code
# (runtime, command line) has the notices of exactly the crates its binary
# links (cmake/HotswapLicenses.cmake).
#
# Dependencies come from the binary: dpkg-shlibdeps and rpm's automatic requires
# read the NEEDED entries (libhsa-runtime64, libamd_comgr, libc, libgcc_s). The
# development package depends on the runtime package of exactly the same version
# (RPM: of the same architecture) and on the CMake packages hsa-runtime64 and
# amd_comgr, which hotswap-config.cmake finds with find_dependency.
#
# The command line has a package of its own: a Multi-Arch: same package (the
# runtime in the Debian layout) cannot ship /usr/bin/hotswap, which the
# co-installed packages of two architectures would both contain. It is
# Multi-Arch: foreign (what it does does not depend on its architecture) and
# only Recommends the runtime package of the same version: it contains the
# tool's code itself (statically) and needs no shared library but libc and
# libgcc_s; only `hotswap doctor` looks at the installed tool, ROCr and COMGR
# (dlopen by name), and it reports their absence as a finding. inspect and
# rewrite work on any machine, without ROCm.
#
# Consumers of the C API: the runtime DEB ships a symbols file
# (packaging/debian/hsa-hotswap.symbols), so dpkg-shlibdeps gives a program
# linked against libhsa-hotswap.so the dependency "hsa-hotswap (>= <version that
# introduced the newest symbol it uses>)", although the SONAME carries no version
# (ROCr and CLR match the file name, so it cannot). RPM: the automatic
# "libhsa-hotswap.so()(64bit)" provide. A runtime that only asks the gate's
# questions (CLR) includes hotswap/hotswap_gate.h and links nothing.
#
# Version: PROJECT_VERSION, release number from HOTSWAP_PACKAGE_RELEASE (read
# from the environment at configure time, default 1): 0.1.0-1.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()

set(HOTSWAP_PACKAGE_MAINTAINER "hotswap maintainers <hotswap@rocm.invalid>" CACHE STRING
  "Maintainer field of the DEB and RPM packages (Name <address>)")

set(HOTSWAP_PACKAGE_RELEASE "$ENV{HOTSWAP_PACKAGE_RELEASE}")
if(HOTSWAP_PACKAGE_RELEASE STREQUAL "")
  set(HOTSWAP_PACKAGE_RELEASE 1)
endif()
if(NOT HOTSWAP_PACKAGE_RELEASE MATCHES "^[0-9][A-Za-z0-9.+~]*$")
  message(FATAL_ERROR "HOTSWAP_PACKAGE_RELEASE='${HOTSWAP_PACKAGE_RELEASE}': expected a release number such as 1 or 2")
endif()
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr/local")
  message(STATUS "hotswap: CMAKE_INSTALL_PREFIX is /usr/local; for packages configure with "
                 "-DCMAKE_INSTALL_PREFIX=/usr (distribution) or /opt/rocm (ROCm)")
endif()

# --- Layout ------------------------------------------------------------------------
set(HOTSWAP_MULTIARCH_LIBDIR FALSE)
if(CMAKE_LIBRARY_ARCHITECTURE AND CMAKE_INSTALL_LIBDIR STREQUAL "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  set(HOTSWAP_MULTIARCH_LIBDIR TRUE)
endif()
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr" AND HOTSWAP_MULTIARCH_LIBDIR)
  set(_formats DEB)          # Debian's layout
elseif(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_formats RPM)          # /usr/lib64 (or /usr/lib): an RPM distribution's layout
else()
  set(_formats DEB RPM)      # a self-contained prefix such as /opt/rocm
endif()

set(_pkg_runtime hsa-hotswap)
set(_pkg_deb_devel hsa-hotswap-dev)
set(_pkg_rpm_devel hsa-hotswap-devel)
set(_pkg_cli hsa-hotswap-cli)
if(TARGET hotswap-cli)
  set(HOTSWAP_PACKAGE_CLI TRUE)
  set(_deb_packages ${_pkg_runtime} ${_pkg_deb_devel} ${_pkg_cli})
else()
  set(HOTSWAP_PACKAGE_CLI FALSE)
  set(_deb_packages ${_pkg_runtime} ${_pkg_deb_devel})
endif()
set(HOTSWAP_DEB_VERSION "${PROJECT_VERSION}-${HOTSWAP_PACKAGE_RELEASE}")
set(_packaging_dir "${PROJECT_SOURCE_DIR}/packaging")
set(_lib_path "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libhsa-hotswap.so")

# --- Package-only files ----------------------------------------------------------
# /usr/share/... relative to the prefix when the prefix is /usr (so a plain
# component install into a staging dir stays inside it), absolute otherwise.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_usr_share "${CMAKE_INSTALL_DATAROOTDIR}")
else()
  set(_usr_share "/usr/share")
endif()

# Reproducible dates (SOURCE_DATE_EPOCH is honoured by string(TIMESTAMP)).
string(TIMESTAMP HOTSWAP_PACKAGE_DATE_RFC2822 "%a, %d %b %Y %H:%M:%S +0000" UTC)
string(TIMESTAMP HOTSWAP_PACKAGE_DATE_RPM "%a %b %d %Y" UTC)
set(CPACK_PACKAGE_CONTACT "${HOTSWAP_PACKAGE_MAINTAINER}")

set(_pkg_gen "${PROJECT_BINARY_DIR}/packaging")
foreach(_pkg IN LISTS _deb_packages)
  string(REPLACE "-" "_" _component "${_pkg}-deb-doc")
  if(_pkg STREQUAL _pkg_deb_devel)
    set(_doc_files "${_packaging_dir}/debian/copyright")  # our own files only
  else()
    # The library and the program contain third-party code: the copyright
    # generated for each names all of its own.
    set(_doc_files "${HOTSWAP_LICENSES_DIR}/${_pkg}/copyright"
                   "${HOTSWAP_LICENSES_DIR}/${_pkg}/THIRD-PARTY-NOTICES.gz")
  endif()
  set(HOTSWAP_DEB_PACKAGE "${_pkg}")
  configure_file("${_packaging_dir}/debian/changelog.in" "${_pkg_gen}/${_pkg}/changelog.Debian" @ONLY)
  # gzip -9n: maximum compression, no name or time stamp (what lintian expects).
  execute_process(COMMAND "${HOTSWAP_GZIP}" -9nc "${_pkg_gen}/${_pkg}/changelog.Debian"
                  OUTPUT_FILE "${_pkg_gen}/${_pkg}/changelog.Debian.gz"
                  RESULT_VARIABLE _gzip_result)
  if(NOT _gzip_result EQUAL 0)
    message(FATAL_ERROR "gzip failed on ${_pkg_gen}/${_pkg}/changelog.Debian")
  endif()
  list(APPEND _doc_files "${_pkg_gen}/${_pkg}/changelog.Debian.gz")
  install(FILES ${_doc_files}
    DESTINATION "${_usr_share}/doc/${_pkg}"
    COMPONENT ${_component} EXCLUDE_FROM_ALL)
  # lintian overrides, shipped where lintian reads them, each with its reason:
  # the package's own, plus those of the /opt layout.
  file(READ "${_packaging_dir}/lintian/${_pkg}.overrides" _overrides)
  if(CMAKE_INSTALL_PREFIX MATCHES "^/opt(/|$)")
    file(READ "${_packaging_dir}/lintian/opt.overrides" _opt_overrides)
    string(APPEND _overrides "\n${_opt_overrides}")
  endif()
  file(WRITE "${_pkg_gen}/${_pkg}/lintian/${_pkg}" "${_overrides}")
  install(FILES "${_pkg_gen}/${_pkg}/lintian/${_pkg}"
    DESTINATION "${_usr_share}/lintian/overrides"
    COMPONENT ${_component} EXCLUDE_FROM_ALL)
endforeach()
foreach(_pkg IN ITEMS ${_pkg_runtime} ${_pkg_cli})
  if(_pkg STREQUAL _pkg_cli AND NOT HOTSWAP_PACKAGE_CLI)
    continue()
  endif()
  string(REPLACE "-" "_" _component "${_pkg}-rpm-doc")
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${HOTSWAP_LICENSES_DIR}/${_pkg}/THIRD-PARTY-NOTICES"
    DESTINATION "${_usr_share}/licenses/${_pkg}"
    COMPONENT ${_component} EXCLUDE_FROM_ALL)
endforeach()
configure_file("${_packaging_dir}/rpm/changelog.in" "${_pkg_gen}/rpm-changelog" @ONLY)

# --- CPack -----------------------------------------------------------------------
find_program(HOTSWAP_DPKG_DEB dpkg-deb)
set(CPACK_GENERATOR ${_formats})
set(CPACK_PACKAGE_NAME "${_pkg_runtime}")
set(CPACK_PACKAGE_VENDOR "The hotswap authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# DESTDIR staging, so that the absolute /usr/share/... destinations above land
# inside the package when the prefix is /opt/rocm.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGE_RELOCATABLE OFF)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)
# Read by cpack (CPackProjectConfig.cmake and the scripts it names).
set(CPACK_PROJECT_CONFIG_FILE "${_packaging_dir}/CPackProjectConfig.cmake")
set(CPACK_HOTSWAP_FORMATS "${_formats}")
set(CPACK_HOTSWAP_PACKAGING_DIR "${_packaging_dir}")
# The licence expression and Static-Built-Using of each package with Rust code.
set(CPACK_HOTSWAP_LICENSES_FILES "${HOTSWAP_LICENSES_DIR}/${_pkg_runtime}/licenses.cmake")
set(CPACK_HOTSWAP_DPKG_DEB "${HOTSWAP_DPKG_DEB}")
set(CPACK_HOTSWAP_LIBRARY "${_lib_path}")
set(CPACK_HOTSWAP_RUNTIME_PACKAGE "${_pkg_runtime}")
set(CPACK_HOTSWAP_CLI_PACKAGE "${_pkg_cli}")
# Multi-Arch (finalize_deb.cmake): `same` for the library and its development
# files where the libdir is per architecture; `foreign` for the command line.
set(CPACK_HOTSWAP_MULTIARCH_SAME)
if(HOTSWAP_MULTIARCH_LIBDIR)
  set(CPACK_HOTSWAP_MULTIARCH_SAME ${_pkg_runtime} ${_pkg_deb_devel})
endif()
set(CPACK_HOTSWAP_MULTIARCH_FOREIGN ${_pkg_cli})
# Components per format (CPackProjectConfig.cmake) and the package (group) of each.
set(CPACK_HOTSWAP_DEB_COMPONENTS runtime devel hsa_hotswap_deb_doc hsa_hotswap_dev_deb_doc)
set(CPACK_HOTSWAP_RPM_COMPONENTS runtime devel hsa_hotswap_rpm_doc)
set(_groups "lib:runtime,hsa_hotswap_deb_doc,hsa_hotswap_rpm_doc" "dev:devel,hsa_hotswap_dev_deb_doc"
            "dbg:hsa_hotswap_debuginfo")
if(HOTSWAP_PACKAGE_CLI)
  list(APPEND CPACK_HOTSWAP_LICENSES_FILES "${HOTSWAP_LICENSES_DIR}/${_pkg_cli}/licenses.cmake")
  list(APPEND CPACK_HOTSWAP_DEB_COMPONENTS cli hsa_hotswap_cli_deb_doc)
  list(APPEND CPACK_HOTSWAP_RPM_COMPONENTS cli hsa_hotswap_cli_rpm_doc)
  list(APPEND _groups "cli:cli,hsa_hotswap_cli_deb_doc,hsa_hotswap_cli_rpm_doc"
                      "clidbg:hsa_hotswap_cli_debuginfo")
endif()
set(CPACK_COMPONENTS_ALL ${CPACK_HOTSWAP_DEB_COMPONENTS} ${CPACK_HOTSWAP_RPM_COMPONENTS})
list(REMOVE_DUPLICATES CPACK_COMPONENTS_ALL)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
foreach(_group IN LISTS _groups)
  string(REPLACE ":" ";" _group "${_group}")
  list(GET _group 0 _name)
  list(GET _group 1 _components)
  string(REPLACE "," ";" _components "${_components}")
  foreach(_component IN LISTS _components)
    string(TOUPPER "${_component}" _c)
    set(CPACK_COMPONENT_${_c}_GROUP ${_name})
  endforeach()
endforeach()
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)

set(_summary_lib "HSA tools library that lets gfx1250 A0 GPUs run B0 code objects")
set(_description_lib
"libhsa-hotswap.so is an HSA tools library: the ROCm runtime (ROCr) loads it
when HSA_TOOLS_LIB names it. On a gfx1250 GPU of the A0 stepping it rewrites
code objects built for B0 through the code object manager (COMGR) while ROCr
loads them. On every other GPU, and on any failure, applications see exactly
what they would see without it.")
set(_summary_dev "development files for the hotswap HSA tools library")
set(_description_dev
"The C headers hotswap/hotswap.h (the hotswap_* C API of libhsa-hotswap.so) and
hotswap/hotswap_gate.h (header-only constants for runtimes that gate on the
tool), and the CMake package hotswap: find_package(hotswap) provides the
imported targets hotswap::hsa-hotswap and hotswap::gate and the variable
hotswap_TOOL_LIBRARY, the path to give to HSA_TOOLS_LIB.")
set(_summary_cli "inspect and rewrite gfx1250 code objects for A0 GPUs, diagnose hotswap")
set(_description_cli
"The hotswap command of the hotswap HSA tools library. hotswap inspect lists
the code objects in files (bare code objects, offload bundles, compressed
bundles, host binaries) and, for gfx125x objects, every function's A0 sites;
hotswap rewrite applies the native B0-to-A0 rewrite to a code object; hotswap
doctor explains what the tool would do if an application started now (the
GPUs, the ROCr, COMGR and rewriters the loader finds, HSA_TOOLS_LIB). Every
command prints JSON with --json. The program contains the tool's code; it
needs neither a GPU nor ROCm, and doctor reports on those installed.")

# The development packages of ROCr and COMGR that provide the CMake packages
# hotswap-config.cmake finds (find_dependency), and the runtime packages without
# shlibs/symbols data (see below). Asked of dpkg, when the files came from one.
set(_explicit_depends)
set(_dev_depends)
find_program(HOTSWAP_DPKG_QUERY dpkg-query)
function(_hotswap_dpkg_owner path out_name out_query)
  set(${out_name} "" PARENT_SCOPE)
  execute_process(COMMAND "${HOTSWAP_DPKG_QUERY}" -S "${path}"
                  OUTPUT_VARIABLE _owner RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _owner MATCHES "^([^:, ]+)(:[^:, ]+)?: ")
    set(${out_name} "${CMAKE_MATCH_1}" PARENT_SCOPE)
    set(${out_query} "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" PARENT_SCOPE)
  endif()
endfunction()
if(HOTSWAP_DPKG_QUERY)
  foreach(_dep IN ITEMS hsa-runtime64 amd_comgr)
    file(GLOB _config "${${_dep}_DIR}/${_dep}-config.cmake" "${${_dep}_DIR}/${_dep}Config.cmake")
    if(_config)
      list(GET _config 0 _config)
      file(REAL_PATH "${_config}" _config)
      _hotswap_dpkg_owner("${_config}" _owner _owner_query)
      if(_owner)
        list(APPEND _dev_depends "${_owner}")
      endif()
    endif()
  endforeach()
  # dpkg-shlibdeps names the package of a linked library only if that package
  # ships shlibs or symbols control data. Debian's libhsa-runtime64-1 and
  # libamd-comgr2 do; ROCm's own packages (hsa-rocr, comgr) do not, and CPack runs
  # dpkg-shlibdeps with --ignore-missing-info, which would then drop ROCr or COMGR
  # from Depends without a word. Name such a package explicitly, at least the
  # version built against.
  foreach(_target IN ITEMS hsa-runtime64::hsa-runtime64 amd_comgr)
    get_target_property(_location ${_target} LOCATION)
    file(REAL_PATH "${_location}" _location)
    _hotswap_dpkg_owner("${_location}" _owner_name _owner_query)
    if(NOT _owner_name)
      continue()  # not from a Debian package: nothing to name
    endif()
    execute_process(COMMAND "${HOTSWAP_DPKG_QUERY}" --control-path "${_owner_query}" shlibs
                    OUTPUT_VARIABLE _shlibs ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${HOTSWAP_DPKG_QUERY}" --control-path "${_owner_query}" symbols
                    OUTPUT_VARIABLE _symbols ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_shlibs OR _symbols)
      continue()  # dpkg-shlibdeps will name it, with the right version
    endif()
    execute_process(COMMAND "${HOTSWAP_DPKG_QUERY}" -W "-f=\${Version}" "${_owner_query}"
                    OUTPUT_VARIABLE _owner_version ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    message(STATUS "hotswap: ${_owner_name} has no shlibs/symbols data; the DEB depends on it explicitly")
    list(APPEND _explicit_depends "${_owner_name} (>= ${_owner_version})")
  endforeach()
endif()

# DEB
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE "${HOTSWAP_PACKAGE_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PROJECT_HOMEPAGE_URL}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_LIB_PACKAGE_NAME "${_pkg_runtime}")
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DESCRIPTION "${_summary_lib}\n${_description_lib}")
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS ON)
if(_explicit_depends)
  list(JOIN _explicit_depends ", " CPACK_DEBIAN_LIB_PACKAGE_DEPENDS)
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_NAME "${_pkg_deb_devel}")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION "${_summary_dev}\n${_description_dev}")
list(JOIN _dev_depends ", " _dev_depends_text)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_pkg_runtime} (= ${HOTSWAP_DEB_VERSION})")
if(_dev_depends_text)
  string(APPEND CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ", ${_dev_depends_text}")
endif()
# Control files: the symbols file (for consumers' dpkg-shlibdeps) and, where the
# library is in the dynamic linker's search path, the ldconfig trigger. CPack
# also writes postinst/postrm scripts calling ldconfig there; the post-build
# step (packaging/debian/finalize_deb.cmake) removes them, so the trigger alone
# refreshes the cache, and adds the fields CPack cannot write (Multi-Arch,
# Static-Built-Using).
configure_file("${_packaging_dir}/debian/hsa-hotswap.symbols" "${_pkg_gen}/deb-control/symbols" COPYONLY)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA "${_pkg_gen}/deb-control/symbols")
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  list(APPEND CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA "${_packaging_dir}/debian/triggers")
endif()
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The command line: dpkg-shlibdeps names libc6 and libgcc-s1; the runtime
# package is recommended, not required (see the top of this file).
set(CPACK_DEBIAN_CLI_PACKAGE_NAME "${_pkg_cli}")
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_DESCRIPTION "${_summary_cli}\n${_description_cli}")
set(CPACK_DEBIAN_CLI_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "${_pkg_runtime} (= ${HOTSWAP_DEB_VERSION})")

# RPM
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_RELEASE "${HOTSWAP_PACKAGE_RELEASE}")
set(CPACK_RPM_PACKAGE_LICENSE "MIT")  # replaced at cpack time by the generated expressions
set(CPACK_RPM_PACKAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_PACKAGE_AUTOPROV ON)
set(CPACK_RPM_CHANGELOG_FILE "${_pkg_gen}/rpm-changelog")
set(CPACK_RPM_LIB_PACKAGE_NAME "${_pkg_runtime}")
set(CPACK_RPM_LIB_PACKAGE_SUMMARY "${_summary_lib}")
set(CPACK_RPM_LIB_PACKAGE_DESCRIPTION "${_description_lib}")
set(CPACK_RPM_DEV_PACKAGE_NAME "${_pkg_rpm_devel}")
set(CPACK_RPM_DEV_PACKAGE_SUMMARY "Development files for the hotswap HSA tools library")
set(CPACK_RPM_DEV_PACKAGE_DESCRIPTION "${_description_dev}")
# %{?_isa}: the runtime package of the same architecture (Fedora's guidelines);
# cmake(<pkg>): whatever provides the CMake packages find_dependency looks for.
set(CPACK_RPM_DEV_PACKAGE_REQUIRES
  "${_pkg_runtime}%{?_isa} = ${HOTSWAP_DEB_VERSION}, cmake(hsa-runtime64), cmake(amd_comgr)")
set(CPACK_RPM_CLI_PACKAGE_NAME "${_pkg_cli}")
set(CPACK_RPM_CLI_PACKAGE_SUMMARY "Inspect and rewrite gfx1250 code objects for A0 GPUs, diagnose hotswap")
set(CPACK_RPM_CLI_PACKAGE_DESCRIPTION "${_description_cli}")
set(CPACK_RPM_CLI_PACKAGE_GROUP "Development/Tools")
# Debug information: hsa-hotswap-debuginfo holds the library's debug sections
# (objcopy --only-keep-debug) as /usr/lib/debug/.build-id/<xx>/<rest>.debug, where
# gdb and debuginfod clients look them up by build ID, and hsa-hotswap-cli-debuginfo
# those of bin/hotswap (one debuginfo package per package, as rpmbuild makes
# them); the packages' binaries are stripped. (CPack's own
# CPACK_RPM_DEBUGINFO_PACKAGE is not used: its debugedit step only works when
# the source directory's path is longer than the /usr/src/debug/... path it
# rewrites it to, which a checkout cannot promise.)
if(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Debug)$" AND "RPM" IN_LIST _formats)
  set(HOTSWAP_RPM_DEBUGINFO ON)
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(_debug_destination "lib/debug/.build-id")
  else()
    set(_debug_destination "/usr/lib/debug/.build-id")
  endif()
  set(_debug_dir "${_pkg_gen}/debuginfo")
  add_custom_command(TARGET hsa-hotswap POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DBINARY=$<TARGET_FILE:hsa-hotswap>" "-DOUT=${_debug_dir}"
            "-DOBJCOPY=${CMAKE_OBJCOPY}" "-DREADELF=${CMAKE_READELF}"
            -P "${_packaging_dir}/rpm/split_debug.cmake"
    VERBATIM)
  install(DIRECTORY "${_debug_dir}/" DESTINATION "${_debug_destination}"
    COMPONENT hsa_hotswap_debuginfo EXCLUDE_FROM_ALL)
  list(APPEND CPACK_HOTSWAP_RPM_COMPONENTS hsa_hotswap_debuginfo)
  if(HOTSWAP_PACKAGE_CLI)
    # bin/hotswap is built by cargo (an imported target): split once it changes.
    set(_cli_debug_dir "${_pkg_gen}/debuginfo-cli")
    add_custom_command(
      OUTPUT "${_cli_debug_dir}.stamp"
      COMMAND "${CMAKE_COMMAND}" "-DBINARY=$<TARGET_FILE:hotswap-cli>" "-DOUT=${_cli_debug_dir}"
              "-DOBJCOPY=${CMAKE_OBJCOPY}" "-DREADELF=${CMAKE_READELF}"
              -P "${_packaging_dir}/rpm/split_debug.cmake"
      COMMAND "${CMAKE_COMMAND}" -E touch "${_cli_debug_dir}.stamp"
      DEPENDS "$<TARGET_FILE:hotswap-cli>" "${_packaging_dir}/rpm/split_debug.cmake"
      COMMENT "Debug information of bin/hotswap for ${_pkg_cli}-debuginfo"
      VERBATIM)
    add_custom_target(hotswap-cli-debuginfo ALL DEPENDS "${_cli_debug_dir}.stamp")
    add_dependencies(hotswap-cli-debuginfo ${_hotswap_cli_target})
    install(DIRECTORY "${_cli_debug_dir}/" DESTINATION "${_debug_destination}"
      COMPONENT hsa_hotswap_cli_debuginfo EXCLUDE_FROM_ALL)
    list(APPEND CPACK_HOTSWAP_RPM_COMPONENTS hsa_hotswap_cli_debuginfo)
  endif()
else()
  set(HOTSWAP_RPM_DEBUGINFO OFF)
  if("RPM" IN_LIST _formats)
    message(STATUS "hotswap: no -debuginfo RPM for build type '${CMAKE_BUILD_TYPE}' (no debug information)")
  endif()
endif()
set(CPACK_RPM_DBG_PACKAGE_NAME "${_pkg_runtime}-debuginfo")
set(CPACK_RPM_DBG_PACKAGE_SUMMARY "Debug information for libhsa-hotswap.so")
set(CPACK_RPM_DBG_PACKAGE_DESCRIPTION
"The debug sections of libhsa-hotswap.so, found by debuggers through the
library's build ID.")
set(CPACK_RPM_DBG_PACKAGE_REQUIRES "${_pkg_runtime}%{?_isa} = ${HOTSWAP_DEB_VERSION}")
set(CPACK_RPM_DBG_PACKAGE_GROUP "Development/Debug")
set(CPACK_RPM_DBG_PACKAGE_AUTOREQ OFF)
set(CPACK_RPM_CLIDBG_PACKAGE_NAME "${_pkg_cli}-debuginfo")
set(CPACK_RPM_CLIDBG_PACKAGE_SUMMARY "Debug information for the hotswap program")
set(CPACK_RPM_CLIDBG_PACKAGE_DESCRIPTION
"The debug sections of the hotswap program (package hsa-hotswap-cli), found
by debuggers through the program's build ID.")
set(CPACK_RPM_CLIDBG_PACKAGE_REQUIRES "${_pkg_cli}%{?_isa} = ${HOTSWAP_DEB_VERSION}")
set(CPACK_RPM_CLIDBG_PACKAGE_GROUP "Development/Debug")
set(CPACK_RPM_CLIDBG_PACKAGE_AUTOREQ OFF)
# The debuginfo packages provide the build-ID paths themselves; rpmbuild's own
# build-ID links (/usr/lib/.build-id) would duplicate them.
# hsa-hotswap-cli recommends the runtime package of the same version and
# architecture (see the top of this file); CPack has no variable for a weak
# dependency, so a line of every spec (CPack writes one per package) expands
# to the tag in that package's spec only. (Lua, with single quotes: CPack
# writes this value into CPackConfig.cmake without escaping double quotes.)
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none
%{lua:if rpm.expand('%{name}') == '${_pkg_cli}' then \
print(rpm.expand('Recommends: ${_pkg_runtime}%{?_isa} = ${HOTSWAP_DEB_VERSION}')) end}")
set(CPACK_RPM_LIB_PACKAGE_GROUP "System Environment/Libraries")
set(CPACK_RPM_DEV_PACKAGE_GROUP "Development/Libraries")
# Directories other packages own too: list them so that ours own only their own.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  "${CMAKE_INSTALL_PREFIX}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/cmake"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1"
  /opt /usr/share/licenses /usr/lib/debug /usr/src/debug)

include(CPack)
