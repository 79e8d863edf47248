// A tensor_load_to_lds whose mask SGPR (s4) has one definition, an
// s_mov_b32 of a literal read by nothing else: the rewrite clears the mask
// there, in place (the literal's low 16 bits), and moves nothing.
// The second load's mask comes from s_movk_i32 inside a loop.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
.globl k
.p2align 8
.type k,@function
k:
  s_mov_b32 s4, 0x12345678
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 k_join
  s_mov_b32 s5, 1
k_join:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_movk_i32 s12, 0x7001
  s_mov_b32 s20, 2
k_loop:
  tensor_load_to_lds s[0:3], s[12:19]
  s_sub_co_u32 s20, s20, 1
  s_cmp_lg_u32 s20, 0
  s_cbranch_scc1 k_loop
  s_wait_tensorcnt 0x0
  s_endpgm
.size k, .-k

.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 24
.end_amdhsa_kernel
