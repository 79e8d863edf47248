# CPACK_PROJECT_CONFIG_FILE: read by cpack once per generator.
#   - Only the formats of this layout (cmake/HotswapPackaging.cmake): a /usr DEB
#     needs Debian's multiarch libdir, a /usr RPM the RPM distributions' libdir.
#   - The Debian copyright, changelogs, notices and lintian overrides go only
#     into the DEBs, the licence files (/usr/share/licenses) only into the RPM.
#   - The licence expression and Static-Built-Using generated at build time from
#     Cargo.lock (cmake/HotswapLicenses.cmake).
list(FIND CPACK_HOTSWAP_FORMATS "${CPACK_GENERATOR}" _hotswap_format)  # (no IN_LIST: cpack sets no policies)
if(_hotswap_format EQUAL -1)
  if(CPACK_GENERATOR STREQUAL "RPM")
    set(_hint "for an RPM of the /usr layout configure with -DCMAKE_INSTALL_LIBDIR=lib64")
  else()
    set(_hint "for a DEB of the /usr layout keep the multiarch libdir GNUInstallDirs picks on Debian")
  endif()
  message(FATAL_ERROR "hotswap: this build tree packages ${CPACK_HOTSWAP_FORMATS} only "
                      "(libdir of ${CPACK_HOTSWAP_LIBRARY}); ${_hint}")
endif()

if(NOT EXISTS "${CPACK_HOTSWAP_LICENSES_FILE}")
  message(FATAL_ERROR "${CPACK_HOTSWAP_LICENSES_FILE} is missing: build the project before running cpack")
endif()
include("${CPACK_HOTSWAP_LICENSES_FILE}")

if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_COMPONENTS_ALL runtime devel hsa_hotswap_deb_doc hsa_hotswap_dev_deb_doc)
  # CPackDeb prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY (the project's description)
  # to every package's description unless it is CPack's default; each package has
  # its own synopsis as the first line of CPACK_DEBIAN_<GROUP>_DESCRIPTION.
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CPACK_DEFAULT_PACKAGE_DESCRIPTION_SUMMARY}")
  set(CPACK_HOTSWAP_STATIC_BUILT_USING "${HOTSWAP_DEB_STATIC_BUILT_USING}")
  set(CPACK_POST_BUILD_SCRIPTS "${CPACK_HOTSWAP_PACKAGING_DIR}/debian/finalize_deb.cmake")
elseif(CPACK_GENERATOR STREQUAL "RPM")
  set(CPACK_COMPONENTS_ALL runtime devel hsa_hotswap_rpm_doc)
  if(CPACK_HOTSWAP_RPM_DEBUGINFO)
    list(APPEND CPACK_COMPONENTS_ALL hsa_hotswap_debuginfo)
  endif()
  set(CPACK_RPM_PACKAGE_LICENSE "${HOTSWAP_RPM_LICENSE}")
  # Shared libraries are executable on RPM distributions (rpmlint's
  # shared-library-not-executable); Debian policy wants them 0644, which is what
  # the install rules give there.
  set(CPACK_PRE_BUILD_SCRIPTS "${CPACK_HOTSWAP_PACKAGING_DIR}/rpm/library_modes.cmake")
endif()
