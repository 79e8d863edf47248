# Shared by the stub subprojects: install lib/cmake/<PACKAGE>/ with a config
# file and a version file that include the system package's (Debian's), and
# symlinks lib/<file> -> the system library, so that the dist directory looks
# like the real subproject's to TheRock's dependency provider and to dlopen.
function(hotswap_stub_forward_package package system_dir)
  foreach(_kind IN ITEMS config config-version)
    set(_file "${CMAKE_CURRENT_BINARY_DIR}/${package}-${_kind}.cmake")
    file(WRITE "${_file}" "include(\"${system_dir}/${package}-${_kind}.cmake\")\n")
    install(FILES "${_file}" DESTINATION "lib/cmake/${package}")
  endforeach()
endfunction()

function(hotswap_stub_link_libraries)
  foreach(_lib IN LISTS ARGN)
    get_filename_component(_name "${_lib}" NAME)
    install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib\")
      file(CREATE_LINK \"${_lib}\" \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/${_name}\" SYMBOLIC)")
  endforeach()
endfunction()
