# ctest package.therock.provider: build this project the way TheRock builds a
# subproject, following packaging/therock/ only, and check each result against
# TheRock's conventions.
#   1. therock_model.cmake evaluates emulation.entry.cmake as emulation/CMakeLists.txt
#      would (TheRock's keyword lists and path resolution, only the variables
#      TheRock defines, --warn-uninitialized): where the subproject's source,
#      build, stage and dist directories are, its deps and RPATH dirs, the
#      validate-shared-lib path, the artifact;
#   2. the dependency provider rejects a TheRock package that was not declared;
#   3. configure in the declared build dir with the declared CMAKE_ARGS, a
#      project_init like TheRock's (provider, RPATH override, debug split as
#      with THEROCK_SPLIT_DEBUG_INFO, release builds' default), build,
#      `cmake --install --strip` into the declared stage dir, copy it to dist;
#   4. the validate-shared-lib path exists and the library loads from there
#      (ctypes, as TheRock's validate_shared_library.py); it has RPATH $ORIGIN,
#      is stripped, and its debug info is in .build-id/ under its build ID;
#   5. check_artifact.py: the descriptor names the real stage dir and exactly the
#      declared components, which select exactly the staged files (lib, run: the
#      program, dbg: both binaries' debug files, dev, doc: notices and the manual
#      page; a file no component selects, TheRock would leave out silently);
#   6. check_topology.py: the BUILD_TOPOLOGY and package.json entries.
# Inputs: SOURCE_DIR, SCRATCH, GENERATOR, BUILD_TYPE, CARGO_TARGET_DIR, HSA_DIR,
#         COMGR_DIR, PYTHON, READELF.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/common.cmake")
if(CMAKE_VERSION VERSION_LESS 3.24)
  hotswap_skip_or_fail("dependency providers need CMake 3.24 (TheRock requires 3.25); this is ${CMAKE_VERSION}")
endif()
hotswap_require_tools(PYTHON READELF)
set(_here "${CMAKE_CURRENT_LIST_DIR}")
set(_therock_dir "${SOURCE_DIR}/packaging/therock")
# Packages TheRock builds and provides to subprojects (a representative set).
set(_provided hsa-runtime64 hsakmt amd_comgr rocm-core rocprofiler-register rocprofiler-sdk
              hip hip-lang hipcc LLVM Clang LLD rocm_smi amd_smi roctracer hotswap)
list(JOIN _provided "," _provided_arg)

function(run_out)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "OUTPUT" "COMMAND")
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${_out}" PARENT_SCOPE)
  endif()
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARG_COMMAND}")
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}\n${_out}")
  endif()
endfunction()

# --- 1. The declaration, evaluated as TheRock would -----------------------------
# TheRock's trees: THEROCK_SOURCE_DIR with emulation/ (the fragment and its
# descriptor), BUILD_TOPOLOGY.toml (the source set, its commit filled in as a
# release does) and optional-sources/hotswap (this checkout), THEROCK_BINARY_DIR.
set(_src_root "${SCRATCH}/therock-src")
set(_root "${SCRATCH}/therock-build")
file(REMOVE_RECURSE "${_src_root}" "${_root}")
file(MAKE_DIRECTORY "${_src_root}/emulation" "${_src_root}/optional-sources" "${_root}/emulation")
file(CREATE_LINK "${SOURCE_DIR}" "${_src_root}/optional-sources/hotswap" SYMBOLIC)
file(COPY "${_therock_dir}/artifact-hsa-hotswap.toml" DESTINATION "${_src_root}/emulation")
file(READ "${_therock_dir}/BUILD_TOPOLOGY.entry.toml" _topology)
string(REPLACE "0000000000000000000000000000000000000000" "1111111111111111111111111111111111111111"
       _topology "${_topology}")
file(WRITE "${_src_root}/BUILD_TOPOLOGY.toml" "${_topology}")
run_out(OUTPUT _topology_feature COMMAND "${PYTHON}" -c
  "import sys, tomllib; a = tomllib.load(open(sys.argv[1], 'rb'))['artifacts']['hsa-hotswap']; print(a['feature_name'], end='')"
  "${_therock_dir}/BUILD_TOPOLOGY.entry.toml")
set(_declared "${SCRATCH}/declared.cmake")
set(_model_dir "${SCRATCH}/model")
file(REMOVE_RECURSE "${_model_dir}")
file(WRITE "${_model_dir}/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.22)\nproject(therock_model NONE)\ninclude(\"${_here}/therock_model.cmake\")\n")
run_out(OUTPUT _model COMMAND "${CMAKE_COMMAND}" --warn-uninitialized
  -S "${_model_dir}" -B "${_model_dir}/build" -G "${GENERATOR}"
  "-DFRAGMENT=${_therock_dir}/emulation.entry.cmake" "-DROOT=${_root}" "-DSRC_ROOT=${_src_root}"
  "-DFEATURE=${_topology_feature}" "-DOUT=${_declared}")
