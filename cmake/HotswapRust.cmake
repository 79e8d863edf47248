# The Rust staticlib, built by one of (first that applies):
#   1. Corrosion that the including project already loaded: a superbuild's
#      FetchContent_MakeAvailable(Corrosion) or add_subdirectory(corrosion) defines
#      corrosion_import_crate before this project is added;
#   2. Corrosion as a CONFIG package (find_package(Corrosion 0.6 CONFIG));
#   3. the in-tree cargo module HotswapCargo.cmake.
# Each gives the same targets: hsa_hotswap (INTERFACE, what is linked) over
# hsa_hotswap-static, and sets HOTSWAP_CARGO / HOTSWAP_RUSTC (the toolchain
# used, for the licence notices) and HOTSWAP_RUST_BUILDER (a description).

# Environment for cargo: the COMGR the library is linked against, so that the
# Rust code resolves COMGR's functions from that very library at run time.
set(HOTSWAP_CARGO_ENV
  "HOTSWAP_COMGR_SONAME=$<TARGET_SONAME_FILE_NAME:amd_comgr>")
# Debug information follows CMAKE_BUILD_TYPE, as it does for C: Cargo.toml's
# profile.release keeps `debug = 1` (line tables and symbols, what
# RelWithDebInfo and the distribution packages' debuginfo want); a Release or
# MinSizeRel build overrides it to none, and cargo then also strips the debug
# information of the Rust standard library from what it links (bin/hotswap).
if(CMAKE_BUILD_TYPE MATCHES "^(Release|MinSizeRel)$")
  list(APPEND HOTSWAP_CARGO_ENV "CARGO_PROFILE_RELEASE_DEBUG=0")
endif()

set(_hotswap_corrosion_source "")
if(COMMAND corrosion_import_crate)
  set(_hotswap_corrosion_source "the including project")
else()
  set(_hotswap_corrosion_args)
  if(HOTSWAP_REQUIRE_CORROSION)
    list(APPEND _hotswap_corrosion_args REQUIRED)
  else()
    list(APPEND _hotswap_corrosion_args QUIET)
  endif()
  find_package(Corrosion 0.6 CONFIG ${_hotswap_corrosion_args})
  if(Corrosion_FOUND)
    set(_hotswap_corrosion_source "${Corrosion_DIR}")
  elseif(Corrosion_CONSIDERED_VERSIONS)
    # A Corrosion was found but its version was rejected: say so, not "not found".
    message(STATUS "hotswap: Corrosion ${Corrosion_CONSIDERED_VERSIONS} "
                   "(${Corrosion_CONSIDERED_CONFIGS}) is older than the 0.6 this project needs; "
                   "building the Rust crate with the in-tree cargo module")
  else()
    message(STATUS "hotswap: no Corrosion (neither loaded by an including project nor a "
                   "CONFIG package); building the Rust crate with the in-tree cargo module")
  endif()
endif()

if(_hotswap_corrosion_source)
  if(Corrosion_VERSION)
    set(HOTSWAP_RUST_BUILDER "Corrosion ${Corrosion_VERSION}")
  else()
    set(HOTSWAP_RUST_BUILDER "Corrosion")
  endif()
  message(STATUS "hotswap: building the Rust crate with ${HOTSWAP_RUST_BUILDER} "
                 "(from ${_hotswap_corrosion_source})")
  corrosion_import_crate(
    MANIFEST_PATH "${PROJECT_SOURCE_DIR}/Cargo.toml"
    CRATES hsa-hotswap
    CRATE_TYPES staticlib
    LOCKED)
  corrosion_set_env_vars(hsa_hotswap ${HOTSWAP_CARGO_ENV})
  # Corrosion's FindRust sets these in the scope that loaded Corrosion (a
  # superbuild's subdirectory may not see them); its cache has them too.
  foreach(_hotswap_tool IN ITEMS CARGO:Rust_CARGO:cargo RUSTC:Rust_COMPILER:rustc)
    string(REPLACE ":" ";" _hotswap_tool "${_hotswap_tool}")
    list(GET _hotswap_tool 0 _ours)
    list(GET _hotswap_tool 1 _corrosion)
    list(GET _hotswap_tool 2 _program)
    if(${_corrosion})
      set(HOTSWAP_${_ours} "${${_corrosion}}")
    elseif(${_corrosion}_CACHED)
      set(HOTSWAP_${_ours} "${${_corrosion}_CACHED}")
    else()
      find_program(HOTSWAP_${_ours} ${_program} HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" REQUIRED)
    endif()
  endforeach()
else()
  include(HotswapCargo)
  hotswap_cargo_import_staticlib(
    MANIFEST_PATH "${PROJECT_SOURCE_DIR}/Cargo.toml"
    PACKAGE hsa-hotswap
    LIBRARY hsa_hotswap
    ENVIRONMENT ${HOTSWAP_CARGO_ENV})
  set(HOTSWAP_RUST_BUILDER "in-tree cargo module")
endif()
