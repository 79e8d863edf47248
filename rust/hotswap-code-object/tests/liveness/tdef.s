// Hand-written gfx1250 cases for the reaching-definition proof of the
// tensor-mask fix's definition-site form (tests/liveness.rs). Each `*_site`
// label is a tensor_load_to_lds whose mask SGPR is s4; the comment says
// whether s4's only reaching definition can be changed in place and why.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text

// Yes: s_mov_b32 s4, lit on the only path, read only by the load.
.globl t_mov
.p2align 8
.type t_mov,@function
t_mov:
  s_mov_b32 s4, 0x12345678
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 t_mov_join
  s_mov_b32 s5, 1
t_mov_join:
t_mov_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_mov, .-t_mov

// Yes: s_and_b32 s4, s4, lit whose SCC is overwritten before any read.
.globl t_and
.p2align 8
.type t_and,@function
t_and:
  s_and_b32 s4, s4, 0xabcdffff
  s_cmp_eq_u32 s2, 0
t_and_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_cbranch_scc1 t_and_end
t_and_end:
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_and, .-t_and

// No: s_and_b32's SCC is read by the branch after it.
.globl t_and_scc
.p2align 8
.type t_and_scc,@function
t_and_scc:
  s_and_b32 s4, s4, 0xabcdffff
  s_cbranch_scc1 t_and_scc_site
t_and_scc_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_and_scc, .-t_and_scc

// No: the value is also read by s_add_co_i32.
.globl t_other
.p2align 8
.type t_other,@function
t_other:
  s_mov_b32 s4, 0x12345678
t_other_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_add_co_i32 s6, s4, 1
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_other, .-t_other

// No: two definitions reach the load.
.globl t_two
.p2align 8
.type t_two,@function
t_two:
  s_mov_b32 s4, 0x12345678
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 t_two_site
  s_mov_b32 s4, 0x1234ffff
t_two_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_two, .-t_two

// No: on one path s4 comes from the function's entry.
.globl t_entry
.p2align 8
.type t_entry,@function
t_entry:
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 t_entry_site
  s_mov_b32 s4, 0x12345678
t_entry_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_entry, .-t_entry

// No: a scalar load may still write s4 in part (asynchronously).
.globl t_load
.p2align 8
.type t_load,@function
t_load:
  s_mov_b32 s4, 0x12345678
  s_load_b32 s4, s[0:1], 0x0
  s_wait_kmcnt 0x0
t_load_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_load, .-t_load

// Yes, with two readers: a loop whose load reads the value on every trip.
.globl t_loop
.p2align 8
.type t_loop,@function
t_loop:
  s_movk_i32 s4, 0x1234
  s_mov_b32 s5, 3
t_loop_head:
t_loop_site:
  tensor_load_to_lds s[0:3], s[4:11]
  s_sub_co_u32 s5, s5, 1
  s_cmp_lg_u32 s5, 0
  s_cbranch_scc1 t_loop_head
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_loop, .-t_loop

// Provable, but the function moves for another site (a DS two-address load
// split by growth): the rewrite keeps the at-site form here.
.globl t_moved
.p2align 8
.type t_moved,@function
t_moved:
  s_mov_b32 s4, 0x12345678
t_moved_site:
  tensor_load_to_lds s[0:3], s[4:11]
  ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
  s_wait_dscnt 0x0
  s_wait_tensorcnt 0x0
  s_endpgm
.size t_moved, .-t_moved

.rodata
.p2align 6
.amdhsa_kernel t_mov
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 24
.end_amdhsa_kernel

