# ctest package.therock.provider: build this project the way TheRock builds a
# subproject, then check the artifact descriptor against the staged install.
#   1. the provider rejects a TheRock-provided package that was not declared;
#   2. configure with the provider (CMAKE_PROJECT_TOP_LEVEL_INCLUDES) resolving
#      hsa-runtime64 and amd_comgr to explicit directories, build, install into
#      <root>/core/hsa-hotswap/stage (TheRock's layout for BINARY_DIR hsa-hotswap);
#   3. check_artifact.py: lib selects the .so, dev the header and CMake files.
# Inputs: SOURCE_DIR, SCRATCH, GENERATOR, BUILD_TYPE, CARGO_TARGET_DIR, HSA_DIR,
#         COMGR_DIR, PYTHON.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/common.cmake")
if(CMAKE_VERSION VERSION_LESS 3.24)
  hotswap_skip_or_fail("dependency providers need CMake 3.24 (TheRock requires 3.25); this is ${CMAKE_VERSION}")
endif()
hotswap_require_tools(PYTHON)
set(_here "${CMAKE_CURRENT_LIST_DIR}")
set(_provider "${_here}/provider.cmake")
set(_therock_dir "${SOURCE_DIR}/packaging/therock")
# Packages TheRock builds and provides to subprojects (a representative set).
set(_provided hsa-runtime64 hsakmt amd_comgr rocm-core rocprofiler-register rocprofiler-sdk
              hip hip-lang hipcc LLVM Clang LLD rocm_smi amd_smi roctracer hotswap)

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

list(JOIN _provided "," _provided_arg)

# --- 1. An undeclared super-project package is rejected -------------------------
set(_probe "${SCRATCH}/undeclared")
file(REMOVE_RECURSE "${_probe}")
file(WRITE "${_probe}/src/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.22)\nproject(probe NONE)\nfind_package(hsakmt CONFIG QUIET)\n")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${_probe}/src" -B "${_probe}/build" -G "${GENERATOR}"
          "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=${_provider}"
          "-DHOTSWAP_THEROCK_PROVIDED=${_provided_arg}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0 OR NOT _out MATCHES "find_package\\(hsakmt\\) for a package available")
  message(FATAL_ERROR "the provider did not reject the undeclared package hsakmt:\n${_out}")
endif()
message(STATUS "provider rejects undeclared TheRock packages (hsakmt)")

# --- 2. Configure, build and stage like TheRock ---------------------------------
set(_root "${SCRATCH}/therock-build")
set(_build "${_root}/core/hsa-hotswap/build")
set(_stage "${_root}/core/hsa-hotswap/stage")
file(REMOVE_RECURSE "${_stage}")
run_out(OUTPUT _configure COMMAND
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    "-DCMAKE_INSTALL_PREFIX=${_stage}"
    "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=${_provider}"
    "-DHOTSWAP_THEROCK_DEPS=hsa-runtime64=${HSA_DIR},amd_comgr=${COMGR_DIR}"
    "-DHOTSWAP_THEROCK_PROVIDED=${_provided_arg}"
    -DHOTSWAP_BUILD_TESTS=OFF
    "-DHOTSWAP_CARGO_TARGET_DIR=${CARGO_TARGET_DIR}")
message(STATUS "configure:\n${_configure}")
foreach(_line IN ITEMS
    "Resolving super-project find_package\\(hsa-runtime64\\) from ${HSA_DIR}"
    "Resolving super-project find_package\\(amd_comgr\\) from ${COMGR_DIR}"
    "Resolving system find_package\\(Corrosion\\)")
  if(NOT _configure MATCHES "${_line}")
    message(FATAL_ERROR "configure output lacks '${_line}'")
  endif()
endforeach()
run_out(COMMAND "${CMAKE_COMMAND}" --build "${_build}" --config "${BUILD_TYPE}")
run_out(COMMAND "${CMAKE_COMMAND}" --install "${_build}" --config "${BUILD_TYPE}")

# --- 3. The artifact descriptor selects exactly the staged files ----------------
string(TOLOWER "${BUILD_TYPE}" _config)
if(_config STREQUAL "")
  set(_config noconfig)
endif()
set(_cmake lib/cmake/hotswap)
run_out(OUTPUT _check COMMAND "${PYTHON}" "${_here}/check_artifact.py"
    "${_therock_dir}/artifact-hsa-hotswap.toml" "${_root}"
    "lib=lib/libhsa-hotswap.so"
    "dev=include/hotswap/hotswap.h,${_cmake}/hotswap-config.cmake,${_cmake}/hotswap-config-version.cmake,${_cmake}/hotswap-targets.cmake,${_cmake}/hotswap-targets-${_config}.cmake")
message(STATUS "${_check}")
# ... and the check can fail: a component expected to select nothing.
execute_process(COMMAND "${PYTHON}" "${_here}/check_artifact.py"
                "${_therock_dir}/artifact-hsa-hotswap.toml" "${_root}" "lib=" "dev="
                RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
if(_rc EQUAL 0)
  message(FATAL_ERROR "check_artifact.py accepted a wrong expectation")
endif()

# The topology entry parses and names the artifact the declaration provides.
run_out(OUTPUT _topology COMMAND "${PYTHON}" -c
"import sys, tomllib
t = tomllib.load(open(sys.argv[1], 'rb'))['artifacts']['hsa-hotswap']
assert t['type'] == 'target-neutral', t
assert set(t['artifact_deps']) >= {'core-runtime', 'amd-llvm'}, t
print('BUILD_TOPOLOGY entry:', t)"
    "${_therock_dir}/BUILD_TOPOLOGY.entry.toml")
message(STATUS "${_topology}")
run_out(COMMAND "${CMAKE_COMMAND}" "-DSNIPPET=${_therock_dir}/hsa-hotswap.cmake"
            -P "${_here}/check_declaration.cmake")
message(STATUS "TheRock-style build passed")
