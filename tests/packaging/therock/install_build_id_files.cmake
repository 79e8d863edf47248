# Model of TheRock's cmake/therock_install_linux_build_id_files.cmake (install
# time): each binary's debug sections to
# ${THEROCK_STAGE_INSTALL_ROOT}/.build-id/<first two hex digits>/<rest>.debug.
foreach(binary_path IN LISTS THEROCK_DEBUG_BUILD_ID_PATHS)
  execute_process(COMMAND "${THEROCK_READELF}" -n "${binary_path}" OUTPUT_VARIABLE _notes
                  COMMAND_ERROR_IS_FATAL ANY)
  if(NOT _notes MATCHES "Build ID: ([0-9a-zA-Z][0-9a-zA-Z])([0-9a-zA-Z]+)")
    message(WARNING "${binary_path} has no Build ID")
    continue()
  endif()
  set(_out "${THEROCK_STAGE_INSTALL_ROOT}/.build-id/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug")
  get_filename_component(_dir "${_out}" DIRECTORY)
  file(MAKE_DIRECTORY "${_dir}")
  execute_process(COMMAND "${THEROCK_OBJCOPY}" --only-keep-debug "${binary_path}" "${_out}"
                  COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "TheRock model: debug info of ${binary_path} in ${_out}")
endforeach()
