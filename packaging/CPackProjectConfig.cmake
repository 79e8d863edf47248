# CPACK_PROJECT_CONFIG_FILE: read by cpack once per generator. The Debian
# copyright and changelogs go only into the DEBs, the licence file (under
# /usr/share/licenses) only into the RPM; runtime and devel go into both.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_COMPONENTS_ALL runtime devel hsa_hotswap_deb_doc hsa_hotswap_dev_deb_doc)
elseif(CPACK_GENERATOR STREQUAL "RPM")
  set(CPACK_COMPONENTS_ALL runtime devel hsa_hotswap_rpm_doc)
endif()

# CPackDeb prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY (the project's description)
# to every package's description unless it is CPack's default; each package has
# its own synopsis as the first line of CPACK_DEBIAN_<GROUP>_DESCRIPTION.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CPACK_DEFAULT_PACKAGE_DESCRIPTION_SUMMARY}")
endif()
