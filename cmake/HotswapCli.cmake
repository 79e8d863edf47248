# The `hotswap` command line (crate rust/hotswap-cli, binary `hotswap`):
#   hotswap-cli   executable target (imported, or an alias of Corrosion's
#                 `hotswap`): the built binary, $<TARGET_FILE:hotswap-cli>
# installed as bin/hotswap in the `runtime` component (the runtime package).
#
# With Corrosion the crate is imported with corrosion_import_crate(... CRATES
# hotswap-cli), which creates the executable target `hotswap`; without it the
# in-tree route runs `cargo build --bin hotswap` in the same target directory,
# profile and environment as the library (cmake/HotswapCargo.cmake), so the
# crates they share are compiled once. `--locked` always. HOTSWAP_CARGO_ENV
# (the COMGR SONAME) is the library's, so `hotswap doctor` probes the COMGR the
# library links.
option(HOTSWAP_BUILD_CLI "Build and install the hotswap command line (bin/hotswap)" ON)
if(NOT HOTSWAP_BUILD_CLI)
  return()
endif()

if(COMMAND corrosion_import_crate)   # HotswapRust.cmake chose Corrosion
  corrosion_import_crate(
    MANIFEST_PATH "${PROJECT_SOURCE_DIR}/Cargo.toml"
    CRATES hotswap-cli
    LOCKED)
  corrosion_set_env_vars(hotswap ${HOTSWAP_CARGO_ENV})
  # Corrosion sets the imported location at the end of the configure step: an
  # alias follows it.
  add_executable(hotswap-cli ALIAS hotswap)
else()
  if(CMAKE_BUILD_TYPE STREQUAL "Debug" OR NOT CMAKE_BUILD_TYPE)
    set(_hotswap_cli_profile dev)
    set(_hotswap_cli_profile_dir debug)
  else()
    set(_hotswap_cli_profile release)
    set(_hotswap_cli_profile_dir release)
  endif()
  set(_hotswap_cli_binary
    "${HOTSWAP_CARGO_TARGET_DIR}/${_hotswap_cli_profile_dir}/hotswap${CMAKE_EXECUTABLE_SUFFIX}")
  add_custom_target(cargo-build_hotswap-cli ALL
    COMMAND "${CMAKE_COMMAND}" -E env
            "CARGO_TARGET_DIR=${HOTSWAP_CARGO_TARGET_DIR}" ${HOTSWAP_CARGO_ENV}
            "${HOTSWAP_CARGO}" build --locked --profile ${_hotswap_cli_profile}
            --manifest-path "${PROJECT_SOURCE_DIR}/Cargo.toml" --package hotswap-cli --bin hotswap
    BYPRODUCTS "${_hotswap_cli_binary}"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "cargo build --package hotswap-cli (${_hotswap_cli_profile})"
    USES_TERMINAL
    VERBATIM)
  # One cargo at a time in a target directory: after the library's build.
  add_dependencies(cargo-build_hotswap-cli cargo-build_hsa_hotswap)
  add_executable(hotswap-cli IMPORTED GLOBAL)
  set_target_properties(hotswap-cli PROPERTIES IMPORTED_LOCATION "${_hotswap_cli_binary}")
  add_dependencies(hotswap-cli cargo-build_hotswap-cli)
endif()

install(PROGRAMS "$<TARGET_FILE:hotswap-cli>"
  DESTINATION "${CMAKE_INSTALL_BINDIR}"
  COMPONENT runtime)
# `cmake --install --strip` and CPack (CPACK_STRIP_FILES) strip what
# install(TARGETS) installs; an imported executable is installed as a file, so
# it is stripped here the same way.
if(CMAKE_STRIP)
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\"
        \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/hotswap${CMAKE_EXECUTABLE_SUFFIX}\"
        RESULT_VARIABLE _hotswap_strip)
      if(NOT _hotswap_strip EQUAL 0)
        message(FATAL_ERROR \"strip bin/hotswap failed: \${_hotswap_strip}\")
      endif()
    endif()"
    COMPONENT runtime)
endif()
