// Hand-written gfx1250 cases for the liveness tests (tests/liveness.rs).
// Each kernel's `site:`-labelled instruction is the point queried; the
// comments say what must be live there and why.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text

// A straight line: v1 and v0 live at the site (read after), v2 written by
// the site, v3 never touched; s4 is killed after the site; SCC is read by
// the branch after it.
.globl k_line
.p2align 8
.type k_line,@function
k_line:
  v_mov_b32 v1, 7
  s_cmp_eq_u32 s2, 0
k_line_site:
  v_add_nc_u32 v2, v0, v1
  s_mov_b32 s4, 1
  v_add_nc_u32 v2, v2, v1
  s_cbranch_scc1 k_line_end
  v_mov_b32 v1, s4
k_line_end:
  global_store_b32 v2, v1, s[0:1]
  s_endpgm
.size k_line, .-k_line

// An EXEC change between the site and a VGPR write: v5 stays live (the
// write covers only the lanes the new EXEC enables). v6 is written before
// the EXEC change: dead at the site.
.globl k_exec
.p2align 8
.type k_exec,@function
k_exec:
  v_cmp_gt_u32_e32 vcc_lo, 8, v0
k_exec_site:
  s_nop 0
  v_mov_b32 v6, 3
  s_and_saveexec_b32 s2, vcc_lo
  v_mov_b32 v5, 1
  s_or_b32 exec_lo, exec_lo, s2
  v_add_nc_u32 v7, v5, v6
  global_store_b32 v7, v7, s[0:1]
  s_endpgm
.size k_exec, .-k_exec

// VGPRs above v255: v257 (field v1 in src0 bank 1) is read after the site;
// v769 (v1 in dst bank 3) is written before it and never read.
.globl k_msb
.p2align 8
.type k_msb,@function
k_msb:
  s_set_vgpr_msb 0xc0
  v_mov_b32 v1, 0
  s_set_vgpr_msb 0xc000
k_msb_site:
  s_nop 0
  s_set_vgpr_msb 0x01
  v_mov_b32 v2, v1
  s_set_vgpr_msb 0x0100
  global_store_b32 v2, v2, s[0:1]
  s_endpgm
.size k_msb, .-k_msb

// A load in flight: v8 is loaded before the site and never read, but the
// load may still write it: live until the wait.
.globl k_flight
.p2align 8
.type k_flight,@function
k_flight:
  global_load_b32 v8, v0, s[0:1]
k_flight_site:
  s_nop 0
  s_wait_loadcnt 0x0
  s_endpgm
.size k_flight, .-k_flight

// A tensor load reads its descriptor groups (s[0:3], s[4:11]) and no other
// scalar register: they stay live to the wait (it may read them late), s20
// (written before the site, never read) is dead.
.globl k_tensor
.p2align 8
.type k_tensor,@function
k_tensor:
  s_mov_b32 s20, 0
k_tensor_site:
  s_nop 0
  tensor_load_to_lds s[0:3], s[4:11]
k_tensor_late:
  s_nop 0
  s_wait_tensorcnt 0x0
  s_endpgm
.size k_tensor, .-k_tensor

// A loop: v9 is read at the loop head and written at its bottom.
.globl k_loop
.p2align 8
.type k_loop,@function
k_loop:
  v_mov_b32 v9, 0
  s_mov_b32 s5, 4
k_loop_head:
  v_add_nc_u32 v10, v9, 1
k_loop_site:
  s_sub_co_u32 s5, s5, 1
  v_mov_b32 v9, v10
  s_cmp_lg_u32 s5, 0
  s_cbranch_scc1 k_loop_head
  global_store_b32 v9, v9, s[0:1]
  s_endpgm
.size k_loop, .-k_loop

// A kernel calling a function through s_get_pc_i64 / s_add_nc_u64 /
// s_swap_pc_i64, as clang-22 calls on gfx1250.
.globl k_call
.p2align 8
.type k_call,@function
k_call:
  s_mov_b32 s32, 0
  v_mov_b32 v3, 5
  s_get_pc_i64 s[16:17]
  s_add_nc_u64 s[16:17], s[16:17], f_callee@rel64+4
  s_swap_pc_i64 s[30:31], s[16:17]
  global_store_b32 v0, v3, s[0:1]
  s_endpgm
.size k_call, .-k_call

// A callable function: s10 is written after the site (dead there under the
// C convention, preserved under amdgpu_gfx); v0 is its return value.
.protected f_callee
.p2align 2
.type f_callee,@function
f_callee:
  s_wait_loadcnt_dscnt 0x0
f_callee_site:
  v_add_nc_u32 v0, v0, 1
  s_mov_b32 s10, 0
  v_mov_b32 v11, s10
  v_add_nc_u32 v0, v0, v11
  s_set_pc_i64 s[30:31]
.size f_callee, .-f_callee

// Every SGPR read after the site: no SGPR is dead or above the allocation,
// so an SGPR request is met by saving live ones into lanes of a VGPR dead in
// every lane.
.globl k_full
.p2align 8
.type k_full,@function
k_full:
  v_mov_b32 v1, 0
