# CPACK_POST_BUILD_SCRIPTS of the DEB generator, on each built .deb
# (CPACK_PACKAGE_FILES), before cpack copies it out and writes its checksum:
#   - remove the postinst/postrm CPack writes for a library under /usr/lib: they
#     only call ldconfig, which the package's ldconfig trigger already does
#     (lintian: maintscript-calls-ldconfig); anything else in them is an error;
#   - add the fields CPackDeb cannot write: Multi-Arch (`same` for the packages
#     in CPACK_HOTSWAP_MULTIARCH_SAME, the library's where the libdir is
#     Debian's multiarch one; `foreign` for those in CPACK_HOTSWAP_MULTIARCH_FOREIGN,
#     the command line), and Static-Built-Using on the packages with Rust code
#     (CPACK_HOTSWAP_STATIC_BUILT_USING_<package>, generated from Cargo.lock: the
#     Rust crates and the Rust toolchain each links statically);
#   - rebuild the .deb with dpkg-deb (root ownership, xz, as CPack does).
if(NOT CPACK_HOTSWAP_DPKG_DEB)
  message(FATAL_ERROR "hotswap: dpkg-deb is needed to finish the DEB packages")
endif()
foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT _deb MATCHES "\\.deb$")
    continue()
  endif()
  get_filename_component(_dir "${_deb}" DIRECTORY)
  set(_root "${_dir}/finalize-root")
  file(REMOVE_RECURSE "${_root}")
  execute_process(COMMAND "${CPACK_HOTSWAP_DPKG_DEB}" -R "${_deb}" "${_root}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${_deb} failed")
  endif()
  foreach(_script IN ITEMS postinst postrm)
    set(_path "${_root}/DEBIAN/${_script}")
    if(EXISTS "${_path}")
      file(STRINGS "${_path}" _lines)
      foreach(_line IN LISTS _lines)
        string(STRIP "${_line}" _line)
        if(NOT (_line STREQUAL "" OR _line MATCHES "^#" OR _line MATCHES "^set -e$"
                OR _line MATCHES "^if \\[ \"\\$1\" = \"(configure|remove)\" \\]; then$"
                OR _line STREQUAL "ldconfig" OR _line STREQUAL "fi"))
          message(FATAL_ERROR "hotswap: ${_deb}: ${_script} does more than call ldconfig: '${_line}'")
        endif()
      endforeach()
      file(REMOVE "${_path}")
      message(STATUS "hotswap: ${_script} (ldconfig only) removed; the ldconfig trigger does it")
    endif()
  endforeach()
  file(READ "${_root}/DEBIAN/control" _control)
  string(REGEX MATCH "(^|\n)Package: ([^\n]+)" _m "${_control}")
  set(_package "${CMAKE_MATCH_2}")
  set(_extra "")
  list(FIND CPACK_HOTSWAP_MULTIARCH_SAME "${_package}" _same)        # (no IN_LIST: cpack sets no policies)
  list(FIND CPACK_HOTSWAP_MULTIARCH_FOREIGN "${_package}" _foreign)
  if(NOT _same EQUAL -1)
    string(APPEND _extra "Multi-Arch: same\n")
  elseif(NOT _foreign EQUAL -1)
    string(APPEND _extra "Multi-Arch: foreign\n")
  endif()
  if(CPACK_HOTSWAP_STATIC_BUILT_USING_${_package})
    string(APPEND _extra "Static-Built-Using: ${CPACK_HOTSWAP_STATIC_BUILT_USING_${_package}}\n")
  endif()
  # The new fields go before Description (the only multi-line field, last).
  string(REGEX REPLACE "\nDescription: " "\n${_extra}Description: " _control "${_control}")
  file(WRITE "${_root}/DEBIAN/control" "${_control}")
  file(REMOVE "${_deb}")
  execute_process(COMMAND "${CPACK_HOTSWAP_DPKG_DEB}" --root-owner-group -Zxz -b "${_root}" "${_deb}"
                  RESULT_VARIABLE _rc OUTPUT_QUIET)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${_deb} failed")
  endif()
  file(REMOVE_RECURSE "${_root}")
  string(STRIP "${_extra}" _extra)
  message(STATUS "hotswap: ${_package}: fields added: ${_extra}")
endforeach()
