# ctest package.consumer.<mode>: configure, build and run tests/consumer against
#   MODE=install     a staged `cmake --install` of the build (CMAKE_PREFIX_PATH)
#   MODE=build-tree  the build tree itself (hotswap_DIR)
# Inputs: MODE, LIBDIR, HOTSWAP_BUILD_DIR, CONSUMER_SOURCE_DIR, SCRATCH, BUILD_TYPE, GENERATOR.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")

include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

if(MODE STREQUAL "install")
  set(_prefix "${SCRATCH}/prefix")
  run("${CMAKE_COMMAND}" --install "${HOTSWAP_BUILD_DIR}" --prefix "${_prefix}" --config "${BUILD_TYPE}")
  foreach(_f IN ITEMS ${LIBDIR}/libhsa-hotswap.so include/hotswap/hotswap.h
                      ${LIBDIR}/cmake/hotswap/hotswap-config.cmake
                      ${LIBDIR}/cmake/hotswap/hotswap-config-version.cmake
                      ${LIBDIR}/cmake/hotswap/hotswap-targets.cmake)
    if(NOT EXISTS "${_prefix}/${_f}")
      file(GLOB_RECURSE _tree RELATIVE "${_prefix}" "${_prefix}/*")
      message(FATAL_ERROR "install tree lacks ${_f}; it has: ${_tree}")
    endif()
  endforeach()
  set(_locate "-DCMAKE_PREFIX_PATH=${_prefix}")
  set(_expected_tool "${_prefix}/${LIBDIR}/libhsa-hotswap.so")
elseif(MODE STREQUAL "build-tree")
  set(_locate "-Dhotswap_DIR=${HOTSWAP_BUILD_DIR}")
  set(_expected_tool "")
else()
  message(FATAL_ERROR "MODE must be install or build-tree")
endif()

run("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${SCRATCH}/build" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "${_locate}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    "-DEXPECTED_TOOL_LIBRARY=${_expected_tool}")
run("${CMAKE_COMMAND}" --build "${SCRATCH}/build" --config "${BUILD_TYPE}")
foreach(_exe IN ITEMS consumer_c consumer_cxx consumer_dlopen)
  run("${SCRATCH}/build/${_exe}")
endforeach()
message(STATUS "consumer (${MODE}) passed")
