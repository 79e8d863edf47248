# The `hotswap` command line (crate rust/hotswap-cli, binary `hotswap`):
#   hotswap-cli        executable target (imported, or an alias of Corrosion's
#                      `hotswap`): the built binary, $<TARGET_FILE:hotswap-cli>
#   hotswap-man-page   <build>/man/hotswap.1 and hotswap.1.gz, the manual page
#                      (HOTSWAP_MAN_PAGE: the uncompressed one)
# installed as bin/hotswap and <mandir>/man1/hotswap.1.gz in the component
# `cli`, which `cmake --install` installs with the others and the packages put
# into a package of its own (cmake/HotswapPackaging.cmake).
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
  set(_hotswap_cli_target hotswap)
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
  set(_hotswap_cli_target hotswap-cli)
endif()

# The manual page hotswap(1), rendered by the built program from its clap
# definitions (the hidden subcommand `hotswap man-page`, src/man.rs), so that
# it cannot drift from --help; gzip -9n (no name, no time stamp) as Debian
# policy and rpmlint want it, for `cmake --install` too (man reads it as is).
find_program(HOTSWAP_GZIP gzip REQUIRED)
set(HOTSWAP_MAN_PAGE "${PROJECT_BINARY_DIR}/man/hotswap.1")
set(_hotswap_man_run "$<TARGET_FILE:hotswap-cli>")
if(CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
    message(FATAL_ERROR "hotswap: the manual page is rendered by the built hotswap program; "
                        "cross-compiling needs CMAKE_CROSSCOMPILING_EMULATOR to run it "
                        "(or -DHOTSWAP_BUILD_CLI=OFF)")
  endif()
  set(_hotswap_man_run ${CMAKE_CROSSCOMPILING_EMULATOR} "$<TARGET_FILE:hotswap-cli>")
endif()
file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/man")
add_custom_command(
  OUTPUT "${HOTSWAP_MAN_PAGE}" "${HOTSWAP_MAN_PAGE}.gz"
  COMMAND ${_hotswap_man_run} man-page "${HOTSWAP_MAN_PAGE}"
  COMMAND "${HOTSWAP_GZIP}" -9nkf "${HOTSWAP_MAN_PAGE}"
  DEPENDS "$<TARGET_FILE:hotswap-cli>"
  COMMENT "Manual page hotswap(1) from the clap definitions"
  VERBATIM)
add_custom_target(hotswap-man-page ALL DEPENDS "${HOTSWAP_MAN_PAGE}" "${HOTSWAP_MAN_PAGE}.gz")
# (the imported target's own dependencies, the cargo build, are followed)
add_dependencies(hotswap-man-page ${_hotswap_cli_target})

install(PROGRAMS "$<TARGET_FILE:hotswap-cli>"
  DESTINATION "${CMAKE_INSTALL_BINDIR}"
  COMPONENT cli)
install(FILES "${HOTSWAP_MAN_PAGE}.gz"
  DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
  COMPONENT cli)
# In TheRock with THEROCK_SPLIT_DEBUG_INFO (set by its project_init.cmake), the
# post-subproject hook copies the debug information of the build targets to
# <stage>/.build-id/<xx>/<rest>.debug before the stage is stripped; bin/hotswap
# is an imported target, which the hook does not see, so its file is written
# here the same way, from the unstripped binary of the build tree (the artifact's
# dbg component then holds both).
if(THEROCK_SPLIT_DEBUG_INFO AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  include(CMakeFindBinUtils)
  set(_hotswap_stage_root "${THEROCK_STAGE_INSTALL_ROOT}")
  if(NOT _hotswap_stage_root)
    set(_hotswap_stage_root "\${CMAKE_INSTALL_PREFIX}")
  endif()
  install(CODE "
    execute_process(COMMAND \"${CMAKE_COMMAND}\"
      \"-DBINARY=$<TARGET_FILE:hotswap-cli>\"
      \"-DOUT=\$ENV{DESTDIR}${_hotswap_stage_root}/.build-id\" -DKEEP_OUT=ON
      \"-DOBJCOPY=${CMAKE_OBJCOPY}\" \"-DREADELF=${CMAKE_READELF}\"
      -P \"${PROJECT_SOURCE_DIR}/packaging/rpm/split_debug.cmake\"
      COMMAND_ERROR_IS_FATAL ANY)"
    COMPONENT cli)
endif()

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
    COMPONENT cli)
endif()
