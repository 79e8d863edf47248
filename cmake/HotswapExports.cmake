# hotswap_exported_symbols(<out-var> <header>): the symbols libhsa-hotswap.so must
# export: ROCr's tool entry points (OnLoad, OnUnload) plus every hotswap_*
# function the public header declares. Used by the library's version script and
# by the ctest abi.exported_symbols, so the two read the header the same way.
function(hotswap_exported_symbols out_var header)
  file(STRINGS "${header}" _decls REGEX "[ *](hotswap_[a-z0-9_]+)\\(")
  set(_symbols OnLoad OnUnload)
  foreach(_decl IN LISTS _decls)
    string(REGEX MATCH "hotswap_[a-z0-9_]+\\(" _fn "${_decl}")
    string(REPLACE "(" "" _fn "${_fn}")
    list(APPEND _symbols "${_fn}")
  endforeach()
  list(REMOVE_DUPLICATES _symbols)
  set(${out_var} "${_symbols}" PARENT_SCOPE)
endfunction()
