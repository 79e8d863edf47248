# Stand-in for TheRock's compiler/CMakeLists.txt in package.therock.real: the
# subprojects amd-llvm and amd-comgr, declared with TheRock's own functions, as
# projects that install forwarders to Debian's LLVM 22 and COMGR (building
# TheRock's compiler is out of reach of a test). Only what hsa-hotswap uses:
# amd-llvm's dist layout (lib/llvm/bin, the clang resource directory) and the
# CMake package amd_comgr with amd-comgr's link and RPATH directories.
therock_cmake_subproject_declare(amd-llvm
  EXTERNAL_SOURCE_DIR "${HOTSWAP_THEROCK_STUBS_DIR}/amd-llvm"
  BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}/amd-llvm"
  DISABLE_AMDGPU_TARGETS
  NO_INSTALL_RPATH
  CMAKE_ARGS
    "-DHOTSWAP_LLVM_ROOT=${HOTSWAP_THEROCK_LLVM_ROOT}"
)
therock_cmake_subproject_activate(amd-llvm)

therock_cmake_subproject_declare(amd-comgr
  EXTERNAL_SOURCE_DIR "${HOTSWAP_THEROCK_STUBS_DIR}/amd-comgr"
  BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}/amd-comgr"
  DISABLE_AMDGPU_TARGETS
  NO_INSTALL_RPATH
  INTERFACE_LINK_DIRS
    "lib"
  INTERFACE_INSTALL_RPATH_DIRS
    "lib"
)
therock_cmake_subproject_provide_package(amd-comgr amd_comgr lib/cmake/amd_comgr)
therock_cmake_subproject_activate(amd-comgr)
