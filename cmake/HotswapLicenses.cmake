# Licence notices of what the library statically contains, generated at build
# time from Cargo.lock (packaging/licenses/hotswap_licenses.py), so that a crate
# added to the lock file is covered without anyone editing a list:
#   <build>/licenses/THIRD-PARTY-NOTICES     every linked crate's licence files and
#                                            Rust's standard library notice
#   <build>/licenses/THIRD-PARTY-NOTICES.gz  the same, gzip -9n (Debian doc dir)
#   <build>/licenses/copyright               machine-readable Debian copyright
#   <build>/licenses/licenses.cmake          RPM License expression and Debian
#                                            Static-Built-Using, read by cpack
# `cmake --install` puts LICENSE and THIRD-PARTY-NOTICES into
# <datarootdir>/doc/hotswap (component `license`, which the DEB/RPM packages
# replace with their own doc and licence directories).
find_package(Python3 3.8 COMPONENTS Interpreter REQUIRED)
find_program(HOTSWAP_GZIP gzip REQUIRED)

set(HOTSWAP_LICENSES_DIR "${PROJECT_BINARY_DIR}/licenses")
set(HOTSWAP_LICENSES_SCRIPT "${PROJECT_SOURCE_DIR}/packaging/licenses/hotswap_licenses.py")
set(_hotswap_license_outputs
  "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES"
  "${HOTSWAP_LICENSES_DIR}/copyright"
  "${HOTSWAP_LICENSES_DIR}/licenses.cmake"
  "${HOTSWAP_LICENSES_DIR}/crates.json")
# The archive: its objects show which crates (and which of the standard
# library's) are really linked; the script fails on one without a notice.
add_custom_command(
  OUTPUT ${_hotswap_license_outputs}
  COMMAND "${Python3_EXECUTABLE}" "${HOTSWAP_LICENSES_SCRIPT}" generate
          --cargo "${HOTSWAP_CARGO}" --rustc "${HOTSWAP_RUSTC}"
          --manifest "${PROJECT_SOURCE_DIR}/Cargo.toml"
          --archive "$<TARGET_FILE:hsa_hotswap-static>"
          --project-licence "${PROJECT_SOURCE_DIR}/LICENSE"
          --out "${HOTSWAP_LICENSES_DIR}"
  DEPENDS "${HOTSWAP_LICENSES_SCRIPT}" "${PROJECT_SOURCE_DIR}/Cargo.lock"
          "${PROJECT_SOURCE_DIR}/LICENSE" "$<TARGET_FILE:hsa_hotswap-static>"
  COMMENT "Licence notices of the linked crates (from Cargo.lock)"
  VERBATIM)
add_custom_command(
  OUTPUT "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES.gz"
  COMMAND "${HOTSWAP_GZIP}" -9nkf "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES"
  DEPENDS "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES"
  VERBATIM)
add_custom_target(hotswap-licenses ALL
  DEPENDS ${_hotswap_license_outputs} "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES.gz")
add_dependencies(hotswap-licenses hsa-hotswap)

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES"
  DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/hotswap"
  COMPONENT license)
