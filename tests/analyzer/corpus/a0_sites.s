// Every A0 class, assembled by llvm-mc-22 for gfx1250 and linked by ld.lld-22.
// One function per class (sized STT_FUNC symbols), plus a kernel whose entry is
// not covered by a sized symbol. Expected per-class counts are checked against a
// mnemonic count of llvm-objdump-22's disassembly (tests/analyzer/oracle.py).
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text

  .p2align 8
  .type f_cluster,@function
f_cluster:
  cluster_load_b32 v0, v[2:3], off
  cluster_load_b64 v[0:1], v1, s[2:3]
  cluster_load_b128 v[0:3], v[2:3], off offset:64
  cluster_load_async_to_lds_b8 v1, v[2:3], off
  cluster_load_async_to_lds_b32 v1, v[2:3], off
  cluster_load_async_to_lds_b64 v1, v[2:3], off
  cluster_load_async_to_lds_b128 v1, v2, s[4:5]
  global_load_b32 v0, v[2:3], off
  s_setpc_b64 s[30:31]
.Lf_cluster_end:
  .size f_cluster, .Lf_cluster_end-f_cluster

  .p2align 8
  .type f_sopp,@function
f_sopp:
  s_clause 0x1
  s_sethalt 0
  s_barrier_signal_isfirst -1
  s_barrier_signal_isfirst m0
  s_barrier_signal -1
  s_barrier_wait -1
  s_clause 0x3f
  s_nop 0
  s_setpc_b64 s[30:31]
.Lf_sopp_end:
  .size f_sopp, .Lf_sopp_end-f_sopp

  .p2align 8
  .type f_ds,@function
f_ds:
  ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
  ds_load_2addr_b64 v[0:3], v2 offset0:1 offset1:2
  ds_load_2addr_stride64_b32 v[0:1], v2 offset0:1 offset1:2
  ds_load_2addr_stride64_b64 v[0:3], v2 offset0:1 offset1:2
  ds_store_2addr_b32 v2, v0, v1 offset0:1 offset1:2
  ds_store_2addr_b64 v2, v[0:1], v[4:5] offset0:1 offset1:2
  ds_store_2addr_stride64_b32 v2, v0, v1 offset0:1 offset1:2
  ds_store_2addr_stride64_b64 v2, v[0:1], v[4:5] offset0:1 offset1:2
  ds_storexchg_2addr_rtn_b32 v[6:7], v2, v0, v1 offset0:1 offset1:2
  ds_storexchg_2addr_rtn_b64 v[6:9], v2, v[0:1], v[4:5] offset0:1 offset1:2
  ds_storexchg_2addr_stride64_rtn_b32 v[6:7], v2, v0, v1 offset0:1 offset1:2
  ds_storexchg_2addr_stride64_rtn_b64 v[6:9], v2, v[0:1], v[4:5] offset0:1 offset1:2
  ds_load_addtid_b32 v5 offset:128
  ds_store_addtid_b32 v8 offset:64
  ds_load_b32 v0, v2 offset:4
  ds_store_b64 v2, v[0:1]
  s_setpc_b64 s[30:31]
.Lf_ds_end:
  .size f_ds, .Lf_ds_end-f_ds

  .p2align 8
  .type f_tensor,@function
f_tensor:
  s_and_b32 s4, s4, 0xffff0000
  tensor_load_to_lds s[0:3], s[4:11]
  tensor_load_to_lds s[0:3], s[4:11], s[12:15], s[16:19]
  tensor_store_from_lds s[0:3], s[4:11]
  s_wait_tensorcnt 0x0
  s_setpc_b64 s[30:31]
.Lf_tensor_end:
  .size f_tensor, .Lf_tensor_end-f_tensor

  .p2align 8
  .type f_wmma,@function
