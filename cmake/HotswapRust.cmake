# The Rust staticlib. With Corrosion (find_package(Corrosion CONFIG), 0.6 or newer)
# the crate is imported with corrosion_import_crate(... LOCKED); without it the
# in-tree module HotswapCargo.cmake builds it with cargo. Both give the same
# targets: hsa_hotswap (INTERFACE, what is linked) over hsa_hotswap-static.

# Environment for cargo: the COMGR the library is linked against, so that the
# Rust code resolves COMGR's functions from that very library at run time.
set(HOTSWAP_CARGO_ENV
  "HOTSWAP_COMGR_SONAME=$<TARGET_SONAME_FILE_NAME:amd_comgr>")

set(_hotswap_corrosion_args)
if(HOTSWAP_REQUIRE_CORROSION)
  list(APPEND _hotswap_corrosion_args REQUIRED)
else()
  list(APPEND _hotswap_corrosion_args QUIET)
endif()
find_package(Corrosion 0.6 CONFIG ${_hotswap_corrosion_args})

if(Corrosion_FOUND)
  message(STATUS "hotswap: building the Rust crate with Corrosion ${Corrosion_VERSION}")
  corrosion_import_crate(
    MANIFEST_PATH "${PROJECT_SOURCE_DIR}/Cargo.toml"
    CRATES hsa-hotswap
    CRATE_TYPES staticlib
    LOCKED)
  corrosion_set_env_vars(hsa_hotswap ${HOTSWAP_CARGO_ENV})
  set(HOTSWAP_RUST_BUILDER "Corrosion ${Corrosion_VERSION}")
else()
  message(STATUS "hotswap: Corrosion not found; building the Rust crate with the in-tree cargo module")
  include(HotswapCargo)
  hotswap_cargo_import_staticlib(
    MANIFEST_PATH "${PROJECT_SOURCE_DIR}/Cargo.toml"
    PACKAGE hsa-hotswap
    LIBRARY hsa_hotswap
    ENVIRONMENT ${HOTSWAP_CARGO_ENV})
  set(HOTSWAP_RUST_BUILDER "in-tree cargo module")
endif()
