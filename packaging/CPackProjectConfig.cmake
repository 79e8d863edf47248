# CPACK_PROJECT_CONFIG_FILE: read by cpack once per generator.
#   - Only the formats of this layout (cmake/HotswapPackaging.cmake): a /usr DEB
#     needs Debian's multiarch libdir, a /usr RPM the RPM distributions' libdir.
#   - The Debian copyright, changelogs, notices and lintian overrides go only
#     into the DEBs, the licence files (/usr/share/licenses) and the debuginfo
#     packages only into the RPMs.
#   - The licence expressions and Static-Built-Using generated at build time
#     from Cargo.lock (cmake/HotswapLicenses.cmake), one per package with Rust
#     code: hsa-hotswap (the library) and hsa-hotswap-cli (the program).
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

foreach(_file IN LISTS CPACK_HOTSWAP_LICENSES_FILES)
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "${_file} is missing: build the project before running cpack")
  endif()
  include("${_file}")   # HOTSWAP_* (the library), HOTSWAP_CLI_* (the program)
endforeach()

if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_COMPONENTS_ALL ${CPACK_HOTSWAP_DEB_COMPONENTS})
  # CPackDeb prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY (the project's description)
  # to every package's description unless it is CPack's default; each package has
  # its own synopsis as the first line of CPACK_DEBIAN_<GROUP>_DESCRIPTION.
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CPACK_DEFAULT_PACKAGE_DESCRIPTION_SUMMARY}")
  # Static-Built-Using of each package (finalize_deb.cmake).
  set("CPACK_HOTSWAP_STATIC_BUILT_USING_${CPACK_HOTSWAP_RUNTIME_PACKAGE}" "${HOTSWAP_DEB_STATIC_BUILT_USING}")
  set("CPACK_HOTSWAP_STATIC_BUILT_USING_${CPACK_HOTSWAP_CLI_PACKAGE}" "${HOTSWAP_CLI_DEB_STATIC_BUILT_USING}")
  set(CPACK_POST_BUILD_SCRIPTS "${CPACK_HOTSWAP_PACKAGING_DIR}/debian/finalize_deb.cmake")
elseif(CPACK_GENERATOR STREQUAL "RPM")
  set(CPACK_COMPONENTS_ALL ${CPACK_HOTSWAP_RPM_COMPONENTS})
  # The License tag of each package: the program's (and its debuginfo's) covers
  # the crates it links; the other packages have the library's. CPack writes one
  # License for all packages, so rpm chooses by package name when it reads the
  # spec (Lua; the expressions are SPDX: no quote, brace or percent sign).
  set(CPACK_RPM_PACKAGE_LICENSE "${HOTSWAP_RPM_LICENSE}")
  if(HOTSWAP_CLI_RPM_LICENSE)
    foreach(_expression IN ITEMS "${HOTSWAP_RPM_LICENSE}" "${HOTSWAP_CLI_RPM_LICENSE}")
      if(NOT _expression MATCHES "^[A-Za-z0-9.+() -]+$")
        message(FATAL_ERROR "hotswap: unexpected character in the licence expression '${_expression}'")
      endif()
    endforeach()
    set(CPACK_RPM_PACKAGE_LICENSE "%{lua:local cli = {['${CPACK_HOTSWAP_CLI_PACKAGE}'] = true, \
['${CPACK_HOTSWAP_CLI_PACKAGE}-debuginfo'] = true}; \
if cli[rpm.expand('%{name}')] then print('${HOTSWAP_CLI_RPM_LICENSE}') \
else print('${HOTSWAP_RPM_LICENSE}') end}")
  endif()
  # Shared libraries are executable on RPM distributions (rpmlint's
  # shared-library-not-executable); Debian policy wants them 0644, which is what
  # the install rules give there.
  set(CPACK_PRE_BUILD_SCRIPTS "${CPACK_HOTSWAP_PACKAGING_DIR}/rpm/library_modes.cmake")
endif()
