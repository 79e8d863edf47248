# ROCr and COMGR, found the way TheRock's dependency provider expects: CONFIG
# packages only, located through CMAKE_PREFIX_PATH, hsa-runtime64_DIR or
# amd_comgr_DIR. No hard-coded paths.
find_package(hsa-runtime64 CONFIG REQUIRED)
find_package(amd_comgr CONFIG REQUIRED)

foreach(_hotswap_target IN ITEMS hsa-runtime64::hsa-runtime64 amd_comgr)
  if(NOT TARGET ${_hotswap_target})
    message(FATAL_ERROR "The package that was found does not define the target ${_hotswap_target}")
  endif()
endforeach()
message(STATUS "hotswap: hsa-runtime64 ${hsa-runtime64_VERSION} from ${hsa-runtime64_DIR}")
message(STATUS "hotswap: amd_comgr ${amd_comgr_VERSION} from ${amd_comgr_DIR}")
