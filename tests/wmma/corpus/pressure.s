// A block-16 scaled WMMA under register pressure (issue 30): k_pressure
// allocates 320 VGPRs; below v256 every VGPR is an operand of the site or
// read after it except v100:v101, and v260 (bank 1) is live across it. The
// split's two scale VGPRs (below v256) are v100:v101; its masked A copy (16
// VGPRs, any bank) is the first dead run above them, v261-v276, named
// through s_set_vgpr_msb. Before the request was split, the one block of 18
// below v256 it asked for did not exist and the object was refused.
// Assembled by llvm-mc-22 and linked by ld.lld-22 (build_corpus.sh);
// rust/hotswap-code-object/tests/liveness/make.sh builds the same source
// for the Rust tests.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text

  .globl k_pressure
  .p2align 8
  .type k_pressure,@function
k_pressure:
  s_set_vgpr_msb 0x40
  v_mov_b32 v4, 0
  s_set_vgpr_msb 0x4000
  v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[0:7], v[40:41], v[42:43]
  s_set_vgpr_msb 0x1
  v_add_nc_u32 v1, v4, v1
  s_set_vgpr_msb 0x100
  global_store_b128 v1, v[44:47], s[0:1]
  global_store_b128 v1, v[48:51], s[0:1]
  global_store_b128 v1, v[52:55], s[0:1]
  global_store_b128 v1, v[56:59], s[0:1]
  global_store_b128 v1, v[60:63], s[0:1]
  global_store_b128 v1, v[64:67], s[0:1]
  global_store_b128 v1, v[68:71], s[0:1]
  global_store_b128 v1, v[72:75], s[0:1]
  global_store_b128 v1, v[76:79], s[0:1]
  global_store_b128 v1, v[80:83], s[0:1]
  global_store_b128 v1, v[84:87], s[0:1]
  global_store_b128 v1, v[88:91], s[0:1]
  global_store_b128 v1, v[92:95], s[0:1]
  global_store_b128 v1, v[96:99], s[0:1]
  global_store_b128 v1, v[102:105], s[0:1]
  global_store_b128 v1, v[106:109], s[0:1]
  global_store_b128 v1, v[110:113], s[0:1]
  global_store_b128 v1, v[114:117], s[0:1]
  global_store_b128 v1, v[118:121], s[0:1]
  global_store_b128 v1, v[122:125], s[0:1]
  global_store_b128 v1, v[126:129], s[0:1]
  global_store_b128 v1, v[130:133], s[0:1]
  global_store_b128 v1, v[134:137], s[0:1]
  global_store_b128 v1, v[138:141], s[0:1]
  global_store_b128 v1, v[142:145], s[0:1]
  global_store_b128 v1, v[146:149], s[0:1]
  global_store_b128 v1, v[150:153], s[0:1]
  global_store_b128 v1, v[154:157], s[0:1]
  global_store_b128 v1, v[158:161], s[0:1]
  global_store_b128 v1, v[162:165], s[0:1]
  global_store_b128 v1, v[166:169], s[0:1]
  global_store_b128 v1, v[170:173], s[0:1]
  global_store_b128 v1, v[174:177], s[0:1]
  global_store_b128 v1, v[178:181], s[0:1]
  global_store_b128 v1, v[182:185], s[0:1]
  global_store_b128 v1, v[186:189], s[0:1]
  global_store_b128 v1, v[190:193], s[0:1]
  global_store_b128 v1, v[194:197], s[0:1]
  global_store_b128 v1, v[198:201], s[0:1]
  global_store_b128 v1, v[202:205], s[0:1]
  global_store_b128 v1, v[206:209], s[0:1]
  global_store_b128 v1, v[210:213], s[0:1]
  global_store_b128 v1, v[214:217], s[0:1]
  global_store_b128 v1, v[218:221], s[0:1]
  global_store_b128 v1, v[222:225], s[0:1]
  global_store_b128 v1, v[226:229], s[0:1]
  global_store_b128 v1, v[230:233], s[0:1]
  global_store_b128 v1, v[234:237], s[0:1]
  global_store_b128 v1, v[238:241], s[0:1]
  global_store_b128 v1, v[242:245], s[0:1]
  global_store_b128 v1, v[246:249], s[0:1]
  global_store_b128 v1, v[250:253], s[0:1]
  global_store_b64 v1, v[254:255], s[0:1]
  global_store_b128 v1, v[0:3], s[0:1]
  global_store_b128 v1, v[4:7], s[0:1]
  s_endpgm
.Lk_pressure_end:
  .size k_pressure, .Lk_pressure_end-k_pressure

  .rodata
  .p2align 6
  .amdhsa_kernel k_pressure
    .amdhsa_next_free_vgpr 320
    .amdhsa_next_free_sgpr 8
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.kernels:
  - .name: k_pressure
    .symbol: k_pressure.kd
    .vgpr_count: 320
    .sgpr_count: 8
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .max_flat_workgroup_size: 32
amdhsa.target: amdgcn-amd-amdhsa--gfx1250
amdhsa.version:
  - 1
  - 2
...
  .end_amdgpu_metadata
