# ctest package.consumer.<mode>: configure, build and run tests/consumer against
#   MODE=install     a staged `cmake --install` of the build (CMAKE_PREFIX_PATH)
#   MODE=build-tree  the build tree itself (hotswap_DIR)
# Then, in both modes:
#   - the programs run; the gate programs link none of libhsa-hotswap.so, ROCr, COMGR;
#   - find_package(hotswap COMPONENTS gate) works without the hsa-runtime64 and
#     amd_comgr packages, and the full find_package(hotswap) fails without them
#     (find_dependency: the library's link dependencies come with it).
# Inputs: MODE, LIBDIR, HOTSWAP_BUILD_DIR, CONSUMER_SOURCE_DIR, SCRATCH, BUILD_TYPE,
#         GENERATOR, READELF.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")

include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

if(MODE STREQUAL "install")
  set(_prefix "${SCRATCH}/prefix")
  run("${CMAKE_COMMAND}" --install "${HOTSWAP_BUILD_DIR}" --prefix "${_prefix}" --config "${BUILD_TYPE}")
  foreach(_f IN ITEMS ${LIBDIR}/libhsa-hotswap.so include/hotswap/hotswap.h include/hotswap/hotswap_gate.h
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
foreach(_exe IN ITEMS consumer_c consumer_cxx consumer_dlopen consumer_gate consumer_gate_cxx)
  run("${SCRATCH}/build/${_exe}")
endforeach()
foreach(_exe IN ITEMS consumer_gate consumer_gate_cxx)
  capture(_dynamic "${READELF}" -d -W "${SCRATCH}/build/${_exe}")
  if(_dynamic MATCHES "libhsa-hotswap|libhsa-runtime64|libamd_comgr")
    message(FATAL_ERROR "${_exe} (hotswap::gate only) links the tool, ROCr or COMGR:\n${_dynamic}")
  endif()
endforeach()

# Without the hsa-runtime64 and amd_comgr packages: the gate alone works, the
# library does not (its config finds them with find_dependency).
set(_without_deps -DCMAKE_DISABLE_FIND_PACKAGE_hsa-runtime64=ON -DCMAKE_DISABLE_FIND_PACKAGE_amd_comgr=ON)
run("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${SCRATCH}/gate" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "${_locate}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    -DGATE_ONLY=ON ${_without_deps})
run("${CMAKE_COMMAND}" --build "${SCRATCH}/gate" --config "${BUILD_TYPE}")
run("${SCRATCH}/gate/consumer_gate")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${SCRATCH}/no-deps" -G "${GENERATOR}"
                        "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "${_locate}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
                        ${_without_deps}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0 OR NOT _out MATCHES "hsa-runtime64")
  message(FATAL_ERROR "find_package(hotswap) succeeded without the hsa-runtime64 package "
                      "its library links (no find_dependency?):\n${_out}")
endif()
message(STATUS "without hsa-runtime64/amd_comgr: the gate component works, the library component says what is missing")
message(STATUS "consumer (${MODE}) passed")
