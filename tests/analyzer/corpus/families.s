// Every encoding family the gfx1250 walker sizes, with the literal (32- and
// 64-bit), DPP16/DPP8, constant-K and VOPD/VOPD3 forms, for the boundary check
// against llvm-objdump-22.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .type f_families,@function
f_families:
  // SOP2 / SOPK / SOP1 / SOPC / SOPP
  s_add_co_u32 s0, s1, 0x12345
  s_add_nc_u64 s[0:1], s[2:3], 0x123456789
  s_fmaak_f32 s0, s1, s2, 0x1234
  s_fmamk_f32 s0, s1, 0x1234, s2
  s_movk_i32 s0, 0x1234
  s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1
  s_getreg_b32 s0, hwreg(HW_REG_WAVE_MODE)
  s_mov_b32 s0, 0x12345678
  s_mov_b64 s[0:1], 0x123456789
  s_mov_b64 s[0:1], -1
  s_get_shader_cycles_u64 s[0:1]
  s_cmp_eq_u32 s0, 0x12345
  s_cmp_lg_u64 s[0:1], 0x123456789
  s_wait_loadcnt 0x0
  s_set_vgpr_msb 0x41
  s_set_vgpr_msb 0x4100
  s_delay_alu instid0(VALU_DEP_1)
  // SMEM
  s_load_b128 s[4:7], s[0:1], 0x10
  // VOP1 / VOP2 / VOPC, with literal and DPP
  v_mov_b32 v0, 0x12345678
  v_mov_b64 v[0:1], 0x123456789
  v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  v_mov_b32 v0, v1 dpp8:[7,6,5,4,3,2,1,0]
  v_add_f32 v0, 0x40490fdb, v1
  v_add_f64 v[0:1], 0x123456789, v[2:3]
  v_add_f32_dpp v0, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf
  v_fmamk_f32 v0, v1, 0x1234, v2
  v_fmaak_f32 v0, v1, v2, 0x1234
  v_fmamk_f16 v0, v1, 0x1234, v2
  v_fmaak_f64 v[0:1], v[2:3], v[4:5], 0x123456789
  v_fmamk_f64 v[0:1], v[2:3], 0x1234, v[4:5]
  v_cmp_eq_u32 vcc_lo, 0x12345, v0
  v_cmp_lt_f32 vcc_lo, v0, v1
  v_cmp_eq_u32_dpp vcc_lo, v0, v1 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf
  // VOP3 / VOP3SD with literal and DPP
  v_fma_f32 v0, v1, v2, 0x1234
  v_fma_f32 v0, 0x1234, v2, v3
  v_add_f32_e64 v0, v1, 0x1234
  v_add_f32_e64_dpp v0, v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  v_add_f32_e64_dpp v0, v1, v2 dpp8:[7,6,5,4,3,2,1,0]
  v_add_co_u32 v0, s0, v1, 0x1234
  v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]
  v_cndmask_b32_e64 v0, v1, v2, s0
  v_cmp_eq_u32_e64 s0, v0, 0x1234
  v_readlane_b32 s0, v1, 3
  v_nop
  v_nop_e64
  v_cvt_f32_fp8_e64_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  // VOP3P with literal and DPP
  v_pk_add_f16 v0, v1, v2
  v_pk_fma_f16 v0, v1, v2, 0x12341234
  v_pk_add_f32 v[0:1], v[2:3], v[4:5]
  v_fma_mix_f32 v0, v1, v2, v3
  v_dot4_i32_iu8 v0, v1, v2, v3
  // VOPD / VOPD3
  v_dual_add_f32 v0, s1, v2 :: v_dual_mul_f32 v3, s4, v5
  v_dual_add_f32 v0, 0x1234, v2 :: v_dual_mul_f32 v3, v4, v5
  v_dual_fmaak_f32 v0, v1, v2, 0x1234 :: v_dual_mov_b32 v3, v4
  v_dual_mov_b32 v0, 0x1234 :: v_dual_fmamk_f32 v1, v2, 0x1234, v3
  v_dual_mov_b32 v0, 0x1234 :: v_dual_mov_b32 v1, 0x1234
  v_dual_fma_f32 v0, v1, v2, v3 :: v_dual_mul_f32 v5, v6, v7
  v_dual_add_f32 v0, -v1, v2 :: v_dual_mul_f32 v5, v6, v7
  // DS, VBUFFER, VFLAT/VGLOBAL/VSCRATCH, VIMAGE (tensor)
  ds_add_u32 v0, v1 offset:16
  buffer_load_b32 v0, off, s[4:7], null offset:16
  buffer_store_b128 v[0:3], v4, s[4:7], s8 offen
  flat_load_b32 v0, v[2:3]
  global_load_b64 v[0:1], v2, s[0:1] offset:-16
  global_store_b32 v[2:3], v0, off scope:SCOPE_SYS
  scratch_load_b32 v0, off, s0 offset:4
  global_prefetch_b8 v0, s[0:1] scope:SCOPE_SE
  tensor_load_to_lds s[0:3], s[4:11]
  // Control
  s_get_pc_i64 s[0:1]
  s_add_pc_i64 0x100
  s_cbranch_scc0 .Lfam_end
  s_branch .Lfam_end
.Lfam_end:
  s_setpc_b64 s[30:31]
.Lf_families_end:
  .size f_families, .Lf_families_end-f_families
