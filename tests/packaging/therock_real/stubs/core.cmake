# Stand-in for TheRock's core/CMakeLists.txt in package.therock.real: the
# subproject ROCR-Runtime as a project that installs a forwarder to Debian's
# hsa-runtime64 package, with ROCR-Runtime's package names and link and RPATH
# directories.
therock_cmake_subproject_declare(ROCR-Runtime
  EXTERNAL_SOURCE_DIR "${HOTSWAP_THEROCK_STUBS_DIR}/rocr-runtime"
  BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}/ROCR-Runtime"
  DISABLE_AMDGPU_TARGETS
  NO_INSTALL_RPATH
  INTERFACE_LINK_DIRS
    "lib"
  INTERFACE_INSTALL_RPATH_DIRS
    "lib"
)
therock_cmake_subproject_provide_package(ROCR-Runtime hsa-runtime64 lib/cmake/hsa-runtime64)
therock_cmake_subproject_activate(ROCR-Runtime)