k_full_site:
  s_nop 0
  s_cmp_eq_u32 s0, 0
  s_cmp_eq_u32 s1, 0
  s_cmp_eq_u32 s2, 0
  s_cmp_eq_u32 s3, 0
  s_cmp_eq_u32 s4, 0
  s_cmp_eq_u32 s5, 0
  s_cmp_eq_u32 s6, 0
  s_cmp_eq_u32 s7, 0
  s_cmp_eq_u32 s8, 0
  s_cmp_eq_u32 s9, 0
  s_cmp_eq_u32 s10, 0
  s_cmp_eq_u32 s11, 0
  s_cmp_eq_u32 s12, 0
  s_cmp_eq_u32 s13, 0
  s_cmp_eq_u32 s14, 0
  s_cmp_eq_u32 s15, 0
  s_cmp_eq_u32 s16, 0
  s_cmp_eq_u32 s17, 0
  s_cmp_eq_u32 s18, 0
  s_cmp_eq_u32 s19, 0
  s_cmp_eq_u32 s20, 0
  s_cmp_eq_u32 s21, 0
  s_cmp_eq_u32 s22, 0
  s_cmp_eq_u32 s23, 0
  s_cmp_eq_u32 s24, 0
  s_cmp_eq_u32 s25, 0
  s_cmp_eq_u32 s26, 0
  s_cmp_eq_u32 s27, 0
  s_cmp_eq_u32 s28, 0
  s_cmp_eq_u32 s29, 0
  s_cmp_eq_u32 s30, 0
  s_cmp_eq_u32 s31, 0
  s_cmp_eq_u32 s32, 0
  s_cmp_eq_u32 s33, 0
  s_cmp_eq_u32 s34, 0
  s_cmp_eq_u32 s35, 0
  s_cmp_eq_u32 s36, 0
  s_cmp_eq_u32 s37, 0
  s_cmp_eq_u32 s38, 0
  s_cmp_eq_u32 s39, 0
  s_cmp_eq_u32 s40, 0
  s_cmp_eq_u32 s41, 0
  s_cmp_eq_u32 s42, 0
  s_cmp_eq_u32 s43, 0
  s_cmp_eq_u32 s44, 0
  s_cmp_eq_u32 s45, 0
  s_cmp_eq_u32 s46, 0
  s_cmp_eq_u32 s47, 0
  s_cmp_eq_u32 s48, 0
  s_cmp_eq_u32 s49, 0
  s_cmp_eq_u32 s50, 0
  s_cmp_eq_u32 s51, 0
  s_cmp_eq_u32 s52, 0
  s_cmp_eq_u32 s53, 0
  s_cmp_eq_u32 s54, 0
  s_cmp_eq_u32 s55, 0
  s_cmp_eq_u32 s56, 0
  s_cmp_eq_u32 s57, 0
  s_cmp_eq_u32 s58, 0
  s_cmp_eq_u32 s59, 0
  s_cmp_eq_u32 s60, 0
  s_cmp_eq_u32 s61, 0
  s_cmp_eq_u32 s62, 0
  s_cmp_eq_u32 s63, 0
  s_cmp_eq_u32 s64, 0
  s_cmp_eq_u32 s65, 0
  s_cmp_eq_u32 s66, 0
  s_cmp_eq_u32 s67, 0
  s_cmp_eq_u32 s68, 0
  s_cmp_eq_u32 s69, 0
  s_cmp_eq_u32 s70, 0
  s_cmp_eq_u32 s71, 0
  s_cmp_eq_u32 s72, 0
  s_cmp_eq_u32 s73, 0
  s_cmp_eq_u32 s74, 0
  s_cmp_eq_u32 s75, 0
  s_cmp_eq_u32 s76, 0
  s_cmp_eq_u32 s77, 0
  s_cmp_eq_u32 s78, 0
  s_cmp_eq_u32 s79, 0
  s_cmp_eq_u32 s80, 0
  s_cmp_eq_u32 s81, 0
  s_cmp_eq_u32 s82, 0
  s_cmp_eq_u32 s83, 0
  s_cmp_eq_u32 s84, 0
  s_cmp_eq_u32 s85, 0
  s_cmp_eq_u32 s86, 0
  s_cmp_eq_u32 s87, 0
  s_cmp_eq_u32 s88, 0
  s_cmp_eq_u32 s89, 0
  s_cmp_eq_u32 s90, 0
  s_cmp_eq_u32 s91, 0
  s_cmp_eq_u32 s92, 0
  s_cmp_eq_u32 s93, 0
  s_cmp_eq_u32 s94, 0
  s_cmp_eq_u32 s95, 0
  s_cmp_eq_u32 s96, 0
  s_cmp_eq_u32 s97, 0
  s_cmp_eq_u32 s98, 0
  s_cmp_eq_u32 s99, 0
  s_cmp_eq_u32 s100, 0
  s_cmp_eq_u32 s101, 0
  s_cmp_eq_u32 s102, 0
  s_cmp_eq_u32 s103, 0
  s_cmp_eq_u32 s104, 0
  s_cmp_eq_u32 s105, 0
  global_store_b32 v1, v1, s[0:1]
  s_endpgm
.size k_full, .-k_full

.rodata
.p2align 6
.amdhsa_kernel k_line
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_exec
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_msb
  .amdhsa_next_free_vgpr 784
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_flight
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_tensor
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_loop
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_full
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 106
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_call
  .amdhsa_next_free_vgpr 32
  .amdhsa_next_free_sgpr 40
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k_line
    .symbol: k_line.kd
    .vgpr_count: 16
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_exec
    .symbol: k_exec.kd
    .vgpr_count: 16
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_msb
    .symbol: k_msb.kd
    .vgpr_count: 784
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_flight
    .symbol: k_flight.kd
    .vgpr_count: 16
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_tensor
    .symbol: k_tensor.kd
    .vgpr_count: 16
    .sgpr_count: 24
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_loop
    .symbol: k_loop.kd
    .vgpr_count: 16
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_full
    .symbol: k_full.kd
    .vgpr_count: 16
    .sgpr_count: 108
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_call
    .symbol: k_call.kd
    .vgpr_count: 32
    .sgpr_count: 40
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
amdhsa.target: amdgcn-amd-amdhsa--gfx1250
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
