# ctest rocr.*: runs one scenario of the real-ROCr tests and checks its output.
#   cmake -DSPEC=<file> -P run_scenario.cmake -- <command> [args...]
# SPEC sets EXPECT (regular expressions that must match the output in this
# order, each after the previous match) and REJECT (expressions that must not
# match anywhere). The command's stdout and stderr are taken together, in the
# order written (the application, ROCr, the tools and valgrind all write
# unbuffered to stderr), and printed whole. The command must exit with 0.
cmake_minimum_required(VERSION 3.22)
include("${SPEC}")

set(_command)
set(_after_separator FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE 1 ${_last})
  if(_after_separator)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_separator TRUE)
  endif()
endforeach()
if(NOT _command)
  message(FATAL_ERROR "usage: cmake -DSPEC=<file> -P run_scenario.cmake -- <command> [args...]")
endif()

execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
message("${_out}")

set(_failures)
if(NOT _rc STREQUAL "0")
  list(APPEND _failures "exit status ${_rc}")
endif()
set(_rest "${_out}")
foreach(_re IN LISTS EXPECT)
  string(REGEX MATCH "${_re}" _match "${_rest}")
  if(_match STREQUAL "")
    list(APPEND _failures "no line matching [${_re}] (in this order)")
  else()
    string(FIND "${_rest}" "${_match}" _at)
    string(LENGTH "${_match}" _length)
    math(EXPR _from "${_at} + ${_length}")
    string(SUBSTRING "${_rest}" ${_from} -1 _rest)
  endif()
endforeach()
foreach(_re IN LISTS REJECT)
  string(REGEX MATCH "${_re}" _match "${_out}")
  if(NOT _match STREQUAL "")
    list(APPEND _failures "unexpected output [${_match}]")
  endif()
endforeach()

if(_failures)
  string(REPLACE ";" "\n  " _list "${_failures}")
  message(FATAL_ERROR "scenario failed:\n  ${_list}")
endif()
message(STATUS "scenario passed")
