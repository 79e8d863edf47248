# Install tree and the CMake package `hotswap`:
#   lib/libhsa-hotswap.so
#   include/hotswap/hotswap.h
#   lib/cmake/hotswap/hotswap-config.cmake, hotswap-config-version.cmake,
#   hotswap-targets.cmake (+ per-configuration file)
# find_package(hotswap CONFIG) gives hotswap::hsa-hotswap and hotswap_TOOL_LIBRARY.
# A build-tree package (hotswap_DIR=<build>) works the same way.
include(CMakePackageConfigHelpers)

set(HOTSWAP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hotswap" CACHE STRING
  "Where hotswap-config.cmake is installed, relative to the prefix")

install(TARGETS hsa-hotswap
  EXPORT hotswap-targets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
install(FILES "${PROJECT_SOURCE_DIR}/include/hotswap/hotswap.h"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/hotswap" COMPONENT devel)
install(EXPORT hotswap-targets
  FILE hotswap-targets.cmake
  NAMESPACE hotswap::
  DESTINATION "${HOTSWAP_INSTALL_CMAKEDIR}"
  COMPONENT devel)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/hotswap-config.cmake.in"
  "${PROJECT_BINARY_DIR}/hotswap-config.cmake"
  INSTALL_DESTINATION "${HOTSWAP_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/hotswap-config-version.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/hotswap-config.cmake"
  "${PROJECT_BINARY_DIR}/hotswap-config-version.cmake"
  DESTINATION "${HOTSWAP_INSTALL_CMAKEDIR}"
  COMPONENT devel)

# Build-tree package: find_package(hotswap) with hotswap_DIR=<build dir>.
export(EXPORT hotswap-targets
  FILE "${PROJECT_BINARY_DIR}/hotswap-targets.cmake"
  NAMESPACE hotswap::)
