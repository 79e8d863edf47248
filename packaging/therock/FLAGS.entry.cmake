# TheRock: a declaration for FLAGS.cmake (next to INCLUDE_HRX, the other flag
# that admits an optional external source). Off by default: the artifact
# hsa-hotswap is disabled on Linux unless this flag is on
# (disable_platforms_if_flags_not_set in BUILD_TOPOLOGY.entry.toml), so that a
# default build, whose fetch_sources.py does not fetch optional-hotswap, does
# not need its source. A branch turns it on through BRANCH_CONFIG.json
# (BRANCH_CONFIG.entry.json); a one-off build with
# -DTHEROCK_FLAG_INCLUDE_HSA_HOTSWAP=ON after
# `fetch_sources.py --source-sets optional-hotswap`.
therock_declare_flag(
  NAME INCLUDE_HSA_HOTSWAP
  DEFAULT_VALUE OFF
  DESCRIPTION "Include hsa-hotswap, the HSA tools library rewriting gfx1250 B0 code objects for A0 (optional source optional-hotswap)"
)
