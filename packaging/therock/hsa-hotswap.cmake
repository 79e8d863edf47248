# TheRock: the subproject hsa-hotswap. Add this block to TheRock's
# core/CMakeLists.txt after ROCR-Runtime (inside the block that declares it),
# and artifact-hsa-hotswap.toml next to it. The sources are the external git
# source "hotswap" of BUILD_TOPOLOGY.toml's source set hsa-hotswap, fetched to
# optional-sources/hotswap; the feature THEROCK_ENABLE_HSA_HOTSWAP comes from the
# artifact entry there (BUILD_TOPOLOGY.entry.toml).
#
# - BINARY_DIR is absolute, as for every subproject whose source is absolute
#   (TheRock resolves a relative BINARY_DIR only against a relative source): the
#   stage directory is then core/hsa-hotswap/stage, the artifact's key.
# - No GPU code (DISABLE_AMDGPU_TARGETS) and the host compiler (no
#   COMPILER_TOOLCHAIN): the library is a C stub around a Rust archive built by
#   cargo, which must be on PATH (TheRock's build images install Rust).
# - ROCR-Runtime and amd-comgr: build deps (their CMake packages hsa-runtime64 and
#   amd_comgr, resolved by TheRock's dependency provider) and runtime deps
#   (libhsa-hotswap.so records both in NEEDED and ships beside them; their
#   INTERFACE_INSTALL_RPATH_DIRS "lib" give the library RPATH $ORIGIN).
# - INTERFACE_LINK_DIRS / INTERFACE_INSTALL_RPATH_DIRS "lib": subprojects that
#   declare hsa-hotswap as a runtime dep link and find the library there.
# - Corrosion is not a TheRock package: find_package(Corrosion) falls through to
#   the system and, without one, the project builds its crate with its in-tree
#   cargo module. -DHOTSWAP_BUILD_TESTS=OFF: the tests need tools TheRock does
#   not provide (clang-22, valgrind, lintian).
# - Debug info: with THEROCK_SPLIT_DEBUG_INFO, TheRock's post-subproject hook
#   splits it into .build-id/<xx>/<id>.debug, the artifact's dbg component.
if(THEROCK_ENABLE_HSA_HOTSWAP)
  therock_cmake_subproject_declare(hsa-hotswap
    EXTERNAL_SOURCE_DIR "${THEROCK_SOURCE_DIR}/optional-sources/hotswap"
    BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}/hsa-hotswap"
    DISABLE_AMDGPU_TARGETS
    BACKGROUND_BUILD
    CMAKE_ARGS
      -DHOTSWAP_BUILD_TESTS=OFF
    BUILD_DEPS
      amd-comgr
      ROCR-Runtime
    RUNTIME_DEPS
      amd-comgr
      ROCR-Runtime
    INTERFACE_LINK_DIRS
      "lib"
    INTERFACE_INSTALL_RPATH_DIRS
      "lib"
  )
  therock_cmake_subproject_provide_package(hsa-hotswap hotswap lib/cmake/hotswap)
  therock_cmake_subproject_activate(hsa-hotswap)

  # dlopen()s the library from the subproject's dist directory (with its runtime
  # deps), as ROCr does with HSA_TOOLS_LIB.
  therock_test_validate_shared_lib(
    PATH hsa-hotswap/dist/lib
    LIB_NAMES libhsa-hotswap.so
  )

  therock_provide_artifact(hsa-hotswap
    TARGET_NEUTRAL
    DESCRIPTOR artifact-hsa-hotswap.toml
    COMPONENTS
      dbg
      dev
      doc
      lib
      run
    SUBPROJECT_DEPS
      hsa-hotswap
  )
endif()
