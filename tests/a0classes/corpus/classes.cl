// Kernels with the memory classes of issue 31, built by clang-22 for gfx1250
// (build_corpus.sh): tensor loads whose descriptors come from kernel
// arguments and are built in SGPRs (a workgroup mask OR-ed in at run time),
// and private-to-flat casts of a per-lane private address (clang-22 adds
// src_flat_scratch_base_lo in a vector instruction).
typedef int i32x4 __attribute__((ext_vector_type(4)));
typedef int i32x8 __attribute__((ext_vector_type(8)));

kernel void tdm_args(i32x4 g0, i32x8 g1, global int *out) {
  __builtin_amdgcn_tensor_load_to_lds(g0, g1, (i32x4)(0), (i32x4)(0), 0);
  __builtin_amdgcn_s_wait_tensorcnt(0);
  out[0] = g1.s0;
}

kernel void tdm_built(global const int *p, int mask, global int *out) {
  i32x4 g0 = (i32x4)(p[0], p[1], p[2], p[3]);
  i32x8 g1 = (i32x8)((p[4] & ~0xffff) | (mask & 0xffff), p[5], p[6], p[7], p[8], p[9], 0, 0);
  __builtin_amdgcn_tensor_load_to_lds(g0, g1, (i32x4)(0), (i32x4)(0), 0);
  __builtin_amdgcn_s_wait_tensorcnt(0);
  out[__builtin_amdgcn_workitem_id_x()] = g1.s0;
}

kernel void tdm_four(global const int *p, global int *out) {
  i32x4 g0 = (i32x4)(p[0], p[1], p[2], p[3]);
  i32x8 g1 = (i32x8)(p[4] | 0x3, p[5], p[6], p[7], p[8], p[9], p[10], p[11]);
  i32x4 g2 = (i32x4)(p[12], p[13], p[14], p[15]);
  i32x4 g3 = (i32x4)(p[16], p[17], p[18], p[19]);
  __builtin_amdgcn_tensor_load_to_lds(g0, g1, g2, g3, 0);
  __builtin_amdgcn_s_wait_tensorcnt(0);
}

kernel void private_cast_lane(global long *out, int n) {
  int buf[64];
  for (int i = 0; i < 64; i++)
    buf[i] = n + i;
  int *g = &buf[__builtin_amdgcn_workitem_id_x() & 63];
  out[__builtin_amdgcn_workitem_id_x()] = (long)g + *g;
}

// ds_load/store_addtid_b32 and the FP8 CLAMP conversions have no OpenCL
// builtin: inline assembly, with M0 set above 64 KiB.
kernel void addtid_asm(global int *out) {
  int v = (int)__builtin_amdgcn_workitem_id_x();
  int r;
  __asm volatile("s_mov_b32 m0, 0x1fff0\n"
                 "ds_store_addtid_b32 %1 offset:16\n"
                 "s_wait_dscnt 0\n"
                 "ds_load_addtid_b32 %0 offset:16\n"
                 "s_wait_dscnt 0"
                 : "=&v"(r)
                 : "v"(v)
                 : "memory");
  out[__builtin_amdgcn_workitem_id_x()] = r;
}

kernel void fp8_clamp_asm(global float *in, global int *out) {
  size_t i = __builtin_amdgcn_workitem_id_x();
  int r;
  __asm volatile("v_cvt_pk_fp8_f32 %0, %1, %2 clamp" : "=v"(r) : "v"(in[i]), "v"(in[i + 1]));
  out[i] = r;
}

// The definition-site tensor form: the mask SGPR's only definition is a
// constant (clang-22: s_mov_b32 s0, 0x12345678) read by the load alone.
kernel void tdm_def(global const int *p) {
  i32x4 g0 = (i32x4)(p[0], p[1], p[2], p[3]);
  i32x8 g1 = (i32x8)(0x12345678, p[5], p[6], p[7], p[8], p[9], 0, 0);
  __builtin_amdgcn_tensor_load_to_lds(g0, g1, (i32x4)(0), (i32x4)(0), 0);
  __builtin_amdgcn_s_wait_tensorcnt(0);
}
