# Fails when the checkout tracks a build artefact: Python bytecode
# (__pycache__/, *.pyc, *.pyo), objects and libraries (*.o, *.a, *.so[.N],
# *.rlib, *.rmeta), the top-level build*/ and target/ directories, CMake's cache or
# generated files, ctest's Testing/, .pytest_cache/. Such files are made by
# building and testing, differ per machine, and hide what the source is.
# Reads the index (`git ls-files`), so it needs a git checkout; anything
# else (a source tarball) prints SKIP.
#
# -DGIT=<git> -DSOURCE_DIR=<checkout>
if(NOT GIT)
  message("SKIP: git not found")
  return()
endif()
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --is-inside-work-tree
  RESULT_VARIABLE _inside OUTPUT_QUIET ERROR_QUIET)
if(NOT _inside EQUAL 0)
  message("SKIP: ${SOURCE_DIR} is not a git checkout")
  return()
endif()
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" ls-files
  OUTPUT_VARIABLE _files RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "git ls-files failed (${_rc})")
endif()
# One path a line (git quotes unusual names); a `;` would split a CMake list.
string(REPLACE ";" "\\;" _files "${_files}")
string(REPLACE "\n" ";" _files "${_files}")
set(_artefact_regex
  "(^|/)__pycache__/"
  "\\.py[co]$"
  "\\.(o|a|so|rlib|rmeta)$"
  "\\.so\\.[0-9.]+$"
  "^(build[^/]*|target)/"
  "(^|/)(CMakeFiles|Testing|\\.pytest_cache)/"
  "(^|/)CMakeCache\\.txt$")
set(_found "")
set(_count 0)
foreach(_f IN LISTS _files)
  if(_f STREQUAL "")
    continue()
  endif()
  math(EXPR _count "${_count} + 1")
  foreach(_re IN LISTS _artefact_regex)
    if(_f MATCHES "${_re}")
      list(APPEND _found "${_f}")
      break()
    endif()
  endforeach()
endforeach()
if(_count EQUAL 0)
  message(FATAL_ERROR "git ls-files listed no file in ${SOURCE_DIR}")
endif()
if(_found)
  list(JOIN _found "\n  " _list)
  message(FATAL_ERROR "committed build artefacts (remove them with `git rm --cached` and "
                      "let .gitignore keep them out):\n  ${_list}")
endif()
message("no build artefact among the ${_count} tracked files")
