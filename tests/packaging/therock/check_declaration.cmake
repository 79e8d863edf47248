# cmake -DSNIPPET=packaging/therock/hsa-hotswap.cmake -P check_declaration.cmake
# Includes the TheRock snippet with stand-ins for TheRock's functions that parse
# their arguments with TheRock's keyword lists (therock_subproject.cmake,
# therock_artifacts.cmake) and reject anything else, then checks what was declared.
cmake_minimum_required(VERSION 3.22)

set(THEROCK_ENABLE_HSA_HOTSWAP ON)
set(THEROCK_HOTSWAP_SOURCE_DIR "/src/hotswap")

function(therock_cmake_subproject_declare name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG
    "ACTIVATE;USE_DIST_AMDGPU_TARGETS;USE_TEST_AMDGPU_TARGETS;DISABLE_AMDGPU_TARGETS;EXCLUDE_FROM_ALL;BACKGROUND_BUILD;NO_MERGE_COMPILE_COMMANDS;OUTPUT_ON_FAILURE;NO_INSTALL_RPATH;FPRINT_SOURCE_HASH"
    "EXTERNAL_SOURCE_DIR;BINARY_DIR;DIR_PREFIX;INSTALL_DESTINATION;COMPILER_TOOLCHAIN;INTERFACE_PROGRAM_DIRS;CMAKE_LISTS_RELPATH;INTERFACE_PKG_CONFIG_DIRS;INSTALL_RPATH_EXECUTABLE_DIR;INSTALL_RPATH_LIBRARY_DIR;LOGICAL_TARGET_NAME;FPRINT_SOURCE_DIR"
    "BUILD_DEPS;RUNTIME_DEPS;CMAKE_ARGS;CMAKE_INCLUDES;INTERFACE_INCLUDE_DIRS;INTERFACE_LINK_DIRS;IGNORE_PACKAGES;EXTRA_DEPENDS;INSTALL_RPATH_DIRS;INTERFACE_INSTALL_RPATH_DIRS;DEFAULT_GPU_TARGETS;FPRINT_FILE_GLOBS;INSTALL_OPTIONAL_COMPONENTS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "therock_cmake_subproject_declare: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT name STREQUAL "hsa-hotswap")
    message(FATAL_ERROR "subproject is '${name}', expected hsa-hotswap")
  endif()
  if(NOT ARG_DISABLE_AMDGPU_TARGETS OR ARG_USE_DIST_AMDGPU_TARGETS OR ARG_DEFAULT_GPU_TARGETS OR ARG_COMPILER_TOOLCHAIN)
    message(FATAL_ERROR "hsa-hotswap must build no GPU code with the host compiler")
  endif()
  if(IS_ABSOLUTE "${ARG_EXTERNAL_SOURCE_DIR}" AND NOT ARG_BINARY_DIR)
    message(FATAL_ERROR "an absolute EXTERNAL_SOURCE_DIR needs BINARY_DIR")
  endif()
  foreach(_kind IN ITEMS BUILD_DEPS RUNTIME_DEPS)
    list(SORT ARG_${_kind})
    if(NOT ARG_${_kind} STREQUAL "ROCR-Runtime;amd-comgr")
      message(FATAL_ERROR "${_kind} = '${ARG_${_kind}}', expected amd-comgr and ROCR-Runtime")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY hotswap_declared "${ARG_BINARY_DIR}")
endfunction()

function(therock_cmake_subproject_provide_package subproject package relpath)
  if(ARGN)
    message(FATAL_ERROR "therock_cmake_subproject_provide_package: extra arguments ${ARGN}")
  endif()
  set_property(GLOBAL PROPERTY hotswap_provided "${subproject} ${package} ${relpath}")
endfunction()

function(therock_cmake_subproject_activate subproject)
  set_property(GLOBAL PROPERTY hotswap_activated "${subproject}")
endfunction()

function(therock_provide_artifact name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "TARGET_NEUTRAL" "DESCRIPTOR" "COMPONENTS;SUBPROJECT_DEPS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "therock_provide_artifact: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  list(JOIN ARG_COMPONENTS "," _components)
  set_property(GLOBAL PROPERTY hotswap_artifact
    "${name} ${ARG_TARGET_NEUTRAL} ${ARG_DESCRIPTOR} ${_components} ${ARG_SUBPROJECT_DEPS}")
endfunction()

include("${SNIPPET}")

set(_expected
  hotswap_declared "hsa-hotswap"
  hotswap_provided "hsa-hotswap hotswap lib/cmake/hotswap"
  hotswap_activated "hsa-hotswap"
  hotswap_artifact "hsa-hotswap TRUE artifact-hsa-hotswap.toml lib,dev hsa-hotswap")
while(_expected)
  list(POP_FRONT _expected _property _value)
  get_property(_got GLOBAL PROPERTY ${_property})
  if(NOT _got STREQUAL _value)
    message(FATAL_ERROR "${_property}: '${_got}', expected '${_value}'")
  endif()
endwhile()
message(STATUS "TheRock declaration of hsa-hotswap is consistent")
