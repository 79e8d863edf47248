# Build options. Every option is documented in README.md ("Build options").
include(GNUInstallDirs)

option(HOTSWAP_BUILD_TESTS "Build and register the test suite with ctest" ${PROJECT_IS_TOP_LEVEL})
option(HOTSWAP_REQUIRE_CORROSION
  "Fail unless find_package(Corrosion) finds Corrosion (for superbuilds that provide it)" OFF)
option(HOTSWAP_REQUIRE_CBINDGEN
  "Fail the header check instead of skipping it when the pinned cbindgen is missing" OFF)
set(HOTSWAP_CBINDGEN_VERSION "0.29.4" CACHE STRING
  "The cbindgen version the committed header is generated and verified with")

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "Build type" FORCE)
endif()
