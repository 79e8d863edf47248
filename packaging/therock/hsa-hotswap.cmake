# TheRock: declare hotswap as the subproject `hsa-hotswap`. Add this block to
# TheRock's core/CMakeLists.txt (next to ROCR-Runtime), with the hotswap sources
# at THEROCK_HOTSWAP_SOURCE_DIR (e.g. a submodule), and core/artifact-hsa-hotswap.toml
# next to it. Requires the feature THEROCK_ENABLE_HSA_HOTSWAP (BUILD_TOPOLOGY.entry.toml).
#
# - No GPU code: DISABLE_AMDGPU_TARGETS, host compiler (no COMPILER_TOOLCHAIN).
# - ROCR-Runtime and amd-comgr are build deps (their CMake packages hsa-runtime64
#   and amd_comgr are resolved by TheRock's dependency provider) and runtime deps
#   (libhsa-hotswap.so records both in NEEDED and is shipped beside them).
# - Rust: cargo must be on PATH (TheRock's images install Rust 1.95). Corrosion is
#   not needed: the project falls back to its in-tree cargo module when
#   find_package(Corrosion) (resolved by the system, not by TheRock) finds nothing.
# - The library has no INSTALL_RPATH needs of its own; TheRock's origin-relative
#   RPATH applies to it like to any CMake SHARED target.
if(THEROCK_ENABLE_HSA_HOTSWAP)
  therock_cmake_subproject_declare(hsa-hotswap
    EXTERNAL_SOURCE_DIR "${THEROCK_HOTSWAP_SOURCE_DIR}"
    BINARY_DIR "hsa-hotswap"
    DISABLE_AMDGPU_TARGETS
    NO_MERGE_COMPILE_COMMANDS
    CMAKE_ARGS
      -DHOTSWAP_BUILD_TESTS=OFF
    BUILD_DEPS
      amd-comgr
      ROCR-Runtime
    RUNTIME_DEPS
      amd-comgr
      ROCR-Runtime
  )
  therock_cmake_subproject_provide_package(hsa-hotswap hotswap lib/cmake/hotswap)
  therock_cmake_subproject_activate(hsa-hotswap)

  therock_provide_artifact(hsa-hotswap
    TARGET_NEUTRAL
    DESCRIPTOR artifact-hsa-hotswap.toml
    COMPONENTS
      lib
      dev
    SUBPROJECT_DEPS
      hsa-hotswap
  )
endif()
