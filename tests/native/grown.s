// A kernel with a same-size site (a cluster load) and a DS two-address load:
// the native rewriter moves the kernel into an appended code segment with the
// load split, and redirects its descriptor's entry.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl k
  .type k,@function
k:
  cluster_load_b32 v0, v[2:3], off
  ds_load_2addr_b32 v[4:5], v2 offset0:1 offset1:2
  s_endpgm
.Lk_end:
  .size k, .Lk_end-k

  .rodata
  .p2align 6
  .amdhsa_kernel k
    .amdhsa_next_free_vgpr 64
    .amdhsa_next_free_sgpr 16
  .end_amdhsa_kernel
