// A kernel with an indirect call, for the scavenger's tier 2 (tests/liveness.rs
// `an_indirect_call_reaches_callable_functions_not_other_kernels`).
// k_ind calls through a pointer it loads: every callable function may be
// reached (f_cb, f_other), never another kernel's body (k_big's touches v300,
// but a kernel entry is no call target).
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text

.globl k_ind
.p2align 8
.type k_ind,@function
k_ind:
  s_mov_b32 s32, 0
  s_load_b64 s[16:17], s[0:1], 0x0
  s_wait_kmcnt 0x0
  s_swap_pc_i64 s[30:31], s[16:17]
  s_endpgm
.size k_ind, .-k_ind

// Callable: every VGPR is its return value, preserved, written after the
// site or never written (a caller may keep values there): no run of 8 is dead.
.protected f_cb
.p2align 2
.type f_cb,@function
f_cb:
  s_wait_loadcnt_dscnt 0x0
f_cb_site:
  v_add_nc_u32 v0, v0, 1
  v_mov_b32 v19, v0
  v_add_nc_u32 v0, v0, v19
  s_set_pc_i64 s[30:31]
.size f_cb, .-f_cb

// Callable, called by nothing directly: touches up to v47, so tier 2 starts
// at v48 for any kernel whose indirect call may reach it.
.protected f_other
.p2align 2
.type f_other,@function
f_other:
  s_wait_loadcnt_dscnt 0x0
  v_mov_b32 v47, v0
  v_mov_b32 v0, v47
  s_set_pc_i64 s[30:31]
.size f_other, .-f_other

// Another kernel, touching v300 (bank 1).
.globl k_big
.p2align 8
.type k_big,@function
k_big:
  s_set_vgpr_msb 0x40
  v_mov_b32 v44, 0
  s_set_vgpr_msb 0x4000
  s_endpgm
.size k_big, .-k_big

.rodata
.p2align 6
.amdhsa_kernel k_ind
  .amdhsa_next_free_vgpr 32
  .amdhsa_next_free_sgpr 40
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel k_big
  .amdhsa_next_free_vgpr 304
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k_ind
    .symbol: k_ind.kd
    .vgpr_count: 32
    .sgpr_count: 40
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 256
  - .name: k_big
    .symbol: k_big.kd
    .vgpr_count: 304
    .sgpr_count: 8
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
