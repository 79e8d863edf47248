# ctest package.corrosion.<mode>: the library built by Corrosion.
#   config      Corrosion installed as a CONFIG package (from CORROSION_SOURCE_DIR
#               into a scratch prefix); this project configured top level with
#               HOTSWAP_REQUIRE_CORROSION=ON, built and packaged (cpack -G DEB).
#   superbuild  a superbuild that loads Corrosion with FetchContent_MakeAvailable
#               (SOURCE_DIR: no download) and then add_subdirectory()s this project:
#               corrosion_import_crate is already defined and must be used.
# Both check the configure output names Corrosion, and that the library built
# exports exactly the expected symbols.
# No registry CI reaches packages Corrosion, so without CORROSION_SOURCE_DIR the
# test says so and skips.
# Inputs: MODE, SOURCE_DIR, CORROSION_SOURCE_DIR, SCRATCH, GENERATOR, BUILD_TYPE,
#         HSA_DIR, COMGR_DIR, CPACK, DPKG_DEB, NM, SYMBOLS.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

if(NOT CORROSION_SOURCE_DIR OR NOT EXISTS "${CORROSION_SOURCE_DIR}/cmake/Corrosion.cmake")
  message(STATUS "SKIP: no Corrosion source tree (HOTSWAP_TEST_CORROSION_SOURCE_DIR='${CORROSION_SOURCE_DIR}'); "
                 "Corrosion is not packaged for Debian 12, crates.io, PyPI or npm")
  return()
endif()

function(run_out out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARGN}")
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}\n${_out}")
  endif()
  set(${out_var} "${_out}" PARENT_SCOPE)
endfunction()

function(check_exports library)
  capture(_nm "${NM}" -D --defined-only "${library}")
  string(REGEX MATCHALL "[^\n]+" _lines "${_nm}")
  set(_got)
  foreach(_line IN LISTS _lines)
    if(_line MATCHES " [TDBRW] ([^ ]+)$")
      list(APPEND _got "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  hotswap_expect_set("exports of the Corrosion-built ${library}" _got SYMBOLS)
endfunction()

file(REMOVE_RECURSE "${SCRATCH}")
set(_common "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-Dhsa-runtime64_DIR=${HSA_DIR}"
            "-Damd_comgr_DIR=${COMGR_DIR}" -DHOTSWAP_BUILD_TESTS=OFF)
if(MODE STREQUAL "config")
  set(_prefix "${SCRATCH}/corrosion-prefix")
  run_out(_o "${CMAKE_COMMAND}" -S "${CORROSION_SOURCE_DIR}" -B "${SCRATCH}/corrosion-build" -G "${GENERATOR}"
          -DCORROSION_BUILD_TESTS=OFF "-DCMAKE_INSTALL_PREFIX=${_prefix}")
  run_out(_o "${CMAKE_COMMAND}" --build "${SCRATCH}/corrosion-build")
  run_out(_o "${CMAKE_COMMAND}" --install "${SCRATCH}/corrosion-build")
  set(_build "${SCRATCH}/build")
  run_out(_configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}" ${_common}
          -DCMAKE_INSTALL_PREFIX=/opt/rocm "-DCMAKE_PREFIX_PATH=${_prefix}" -DHOTSWAP_REQUIRE_CORROSION=ON)
  message(STATUS "${_configure}")
  if(NOT _configure MATCHES "hotswap: building the Rust crate with Corrosion [0-9.]+ \\(from ${_prefix}/")
    message(FATAL_ERROR "configure did not use the Corrosion package in ${_prefix}")
  endif()
  run_out(_o "${CMAKE_COMMAND}" --build "${_build}" --config "${BUILD_TYPE}")
  check_exports("${_build}/libhsa-hotswap.so")
  run_out(_o "${CPACK}" -G DEB -C "${BUILD_TYPE}" -B "${SCRATCH}/packages" --config "${_build}/CPackConfig.cmake")
  file(GLOB _deb "${SCRATCH}/packages/hsa-hotswap_*.deb")
  run("${DPKG_DEB}" -x "${_deb}" "${SCRATCH}/unpacked")
  check_exports("${SCRATCH}/unpacked/opt/rocm/lib/libhsa-hotswap.so")
  message(STATUS "Corrosion package: built and packaged ${_deb}")
elseif(MODE STREQUAL "superbuild")
  set(_super "${SCRATCH}/super")
  file(WRITE "${_super}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.22)
project(hotswap_superbuild LANGUAGES C CXX)
include(FetchContent)
FetchContent_Declare(Corrosion SOURCE_DIR \"${CORROSION_SOURCE_DIR}\")
FetchContent_MakeAvailable(Corrosion)
add_subdirectory(\"${SOURCE_DIR}\" hotswap)
")
  set(_build "${SCRATCH}/build")
  run_out(_configure "${CMAKE_COMMAND}" -S "${_super}" -B "${_build}" -G "${GENERATOR}" ${_common}
          -DHOTSWAP_REQUIRE_CORROSION=ON)
  message(STATUS "${_configure}")
  if(NOT _configure MATCHES "hotswap: building the Rust crate with Corrosion \\(from the including project\\)")
    message(FATAL_ERROR "configure did not use the Corrosion the superbuild loaded")
  endif()
  run_out(_o "${CMAKE_COMMAND}" --build "${_build}" --config "${BUILD_TYPE}")
  check_exports("${_build}/hotswap/libhsa-hotswap.so")
  message(STATUS "superbuild: the library was built by the superbuild's Corrosion")
else()
  message(FATAL_ERROR "MODE must be config or superbuild")
endif()
