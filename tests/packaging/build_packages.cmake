# ctest package.build.<layout>: configure this project for one install prefix in
# a separate build tree, build it and run cpack (DEB and RPM).
# The Rust crate is not compiled again: the tree shares the main build's cargo
# target directory (HOTSWAP_CARGO_TARGET_DIR), where it is already up to date.
# Inputs: SOURCE_DIR, SCRATCH, PREFIX, LIBDIR, GENERATOR, BUILD_TYPE, CARGO_TARGET_DIR,
#         HSA_DIR, COMGR_DIR, CPACK, CORROSION_DIR (the Corrosion package the main
#         tree used, if any: the package trees use it too), CLI (ON: build the
#         command line and its package, as the main tree does).
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

set(_build "${SCRATCH}/build")
set(_out "${SCRATCH}/packages")
file(REMOVE_RECURSE "${_out}")
# A fresh cache each time: the prefix decides the libdir (GNUInstallDirs).
file(REMOVE "${_build}/CMakeCache.txt")
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    "-DCMAKE_INSTALL_PREFIX=${PREFIX}"
    "-DCMAKE_INSTALL_LIBDIR=${LIBDIR}"
    "-Dhsa-runtime64_DIR=${HSA_DIR}"
    "-Damd_comgr_DIR=${COMGR_DIR}"
    -DHOTSWAP_BUILD_TESTS=OFF
    "-DHOTSWAP_BUILD_CLI=${CLI}"
    "-DCorrosion_DIR=${CORROSION_DIR}"
    "-DHOTSWAP_CARGO_TARGET_DIR=${CARGO_TARGET_DIR}")
run("${CMAKE_COMMAND}" --build "${_build}" --config "${BUILD_TYPE}")
# CPACK_GENERATOR: the formats of this layout (cmake/HotswapPackaging.cmake).
run("${CPACK}" -C "${BUILD_TYPE}" -B "${_out}" --config "${_build}/CPackConfig.cmake")
file(GLOB _packages "${_out}/*.deb" "${_out}/*.rpm")
message(STATUS "packages for ${PREFIX}: ${_packages}")
