// One code object per refusal of the native rewriter, selected with
// `llvm-mc-22 --defsym CASE=<n>` (tests/native/CMakeLists.txt names them):
// 1-9 one site of each class that needs code growth the native rewriter does
// not make (1 and 2: both DS addtid forms; DS two-address sites are fixed by
// moving code, see rewrite/placement.rs), 10 an encoding the
// walker cannot size, 11 code outside every function, 12 two functions that
// disagree on instruction boundaries. Each object also has a same-size site,
// which alone would be fixed.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl k
  .type k,@function
k:
  cluster_load_b32 v0, v[2:3], off
.if CASE == 1
  ds_load_addtid_b32 v5 offset:128
.elseif CASE == 2
  ds_store_addtid_b32 v8 offset:64
.elseif CASE == 3
  tensor_load_to_lds s[0:3], s[4:11]
.elseif CASE == 4
  v_wmma_f16_16x16x128_bf8_fp8 v[0:3], v[8:23], v[24:39], v[40:43]
.elseif CASE == 5
  v_wmma_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55]
.elseif CASE == 6
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v[2:3], v[4:5]
.elseif CASE == 7
  v_cvt_sr_fp8_f32 v1, v2, v3 clamp
.elseif CASE == 8
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[24:31]
  v_nop
  v_add_nc_u32 v0, v0, v1
.elseif CASE == 9
  v_add_nc_u64 v[0:1], src_flat_scratch_base_lo, v[2:3]
.elseif CASE == 10
  .long 0xe4000000
.elseif CASE == 12
  // s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1; k_inside starts
  // at its literal.
  s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 0xbf800000
.endif
  s_endpgm
.Lk_end:
  .size k, .Lk_end-k
.if CASE == 11
  // After k's end, no symbol: a cluster load nothing analyses.
  cluster_load_b32 v0, v[2:3], off
.endif
.if CASE == 12
  .globl k_inside
  .type k_inside,@function
  .set k_inside, k + 16
  .size k_inside, 4
.endif

  .rodata
  .p2align 6
  .amdhsa_kernel k
    .amdhsa_next_free_vgpr 64
    .amdhsa_next_free_sgpr 16
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 4
    .wavefront_size: 32
    .sgpr_count: 16
    .vgpr_count: 64
    .max_flat_workgroup_size: 256
amdhsa.target: amdgcn-amd-amdhsa--gfx1250
amdhsa.version:
  - 1
  - 2
...
  .end_amdgpu_metadata
