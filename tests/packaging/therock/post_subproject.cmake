# Model of TheRock's cmake/therock_global_post_subproject.cmake, run (deferred)
# at the end of the subproject's top-level configure:
#   - every SHARED library and executable gets INSTALL_RPATH $ORIGIN-relative to
#     THEROCK_PRIVATE_INSTALL_RPATH_DIRS (overriding the project's own), unless
#     THEROCK_NO_INSTALL_RPATH;
#   - with THEROCK_SPLIT_DEBUG_INFO, each is linked with --build-id and an install
#     step (component THEROCK_DEBUG_BUILD_ID, part of the default install) copies
#     its debug sections to <stage>/.build-id/<xx>/<rest>.debug; TheRock then
#     installs with --strip.
function(_model_targets dir out_var)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _model_targets("${_sub}" _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out_var} "${_targets}" PARENT_SCOPE)
endfunction()
_model_targets("${CMAKE_SOURCE_DIR}" _all_targets)
set(_linked)
foreach(_target IN LISTS _all_targets)
  get_target_property(_type "${_target}" TYPE)
  if(_type MATCHES "^(SHARED_LIBRARY|EXECUTABLE|MODULE_LIBRARY)$")
    list(APPEND _linked "${_target}")
  endif()
endforeach()

if(NOT THEROCK_NO_INSTALL_RPATH)
  foreach(_target IN LISTS _linked)
    get_target_property(_type "${_target}" TYPE)
    if(_type STREQUAL "EXECUTABLE")
      set(_origin "${THEROCK_INSTALL_RPATH_EXECUTABLE_DIR}")
    else()
      set(_origin "${THEROCK_INSTALL_RPATH_LIBRARY_DIR}")
    endif()
    set(_rpath)
    foreach(_dir IN LISTS THEROCK_PRIVATE_INSTALL_RPATH_DIRS)
      cmake_path(RELATIVE_PATH _dir BASE_DIRECTORY "${_origin}")
      if(_dir STREQUAL ".")
        list(APPEND _rpath "$ORIGIN")
      else()
        list(APPEND _rpath "$ORIGIN/${_dir}")
      endif()
    endforeach()
    message(STATUS "TheRock model: INSTALL_RPATH '${_rpath}' on ${_target}")
    set_target_properties("${_target}" PROPERTIES INSTALL_RPATH "${_rpath}")
  endforeach()
endif()

if(THEROCK_SPLIT_DEBUG_INFO)
  include(CMakeFindBinUtils)
  install(CODE "set(THEROCK_DEBUG_BUILD_ID_PATHS)"
          CODE "set(THEROCK_OBJCOPY \"${CMAKE_OBJCOPY}\")"
          CODE "set(THEROCK_READELF \"${CMAKE_READELF}\")"
          CODE "set(THEROCK_STAGE_INSTALL_ROOT \"${THEROCK_STAGE_INSTALL_ROOT}\")"
          COMPONENT THEROCK_DEBUG_BUILD_ID)
  foreach(_target IN LISTS _linked)
    message(STATUS "TheRock model: splitting debug info for ${_target}")
    install(CODE "list(APPEND THEROCK_DEBUG_BUILD_ID_PATHS \"$<TARGET_FILE:${_target}>\")"
            COMPONENT THEROCK_DEBUG_BUILD_ID)
    target_link_options("${_target}" PRIVATE "-Wl,--build-id")
  endforeach()
  install(SCRIPT "${THEROCK_MODEL_DIR}/install_build_id_files.cmake" COMPONENT THEROCK_DEBUG_BUILD_ID)
endif()