f_wmma:
  v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]
  v_wmma_f32_16x16x128_fp8_bf8 v[0:7], v[8:23], v[24:39], v[40:47]
  v_wmma_f32_16x16x128_bf8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]
  v_wmma_f32_16x16x128_bf8_bf8 v[0:7], v[8:23], v[24:39], v[40:47]
  v_wmma_f16_16x16x128_fp8_fp8 v[0:3], v[8:23], v[24:39], v[40:43]
  v_wmma_f16_16x16x128_fp8_bf8 v[0:3], v[8:23], v[24:39], v[40:43]
  v_wmma_f16_16x16x128_bf8_fp8 v[0:3], v[8:23], v[24:39], v[40:43]
  v_wmma_f16_16x16x128_bf8_bf8 v[0:3], v[8:23], v[24:39], v[40:43]
  v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[8:15], v[16:23], v[40:47]
  v_wmma_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55]
  v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47]
  v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v2, v3
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47], v[2:3], v[4:5]
  v_wmma_scale_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v2, v3
  v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[2:3], v[4:5]
  // An LD_SCALE prefix not followed by a WMMA: 8 bytes on its own.
  v_wmma_ld_scale_paired_b32 v2, v3
  s_nop 0
  s_setpc_b64 s[30:31]
.Lf_wmma_end:
  .size f_wmma, .Lf_wmma_end-f_wmma

  .p2align 8
  .type f_iu8,@function
f_iu8:
  // Short spacing: a dependent VALU after 4 v_nops (a site).
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[24:31]
  v_nop
  v_nop
  v_nop
  v_nop
  v_add_nc_u32 v0, v0, v1
  // Enough spacing: 8 v_nops, SALU in between (not a site).
  v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[24:31]
  s_mov_b32 s0, 0
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_nop
  v_add_nc_u32 v0, v0, v1
  // A branch after 2 v_nops (a site: the successor is not examined).
  v_swmmac_i32_16x16x128_iu8 v[0:7], v[8:15], v[16:31], v[32:33]
  v_nop
  v_nop
  s_branch .Lf_iu8_tail
.Lf_iu8_tail:
  s_setpc_b64 s[30:31]
.Lf_iu8_end:
  .size f_iu8, .Lf_iu8_end-f_iu8

  .p2align 8
  .type f_fp8,@function
f_fp8:
  v_cvt_pk_fp8_f32 v1, v2, v3 clamp
  v_cvt_sr_fp8_f32 v1, v2, v3 clamp
  v_cvt_f32_fp8_e64 v1, v2 clamp
  v_cvt_pk_fp8_f32 v1, v2, v3
  v_cvt_f32_fp8_e32 v1, v2
  v_cvt_pk_bf8_f32 v1, v2, v3
  s_setpc_b64 s[30:31]
.Lf_fp8_end:
  .size f_fp8, .Lf_fp8_end-f_fp8

  .p2align 8
  .type f_fsb,@function
f_fsb:
  s_mov_b64 s[0:1], src_flat_scratch_base_hi
  s_mov_b64 s[0:1], src_flat_scratch_base_lo
  s_add_nc_u64 s[0:1], src_flat_scratch_base_hi, s[2:3]
  s_mov_b32 s0, src_flat_scratch_base_hi
  s_mov_b32 s0, src_flat_scratch_base_lo
  v_add_nc_u64 v[0:1], src_flat_scratch_base_lo, v[2:3]
  v_add_nc_u64_e64 v[0:1], v[2:3], src_flat_scratch_base_hi
  v_mov_b32 v0, src_flat_scratch_base_lo
  v_mov_b64 v[0:1], src_flat_scratch_base_lo
  s_setpc_b64 s[30:31]
.Lf_fsb_end:
  .size f_fsb, .Lf_fsb_end-f_fsb

  // A kernel with an unsized entry symbol: walked from its descriptor's entry.
  .p2align 8
  .globl k_unsized
  .type k_unsized,@function
k_unsized:
  s_clause 0x1
  s_load_b64 s[0:1], s[0:1], 0x0
  s_load_b32 s2, s[0:1], 0x8
  s_wait_kmcnt 0x0
  s_endpgm

  .rodata
  .p2align 6
  .amdhsa_kernel k_unsized
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 8
  .end_amdhsa_kernel
