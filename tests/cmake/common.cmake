# Helpers shared by the ctest scripts (cmake -P), included right after their
# cmake_minimum_required().

# run(<command>...): execute, fail the test with the command line on error.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARGN}")
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}")
  endif()
endfunction()

# capture(<var> <command>...): execute, return stdout (stripped), fail on error.
function(capture var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARGN}")
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}\n${_out}\n${_err}")
  endif()
  set(${var} "${_out}" PARENT_SCOPE)
endfunction()

# The project's one truthiness rule (README, env.rs): unset, empty, 0, off,
# false, no, n, f (any case) are false; anything else is true.
function(hotswap_truthy var value)
  string(TOLOWER "${value}" _v)
  set(_false_words "" 0 off false no n f)
  if(_v STREQUAL "" OR _v IN_LIST _false_words)
    set(${var} FALSE PARENT_SCOPE)
  else()
    set(${var} TRUE PARENT_SCOPE)
  endif()
endfunction()

hotswap_truthy(HOTSWAP_IN_CI "$ENV{CI}")

# hotswap_skip_or_fail(<reason>): outside CI print "SKIP: <reason>" and stop
# the script (ctest reports the test as skipped); in CI (CI=true) fail instead.
macro(hotswap_skip_or_fail reason)
  if(HOTSWAP_IN_CI)
    message(FATAL_ERROR "${reason} (CI=true: package tests must run)")
  endif()
  message(STATUS "SKIP: ${reason}")
  return()
endmacro()

# hotswap_require_tools(<path-var>...): each variable holds a tool path from the
# configure step (or <name>-NOTFOUND).
macro(hotswap_require_tools)
  foreach(_tool_var IN ITEMS ${ARGN})
    if(NOT ${_tool_var} OR NOT EXISTS "${${_tool_var}}")
      hotswap_skip_or_fail("${_tool_var} not found (Debian packages: dpkg-dev rpm rpm2cpio lintian python3)")
    endif()
  endforeach()
endmacro()

# hotswap_expect_set(<what> <got-list-var> <expected-list-var>): equal as sets.
function(hotswap_expect_set what got_var expected_var)
  set(_got ${${got_var}})
  set(_want ${${expected_var}})
  list(SORT _got)
  list(SORT _want)
  if(NOT _got STREQUAL _want)
    set(_extra ${_got})
    list(REMOVE_ITEM _extra ${_want})
    set(_missing ${_want})
    list(REMOVE_ITEM _missing ${_got})
    string(REPLACE ";" "\n  " _got_lines "${_got}")
    message(FATAL_ERROR "${what}: unexpected [${_extra}], missing [${_missing}]; it has:\n  ${_got_lines}")
  endif()
endfunction()
