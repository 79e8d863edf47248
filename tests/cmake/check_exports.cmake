# ctest abi.exported_symbols: the library's dynamic symbol table defines exactly
# OnLoad, OnUnload and the functions the public header declares, and its SONAME is
# libhsa-hotswap.so.
# Inputs: LIBRARY, HEADER, NM, READELF.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/HotswapExports.cmake")
foreach(_v IN ITEMS LIBRARY HEADER NM READELF)
  if(NOT ${_v})
    message(FATAL_ERROR "check_exports.cmake: ${_v} is not set")
  endif()
endforeach()

get_filename_component(_name "${LIBRARY}" NAME)
if(NOT _name STREQUAL "libhsa-hotswap.so")
  message(FATAL_ERROR "library file is '${_name}', expected 'libhsa-hotswap.so'")
endif()

hotswap_exported_symbols(_expected "${HEADER}")
list(SORT _expected)

execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}"
  OUTPUT_VARIABLE _nm RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" _lines "${_nm}")
set(_actual)
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ ]+)$")
    string(REGEX REPLACE "@.*" "" _sym "${CMAKE_MATCH_1}")
    list(APPEND _actual "${_sym}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _actual)
hotswap_expect_set("exported symbols (expected: OnLoad, OnUnload + the header's functions)" _actual _expected)

execute_process(COMMAND "${READELF}" -d "${LIBRARY}" OUTPUT_VARIABLE _dyn RESULT_VARIABLE _rc)
if(NOT _dyn MATCHES "\\(SONAME\\)[^\n]*\\[libhsa-hotswap\\.so\\]")
  message(FATAL_ERROR "SONAME is not libhsa-hotswap.so:\n${_dyn}")
endif()
list(LENGTH _actual _count)
message(STATUS "exports (${_count}): ${_actual}; SONAME libhsa-hotswap.so")
