# In-tree fallback for Corrosion: builds one crate's staticlib with cargo and
# exposes it with Corrosion's target shape:
#   <LIBRARY>          INTERFACE library to link (what callers use)
#   <LIBRARY>-static   STATIC IMPORTED library, carrying the native libraries
#                      that Rust's standard library needs
#   cargo-build_<LIBRARY>  the custom target that runs cargo (always; cargo
#                      itself decides what is up to date)
# Cargo profile: `dev` for Debug (or no build type), `release` otherwise, as
# Corrosion does. `--locked` always. No network is used beyond what cargo needs
# to fetch locked crates from the registry (none once they are in CARGO_HOME).

function(_hotswap_cargo_native_static_libs out_var)
  # Ask rustc which native libraries a staticlib needs, on an empty crate, once.
  if(DEFINED CACHE{HOTSWAP_RUST_NATIVE_STATIC_LIBS})
    set(${out_var} "${HOTSWAP_RUST_NATIVE_STATIC_LIBS}" PARENT_SCOPE)
    return()
  endif()
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/hotswap-cargo-probe")
  file(MAKE_DIRECTORY "${_dir}")
  file(WRITE "${_dir}/probe.rs" "")
  execute_process(
    COMMAND "${HOTSWAP_RUSTC}" --crate-type staticlib --crate-name probe
            --print native-static-libs -o "${_dir}/libprobe.a" "${_dir}/probe.rs"
    RESULT_VARIABLE _result
    OUTPUT_VARIABLE _out
    ERROR_VARIABLE _err)
  string(REGEX MATCH "native-static-libs: ([^\r\n]*)" _match "${_out}${_err}")
  if(NOT _result EQUAL 0 OR NOT _match)
    message(FATAL_ERROR "rustc could not report the native static libraries:\n${_err}")
  endif()
  separate_arguments(_flags UNIX_COMMAND "${CMAKE_MATCH_1}")
  set(_libs)
  foreach(_flag IN LISTS _flags)
    if(_flag MATCHES "^-l(.+)$")
      list(APPEND _libs "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _libs)
  set(HOTSWAP_RUST_NATIVE_STATIC_LIBS "${_libs}" CACHE INTERNAL "")
  set(${out_var} "${_libs}" PARENT_SCOPE)
endfunction()

function(hotswap_cargo_import_staticlib)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "MANIFEST_PATH;PACKAGE;LIBRARY" "ENVIRONMENT")
  foreach(_required IN ITEMS MANIFEST_PATH PACKAGE LIBRARY)
    if(NOT ARG_${_required})
      message(FATAL_ERROR "hotswap_cargo_import_staticlib: ${_required} is required")
    endif()
  endforeach()

  find_program(HOTSWAP_CARGO cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" REQUIRED)
  find_program(HOTSWAP_RUSTC rustc HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" REQUIRED)
  execute_process(COMMAND "${HOTSWAP_RUSTC}" --version OUTPUT_VARIABLE _rustc_version
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "hotswap: ${_rustc_version}")

  if(CMAKE_BUILD_TYPE STREQUAL "Debug" OR NOT CMAKE_BUILD_TYPE)
    set(_profile dev)
    set(_profile_dir debug)
  else()
    set(_profile release)
    set(_profile_dir release)
  endif()

  # Build trees of the same sources may share one target directory (the package
  # tests do), so that the crate is compiled once; cargo locks it while it works.
  set(HOTSWAP_CARGO_TARGET_DIR "${CMAKE_BINARY_DIR}/cargo/build" CACHE PATH
    "cargo's target directory for the in-tree cargo module")
  set(_target_dir "${HOTSWAP_CARGO_TARGET_DIR}")
  set(_archive "${_target_dir}/${_profile_dir}/${CMAKE_STATIC_LIBRARY_PREFIX}${ARG_LIBRARY}${CMAKE_STATIC_LIBRARY_SUFFIX}")

  add_custom_target(cargo-build_${ARG_LIBRARY} ALL
    COMMAND "${CMAKE_COMMAND}" -E env
            "CARGO_TARGET_DIR=${_target_dir}" ${ARG_ENVIRONMENT}
            "${HOTSWAP_CARGO}" build --locked --profile ${_profile}
            --manifest-path "${ARG_MANIFEST_PATH}" --package ${ARG_PACKAGE} --lib
    BYPRODUCTS "${_archive}"
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "cargo build --package ${ARG_PACKAGE} (${_profile})"
    USES_TERMINAL
    VERBATIM)

  _hotswap_cargo_native_static_libs(_native_libs)
  add_library(${ARG_LIBRARY}-static STATIC IMPORTED GLOBAL)
  set_target_properties(${ARG_LIBRARY}-static PROPERTIES
    IMPORTED_LOCATION "${_archive}"
    INTERFACE_LINK_LIBRARIES "${_native_libs}")
  add_dependencies(${ARG_LIBRARY}-static cargo-build_${ARG_LIBRARY})

  add_library(${ARG_LIBRARY} INTERFACE)
  target_link_libraries(${ARG_LIBRARY} INTERFACE ${ARG_LIBRARY}-static)

  set(HOTSWAP_CARGO_TARGET_DIR "${_target_dir}" PARENT_SCOPE)
endfunction()
