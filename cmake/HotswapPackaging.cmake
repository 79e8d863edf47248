# DEB and RPM packages with CPack (`cpack` in the build tree; `-G DEB` or `-G RPM`
# for one format).
#
#   package            DEB                  RPM                 contents
#   runtime            hsa-hotswap          hsa-hotswap         libhsa-hotswap.so, copyright/licence
#   development        hsa-hotswap-dev      hsa-hotswap-devel   hotswap/hotswap.h, <libdir>/cmake/hotswap/
#
# The packages hold exactly what `cmake --install` puts under CMAKE_INSTALL_PREFIX
# (components `runtime` and `devel`), so the prefix chosen at configure time is
# the prefix in the packages: -DCMAKE_INSTALL_PREFIX=/usr for a distribution
# (GNUInstallDirs then picks the multiarch libdir, lib/x86_64-linux-gnu) or
# /opt/rocm for a ROCm installation (libdir lib). It must be set when configuring,
# not only for cpack, because GNUInstallDirs derives the libdir from it.
#
# Package-only files (Debian's copyright and changelog, the RPM licence) are in
# their own components, excluded from `cmake --install`; they always go to
# /usr/share/doc/<package> (resp. /usr/share/licenses/<package>), where dpkg and
# rpm tools look for them, whatever the prefix. (So installing one of those
# components by hand, `cmake --install --component ...`, writes to /usr/share
# unless the prefix is /usr; cpack stages them with DESTDIR.)
#
# Dependencies come from the binary: dpkg-shlibdeps and rpm's automatic requires
# read the NEEDED entries (libhsa-runtime64, libamd_comgr, libc, libgcc_s), so the
# packages name the ROCr and COMGR the library was built against. The development
# package depends on the runtime package of exactly the same version.
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

set(_pkg_runtime hsa-hotswap)
set(_pkg_deb_devel hsa-hotswap-dev)
set(_pkg_rpm_devel hsa-hotswap-devel)
set(HOTSWAP_DEB_VERSION "${PROJECT_VERSION}-${HOTSWAP_PACKAGE_RELEASE}")
set(_packaging_dir "${PROJECT_SOURCE_DIR}/packaging")

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

find_program(HOTSWAP_GZIP gzip)
if(NOT HOTSWAP_GZIP)
  message(WARNING "hotswap: gzip not found; the DEBs will lack changelog.Debian.gz")
endif()
set(_pkg_gen "${PROJECT_BINARY_DIR}/packaging")
foreach(_pkg IN ITEMS ${_pkg_runtime} ${_pkg_deb_devel})
  set(_doc_files "${_packaging_dir}/debian/copyright")
  if(HOTSWAP_GZIP)
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
  endif()
  string(REPLACE "-" "_" _component "${_pkg}-deb-doc")
  install(FILES ${_doc_files}
    DESTINATION "${_usr_share}/doc/${_pkg}"
    COMPONENT ${_component} EXCLUDE_FROM_ALL)
endforeach()
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
  DESTINATION "${_usr_share}/licenses/${_pkg_runtime}"
  COMPONENT hsa_hotswap_rpm_doc EXCLUDE_FROM_ALL)
configure_file("${_packaging_dir}/rpm/changelog.in" "${_pkg_gen}/rpm-changelog" @ONLY)

