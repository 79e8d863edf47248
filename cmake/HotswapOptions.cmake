# Build options. Every option is documented in docs/building.md ("Building").
include(GNUInstallDirs)

# OFF for packaging: the tests need tools building does not (clang-22, valgrind, ...).
option(HOTSWAP_BUILD_TESTS "Build and register the test suite with ctest" ${PROJECT_IS_TOP_LEVEL})
option(HOTSWAP_REQUIRE_CORROSION
  "Fail unless Corrosion is used (loaded by the including project, or find_package(Corrosion) finds it)" OFF)
option(HOTSWAP_REQUIRE_CBINDGEN
  "Fail the header check instead of skipping it when the pinned cbindgen is missing" OFF)
set(HOTSWAP_CBINDGEN_VERSION "0.29.4" CACHE STRING
  "The cbindgen version the committed header is generated and verified with")

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "Build type" FORCE)
endif()
