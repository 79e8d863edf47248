# Build step of the RPM layouts, for libhsa-hotswap.so and bin/hotswap: copy a
# binary's debug sections to OUT/<xx>/<rest>.debug, named by its GNU build ID
# as gdb and debuginfod clients look them up under /usr/lib/debug/.build-id.
# Inputs: BINARY, OUT, OBJCOPY, READELF; KEEP_OUT: add to OUT instead of
# replacing it (a stage's .build-id/, which other binaries' files share).
execute_process(COMMAND "${READELF}" -n "${BINARY}" OUTPUT_VARIABLE _notes COMMAND_ERROR_IS_FATAL ANY)
if(NOT _notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "${BINARY} has no GNU build ID: no debuginfo can be split off")
endif()
if(NOT KEEP_OUT)
  file(REMOVE_RECURSE "${OUT}")
endif()
file(MAKE_DIRECTORY "${OUT}/${CMAKE_MATCH_1}")
execute_process(COMMAND "${OBJCOPY}" --only-keep-debug "${BINARY}" "${OUT}/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug"
                COMMAND_ERROR_IS_FATAL ANY)
