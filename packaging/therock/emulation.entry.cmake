# hotswap's fragment for TheRock: this block goes into emulation/CMakeLists.txt
# after rocjitsu-hotswap's, with artifact-hsa-hotswap.toml beside it
# (apply_to_therock.py inserts everything below this paragraph).

##############################################################################
# hsa-hotswap
#
# libhsa-hotswap.so, an HSA tools library (HSA_TOOLS_LIB) that rewrites
# gfx1250 B0 code objects for A0 GPUs while ROCr loads them, and the `hotswap`
# command line. Like rocjitsu-hotswap, a gfx1250 A0 bring-up hook. Its source
# is the optional source set optional-hotswap (optional-sources/hotswap);
# THEROCK_ENABLE_HSA_HOTSWAP is off on Linux unless THEROCK_FLAG_INCLUDE_HSA_HOTSWAP
# is on, so a default build neither needs nor declares it.
#
# - amd-llvm, as the core runtime subprojects on Linux. The Rust part is built
#   by cargo (on PATH) and cannot take THEROCK_SANITIZER's flags: with a
#   sanitizer the configure stops rather than ship an uninstrumented library
#   into an instrumented ROCr, unless hsa-hotswap_SANITIZER is defined (empty:
#   build it uninstrumented, knowingly).
# - RUNTIME_DEPS only (they are build deps too): the CMake packages
#   hsa-runtime64 and amd_comgr; their INTERFACE_INSTALL_RPATH_DIRS give the
#   library RUNPATH $ORIGIN.
# - Rebuilds follow the subproject's SOURCES: the C and header files
#   (therock_cmake_subproject_glob_c_sources) and, globbed below, the Rust
#   sources and manifests; cargo then decides what to recompile.
# - Tests follow THEROCK_BUILD_TESTING, with amd-llvm's tools in place of the
#   LLVM 22 ones the project looks for; the build test runs the labels that need
#   nothing outside TheRock.
# - Debug information: none in Release. With THEROCK_SPLIT_DEBUG_INFO the
#   post-subproject hook splits the library's into .build-id/, and the project
#   does the same for bin/hotswap (built by cargo: an imported target, which the
#   hook does not see).
##############################################################################
if(THEROCK_ENABLE_HSA_HOTSWAP)
  set(_hsa_hotswap_sanitizer "${THEROCK_SANITIZER}")
  if(DEFINED hsa-hotswap_SANITIZER)
    set(_hsa_hotswap_sanitizer "${hsa-hotswap_SANITIZER}")
  endif()
  if(_hsa_hotswap_sanitizer)
    message(FATAL_ERROR
      "hsa-hotswap cannot be built with sanitizer ${_hsa_hotswap_sanitizer}: its "
      "Rust code is not instrumented, and ROCr would load it through HSA_TOOLS_LIB. "
      "Configure with -DTHEROCK_ENABLE_HSA_HOTSWAP=OFF, or with "
      "-Dhsa-hotswap_SANITIZER= to build it uninstrumented knowingly.")
  endif()

  # The source set must pin a real hotswap commit (the entry's placeholder is
  # all zeros until a release fills it in) and must have been fetched.
  file(STRINGS "${THEROCK_SOURCE_DIR}/BUILD_TOPOLOGY.toml" _hsa_hotswap_source_line
    REGEX "name = \"hotswap\".*path = \"optional-sources/hotswap\"")
  if(NOT _hsa_hotswap_source_line MATCHES "commit = \"([0-9a-f]+)\"")
    message(FATAL_ERROR "hsa-hotswap: BUILD_TOPOLOGY.toml has no external git source \"hotswap\" with a commit")
  endif()
  set(_hsa_hotswap_commit "${CMAKE_MATCH_1}")
  if(_hsa_hotswap_commit MATCHES "^0+$")
    message(FATAL_ERROR
      "hsa-hotswap: the source set optional-hotswap still pins the placeholder commit "
      "${_hsa_hotswap_commit}; set it to the hotswap release to build "
      "(hotswap's packaging/therock/apply_to_therock.py --hotswap-commit).")
  endif()
  set(_hsa_hotswap_source_dir "${THEROCK_SOURCE_DIR}/optional-sources/hotswap")
  if(NOT EXISTS "${_hsa_hotswap_source_dir}/CMakeLists.txt")
    message(FATAL_ERROR
      "hsa-hotswap is enabled but its source is missing: run "
      "build_tools/fetch_sources.py --source-sets optional-hotswap "
      "(or configure with -DTHEROCK_ENABLE_HSA_HOTSWAP=OFF)")
  endif()
  set(_hsa_hotswap_test_args)
  if(THEROCK_BUILD_TESTING)
    therock_cmake_subproject_dist_dir(_hsa_hotswap_llvm_dist amd-llvm)
    set(_hsa_hotswap_llvm_bin "${_hsa_hotswap_llvm_dist}/lib/llvm/bin")
    set(_hsa_hotswap_test_args
      -DHOTSWAP_CLANG22=${_hsa_hotswap_llvm_bin}/clang
      -DHOTSWAP_LLC22=${_hsa_hotswap_llvm_bin}/llc
      -DHOTSWAP_LLD22=${_hsa_hotswap_llvm_bin}/ld.lld
      -DHOTSWAP_LLVM_MC22=${_hsa_hotswap_llvm_bin}/llvm-mc
      -DHOTSWAP_OBJDUMP22=${_hsa_hotswap_llvm_bin}/llvm-objdump
      -DHOTSWAP_READELF22=${_hsa_hotswap_llvm_bin}/llvm-readelf
      -DHOTSWAP_BUNDLER22=${_hsa_hotswap_llvm_bin}/clang-offload-bundler
    )
  endif()

  therock_cmake_subproject_declare(hsa-hotswap
    EXTERNAL_SOURCE_DIR "${_hsa_hotswap_source_dir}"
    BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}/hsa-hotswap"
    DISABLE_AMDGPU_TARGETS
    BACKGROUND_BUILD
    COMPILER_TOOLCHAIN
      amd-llvm
    CMAKE_ARGS
      -DHOTSWAP_BUILD_TESTS=${THEROCK_BUILD_TESTING}
      ${_hsa_hotswap_test_args}
    RUNTIME_DEPS
      amd-comgr
      ROCR-Runtime
    INTERFACE_LINK_DIRS
      "lib"
    INTERFACE_INSTALL_RPATH_DIRS
      "lib"
  )
  therock_cmake_subproject_glob_c_sources(hsa-hotswap SUBDIRS cmake include)
  file(GLOB_RECURSE _hsa_hotswap_rust_sources LIST_DIRECTORIES FALSE CONFIGURE_DEPENDS
    "${_hsa_hotswap_source_dir}/rust/*.rs"
    "${_hsa_hotswap_source_dir}/rust/*/Cargo.toml"
    "${_hsa_hotswap_source_dir}/rust/*/cbindgen.toml"
  )
  target_sources(hsa-hotswap PRIVATE
    ${_hsa_hotswap_rust_sources}
    "${_hsa_hotswap_source_dir}/Cargo.toml"
    "${_hsa_hotswap_source_dir}/Cargo.lock"
  )
  therock_cmake_subproject_provide_package(hsa-hotswap hotswap lib/cmake/hotswap)
  therock_cmake_subproject_activate(hsa-hotswap)

  therock_cmake_subproject_build_test(hsa-hotswap
    COMMAND "${CMAKE_CTEST_COMMAND}" --output-on-failure --no-tests=error
            -L "^(rust|abi|capi|cli)$"
  )

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
