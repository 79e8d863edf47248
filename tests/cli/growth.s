// gfx1250 code with a site that needs code growth (a DS two-address load) next
// to a same-size one: hotswap rewrite moves the function into an appended code
// segment with the load split (and the bundle holding it is not re-assembled).
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl growth
  .type growth,@function
growth:
  cluster_load_b64 v[0:1], v1, s[2:3]
  ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
  s_setpc_b64 s[30:31]
.Lgrowth_end:
  .size growth, .Lgrowth_end-growth