# --- CPack -----------------------------------------------------------------------
# Default generators: the formats this machine can build (dpkg-shlibdeps for DEB,
# rpmbuild for RPM); `cpack -G DEB|RPM` picks one explicitly.
find_program(HOTSWAP_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(HOTSWAP_RPMBUILD rpmbuild)
set(CPACK_GENERATOR)
if(HOTSWAP_DPKG_SHLIBDEPS)
  list(APPEND CPACK_GENERATOR DEB)
endif()
if(HOTSWAP_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()
if(NOT CPACK_GENERATOR)
  set(CPACK_GENERATOR DEB RPM)  # cpack then says which tool is missing
endif()
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
# Which components go into which package; CPackProjectConfig.cmake narrows the
# list per generator (Debian doc files for DEB, the licence for RPM).
set(CPACK_PROJECT_CONFIG_FILE "${_packaging_dir}/CPackProjectConfig.cmake")
set(CPACK_COMPONENTS_ALL runtime devel hsa_hotswap_deb_doc hsa_hotswap_dev_deb_doc hsa_hotswap_rpm_doc)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
foreach(_component IN ITEMS runtime hsa_hotswap_deb_doc hsa_hotswap_rpm_doc)
  string(TOUPPER "${_component}" _c)
  set(CPACK_COMPONENT_${_c}_GROUP lib)
endforeach()
foreach(_component IN ITEMS devel hsa_hotswap_dev_deb_doc)
  string(TOUPPER "${_component}" _c)
  set(CPACK_COMPONENT_${_c}_GROUP dev)
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
"The C header hotswap/hotswap.h (the hotswap_* C API of libhsa-hotswap.so) and
the CMake package hotswap: find_package(hotswap) provides the imported target
hotswap::hsa-hotswap and the variable hotswap_TOOL_LIBRARY, the path to give
to HSA_TOOLS_LIB.")

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
# dpkg-shlibdeps names the package of a linked library only if that package
# ships shlibs or symbols control data. Debian's libhsa-runtime64-1 and
# libamd-comgr2 do; ROCm's own packages (hsa-rocr, comgr) do not, and CPack runs
# dpkg-shlibdeps with --ignore-missing-info, which would then drop ROCr or COMGR
# from Depends without a word. Name such a package explicitly, at least the
# version built against.
set(_explicit_depends)
find_program(HOTSWAP_DPKG_QUERY dpkg-query)
if(HOTSWAP_DPKG_QUERY)
  foreach(_target IN ITEMS hsa-runtime64::hsa-runtime64 amd_comgr)
    get_target_property(_location ${_target} LOCATION)
    file(REAL_PATH "${_location}" _location)
    execute_process(COMMAND "${HOTSWAP_DPKG_QUERY}" -S "${_location}"
                    OUTPUT_VARIABLE _owner RESULT_VARIABLE _rc ERROR_QUIET)
    if(NOT _rc EQUAL 0 OR NOT _owner MATCHES "^([^:, ]+)(:[^:, ]+)?: ")
      continue()  # not from a Debian package: nothing to name
    endif()
    set(_owner_name "${CMAKE_MATCH_1}")
    set(_owner_query "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
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
if(_explicit_depends)
  list(JOIN _explicit_depends ", " CPACK_DEBIAN_LIB_PACKAGE_DEPENDS)
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_NAME "${_pkg_deb_devel}")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION "${_summary_dev}\n${_description_dev}")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_pkg_runtime} (= ${HOTSWAP_DEB_VERSION})")
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  # The library is in the dynamic linker's search path: refresh its cache with
  # the ldconfig trigger (instead of maintainer scripts).
  set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA "${_packaging_dir}/debian/triggers")
endif()

# RPM
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_RELEASE "${HOTSWAP_PACKAGE_RELEASE}")
set(CPACK_RPM_PACKAGE_LICENSE "MIT")
set(CPACK_RPM_PACKAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_PACKAGE_AUTOPROV ON)
set(CPACK_RPM_CHANGELOG_FILE "${_pkg_gen}/rpm-changelog")
set(CPACK_RPM_LIB_PACKAGE_NAME "${_pkg_runtime}")
set(CPACK_RPM_LIB_PACKAGE_SUMMARY "${_summary_lib}")
set(CPACK_RPM_LIB_PACKAGE_DESCRIPTION "${_description_lib}")
set(CPACK_RPM_DEV_PACKAGE_NAME "${_pkg_rpm_devel}")
set(CPACK_RPM_DEV_PACKAGE_SUMMARY "${_summary_dev}")
set(CPACK_RPM_DEV_PACKAGE_DESCRIPTION "${_description_dev}")
set(CPACK_RPM_DEV_PACKAGE_REQUIRES "${_pkg_runtime} = ${HOTSWAP_DEB_VERSION}")
# Directories other packages own too: list them so that ours own only their own.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  "${CMAKE_INSTALL_PREFIX}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/cmake"
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}"
  /opt /usr/share/licenses)

include(CPack)
