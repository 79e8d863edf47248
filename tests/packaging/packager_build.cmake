# ctest package.packager_build: the packaging configuration of the README
# (-DHOTSWAP_BUILD_TESTS=OFF, prefix /usr) configures, builds and packages
# without looking for the tests' tools: the configure trace must contain no
# find_program() of clang-22, llc-22, llvm-readelf-22, valgrind, lintian or
# rpmlint, and the cache no entry for them. (They are installed on this
# machine for the tests, so their absence cannot be shown by removing them; the
# trace shows the build never asks for them.) And cpack refuses an RPM of this
# Debian layout.
# Inputs: SOURCE_DIR, SCRATCH, GENERATOR, CARGO_TARGET_DIR, HSA_DIR, COMGR_DIR, CPACK.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")

set(_build "${SCRATCH}/build")
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")
set(_trace "${SCRATCH}/configure-trace.txt")
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DHOTSWAP_BUILD_TESTS=OFF
    "-Dhsa-runtime64_DIR=${HSA_DIR}" "-Damd_comgr_DIR=${COMGR_DIR}"
    "-DHOTSWAP_CARGO_TARGET_DIR=${CARGO_TARGET_DIR}"
    --trace-expand "--trace-redirect=${_trace}")
file(STRINGS "${_trace}" _finds REGEX "find_program\\(")
set(_test_tools "clang-22|llc-22|llvm-[a-z]+-22|valgrind|lintian|rpmlint")
set(_bad "")
foreach(_line IN LISTS _finds)
  if(_line MATCHES "(^|[ (;])(${_test_tools})([ );]|$)")
    string(APPEND _bad "  ${_line}\n")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "the packaging configuration looks for the tests' tools:\n${_bad}")
endif()
list(LENGTH _finds _n)
if(_n LESS 3)
  message(FATAL_ERROR "the trace shows only ${_n} find_program() calls: not a usable trace")
endif()
file(STRINGS "${_build}/CMakeCache.txt" _cached REGEX "^HOTSWAP_(CLANG22|LLC22|READELF22|VALGRIND)[:=]")
if(_cached)
  message(FATAL_ERROR "the cache has entries for the tests' tools: ${_cached}")
endif()
message(STATUS "${_n} find_program() calls, none for ${_test_tools}")
run("${CMAKE_COMMAND}" --build "${_build}")
run("${CPACK}" -B "${SCRATCH}/packages" --config "${_build}/CPackConfig.cmake")
file(GLOB _debs "${SCRATCH}/packages/*.deb")
list(LENGTH _debs _n)
if(NOT _n EQUAL 3)
  message(FATAL_ERROR "expected three DEBs from the packaging configuration (library, development "
                      "files, command line), got: ${_debs}")
endif()
message(STATUS "packager build without the tests' tools: ${_debs}")
# An RPM of this Debian layout would install into /usr/lib/<multiarch>, where RPM
# distributions do not look: cpack must refuse it and say how to get one.
execute_process(COMMAND "${CPACK}" -G RPM -B "${SCRATCH}/rpm" --config "${_build}/CPackConfig.cmake"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0 OR NOT _out MATCHES "-DCMAKE_INSTALL_LIBDIR=lib64")
  message(FATAL_ERROR "cpack -G RPM of the Debian layout did not refuse with a hint:\n${_out}")
endif()
message(STATUS "cpack refuses an RPM of the Debian layout")
