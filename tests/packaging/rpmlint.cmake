# ctest package.rpmlint.<layout>: rpmlint on the RPMs built by
# package.build.<layout>. Fails on any error except those filtered, each with
# its reason, in the configuration files (CONFIGS, comma-separated:
# packaging/rpm/rpmlint.toml, plus rpmlint-opt.toml for a prefix under /opt).
# Inputs: SCRATCH, RPMLINT, CONFIGS.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")
hotswap_require_tools(RPMLINT)

file(GLOB _rpms "${SCRATCH}/packages/*.rpm")
list(LENGTH _rpms _n)
if(_n LESS 3)
  message(FATAL_ERROR "expected the hsa-hotswap RPMs (package.contents checks which) in ${SCRATCH}/packages, found: ${_rpms}")
endif()
# rpmlint replaces, not extends, a list given again by a later -c file: merge
# the Filters entries of all files into one configuration, with their other
# settings (one-line `Name = value`).
string(REPLACE "," ";" CONFIGS "${CONFIGS}")
set(_filters "")
set(_settings "")
foreach(_config IN LISTS CONFIGS)
  file(STRINGS "${_config}" _lines REGEX "^ +'.*',$")
  foreach(_line IN LISTS _lines)
    string(APPEND _filters "${_line}\n")
  endforeach()
  file(STRINGS "${_config}" _lines REGEX "^[A-Za-z]+ = [^[].*$")
  foreach(_line IN LISTS _lines)
    string(APPEND _settings "${_line}\n")
  endforeach()
endforeach()
set(_merged "${SCRATCH}/rpmlint-filters.toml")
file(WRITE "${_merged}" "${_settings}Filters = [\n${_filters}]\n")
execute_process(COMMAND "${RPMLINT}" -c "${_merged}" ${_rpms}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message(STATUS "rpmlint:\n${_out}${_err}")
# rpmlint exits non-zero on errors (and on badness); the summary line counts them.
if(NOT _out MATCHES "packages and 0 specfiles checked; 0 errors,")
  message(FATAL_ERROR "rpmlint reported errors beyond the documented ones (exit ${_rc})")
endif()
message(STATUS "rpmlint: no errors beyond the documented ones")
