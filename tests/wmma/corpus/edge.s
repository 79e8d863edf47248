// WMMA sites at the VGPR-MSB edges, assembled by llvm-mc-22 for gfx1250 and
// linked by ld.lld-22 (build_corpus.sh): banked operands under several
// s_set_vgpr_msb modes (the K split's second src2 = D in another bank than
// src2's), tuples crossing v255/v256 (which LLVM 22 allocates itself), an
// unknown mode at a join, block-16 scaled WMMAs (FP4, FP8/BF8, FP6 A; SGPR
// and VGPR scales; scale rows; the scaled f4 forms), and integer WMMAs
// before dependent VALUs, branches and the function's end. The block-16
// scaled 32x16x128 f4 (split along M, then K): natural and upper-half-first
// orders, SGPR and VGPR scales, an inline C, B's scale row, reuse hints, a
// banked mode, a destination crossing v255, and its refusals (D over a
// scale pair; A's scale on ROW1; D over its own half's A).
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text

  .p2align 8
  .type f_banks,@function
f_banks:
  s_set_vgpr_msb 0x41
  v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]
  s_set_vgpr_msb 0x41e4
  v_wmma_f16_16x16x128_bf8_bf8 v[0:3], v[8:23], v[24:39], v[40:43]
  v_wmma_f32_16x16x128_bf8_fp8 v[48:55], v[8:23], v[24:39], 0
  s_set_vgpr_msb 0xe455
  v_wmma_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55]
  s_set_vgpr_msb 0x5510
  v_wmma_f32_32x16x128_f4 v[56:71], v[16:31], v[32:39], v[56:71] neg_lo:[0,0,1] neg_hi:[0,0,1]
  s_set_vgpr_msb 0x1000
  s_setpc_b64 s[30:31]
.Lf_banks_end:
  .size f_banks, .Lf_banks_end-f_banks

  .p2align 8
  .type f_cross,@function
f_cross:
  v_wmma_f32_16x16x128_fp8_fp8 v[250:257], v[240:255], v[24:39], v[250:257]
  v_wmma_f32_16x16x128_fp8_bf8 v[0:7], v[248:263], v[252:267], v[40:47]
  v_wmma_f16_16x16x128_fp8_fp8 v[254:257], v[0:15], v[16:31], v[254:257]
  v_wmma_f32_32x16x128_f4 v[248:263], v[0:15], v[16:23], v[248:263]
  v_wmma_f32_32x16x128_f4 v[24:39], v[244:259], v[252:259], v[40:55]
  v_wmma_scale16_f32_32x16x128_f4 v[248:263], v[0:15], v[16:23], v[248:263], v[24:25], v[26:27]
  s_set_vgpr_msb 0xc0
  v_wmma_f32_16x16x128_bf8_bf8 v[0:7], v[248:263], v[24:39], v[0:7]
  s_set_vgpr_msb 0xc000
  s_setpc_b64 s[30:31]
.Lf_cross_end:
  .size f_cross, .Lf_cross_end-f_cross

  .p2align 8
  .type f_unknown_mode,@function
f_unknown_mode:
  s_cbranch_scc0 .Lskip
  s_set_vgpr_msb 0x1
.Lskip:
  v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]
  s_set_vgpr_msb 0
  s_setpc_b64 s[30:31]
.Lf_unknown_mode_end:
  .size f_unknown_mode, .Lf_unknown_mode_end-f_unknown_mode

  .p2align 8
  .type f_scale16,@function
f_scale16:
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:15], v[16:31], v[32:39], v[40:41], v[42:43] matrix_a_fmt:MATRIX_FMT_FP4
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:35], v[0:7], s[4:5], v[42:43] matrix_b_fmt:MATRIX_FMT_FP6 matrix_a_scale:MATRIX_SCALE_ROW1
  s_set_vgpr_msb 0x5d
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v[48:49], s[6:7] matrix_a_fmt:MATRIX_FMT_BF8 matrix_b_scale:MATRIX_SCALE_ROW1
  s_set_vgpr_msb 0x5d00
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:19], v[24:39], v[40:47], v[48:49], v[50:51] matrix_a_fmt:MATRIX_FMT_FP6
  v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59]
  v_wmma_scale16_f32_32x16x128_f4 v[8:23], v[0:15], v[32:39], v[40:55], s[4:5], v[58:59] neg_lo:[0,0,1]
  v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], 1.0, v[56:57], s[6:7] matrix_b_scale:MATRIX_SCALE_ROW1 matrix_a_reuse
  v_wmma_scale16_f32_32x16x128_f4 v[64:79], v[16:31], v[32:39], v[64:79], v[56:57], v[58:59] neg_hi:[0,0,1]
  v_wmma_scale16_f32_32x16x128_f4 v[56:71], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59]
  v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59] matrix_a_scale:MATRIX_SCALE_ROW1
  v_wmma_scale16_f32_32x16x128_f4 v[16:31], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59]
  s_set_vgpr_msb 0x55
  v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59]
  s_set_vgpr_msb 0x5500
  v_wmma_scale_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v56, v58
  s_set_vgpr_msb 0x44
  v_wmma_scale_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[0:15], s2, v58 matrix_b_scale:MATRIX_SCALE_ROW1 neg_lo:[0,0,1]
  v_wmma_scale_f32_32x16x128_f4 v[8:23], v[0:15], v[32:39], v[40:55], v60, v61
  v_wmma_scale_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v56, v58 matrix_a_scale:MATRIX_SCALE_ROW1
  s_set_vgpr_msb 0x4400
  s_setpc_b64 s[30:31]
.Lf_scale16_end:
  .size f_scale16, .Lf_scale16_end-f_scale16

  .p2align 8
  .type f_int,@function
f_int:
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[0:7]
  s_mov_b32 s0, 0
  v_nop
  v_add_nc_u32_e32 v0, 1, v0
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[0:7] neg_lo:[1,0,0]
  v_nop
  v_nop
  s_branch .Lnext
.Lnext:
  s_set_vgpr_msb 0x55
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], 1 neg_lo:[1,1,0] clamp
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_add_nc_u32_e32 v0, 1, v0
  s_set_vgpr_msb 0x5500
  v_wmma_i32_16x16x64_iu8 v[24:31], v[8:15], v[16:23], v[24:31]
.Lf_int_end:
  .size f_int, .Lf_int_end-f_int
