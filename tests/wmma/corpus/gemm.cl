// GEMM-shaped gfx1250 kernels for the WMMA emitters (issue 30), built by
// clang-22 (build_corpus.sh). Shapes: software-pipelined K loops (the next
// tiles load while the current ones multiply), many live accumulators (more
// than 256 VGPRs: s_set_vgpr_msb banks), MX scales in SGPRs (kernel
// arguments) and VGPRs (loaded per lane), WMMAs in called functions, and
// inline assembly for register placements the compiler does not choose
// (destination over an input half, integer WMMAs without their v_nops).
typedef float v16f __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef half v8h __attribute__((ext_vector_type(8)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef int v8i __attribute__((ext_vector_type(8)));

// Dense K=128 FP8 x FP8 -> f32, 2x2 register tile, software pipelined.
kernel void gemm_fp8_k128(global v8f *c, global const v16i *a, global const v16i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x(), tile = __builtin_amdgcn_workgroup_id_x();
  global const v16i *pa = a + tile * k_tiles * 2 * 32 + lane;
  global const v16i *pb = b + tile * k_tiles * 2 * 32 + lane;
  v8f acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
  v16i a0 = pa[0], a1 = pa[32], b0 = pb[0], b1 = pb[32];
  for (int k = 1; k < k_tiles; ++k) {
    v16i na0 = pa[k * 64], na1 = pa[k * 64 + 32], nb0 = pb[k * 64], nb1 = pb[k * 64 + 32];
    acc00 = __builtin_amdgcn_wmma_f32_16x16x128_fp8_fp8(a0, b0, 0, acc00, false, false);
    acc01 = __builtin_amdgcn_wmma_f32_16x16x128_fp8_bf8(a0, b1, 0, acc01, true, false);
    acc10 = __builtin_amdgcn_wmma_f32_16x16x128_bf8_fp8(a1, b0, 0, acc10, false, true);
    acc11 = __builtin_amdgcn_wmma_f32_16x16x128_bf8_bf8(a1, b1, 0, acc11, false, false);
    a0 = na0; a1 = na1; b0 = nb0; b1 = nb1;
  }
  acc00 = __builtin_amdgcn_wmma_f32_16x16x128_fp8_fp8(a0, b0, 0, acc00, false, false);
  acc11 = __builtin_amdgcn_wmma_f32_16x16x128_bf8_bf8(a1, b1, 0, acc11, false, false);
  global v8f *pc = c + tile * 4 * 32 + lane;
  pc[0] = acc00; pc[32] = acc01; pc[64] = acc10; pc[96] = acc11;
}

// f16 accumulators, C with a modifier-free constant start.
kernel void gemm_fp8_k128_f16(global v8h *c, global const v16i *a, global const v16i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v8h acc0 = 0, acc1 = 0;
  v16i a0 = a[lane], b0 = b[lane];
  for (int k = 1; k < k_tiles; ++k) {
    v16i na = a[k * 32 + lane], nb = b[k * 32 + lane];
    acc0 = __builtin_amdgcn_wmma_f16_16x16x128_fp8_fp8(a0, b0, 0, acc0, false, false);
    acc1 = __builtin_amdgcn_wmma_f16_16x16x128_bf8_fp8(a0, nb, 0, acc1, false, false);
    acc0 = __builtin_amdgcn_wmma_f16_16x16x128_fp8_bf8(na, b0, 0, acc0, false, false);
    acc1 = __builtin_amdgcn_wmma_f16_16x16x128_bf8_bf8(na, nb, 0, acc1, false, false);
    a0 = na; b0 = nb;
  }
  c[lane] = acc0 + acc1;
}

// More than 256 VGPRs: a 6x6 tile of f32 accumulators (288 VGPRs) plus the
// operands, one wave per SIMD.
#define ACC(i) v8f acc##i = 0;
#define MMA(i, ai, bi) acc##i = __builtin_amdgcn_wmma_f32_16x16x128_fp8_fp8(av[ai], bv[bi], 0, acc##i, false, false);
#define ST(i) pc[(i) * 32] = acc##i;
__attribute__((amdgpu_flat_work_group_size(32, 32), amdgpu_waves_per_eu(1, 1)))
kernel void gemm_fp8_big(global v8f *c, global const v16i *a, global const v16i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  ACC(0) ACC(1) ACC(2) ACC(3) ACC(4) ACC(5) ACC(6) ACC(7) ACC(8) ACC(9) ACC(10) ACC(11)
  ACC(12) ACC(13) ACC(14) ACC(15) ACC(16) ACC(17) ACC(18) ACC(19) ACC(20) ACC(21) ACC(22)
  ACC(23) ACC(24) ACC(25) ACC(26) ACC(27) ACC(28) ACC(29) ACC(30) ACC(31) ACC(32) ACC(33)
  ACC(34) ACC(35)
  for (int k = 0; k < k_tiles; ++k) {
    v16i av[6], bv[6];
    for (int i = 0; i < 6; ++i) {
      av[i] = a[(k * 6 + i) * 32 + lane];
      bv[i] = b[(k * 6 + i) * 32 + lane];
    }
    MMA(0, 0, 0) MMA(1, 0, 1) MMA(2, 0, 2) MMA(3, 0, 3) MMA(4, 0, 4) MMA(5, 0, 5)
    MMA(6, 1, 0) MMA(7, 1, 1) MMA(8, 1, 2) MMA(9, 1, 3) MMA(10, 1, 4) MMA(11, 1, 5)
    MMA(12, 2, 0) MMA(13, 2, 1) MMA(14, 2, 2) MMA(15, 2, 3) MMA(16, 2, 4) MMA(17, 2, 5)
    MMA(18, 3, 0) MMA(19, 3, 1) MMA(20, 3, 2) MMA(21, 3, 3) MMA(22, 3, 4) MMA(23, 3, 5)
    MMA(24, 4, 0) MMA(25, 4, 1) MMA(26, 4, 2) MMA(27, 4, 3) MMA(28, 4, 4) MMA(29, 4, 5)
    MMA(30, 5, 0) MMA(31, 5, 1) MMA(32, 5, 2) MMA(33, 5, 3) MMA(34, 5, 4) MMA(35, 5, 5)
  }
  global v8f *pc = c + lane;
  ST(0) ST(1) ST(2) ST(3) ST(4) ST(5) ST(6) ST(7) ST(8) ST(9) ST(10) ST(11) ST(12) ST(13)
  ST(14) ST(15) ST(16) ST(17) ST(18) ST(19) ST(20) ST(21) ST(22) ST(23) ST(24) ST(25)
  ST(26) ST(27) ST(28) ST(29) ST(30) ST(31) ST(32) ST(33) ST(34) ST(35)
}

// FP4 32x16x128, pipelined.
kernel void gemm_f4(global v16f *c, global const v16i *a, global const v8i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v16f acc = 0;
  v16i a0 = a[lane];
  v8i b0 = b[lane];
  for (int k = 1; k < k_tiles; ++k) {
    v16i na = a[k * 32 + lane];
    v8i nb = b[k * 32 + lane];
    acc = __builtin_amdgcn_wmma_f32_32x16x128_f4(a0, b0, 0, acc);
    a0 = na; b0 = nb;
  }
  acc = __builtin_amdgcn_wmma_f32_32x16x128_f4(a0, b0, 0, acc);
  c[lane] = acc;
}

// MX: block-32 and block-16 scaled WMMAs, scales from kernel arguments (SGPRs)
// and per lane (VGPRs).
kernel void gemm_mx(global v8f *c, global const v16i *a, global const v16i *b,
                    int sa, int sb, long sa16, long sb16, global const long *vs, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v8f acc = 0, acc16 = 0;
  for (int k = 0; k < k_tiles; ++k) {
    v16i a0 = a[k * 32 + lane], b0 = b[k * 32 + lane];
    long v = vs[k * 32 + lane];
    acc = __builtin_amdgcn_wmma_scale_f32_16x16x128_f8f6f4(0, a0, 0, b0, 0, acc, 0, 0, sa, 0, 0, sb, false, false);
    acc16 = __builtin_amdgcn_wmma_scale16_f32_16x16x128_f8f6f4(0, a0, 0, b0, 0, acc16, 0, 0, sa16, 0, 0, v, false, false);
  }
  c[lane] = acc + acc16;
}

// MX FP4 32x16x128: block-32 (split along M) and block-16 (split along M,
// then K) scales, per-lane A scales and a kernel-argument B scale.
kernel void gemm_mx_f4(global v16f *c, global const v16i *a, global const v8i *b,
                       global const int *as, global const long *as16, int bs, long bs16,
                       int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v16f acc = 0;
  for (int k = 0; k < k_tiles; ++k) {
    v16i a0 = a[k * 32 + lane];
    v8i b0 = b[k * 32 + lane];
    int s = as[k * 32 + lane];
    acc = __builtin_amdgcn_wmma_scale_f32_32x16x128_f4(a0, b0, 0, acc, 0, 0, s, 0, 0, bs, false, false);
    long s16 = as16[k * 32 + lane];
    acc = __builtin_amdgcn_wmma_scale16_f32_32x16x128_f4(a0, b0, 0, acc, 0, 0, s16, 0, 0, bs16, false, false);
  }
  c[lane] = acc;
}

// Integer WMMA (clang-22 pads it with 8 v_nops itself).
kernel void gemm_iu8(global v8i *c, global const v8i *a, global const v8i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v8i acc = 0;
  for (int k = 0; k < k_tiles; ++k)
    acc = __builtin_amdgcn_wmma_i32_16x16x64_iu8(1, a[k * 32 + lane], 0, b[k * 32 + lane], acc, false, false);
  c[lane] = acc + 1;
}

// WMMAs in a called function.
__attribute__((noinline)) v8f mma_step(v16i a, v16i b, v8f acc) {
  return __builtin_amdgcn_wmma_f32_16x16x128_bf8_fp8(a, b, 0, acc, false, false);
}
__attribute__((noinline)) v8h mma_step_f16(v16i a, v16i b, v8h acc) {
  return __builtin_amdgcn_wmma_f16_16x16x128_fp8_fp8(a, b, 0, acc, false, false);
}
kernel void gemm_called(global v8f *c, global v8h *ch, global const v16i *a, global const v16i *b, int k_tiles) {
  int lane = __builtin_amdgcn_workitem_id_x();
  v8f acc = 0;
  v8h acch = 0;
  for (int k = 0; k < k_tiles; ++k) {
    acc = mma_step(a[k * 32 + lane], b[k * 32 + lane], acc);
    acch = mma_step_f16(b[k * 32 + lane], a[k * 32 + lane], acch);
  }
  c[lane] = acc;
  ch[lane] = acch;
}

// Inline assembly: placements the compiler does not make.
kernel void asm_placements(global v8f *c, global v8i *ci) {
  // D over A's upper half: the split runs the upper half first.
  __asm__ volatile("v_wmma_f32_16x16x128_fp8_fp8 v[8:15], v[0:15], v[16:31], v[40:47]"
                   ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11",
                       "v12", "v13", "v14", "v15");
  // D over both halves of B: refused.
  __asm__ volatile("v_wmma_f32_16x16x128_bf8_bf8 v[20:27], v[0:15], v[16:31], v[40:47]"
                   ::: "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27");
  // C modifiers on the first half only; an inline-constant accumulator.
  __asm__ volatile("v_wmma_f32_16x16x128_fp8_bf8 v[48:55], v[0:15], v[16:31], v[40:47] neg_lo:[0,0,1] neg_hi:[0,0,1]\n"
                   "v_wmma_f16_16x16x128_bf8_fp8 v[56:59], v[0:15], v[16:31], 1.0"
                   ::: "v48", "v49", "v50", "v51", "v52", "v53", "v54", "v55", "v56", "v57", "v58", "v59");
  // f4 with D over A's upper half: upper M half first.
  __asm__ volatile("v_wmma_f32_32x16x128_f4 v[8:23], v[0:15], v[32:39], v[40:55]"
                   ::: "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18",
                       "v19", "v20", "v21", "v22", "v23");
  // Integer WMMAs followed by a dependent VALU, with 0 and 3 v_nops.
  __asm__ volatile("v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[0:7]\n"
                   "v_add_nc_u32 v0, 1, v0\n"
                   "v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[0:7] neg_lo:[1,1,0] clamp\n"
                   "v_nop\n v_nop\n v_nop\n"
                   "v_add_nc_u32 v1, 1, v1"
                   ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7");
}
