# Licence notices of what is shipped, generated at build time from Cargo.lock
# (packaging/licenses/hotswap_licenses.py), so that a crate added to the lock
# file is covered without anyone editing a list. One set per artifact, each
# covering exactly the crates that artifact links:
#   <build>/licenses/                    the install tree: libhsa-hotswap.so and,
#                                        when built, bin/hotswap
#   <build>/licenses/hsa-hotswap/        the runtime package: libhsa-hotswap.so
#   <build>/licenses/hsa-hotswap-cli/    the command-line package: bin/hotswap
# each with
#   THIRD-PARTY-NOTICES     every linked crate's licence files and Rust's
#                           standard library notice
#   THIRD-PARTY-NOTICES.gz  the same, gzip -9n (Debian doc dir)
#   copyright               machine-readable Debian copyright of that package
#   licenses.cmake          RPM License expression and Debian Static-Built-Using,
#                           read by cpack (variables <prefix>_RPM_LICENSE and
#                           <prefix>_DEB_STATIC_BUILT_USING)
#   crates.json             what it was generated from
# `cmake --install` puts LICENSE and the install tree's THIRD-PARTY-NOTICES into
# <datarootdir>/doc/hotswap (component `license`, which the DEB/RPM packages
# replace with their own doc and licence directories).
find_package(Python3 3.8 COMPONENTS Interpreter REQUIRED)
find_program(HOTSWAP_GZIP gzip REQUIRED)

set(HOTSWAP_LICENSES_DIR "${PROJECT_BINARY_DIR}/licenses")
set(HOTSWAP_LICENSES_SCRIPT "${PROJECT_SOURCE_DIR}/packaging/licenses/hotswap_licenses.py")
add_custom_target(hotswap-licenses ALL)

# hotswap_licence_notices(<dir> SUBJECT <text> PACKAGE <name> PREFIX <variable prefix>
#                         MEMBERS <workspace crate>... [ARCHIVE <Rust archive>] [DEPENDS <target>...])
# With ARCHIVE, the objects in the archive show which crates (and which of the
# standard library's) are really linked, and the script fails on one without
# a notice.
function(hotswap_licence_notices dir)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SUBJECT;PACKAGE;PREFIX;ARCHIVE" "MEMBERS;DEPENDS")
  set(_outputs "${dir}/THIRD-PARTY-NOTICES" "${dir}/copyright" "${dir}/licenses.cmake" "${dir}/crates.json")
  set(_members)
  foreach(_member IN LISTS ARG_MEMBERS)
    list(APPEND _members --member "${_member}")
  endforeach()
  set(_archive)
  set(_depends)
  if(ARG_ARCHIVE)
    set(_archive --archive "${ARG_ARCHIVE}")
    set(_depends "${ARG_ARCHIVE}")
  endif()
  add_custom_command(
    OUTPUT ${_outputs}
    COMMAND "${Python3_EXECUTABLE}" "${HOTSWAP_LICENSES_SCRIPT}" generate
            --cargo "${HOTSWAP_CARGO}" --rustc "${HOTSWAP_RUSTC}"
            --manifest "${PROJECT_SOURCE_DIR}/Cargo.toml"
            ${_members} ${_archive}
            --subject "${ARG_SUBJECT}" --package "${ARG_PACKAGE}" --cmake-prefix "${ARG_PREFIX}"
            --project-licence "${PROJECT_SOURCE_DIR}/LICENSE"
            --out "${dir}"
    DEPENDS "${HOTSWAP_LICENSES_SCRIPT}" "${PROJECT_SOURCE_DIR}/Cargo.lock"
            "${PROJECT_SOURCE_DIR}/LICENSE" ${_depends}
    COMMENT "Licence notices of ${ARG_SUBJECT} (from Cargo.lock)"
    VERBATIM)
  add_custom_command(
    OUTPUT "${dir}/THIRD-PARTY-NOTICES.gz"
    COMMAND "${HOTSWAP_GZIP}" -9nkf "${dir}/THIRD-PARTY-NOTICES"
    DEPENDS "${dir}/THIRD-PARTY-NOTICES"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "${ARG_PACKAGE}" _name)
  add_custom_target(hotswap-licenses-${_name} DEPENDS ${_outputs} "${dir}/THIRD-PARTY-NOTICES.gz")
  if(ARG_DEPENDS)
    add_dependencies(hotswap-licenses-${_name} ${ARG_DEPENDS})
  endif()
  add_dependencies(hotswap-licenses hotswap-licenses-${_name})
endfunction()

set(_archive "$<TARGET_FILE:hsa_hotswap-static>")
hotswap_licence_notices("${HOTSWAP_LICENSES_DIR}/hsa-hotswap"
  SUBJECT "libhsa-hotswap.so" PACKAGE hsa-hotswap PREFIX HOTSWAP
  MEMBERS hsa-hotswap ARCHIVE "${_archive}" DEPENDS hsa-hotswap)
if(TARGET hotswap-cli)
  # (No archive: the program is linked by cargo. It contains the library's
  # crates too, through hsa-hotswap.)
  hotswap_licence_notices("${HOTSWAP_LICENSES_DIR}/hsa-hotswap-cli"
    SUBJECT "The hotswap program" PACKAGE hsa-hotswap-cli PREFIX HOTSWAP_CLI
    MEMBERS hotswap-cli)
  set(_install_subject "libhsa-hotswap.so and the hotswap program")
  set(_install_members hsa-hotswap hotswap-cli)
else()
  set(_install_subject "libhsa-hotswap.so")
  set(_install_members hsa-hotswap)
endif()
hotswap_licence_notices("${HOTSWAP_LICENSES_DIR}"
  SUBJECT "${_install_subject}" PACKAGE hotswap PREFIX HOTSWAP
  MEMBERS ${_install_members} ARCHIVE "${_archive}" DEPENDS hsa-hotswap)

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${HOTSWAP_LICENSES_DIR}/THIRD-PARTY-NOTICES"
  DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/hotswap"
  COMPONENT license)