message(STATUS "${_model}")
if(_model MATCHES "uninitialized variable[^\n]*")
  message(FATAL_ERROR "the fragment uses a variable TheRock does not define: ${CMAKE_MATCH_0}")
endif()
include("${_declared}")
foreach(_dir IN ITEMS SUBPROJECT_BINARY_DIR SUBPROJECT_STAGE_DIR)
  if(NOT IS_ABSOLUTE "${${_dir}}")
    message(FATAL_ERROR "TheRock resolves the ${_dir} to the relative path '${${_dir}}': "
                        "with an absolute EXTERNAL_SOURCE_DIR, BINARY_DIR must be absolute")
  endif()
endforeach()
foreach(_source IN ITEMS rust/hsa-hotswap/src/lib.rs Cargo.toml Cargo.lock)
  if(NOT "${_src_root}/optional-sources/hotswap/${_source}" IN_LIST SUBPROJECT_SOURCES)
    message(FATAL_ERROR "the subproject's SOURCES lack ${_source}: editing it would not rebuild")
  endif()
endforeach()
if(NOT PROVIDED_PACKAGE STREQUAL "${SUBPROJECT};hotswap;lib/cmake/hotswap" OR NOT ACTIVATED STREQUAL SUBPROJECT)
  message(FATAL_ERROR "the fragment must provide the package hotswap (lib/cmake/hotswap) and activate ${SUBPROJECT}")
endif()

# --- 2. An undeclared super-project package is rejected -------------------------
set(_probe "${SCRATCH}/undeclared")
file(REMOVE_RECURSE "${_probe}")
file(WRITE "${_probe}/src/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.22)\nproject(probe NONE)\nfind_package(hsakmt CONFIG QUIET)\n")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${_probe}/src" -B "${_probe}/build" -G "${GENERATOR}"
          "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=${_here}/provider.cmake"
          "-DHOTSWAP_THEROCK_PROVIDED=${_provided_arg}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0 OR NOT _out MATCHES "find_package\\(hsakmt\\) for a package available")
  message(FATAL_ERROR "the provider did not reject the undeclared package hsakmt:\n${_out}")
endif()
message(STATUS "provider rejects undeclared TheRock packages (hsakmt)")

# --- 3. Configure, build, stage and dist like TheRock ----------------------------
# The declared deps' packages: hsa-runtime64 from ROCR-Runtime, amd_comgr from amd-comgr.
set(_deps "")
if("ROCR-Runtime" IN_LIST SUBPROJECT_BUILD_DEPS OR "ROCR-Runtime" IN_LIST SUBPROJECT_RUNTIME_DEPS)
  string(APPEND _deps "hsa-runtime64=${HSA_DIR},")
endif()
if("amd-comgr" IN_LIST SUBPROJECT_BUILD_DEPS OR "amd-comgr" IN_LIST SUBPROJECT_RUNTIME_DEPS)
  string(APPEND _deps "amd_comgr=${COMGR_DIR},")
endif()
set(SPLIT_DEBUG_INFO ON)
set(_init "${SUBPROJECT_BINARY_DIR}/build_init.cmake")
configure_file("${_here}/project_init.cmake.in" "${_init}" @ONLY)
run_out(OUTPUT _configure COMMAND
    "${CMAKE_COMMAND}" -S "${SUBPROJECT_SOURCE_DIR}" -B "${SUBPROJECT_BUILD_DIR}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    "-DCMAKE_INSTALL_PREFIX=${SUBPROJECT_STAGE_DIR}"
    "-DTHEROCK_STAGE_INSTALL_ROOT=${SUBPROJECT_STAGE_DIR}"
    "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=${_init}"
    ${SUBPROJECT_CMAKE_ARGS}
    "-DHOTSWAP_CARGO_TARGET_DIR=${CARGO_TARGET_DIR}")
message(STATUS "configure:\n${_configure}")
foreach(_line IN ITEMS
    "Resolving super-project find_package\\(hsa-runtime64\\) from ${HSA_DIR}"
    "Resolving super-project find_package\\(amd_comgr\\) from ${COMGR_DIR}"
    "Resolving system find_package\\(Corrosion\\)"
    "TheRock model: INSTALL_RPATH '\\$ORIGIN' on hsa-hotswap"
    "TheRock model: splitting debug info for hsa-hotswap")
  if(NOT _configure MATCHES "${_line}")
    message(FATAL_ERROR "configure output lacks '${_line}'")
  endif()
endforeach()
run_out(COMMAND "${CMAKE_COMMAND}" --build "${SUBPROJECT_BUILD_DIR}" --config "${BUILD_TYPE}")
file(REMOVE_RECURSE "${SUBPROJECT_STAGE_DIR}" "${SUBPROJECT_DIST_DIR}")
run_out(COMMAND "${CMAKE_COMMAND}" --install "${SUBPROJECT_BUILD_DIR}" --config "${BUILD_TYPE}" --strip)
# dist: this stage plus the runtime deps' (ROCr and COMGR: their libraries).
file(COPY "${SUBPROJECT_STAGE_DIR}/" DESTINATION "${SUBPROJECT_DIST_DIR}")

