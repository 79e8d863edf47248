# Benchmark (figures and ratios, not a timed test), run by ctest as standin.bench:
# 1. Per-load cost in the stand-in without and with the tool, ~4 KB and ~100 MB
#    code objects (the real ~4.5 KB gfx942 object, and the same padded to 100 MB),
#    on an agent that is never rewritten (gfx942): the load alone
#    (one reader, many loads) and a full create + load + destroy cycle; once in a
#    process where no agent needs a rewrite, once with a gfx1250-A0 agent present
#    (the tool then identifies every new reader's code object).
#    Targets: ratio <= 1.05, flat in size, 0 bytes copied or retained.
# 2. N gfx1250-A0 agents loading one code object: 1 rewriter call, 1 retained buffer.
# The tool's counters come from its own info-level summary at OnUnload (no export).
# The stand-in's loader only validates the ELF header, so its base cost is tens
# of nanoseconds; ROCr's real load (ELF parsing, allocations, copies to the
# device) costs microseconds, so the added nanoseconds are the figure to read.
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

# <prefix>_<kind>_small/_large as tenths of ns (integers for CMake's math).
function(figures text prefix)
  foreach(_kind IN ITEMS load cycle)
    string(REGEX MATCH "${_kind}: 4KB ([0-9]+)\\.([0-9]) ns/load, 100MB ([0-9]+)\\.([0-9]) ns/load" _m "${text}")
    if(NOT _m)
      message(FATAL_ERROR "no ${_kind} figures in:\n${text}")
    endif()
    set(${prefix}_${_kind}_small "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" PARENT_SCOPE)
    set(${prefix}_${_kind}_large "${CMAKE_MATCH_3}${CMAKE_MATCH_4}" PARENT_SCOPE)
  endforeach()
endfunction()

# "a / b" with three decimals.
function(ratio out a b)
  math(EXPR _milli "(${a} * 1000 + ${b} / 2) / ${b}")
  math(EXPR _int "${_milli} / 1000")
  math(EXPR _frac "${_milli} % 1000")
  string(LENGTH "${_frac}" _len)
  if(_len EQUAL 1)
    set(_frac "00${_frac}")
  elseif(_len EQUAL 2)
    set(_frac "0${_frac}")
  endif()
  set(${out} "${_int}.${_frac}" PARENT_SCOPE)
endfunction()

function(ns out tenths)
  set(_sign "")
  if(tenths LESS 0)
    set(_sign "-")
    math(EXPR tenths "0 - ${tenths}")
  endif()
  math(EXPR _i "${tenths} / 10")
  math(EXPR _f "${tenths} % 10")
  set(${out} "${_sign}${_i}.${_f}" PARENT_SCOPE)
endfunction()

run(without "${STANDIN}" bench without)
figures("${without}" base)
message("Per-load cost on a gfx942 agent, which is never rewritten (best of 5 x 200000):")
foreach(_kind IN ITEMS load cycle)
  ns(_s ${base_${_kind}_small})
  ns(_l ${base_${_kind}_large})
  message("  without the tool, ${_kind}: 4.5 KB ${_s} ns, 100 MB ${_l} ns")
endforeach()

foreach(_case IN ITEMS pass mixed)
  if(_case STREQUAL "pass")
    set(_agents "STANDIN_AGENTS=gfx1250-B0,gfx942,cpu")
    set(_what "no agent needs a rewrite (every machine but a gfx1250 A0 one; the tool leaves the table on its first call)")
  else()
    set(_agents "STANDIN_AGENTS=")
    set(_what "a gfx1250-A0 agent is present too (the tool reads every new reader's ELF header)")
  endif()
  run(with "HSA_TOOLS_LIB=${TOOL}" "HSA_HOTSWAP_REWRITER=${REWRITER}" HSA_HOTSWAP_LOG_LEVEL=info ${_agents}
      "${STANDIN}" bench with)
  figures("${with}" tool)
  string(REGEX MATCH "bytes copied [0-9]+, rewriter calls [0-9]+, retained buffers [0-9]+ \\([0-9]+ bytes\\)"
         _counters "${with}")
  message("  with the tool, ${_what}:")
  foreach(_kind IN ITEMS load cycle)
    ratio(_rs ${tool_${_kind}_small} ${base_${_kind}_small})
    ratio(_rl ${tool_${_kind}_large} ${base_${_kind}_large})
    ratio(_flat ${tool_${_kind}_large} ${tool_${_kind}_small})
    ns(_s ${tool_${_kind}_small})
    ns(_l ${tool_${_kind}_large})
    math(EXPR _added "${tool_${_kind}_small} - ${base_${_kind}_small}")
    ns(_added ${_added})
    message("    ${_kind}: 4.5 KB ${_s} ns (x${_rs}), 100 MB ${_l} ns (x${_rl}); added ${_added} ns; 100 MB / 4.5 KB = ${_flat}")
  endforeach()
  message("    tool counters: ${_counters} (target: 0 copied, 0 retained)")
endforeach()

foreach(_n IN ITEMS 1 4 16)
  run(dedupe "HSA_TOOLS_LIB=${TOOL}" "HSA_HOTSWAP_REWRITER=${REWRITER}" HSA_HOTSWAP_LOG_LEVEL=info
      "STANDIN_AGENTS=gfx1250-A0*${_n}" "${STANDIN}" dedupe)
  string(REGEX MATCH "rewriter calls [0-9]+, retained buffers [0-9]+ \\([0-9]+ bytes\\)" _c "${dedupe}")
  message("${_n} gfx1250-A0 agent(s), 2 loads each of one code object: ${_c} (target: 1 call, 1 buffer)")
endforeach()
