# CPACK_PRE_BUILD_SCRIPTS of the RPM generator: shared libraries in the staged
# files become 0755, as RPM distributions ship them (rpmlint:
# shared-library-not-executable) and as rpmbuild's find-debuginfo needs to split
# their debug information. The install rules give 0644 on Debian (policy 8.1),
# where CMake sets CMAKE_INSTALL_SO_NO_EXE.
file(GLOB_RECURSE _libraries LIST_DIRECTORIES false
     "${CPACK_TEMPORARY_DIRECTORY}/*.so" "${CPACK_TEMPORARY_DIRECTORY}/*.so.*")
if(NOT _libraries)
  message(FATAL_ERROR "hotswap: no shared library staged under ${CPACK_TEMPORARY_DIRECTORY}")
endif()
foreach(_library IN LISTS _libraries)
  if(NOT IS_SYMLINK "${_library}")
    file(CHMOD "${_library}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
         GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    message(STATUS "hotswap: mode 0755 for ${_library}")
  endif()
endforeach()