# --- 4. The validate-shared-lib path, RPATH, strip, debug split -------------------
set(_lib "${SUBPROJECT_STAGE_DIR}/lib/libhsa-hotswap.so")
foreach(_validate IN LISTS VALIDATE_SHARED_LIBS)
  if(NOT EXISTS "${_validate}")
    message(FATAL_ERROR "therock_test_validate_shared_lib names ${_validate}, which the dist dir lacks")
  endif()
  run_out(OUTPUT _loaded COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
    "${PYTHON}" -c "import ctypes, sys; ctypes.CDLL(sys.argv[1]); print('loaded', sys.argv[1])" "${_validate}")
  message(STATUS "${_loaded}")
endforeach()
if(NOT VALIDATE_SHARED_LIBS)
  message(FATAL_ERROR "the fragment registers no therock_test_validate_shared_lib for the library")
endif()
capture(_dynamic "${READELF}" -d -W "${_lib}")
if(NOT _dynamic MATCHES "R(UN)?PATH\\) +Library r(un)?path: \\[\\$ORIGIN\\]")
  message(FATAL_ERROR "the staged library's RPATH is not TheRock's \$ORIGIN:\n${_dynamic}")
endif()
capture(_sections "${READELF}" -S -W "${_lib}")
if(_sections MATCHES "\\.debug_info")
  message(FATAL_ERROR "the staged library is not stripped (cmake --install --strip)")
endif()
# The program is installed as a file (cargo builds it), stripped by the
# project's own install step under --strip.
capture(_sections "${READELF}" -S -W "${SUBPROJECT_STAGE_DIR}/bin/hotswap")
if(_sections MATCHES "\\.symtab|\\.debug_info")
  message(FATAL_ERROR "the staged bin/hotswap is not stripped (cmake --install --strip)")
endif()
capture(_notes "${READELF}" -n "${_lib}")
if(NOT _notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "the staged library has no build ID")
endif()
set(_debug ".build-id/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug")
capture(_notes "${READELF}" -n "${SUBPROJECT_STAGE_DIR}/bin/hotswap")
if(NOT _notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "the staged bin/hotswap has no build ID")
endif()
set(_cli_debug ".build-id/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug")
foreach(_file IN ITEMS "${_debug}" "${_cli_debug}")
  capture(_sections "${READELF}" -S -W "${SUBPROJECT_STAGE_DIR}/${_file}")
  if(BUILD_TYPE MATCHES "^(Release|MinSizeRel)$")
    if(_sections MATCHES "\\.debug_info")
      message(FATAL_ERROR "${_file}: a ${BUILD_TYPE} build carries debug information")
    endif()
  elseif(NOT _sections MATCHES "\\.debug_info")
    message(FATAL_ERROR "${_file} holds no debug information")
  endif()
endforeach()

# --- 5. The artifact descriptor ---------------------------------------------------
string(TOLOWER "${BUILD_TYPE}" _config)
if(_config STREQUAL "")
  set(_config noconfig)
endif()
set(_cmake lib/cmake/hotswap)
list(JOIN ARTIFACT_COMPONENTS "," _components)
set(_expect
    "lib=lib/libhsa-hotswap.so"
    "dbg=${_debug},${_cli_debug}"
    "dev=include/hotswap/hotswap.h,include/hotswap/hotswap_gate.h,${_cmake}/hotswap-config.cmake,${_cmake}/hotswap-config-version.cmake,${_cmake}/hotswap-targets.cmake,${_cmake}/hotswap-targets-${_config}.cmake"
    "doc=share/doc/hotswap/LICENSE,share/doc/hotswap/THIRD-PARTY-NOTICES,share/man/man1/hotswap.1.gz"
    "run=bin/hotswap")
run_out(OUTPUT _check COMMAND "${PYTHON}" "${_here}/check_artifact.py"
    "${ARTIFACT_DESCRIPTOR}" "${_root}" "${SUBPROJECT_REL_STAGE_DIR}" "${_components}" ${_expect})
message(STATUS "${_check}")
# ... and the check can fail: a component expected to select nothing.
execute_process(COMMAND "${PYTHON}" "${_here}/check_artifact.py"
                "${ARTIFACT_DESCRIPTOR}" "${_root}" "${SUBPROJECT_REL_STAGE_DIR}" "${_components}" "lib=" "dev="
                RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
if(_rc EQUAL 0)
  message(FATAL_ERROR "check_artifact.py accepted a wrong expectation")
endif()

# --- 6. BUILD_TOPOLOGY and package.json entries -------------------------------------
run_out(OUTPUT _topology COMMAND "${PYTHON}" "${_here}/check_topology.py"
    "${_therock_dir}/BUILD_TOPOLOGY.entry.toml" "${_therock_dir}/package.entry.json"
    "${_declared}" "${_src_root}" "${_therock_dir}/emulation.entry.cmake")
message(STATUS "${_topology}")
message(STATUS "TheRock-style build passed")
