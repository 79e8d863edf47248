# ctest package.licenses.notices: the licence information the build generated
# for the install tree (<build>/licenses, cmake/HotswapLicenses.cmake) covers
# every crate Cargo.lock links into the library and the program and every crate
# whose objects are in the Rust archive; and the check
# fails when one crate's notice, copyright paragraph, RPM licence term or
# Static-Built-Using entry is missing (each removed in turn from a copy).
# Inputs: PYTHON, SCRIPT, CARGO, RUSTC, MANIFEST, ARCHIVE, LICENSES_DIR, SCRATCH.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

include("${LICENSES_DIR}/licenses.cmake")   # HOTSWAP_RPM_LICENSE, HOTSWAP_DEB_STATIC_BUILT_USING
# The workspace members whose artifacts the install tree has (the library and,
# when built, the program), as the build generated them.
file(READ "${LICENSES_DIR}/crates.json" _json)
string(JSON _n LENGTH "${_json}" members)
set(_members)
math(EXPR _last "${_n} - 1")
foreach(_i RANGE ${_last})
  string(JSON _member GET "${_json}" members ${_i})
  list(APPEND _members --member "${_member}")
endforeach()
if(NOT "hsa-hotswap" IN_LIST _members)
  message(FATAL_ERROR "${LICENSES_DIR}/crates.json: the notices do not cover the library: ${_members}")
endif()
set(_base "${PYTHON}" "${SCRIPT}" check --cargo "${CARGO}" --rustc "${RUSTC}" --manifest "${MANIFEST}"
          --archive "${ARCHIVE}" ${_members})

function(check expect_ok what notices copyright rpm_license sbu)
  execute_process(COMMAND ${_base} --notices "${notices}" --copyright "${copyright}"
                          --rpm-license "${rpm_license}" --static-built-using "${sbu}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message(STATUS "${what} (exit ${_rc}):\n${_out}")
  if(expect_ok AND NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what}: the generated licence information is incomplete")
  elseif(NOT expect_ok AND _rc EQUAL 0)
    message(FATAL_ERROR "${what}: the check accepted incomplete licence information")
  endif()
endfunction()

set(_notices "${LICENSES_DIR}/THIRD-PARTY-NOTICES")
set(_copyright "${LICENSES_DIR}/copyright")
check(TRUE "generated notices" "${_notices}" "${_copyright}" "${HOTSWAP_RPM_LICENSE}" "${HOTSWAP_DEB_STATIC_BUILT_USING}")

# One linked crate, taken from the generated list, goes missing in each place.
string(JSON _name GET "${_json}" crates 0 name)
string(JSON _version GET "${_json}" crates 0 version)
string(JSON _licence GET "${_json}" crates 0 license)
message(STATUS "dropping ${_name} ${_version} (${_licence}) from each output in turn")
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")

# (Python: CMake's string functions are too slow on the half-megabyte file.)
execute_process(COMMAND "${PYTHON}" -c
"import sys
text = open(sys.argv[1], encoding='utf-8').read()
rule = '=' * 78 + '\\n'
head = rule + sys.argv[2] + '\\n'
start = text.index(head)
body = text.index(rule, start + len(head)) + len(rule)
end = text.index(rule, body)
open(sys.argv[3], 'w', encoding='utf-8').write(text[:start] + text[end:])"
                "${_notices}" "${_name} ${_version}" "${SCRATCH}/THIRD-PARTY-NOTICES"
                COMMAND_ERROR_IS_FATAL ANY)
check(FALSE "notices without ${_name}" "${SCRATCH}/THIRD-PARTY-NOTICES" "${_copyright}"
      "${HOTSWAP_RPM_LICENSE}" "${HOTSWAP_DEB_STATIC_BUILT_USING}")

file(READ "${_copyright}" _text)
string(REPLACE "Files: cargo-registry/${_name}-${_version}/*" "Files: elsewhere/*" _text "${_text}")
file(WRITE "${SCRATCH}/copyright" "${_text}")
check(FALSE "copyright without ${_name}" "${_notices}" "${SCRATCH}/copyright"
      "${HOTSWAP_RPM_LICENSE}" "${HOTSWAP_DEB_STATIC_BUILT_USING}")

string(REPLACE "rust-${_name} (= ${_version})" "" _sbu "${HOTSWAP_DEB_STATIC_BUILT_USING}")
string(REPLACE "_" "-" _deb_name "${_name}")
string(REPLACE "rust-${_deb_name} (= ${_version})" "" _sbu "${_sbu}")
check(FALSE "Static-Built-Using without ${_name}" "${_notices}" "${_copyright}" "${HOTSWAP_RPM_LICENSE}" "${_sbu}")

check(FALSE "RPM License without the crates' terms" "${_notices}" "${_copyright}" "MIT" "${HOTSWAP_DEB_STATIC_BUILT_USING}")
message(STATUS "the notices are complete, and the check fails on a missing one")
