# ctest package.lintian.<layout>: lintian on the DEB pair built by
# package.build.<layout>. Fails on any error or warning except the tags listed,
# each with its reason, in the suppression files (SUPPRESS, comma-separated).
# Inputs: SCRATCH, SUPPRESS, LINTIAN.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")
hotswap_require_tools(LINTIAN)

file(GLOB _debs "${SCRATCH}/packages/*.deb")
list(LENGTH _debs _n)
if(NOT _n EQUAL 2)
  message(FATAL_ERROR "expected the hsa-hotswap and hsa-hotswap-dev DEBs in ${SCRATCH}/packages, found: ${_debs}")
endif()
set(_tags "${SCRATCH}/lintian.suppress")
file(WRITE "${_tags}" "")
string(REPLACE "," ";" SUPPRESS "${SUPPRESS}")
foreach(_file IN LISTS SUPPRESS)
  file(STRINGS "${_file}" _lines REGEX "^[a-z0-9]")
  foreach(_tag IN LISTS _lines)
    file(APPEND "${_tags}" "${_tag}\n")
  endforeach()
endforeach()
file(STRINGS "${_tags}" _suppressed)
message(STATUS "suppressed (see ${SUPPRESS}): ${_suppressed}")
execute_process(
  COMMAND "${LINTIAN}" --fail-on error,warning --suppress-tags-from-file "${_tags}"
          --tag-display-limit 0 ${_debs}
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message(STATUS "lintian:\n${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "lintian reported errors or warnings (exit ${_rc})")
endif()
message(STATUS "lintian: no errors or warnings beyond the documented ones")
