# hotswap's fragment for TheRock: this declaration goes into FLAGS.cmake after
# INCLUDE_HRX (apply_to_therock.py inserts everything below this paragraph).

# hsa-hotswap (emulation/): the artifact is disabled on Linux unless this flag
# is on (disable_platforms_if_flags_not_set in BUILD_TOPOLOGY.toml), so that a
# default build, whose fetch_sources.py does not fetch the optional source set
# optional-hotswap, neither needs nor builds it. A branch turns it on in
# BRANCH_CONFIG.json (with the source set); a single build with
# `fetch_sources.py --source-sets optional-hotswap` and
# -DTHEROCK_FLAG_INCLUDE_HSA_HOTSWAP=ON.
therock_declare_flag(
  NAME INCLUDE_HSA_HOTSWAP
  DEFAULT_VALUE OFF
  DESCRIPTION "Include hsa-hotswap, the HSA tools library rewriting gfx1250 B0 code objects for A0 (optional source optional-hotswap)"
)
