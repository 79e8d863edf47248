# Benchmark (figures and ratios, not a timed test), run by ctest as standin.bench:
# 1. per-load cost (create + load + destroy) in the stand-in without and with the
#    tool, 4 KB and 100 MB code objects, on an agent that is never rewritten
#    (gfx942; a gfx1250-A0 agent is present too, so the tool records readers).
#    Targets: with/without <= 1.05, flat in size; 0 bytes copied or retained.
# 2. N gfx1250-A0 agents loading one code object: 1 rewriter call, 1 retained buffer.
# The tool's counters come from its own info-level summary at OnUnload (no export).
foreach(_v IN ITEMS STANDIN TOOL REWRITER OBJECTS)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "bench.cmake: -D${_v}= is required")
  endif()
endforeach()

function(run out_var)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "STANDIN_CODE_OBJECTS=${OBJECTS}" STANDIN_QUIET=1 ${ARGN}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${ARGN}\n${_out}\n${_err}")
  endif()
  set(${out_var} "${_out}${_err}" PARENT_SCOPE)
endfunction()

function(figures text prefix)
  string(REGEX MATCH "4KB ([0-9.]+) ns/load, 100MB ([0-9.]+) ns/load" _m "${text}")
  set(${prefix}_small "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(${prefix}_large "${CMAKE_MATCH_2}" PARENT_SCOPE)
endfunction()

macro(ratio out a b)
  math(EXPR _milli "(${a} * 1000) / ${b}" OUTPUT_FORMAT DECIMAL)
  math(EXPR _int "${_milli} / 1000")
  math(EXPR _frac "${_milli} % 1000")
  string(LENGTH "${_frac}" _len)
  if(_len EQUAL 1)
    set(_frac "00${_frac}")
  elseif(_len EQUAL 2)
    set(_frac "0${_frac}")
  endif()
  set(${out} "${_int}.${_frac}")
endmacro()

# Integers (ns x 10) for CMake's integer math.
macro(tenths out value)
  string(REGEX REPLACE "\\.([0-9]).*$" "\\1" ${out} "${value}")
endmacro()

run(without "${STANDIN}" bench without)
figures("${without}" base)
tenths(base_small_t "${base_small}")
tenths(base_large_t "${base_large}")
message("per-load cost on a gfx942 agent, which is never rewritten (create + load + destroy through the table;")
message("the stand-in's loader only validates the ELF header, so the base is tens of ns, not ROCr's microseconds):")
message("  without the tool: 4 KB ${base_small} ns, 100 MB ${base_large} ns")
foreach(_case IN ITEMS pass mixed)
  if(_case STREQUAL "pass")
    set(_agents "STANDIN_AGENTS=gfx1250-B0,gfx942,cpu")
    set(_what "no agent needs a rewrite (every machine but gfx1250 A0)")
  else()
    set(_agents "STANDIN_AGENTS=")
    set(_what "a gfx1250-A0 agent is present too (readers are recorded)")
  endif()
  run(with "HSA_TOOLS_LIB=${TOOL}" "HSA_HOTSWAP_REWRITER=${REWRITER}" HSA_HOTSWAP_LOG_LEVEL=info ${_agents}
      "${STANDIN}" bench with)
  figures("${with}" tool)
  tenths(tool_small_t "${tool_small}")
  tenths(tool_large_t "${tool_large}")
  ratio(r_small ${tool_small_t} ${base_small_t})
  ratio(r_large ${tool_large_t} ${base_large_t})
  ratio(flat ${tool_large_t} ${tool_small_t})
  math(EXPR _extra "(${tool_small_t} - ${base_small_t}) / 10")
  string(REGEX MATCH "bytes copied [0-9]+, rewriter calls [0-9]+, retained buffers [0-9]+ \\([0-9]+ bytes\\)" _counters "${with}")
  message("  with the tool, ${_what}:")
  message("    4 KB ${tool_small} ns (ratio ${r_small}), 100 MB ${tool_large} ns (ratio ${r_large}); target <= 1.05")
  message("    ~${_extra} ns added per load; 100 MB / 4 KB = ${flat} (flat in size)")
  message("    tool counters: ${_counters} (target: 0 copied, 0 retained)")
endforeach()

foreach(_n IN ITEMS 1 4 16)
  run(dedupe "HSA_TOOLS_LIB=${TOOL}" "HSA_HOTSWAP_REWRITER=${REWRITER}" HSA_HOTSWAP_LOG_LEVEL=info
      "STANDIN_AGENTS=gfx1250-A0*${_n}" "${STANDIN}" dedupe)
  string(REGEX MATCH "rewriter calls [0-9]+, retained buffers [0-9]+ \\([0-9]+ bytes\\)" _c "${dedupe}")
  message("${_n} gfx1250-A0 agent(s) x 2 loads of one code object: ${_c} (target: 1 call, 1 buffer)")
endforeach()
