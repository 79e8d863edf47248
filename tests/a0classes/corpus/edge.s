// Sites of issue 31's classes that clang-22 does not emit from source,
// assembled by llvm-mc-22 for gfx1250 and linked by ld.lld-22
// (build_corpus.sh): ds_load/store_addtid_b32 with M0 above 64 KiB and
// several offsets and registers (v255 included), a store under a non-zero
// VGPR-MSB mode (refused), tensor loads with one, two and four descriptor
// groups, vector reads of src_flat_scratch_base_lo in VOP1, VOP2 and VOP3 form
// (llvm-mc-22 assembles _hi there but llvm-objdump-22 does not decode it, so
// the oracle cannot check it; the emitter's unit tests cover it),
// and the three FP8 conversions with CLAMP (refused).
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text

  .p2align 8
  .type f_addtid,@function
f_addtid:
  s_mov_b32 m0, 0x12340
  ds_load_addtid_b32 v5 offset:128
  ds_store_addtid_b32 v8 offset:64
  ds_load_addtid_b32 v255
  ds_store_addtid_b32 v255 offset:65535
  ds_load_addtid_b32 v0 offset:4
  ds_store_addtid_b32 v1
  s_wait_dscnt 0x0
  s_set_vgpr_msb 0x41
  ds_store_addtid_b32 v2 offset:8
  s_set_vgpr_msb 0x4100
  s_setpc_b64 s[30:31]
.Lf_addtid_end:
  .size f_addtid, .Lf_addtid_end-f_addtid

  .p2align 8
  .type f_tensor,@function
f_tensor:
  s_or_b32 s4, s4, 0xff
  tensor_load_to_lds s[0:3], s[4:11]
  tensor_load_to_lds s[20:23], s[12:19] th:TH_LOAD_NT scope:SCOPE_SE
  tensor_load_to_lds s[0:3], s[4:11], s[12:15], s[16:19]
  tensor_load_to_lds s[96:99], s[88:95]
  s_wait_tensorcnt 0x0
  s_setpc_b64 s[30:31]
.Lf_tensor_end:
  .size f_tensor, .Lf_tensor_end-f_tensor

  .p2align 8
  .type f_fsb,@function
f_fsb:
  v_add_nc_u64_e32 v[0:1], src_flat_scratch_base_lo, v[2:3]
  v_add_nc_u64_e64 v[6:7], v[2:3], src_flat_scratch_base_lo
  v_add_nc_u64_e64 v[6:7], s[100:101], src_flat_scratch_base_lo
  v_mov_b64_e32 v[8:9], src_flat_scratch_base_lo
  s_setpc_b64 s[30:31]
.Lf_fsb_end:
  .size f_fsb, .Lf_fsb_end-f_fsb

  .p2align 8
  .type f_fp8,@function
f_fp8:
  v_cvt_pk_fp8_f32 v1, v2, v3 clamp
  v_cvt_sr_fp8_f32 v1, v2, v3 clamp
  v_cvt_f32_fp8_e64 v1, v2 clamp
  s_setpc_b64 s[30:31]
.Lf_fp8_end:
  .size f_fp8, .Lf_fp8_end-f_fp8
