# ctest header.up_to_date: the committed include/hotswap/hotswap.h is exactly what
# the pinned cbindgen generates from the Rust sources. Without the pinned cbindgen
# the test is skipped (it prints "SKIP:"), unless REQUIRED is true (CI).
cmake_minimum_required(VERSION 3.22)
if(NOT FOUND_VERSION STREQUAL PINNED_VERSION)
  set(_why "cbindgen ${PINNED_VERSION} is required to verify the header (found: '${FOUND_VERSION}'); install it with: cargo install cbindgen --locked --version ${PINNED_VERSION}")
  if(REQUIRED)
    message(FATAL_ERROR "${_why}")
  endif()
  message("SKIP: ${_why}")
  return()
endif()
file(MAKE_DIRECTORY "${SCRATCH}")
execute_process(
  COMMAND "${CBINDGEN}" --config "${CONFIG}" --crate hsa-hotswap --output "${SCRATCH}/hotswap.h" "${CRATE_DIR}"
  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cbindgen failed:\n${_err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${SCRATCH}/hotswap.h" "${HEADER}"
  RESULT_VARIABLE _same)
if(NOT _same EQUAL 0)
  execute_process(COMMAND diff -u "${HEADER}" "${SCRATCH}/hotswap.h")
  message(FATAL_ERROR "include/hotswap/hotswap.h is out of date: run `cmake --build <build> --target hotswap-header` and commit it")
endif()
message(STATUS "include/hotswap/hotswap.h matches cbindgen ${PINNED_VERSION}")
