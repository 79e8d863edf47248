// gfx1250 code whose A0 sites all have a same-size fix: hotswap rewrite makes
// it complete. Assembled and linked by clang-22 at test time.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl same_size
  .type same_size,@function
same_size:
  s_clause 0x1
  cluster_load_b32 v0, v[2:3], off
  s_barrier_signal_isfirst -1
  s_sethalt 0
  global_load_b32 v1, v[2:3], off
  s_setpc_b64 s[30:31]
.Lsame_size_end:
  .size same_size, .Lsame_size_end-same_size
