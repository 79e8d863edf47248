// A B0 code object whose every A0 site has a same-size fix: one kernel with
// each same-size class, and a metadata note whose kernel carries
// `.gfx1250_revision: B0` (the key ROCm's compiler writes; clang-22 does not).
// Assembled by llvm-mc-22 and linked by ld.lld-22 (tests/native/CMakeLists.txt).
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl k_fixable
  .type k_fixable,@function
k_fixable:
  s_clause 0x1
  cluster_load_b32 v0, v[2:3], off
  cluster_load_b64 v[0:1], v1, s[2:3]
  cluster_load_b128 v[4:7], v[2:3], off offset:64
  cluster_load_async_to_lds_b8 v1, v[2:3], off
  cluster_load_async_to_lds_b32 v1, v[2:3], off
  cluster_load_async_to_lds_b64 v1, v[2:3], off
  cluster_load_async_to_lds_b128 v1, v2, s[4:5]
  s_wait_loadcnt 0x0
  s_barrier_signal_isfirst -1
  s_barrier_signal_isfirst m0
  s_barrier_wait -1
  s_sethalt 0
  // v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v2, v3
  // with scale_src2 (bits [58:50]) 0 instead of 0x100: LLVM 22 prints the
  // 16 bytes as two .long and a v_wmma_f32_16x16x128_f8f6f4.
  .long 0xcc350000, 0x00020702, 0xcc330000, 0x04a23108
  // The same with scale_src2 = 0x100 (already the A0 form: not changed).
  v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v2, v3
  // B0 names the 64-bit flat scratch base with selector 231; A0 with 230.
  s_mov_b64 s[0:1], src_flat_scratch_base_hi
  s_endpgm
.Lk_fixable_end:
  .size k_fixable, .Lk_fixable_end-k_fixable

  .rodata
  .p2align 6
  .amdhsa_kernel k_fixable
    .amdhsa_next_free_vgpr 48
    .amdhsa_next_free_sgpr 8
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.kernels:
  - .name: k_fixable
    .symbol: k_fixable.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 4
    .wavefront_size: 32
    .sgpr_count: 8
    .vgpr_count: 48
    .max_flat_workgroup_size: 256
    .gfx1250_revision: B0
amdhsa.target: amdgcn-amd-amdhsa--gfx1250
amdhsa.version:
  - 1
  - 2
...
  .end_amdgpu_metadata
