# ctest rocr.install (fixture hotswap_rocr_installed): installs this build into a
# scratch prefix, so that the rocr.* scenarios load the installed tool.
# Inputs: BUILD_DIR, PREFIX, CONFIG, TOOL (the path the tool must be installed at).
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

file(REMOVE_RECURSE "${PREFIX}")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}")
if(NOT EXISTS "${TOOL}")
  file(GLOB_RECURSE _tree RELATIVE "${PREFIX}" "${PREFIX}/*")
  message(FATAL_ERROR "the install tree lacks ${TOOL}; it has: ${_tree}")
endif()
message(STATUS "installed ${TOOL}")
