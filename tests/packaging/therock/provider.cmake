# A CMake dependency provider that behaves like TheRock's (project_init.cmake):
# passed with -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<this file>, it
#   - resolves find_package() of the packages this subproject declared as deps
#     (HOTSWAP_THEROCK_DEPS: "<Package>=<config dir>,...") to exactly that
#     directory, bypassing every other search location;
#   - fails for any other package the super-project provides
#     (HOTSWAP_THEROCK_PROVIDED: comma-separated names), as TheRock does for
#     undeclared deps;
#   - lets every other package fall through to the normal search, with the
#     package registries disabled.
cmake_minimum_required(VERSION 3.24)

set(CMAKE_FIND_USE_PACKAGE_REGISTRY OFF)
set(CMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY OFF)
string(REPLACE "," ";" _hotswap_therock_deps "${HOTSWAP_THEROCK_DEPS}")
string(REPLACE "," ";" _hotswap_therock_provided "${HOTSWAP_THEROCK_PROVIDED}")

macro(hotswap_therock_dependency_provider method package_name)
  set(_hotswap_provider_dir "")
  foreach(_hotswap_provider_dep IN LISTS _hotswap_therock_deps)
    if(_hotswap_provider_dep MATCHES "^([^=]+)=(.+)$" AND CMAKE_MATCH_1 STREQUAL "${package_name}")
      set(_hotswap_provider_dir "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(_hotswap_provider_dir)
    message(STATUS "Resolving super-project find_package(${package_name}) from ${_hotswap_provider_dir}")
    set(${package_name}_DIR "${_hotswap_provider_dir}" CACHE PATH "" FORCE)
    find_package(${package_name} ${ARGN} BYPASS_PROVIDER NO_DEFAULT_PATH)
    if(NOT ${package_name}_DIR STREQUAL _hotswap_provider_dir)
      message(FATAL_ERROR "find_package(${package_name}) was resolved to ${${package_name}_DIR}, "
                          "not the declared ${_hotswap_provider_dir}")
    endif()
  elseif("${package_name}" IN_LIST _hotswap_therock_provided)
    message(FATAL_ERROR "Project contains find_package(${package_name}) for a package available "
                        "in the super-project but not declared: Add a BUILD_DEPS or RUNTIME_DEPS appropriately")
  else()
    message(STATUS "Resolving system find_package(${package_name})")
    find_package(${package_name} ${ARGN} BYPASS_PROVIDER)
  endif()
endmacro()

cmake_language(SET_DEPENDENCY_PROVIDER hotswap_therock_dependency_provider
               SUPPORTED_METHODS FIND_PACKAGE)
