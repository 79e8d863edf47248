# Included by a project(NONE) that run_therock_build.cmake writes (project mode:
# the fragment globs with CONFIGURE_DEPENDS), configured with
# --warn-uninitialized -DFRAGMENT=... -DROOT=... -DSRC_ROOT=... -DFEATURE=... -DOUT=...
#
# Evaluates the TheRock fragment (packaging/therock/emulation.entry.cmake) the way
# TheRock's emulation/CMakeLists.txt would, with stand-ins for TheRock's functions
# that follow cmake/therock_subproject.cmake, therock_artifacts.cmake and
# therock_testing.cmake:
#   - the keyword lists of therock_cmake_subproject_declare / therock_provide_artifact
#     / therock_test_validate_shared_lib (anything else is an error);
#   - EXTERNAL_SOURCE_DIR / BINARY_DIR resolution: a relative source is made
#     absolute and BINARY_DIR is resolved against CMAKE_CURRENT_BINARY_DIR; an
#     absolute source leaves BINARY_DIR as given (a relative one stays relative);
#     build/stage/dist are <BINARY_DIR>/{build,stage,dist};
#   - the private install RPATH dirs: INSTALL_RPATH_DIRS plus the
#     INTERFACE_INSTALL_RPATH_DIRS of the RUNTIME_DEPS (as declared in TheRock's
#     core/ and compiler/ CMakeLists: ROCR-Runtime and amd-comgr give "lib");
#   - DESCRIPTOR relative to CMAKE_CURRENT_SOURCE_DIR, a validate PATH relative to
#     CMAKE_CURRENT_BINARY_DIR.
# Only the variables TheRock defines exist (THEROCK_SOURCE_DIR, THEROCK_BINARY_DIR,
# the THEROCK_ENABLE_* feature, THEROCK_BUILD_TESTING, THEROCK_SANITIZER,
# CMAKE_CURRENT_{SOURCE,BINARY}_DIR of emulation/), so
# --warn-uninitialized reports a variable TheRock never sets.
# Writes what was declared to OUT (set() commands) for run_therock_build.cmake.
cmake_minimum_required(VERSION 3.22)

set(THEROCK_SOURCE_DIR "${SRC_ROOT}")
set(THEROCK_BINARY_DIR "${ROOT}")
set(CMAKE_CURRENT_SOURCE_DIR "${SRC_ROOT}/emulation")
set(CMAKE_CURRENT_BINARY_DIR "${ROOT}/emulation")
set(THEROCK_ENABLE_${FEATURE} ON)
set(THEROCK_BUILD_TESTING OFF)
set(THEROCK_SANITIZER "")

# Subprojects TheRock declares that hotswap may depend on, with their
# INTERFACE_INSTALL_RPATH_DIRS (core/CMakeLists.txt, compiler/CMakeLists.txt).
set(_known_subprojects ROCR-Runtime amd-comgr amd-llvm rocm-core rocprofiler-register hip-clr rocminfo)
set(_interface_rpath_ROCR-Runtime lib)
set(_interface_rpath_amd-comgr lib)

