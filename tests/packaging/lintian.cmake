# ctest package.lintian.<layout>: lintian on the DEBs built by
# package.build.<layout> (hsa-hotswap, hsa-hotswap-dev and, with CLI,
# hsa-hotswap-cli, whose manual page lintian renders with man --warnings).
# Fails on any error or warning: the only accepted tags are the overrides the
# packages themselves ship (/usr/share/lintian/overrides, from
# packaging/lintian/), and each override must come with its reason (a comment
# right above it).
# Inputs: SCRATCH, LINTIAN, DPKG_DEB, CLI.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")
hotswap_require_tools(LINTIAN DPKG_DEB)

file(GLOB _debs "${SCRATCH}/packages/*.deb")
set(_names)
foreach(_deb IN LISTS _debs)
  get_filename_component(_name "${_deb}" NAME)
  string(REGEX REPLACE "_.*" "" _name "${_name}")
  list(APPEND _names "${_name}")
endforeach()
set(_expected hsa-hotswap hsa-hotswap-dev)
if(CLI)
  list(APPEND _expected hsa-hotswap-cli)
endif()
hotswap_expect_set("DEBs in ${SCRATCH}/packages" _names _expected)

# Every shipped override has a reason.
set(_work "${SCRATCH}/lintian")
file(REMOVE_RECURSE "${_work}")
file(MAKE_DIRECTORY "${_work}")
foreach(_deb IN LISTS _debs)
  get_filename_component(_name "${_deb}" NAME_WE)
  string(REGEX REPLACE "_.*" "" _pkg "${_name}")
  run("${DPKG_DEB}" -x "${_deb}" "${_work}/${_pkg}")
  set(_file "${_work}/${_pkg}/usr/share/lintian/overrides/${_pkg}")
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "${_pkg}: no lintian overrides shipped at /usr/share/lintian/overrides/${_pkg}")
  endif()
  file(STRINGS "${_file}" _lines)
  set(_previous "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^[a-z0-9]" AND NOT _previous MATCHES "^#")
      message(FATAL_ERROR "${_pkg}: the override '${_line}' has no reason (a comment right above it)")
    endif()
    set(_previous "${_line}")
  endforeach()
  message(STATUS "${_pkg}: overrides, each with its reason:\n${_lines}")
endforeach()

# What was overridden, for the log (lintian counts shown overrides as failures,
# so the verdict comes from a second run without them).
execute_process(COMMAND "${LINTIAN}" --show-overrides --tag-display-limit 0 ${_debs}
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message(STATUS "lintian, overrides shown:\n${_out}${_err}")
execute_process(
  COMMAND "${LINTIAN}" --fail-on error,warning --tag-display-limit 0 ${_debs}
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message(STATUS "lintian:\n${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "lintian reported errors or warnings (exit ${_rc})")
endif()
message(STATUS "lintian: no errors or warnings beyond the packages' own overrides")
