# Runs oracle.py with ARGS plus the files matching GLOB (expanded at test time,
# after the corpus is built). -DPYTHON= -DORACLE= -DARGS= -DGLOB=
file(GLOB _files "${GLOB}")
execute_process(COMMAND "${PYTHON}" "${ORACLE}" ${ARGS} ${_files} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "oracle.py failed (${_rc})")
endif()