function(therock_cmake_subproject_declare target_name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG
    "ACTIVATE;USE_DIST_AMDGPU_TARGETS;USE_TEST_AMDGPU_TARGETS;DISABLE_AMDGPU_TARGETS;EXCLUDE_FROM_ALL;BACKGROUND_BUILD;NO_MERGE_COMPILE_COMMANDS;OUTPUT_ON_FAILURE;NO_INSTALL_RPATH;FPRINT_SOURCE_HASH"
    "EXTERNAL_SOURCE_DIR;BINARY_DIR;DIR_PREFIX;INSTALL_DESTINATION;COMPILER_TOOLCHAIN;INTERFACE_PROGRAM_DIRS;CMAKE_LISTS_RELPATH;INTERFACE_PKG_CONFIG_DIRS;INSTALL_RPATH_EXECUTABLE_DIR;INSTALL_RPATH_LIBRARY_DIR;LOGICAL_TARGET_NAME;FPRINT_SOURCE_DIR"
    "BUILD_DEPS;RUNTIME_DEPS;CMAKE_ARGS;CMAKE_INCLUDES;INTERFACE_INCLUDE_DIRS;INTERFACE_LINK_DIRS;IGNORE_PACKAGES;EXTRA_DEPENDS;INSTALL_RPATH_DIRS;INTERFACE_INSTALL_RPATH_DIRS;DEFAULT_GPU_TARGETS;FPRINT_FILE_GLOBS;INSTALL_OPTIONAL_COMPONENTS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "therock_cmake_subproject_declare: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_DISABLE_AMDGPU_TARGETS OR ARG_USE_DIST_AMDGPU_TARGETS OR ARG_DEFAULT_GPU_TARGETS)
    message(FATAL_ERROR "${target_name} builds no GPU code")
  endif()
  # As TheRock's core runtime subprojects on Linux (the model builds with the
  # host compiler: package.therock.real uses TheRock's toolchain handling).
  if(NOT ARG_COMPILER_TOOLCHAIN STREQUAL "amd-llvm")
    message(FATAL_ERROR "${target_name}: COMPILER_TOOLCHAIN '${ARG_COMPILER_TOOLCHAIN}', expected amd-llvm")
  endif()
  # TheRock makes every RUNTIME_DEP a build dep: repeating them is noise.
  foreach(_dep IN LISTS ARG_BUILD_DEPS)
    if(_dep IN_LIST ARG_RUNTIME_DEPS)
      message(FATAL_ERROR "${target_name}: BUILD_DEPS repeats the RUNTIME_DEP ${_dep}")
    endif()
  endforeach()
  foreach(_dep IN LISTS ARG_BUILD_DEPS ARG_RUNTIME_DEPS)
    if(NOT _dep IN_LIST _known_subprojects)
      message(FATAL_ERROR "${target_name}: '${_dep}' is not a TheRock subproject")
    endif()
  endforeach()
  # cmake/therock_subproject.cmake: source and binary directory resolution.
  cmake_path(IS_ABSOLUTE ARG_EXTERNAL_SOURCE_DIR _source_is_absolute)
  if(_source_is_absolute)
    if(NOT ARG_BINARY_DIR)
      set(ARG_BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    endif()
  else()
    if(NOT ARG_BINARY_DIR)
      set(ARG_BINARY_DIR "${ARG_EXTERNAL_SOURCE_DIR}")
    endif()
    cmake_path(ABSOLUTE_PATH ARG_EXTERNAL_SOURCE_DIR)
    cmake_path(ABSOLUTE_PATH ARG_BINARY_DIR BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  if(NOT EXISTS "${ARG_EXTERNAL_SOURCE_DIR}/CMakeLists.txt")
    message(FATAL_ERROR "${target_name}: EXTERNAL_SOURCE_DIR '${ARG_EXTERNAL_SOURCE_DIR}' holds no CMakeLists.txt")
  endif()
  set(_stage "${ARG_BINARY_DIR}/${ARG_DIR_PREFIX}stage")
  cmake_path(RELATIVE_PATH _stage BASE_DIRECTORY "${THEROCK_BINARY_DIR}" OUTPUT_VARIABLE _rel_stage)
  # Private install RPATH dirs: own plus the runtime deps' interface dirs.
  set(_rpath_dirs ${ARG_INSTALL_RPATH_DIRS})
  foreach(_dep IN LISTS ARG_RUNTIME_DEPS)
    list(APPEND _rpath_dirs ${_interface_rpath_${_dep}})
  endforeach()
  list(REMOVE_DUPLICATES _rpath_dirs)
  set(_library_dir "${ARG_INSTALL_RPATH_LIBRARY_DIR}")
  if(NOT _library_dir)
    set(_library_dir lib)
  endif()
  set(_d "")
  string(APPEND _d "set(SUBPROJECT \"${target_name}\")\n")
  string(APPEND _d "set(SUBPROJECT_SOURCE_DIR \"${ARG_EXTERNAL_SOURCE_DIR}\")\n")
  string(APPEND _d "set(SUBPROJECT_BINARY_DIR \"${ARG_BINARY_DIR}\")\n")
  string(APPEND _d "set(SUBPROJECT_BUILD_DIR \"${ARG_BINARY_DIR}/${ARG_DIR_PREFIX}build\")\n")
  string(APPEND _d "set(SUBPROJECT_STAGE_DIR \"${_stage}\")\n")
  string(APPEND _d "set(SUBPROJECT_REL_STAGE_DIR \"${_rel_stage}\")\n")
  string(APPEND _d "set(SUBPROJECT_DIST_DIR \"${ARG_BINARY_DIR}/${ARG_DIR_PREFIX}dist\")\n")
  string(APPEND _d "set(SUBPROJECT_CMAKE_ARGS \"${ARG_CMAKE_ARGS}\")\n")
  string(APPEND _d "set(SUBPROJECT_BUILD_DEPS \"${ARG_BUILD_DEPS}\")\n")
  string(APPEND _d "set(SUBPROJECT_RUNTIME_DEPS \"${ARG_RUNTIME_DEPS}\")\n")
  string(APPEND _d "set(SUBPROJECT_INTERFACE_LINK_DIRS \"${ARG_INTERFACE_LINK_DIRS}\")\n")
  string(APPEND _d "set(SUBPROJECT_INTERFACE_INSTALL_RPATH_DIRS \"${ARG_INTERFACE_INSTALL_RPATH_DIRS}\")\n")
  string(APPEND _d "set(SUBPROJECT_PRIVATE_INSTALL_RPATH_DIRS \"${_rpath_dirs}\")\n")
  string(APPEND _d "set(SUBPROJECT_INSTALL_RPATH_LIBRARY_DIR \"${_library_dir}\")\n")
  string(APPEND _d "set(SUBPROJECT_NO_INSTALL_RPATH \"${ARG_NO_INSTALL_RPATH}\")\n")
  set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared "${_d}")
  set_property(GLOBAL APPEND PROPERTY hotswap_subprojects "${target_name}")
endfunction()

function(therock_cmake_subproject_provide_package subproject package relpath)
  if(ARGN)
    message(FATAL_ERROR "therock_cmake_subproject_provide_package: extra arguments ${ARGN}")
  endif()
  set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared
    "set(PROVIDED_PACKAGE \"${subproject};${package};${relpath}\")\n")
