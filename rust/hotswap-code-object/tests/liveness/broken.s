// Functions whose control flow the liveness analysis must refuse to trust.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
// A branch out of the function.
.globl k_out
.p2align 8
.type k_out,@function
k_out:
  v_mov_b32 v1, 0
  s_branch k_fall
.size k_out, .-k_out
// Falls through its end (its size stops before the next instruction).
.globl k_fall
.p2align 8
.type k_fall,@function
k_fall:
  v_mov_b32 v1, 0
.size k_fall, .-k_fall
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel k_out
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_fall
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
