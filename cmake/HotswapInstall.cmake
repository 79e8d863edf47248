# Install tree and the CMake package `hotswap`:
#   lib/libhsa-hotswap.so
#   include/hotswap/hotswap.h, hotswap_gate.h
#   lib/cmake/hotswap/hotswap-config.cmake, hotswap-config-version.cmake,
#   hotswap-targets.cmake (+ per-configuration file)
#   share/doc/hotswap/LICENSE, THIRD-PARTY-NOTICES (HotswapLicenses.cmake)
#   bin/hotswap, share/man/man1/hotswap.1.gz (HotswapCli.cmake, component cli)
# find_package(hotswap CONFIG) gives hotswap::hsa-hotswap (the library and its C
# API), hotswap::gate (header-only constants, no link dependency) and
# hotswap_TOOL_LIBRARY. A build-tree package (hotswap_DIR=<build>) works the same way.
include(CMakePackageConfigHelpers)

set(HOTSWAP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hotswap" CACHE STRING
  "Where hotswap-config.cmake is installed, relative to the prefix")

# RUNPATH of the installed library. ROCr and COMGR are found through the
# dynamic linker; where the library is installed outside the system's library
# directories (/opt/rocm/lib), they sit beside it, and ld.so.conf may not list
# that directory (with HSA_TOOLS_LIB set, ROCr then reports "Tool lib failed to
# load"). `auto`: $ORIGIN unless the libdir is one the linker searches anyway
# (/usr/lib/<multiarch>, /usr/lib64), where a RUNPATH is neither needed nor
# wanted by distributions. TheRock replaces it with its own origin-relative RPATH.
set(HOTSWAP_INSTALL_RPATH "auto" CACHE STRING
  "RUNPATH of the installed libhsa-hotswap.so: auto, none, or a value such as \$ORIGIN")
if(HOTSWAP_INSTALL_RPATH STREQUAL "auto")
  set(_hotswap_system_dirs ${CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES}
                           ${CMAKE_C_IMPLICIT_LINK_DIRECTORIES})
  if("${CMAKE_INSTALL_FULL_LIBDIR}" IN_LIST _hotswap_system_dirs)
    set(_hotswap_rpath "")
  else()
    set(_hotswap_rpath "\$ORIGIN")
  endif()
elseif(HOTSWAP_INSTALL_RPATH STREQUAL "none")
  set(_hotswap_rpath "")
else()
  set(_hotswap_rpath "${HOTSWAP_INSTALL_RPATH}")
endif()
set_target_properties(hsa-hotswap PROPERTIES INSTALL_RPATH "${_hotswap_rpath}")
message(STATUS "hotswap: installed library's RUNPATH: '${_hotswap_rpath}'")

# hotswap::gate: the header-only part of the C API (hotswap/hotswap_gate.h).
add_library(hotswap-gate INTERFACE)
add_library(hotswap::gate ALIAS hotswap-gate)
set_target_properties(hotswap-gate PROPERTIES EXPORT_NAME gate)
target_include_directories(hotswap-gate INTERFACE
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")

install(TARGETS hsa-hotswap hotswap-gate
  EXPORT hotswap-targets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
install(FILES "${PROJECT_SOURCE_DIR}/include/hotswap/hotswap.h"
              "${PROJECT_SOURCE_DIR}/include/hotswap/hotswap_gate.h"
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
# 0.x: every minor release may change the C API, so only the same minor is
# compatible (SameMajorVersion would promise 0.1 to 0.9); from 1.0 on, SameMajorVersion.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_hotswap_compatibility SameMinorVersion)
else()
  set(_hotswap_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/hotswap-config-version.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY ${_hotswap_compatibility})
install(FILES
  "${PROJECT_BINARY_DIR}/hotswap-config.cmake"
  "${PROJECT_BINARY_DIR}/hotswap-config-version.cmake"
  DESTINATION "${HOTSWAP_INSTALL_CMAKEDIR}"
  COMPONENT devel)

# Build-tree package: find_package(hotswap) with hotswap_DIR=<build dir>.
export(EXPORT hotswap-targets
  FILE "${PROJECT_BINARY_DIR}/hotswap-targets.cmake"
  NAMESPACE hotswap::)