endfunction()

function(therock_cmake_subproject_activate subproject)
  get_property(_subprojects GLOBAL PROPERTY hotswap_subprojects)
  if(NOT subproject IN_LIST _subprojects)
    message(FATAL_ERROR "therock_cmake_subproject_activate: '${subproject}' was not declared")
  endif()
  set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared "set(ACTIVATED \"${subproject}\")\n")
endfunction()

function(therock_cmake_subproject_dist_dir out_var subproject)
  if(NOT subproject IN_LIST _known_subprojects)
    message(FATAL_ERROR "therock_cmake_subproject_dist_dir: '${subproject}' is not a TheRock subproject")
  endif()
  set(${out_var} "${THEROCK_BINARY_DIR}/compiler/${subproject}/dist" PARENT_SCOPE)
endfunction()
function(therock_cmake_subproject_glob_c_sources subproject)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SUBDIRS")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_SUBDIRS)
    message(FATAL_ERROR "therock_cmake_subproject_glob_c_sources: SUBDIRS expected")
  endif()
endfunction()
# The build stamp depends on the subproject target's SOURCES: record them.
function(target_sources target)
  get_property(_subprojects GLOBAL PROPERTY hotswap_subprojects)
  if(NOT target IN_LIST _subprojects)
    message(FATAL_ERROR "target_sources: '${target}' was not declared")
  endif()
  list(REMOVE_ITEM ARGN PRIVATE)
  set_property(GLOBAL APPEND PROPERTY hotswap_sources ${ARGN})
endfunction()
function(therock_cmake_subproject_build_test subproject)
  if(NOT THEROCK_BUILD_TESTING)
    return()
  endif()
endfunction()
# cmake/therock_testing.cmake
function(therock_test_validate_shared_lib)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "PATH" "LIB_NAMES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "therock_test_validate_shared_lib: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT IS_ABSOLUTE ARG_PATH)
    cmake_path(ABSOLUTE_PATH ARG_PATH BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(_libs)
  foreach(_lib IN LISTS ARG_LIB_NAMES)
    list(APPEND _libs "${ARG_PATH}/${_lib}")
  endforeach()
  set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared "set(VALIDATE_SHARED_LIBS \"${_libs}\")\n")
endfunction()

# cmake/therock_artifacts.cmake
function(therock_provide_artifact slice_name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "TARGET_NEUTRAL" "DESCRIPTOR;DISTRIBUTION" "COMPONENTS;SUBPROJECT_DEPS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "therock_provide_artifact: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT slice_name MATCHES "^[A-Za-z][A-Za-z0-9-]*$")
    message(FATAL_ERROR "artifact name '${slice_name}' is not valid")
  endif()
  if(NOT ARG_DESCRIPTOR)
    set(ARG_DESCRIPTOR "artifact.toml")
  endif()
  cmake_path(ABSOLUTE_PATH ARG_DESCRIPTOR BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${ARG_DESCRIPTOR}")
    message(FATAL_ERROR "therock_provide_artifact: descriptor ${ARG_DESCRIPTOR} does not exist")
  endif()
  get_property(_subprojects GLOBAL PROPERTY hotswap_subprojects)
  foreach(_dep IN LISTS ARG_SUBPROJECT_DEPS)
    if(NOT _dep IN_LIST _subprojects)
      message(FATAL_ERROR "therock_provide_artifact: SUBPROJECT_DEPS '${_dep}' was not declared")
    endif()
  endforeach()
  foreach(_component IN LISTS ARG_COMPONENTS)
    if(NOT _component MATCHES "^(lib|run|dbg|dev|doc|test)$")
      message(FATAL_ERROR "therock_provide_artifact: unknown component '${_component}'")
    endif()
  endforeach()
  set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared
    "set(ARTIFACT \"${slice_name}\")\nset(ARTIFACT_TARGET_NEUTRAL \"${ARG_TARGET_NEUTRAL}\")\nset(ARTIFACT_DESCRIPTOR \"${ARG_DESCRIPTOR}\")\nset(ARTIFACT_COMPONENTS \"${ARG_COMPONENTS}\")\nset(ARTIFACT_SUBPROJECT_DEPS \"${ARG_SUBPROJECT_DEPS}\")\n")
endfunction()

include("${FRAGMENT}")

get_property(_subprojects GLOBAL PROPERTY hotswap_subprojects)
if(NOT _subprojects)
  message(FATAL_ERROR "the fragment declared no subproject with THEROCK_ENABLE_${FEATURE} on")
endif()
get_property(_sources GLOBAL PROPERTY hotswap_sources)
set_property(GLOBAL APPEND_STRING PROPERTY hotswap_declared "set(SUBPROJECT_SOURCES \"${_sources}\")\n")
get_property(_declared GLOBAL PROPERTY hotswap_declared)
file(WRITE "${OUT}" "${_declared}")
message(STATUS "declared:\n${_declared}")
