// OpenCL kernels for the analyzer corpus: compiled by clang-22 for gfx1250 at
// -O0..-O3 and linked by ld.lld-22. They exercise the A0-relevant builtins of
// clang-22 (cluster loads, barrier isfirst, K=128 FP8 and FP4 WMMAs, scaled
// WMMAs, integer WMMAs), DS two-address ops, DPP, VOPD, 64-bit literals and
// the flat scratch base (private-to-generic casts).
// No device libraries (-nogpulib): work-item ids and barriers from builtins.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_global_id(d) (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x())
#define barrier(f) __builtin_amdgcn_s_barrier()

typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));

kernel void k_cluster(global int *out, global int *in, global v2i *in2, global v4i *in4, int m) {
  int a = __builtin_amdgcn_cluster_load_b32(in + get_global_id(0), 0, m);
  v2i b = __builtin_amdgcn_cluster_load_b64(in2 + get_global_id(0), 0, m);
  v4i c = __builtin_amdgcn_cluster_load_b128(in4 + get_global_id(0), 0, m);
  out[get_global_id(0)] = a + b.x + b.y + c.x + c.w;
}

kernel void k_barrier(global int *out) {
  out[get_local_id(0)] = 1;
  __builtin_amdgcn_s_barrier_signal_isfirst(-1);
  __builtin_amdgcn_s_barrier_wait(-1);
  out[get_local_id(0) + 64] = 2;
}

kernel void k_lds(global float *out, global const float *in) {
  local float tile[256];
  size_t l = get_local_id(0);
  tile[l] = in[get_global_id(0)];
  tile[l + 128] = in[get_global_id(0) + 128];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[(l * 2) & 255] + tile[((l * 2) + 1) & 255] + tile[(l + 64) & 255];
}

kernel void k_wmma_k128(global v8f *out, global v16i *a, global v16i *b, global v8f *c) {
  out[0] = __builtin_amdgcn_wmma_f32_16x16x128_fp8_fp8(a[0], b[0], (short)0, c[0], false, false);
  out[1] = __builtin_amdgcn_wmma_f32_16x16x128_bf8_bf8(a[1], b[1], (short)0, c[1], false, false);
}

kernel void k_wmma_f4(global v16f *out, global v16i *a, global v8i *b, global v16f *c) {
  out[0] = __builtin_amdgcn_wmma_f32_32x16x128_f4(a[0], b[0], (short)0, c[0]);
}

kernel void k_wmma_scale(global v8f *out, global v16i *a, global v16i *b, global v8f *c, int sa, int sb) {
  out[0] = __builtin_amdgcn_wmma_scale_f32_16x16x128_f8f6f4(0, a[0], 0, b[0], (short)0, c[0], 0, 0, sa, 0, 0, sb, false, false);
}

kernel void k_iu8(global v8i *out, global v8i *a, global v8i *b, global v8i *c) {
  v8i r = __builtin_amdgcn_wmma_i32_16x16x64_iu8(false, a[0], false, b[0], c[0], false, false);
  out[0] = r + 1;
}

kernel void k_dpp(global int *out, global const int *in) {
  int v = in[get_global_id(0)];
  v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  v += __builtin_amdgcn_mov_dpp(v, 0x1b, 0xf, 0xf, true);
  out[get_global_id(0)] = v;
}

kernel void k_lit64(global long *out, global const double *in) {
  size_t i = get_global_id(0);
  out[i] = (long)in[i] * 0x123456789abcLL + 0x7edcba9876543LL;
  out[i + 1] = as_long(in[i] + 3.14159265358979);
}

kernel void k_vopd(global float *out, global const float *a, global const float *b) {
  size_t i = get_global_id(0);
  float x = a[i], y = b[i];
  out[i] = x * 2.0f + y;
  out[i + 1] = y * 3.0f - x;
  out[i + 2] = __builtin_fmaf(x, y, 1.5f);
  out[i + 3] = x + y;
}

__attribute__((noinline)) void sink(int *p, int v) { *p = v; }

kernel void k_private(global long *out, int i) {
  int priv[64];
  for (int j = 0; j < 64; j++) priv[j] = j * i;
  int *g = (int *)priv;
  out[0] = (long)(size_t)(g + i);
  sink(g + (i & 7), 3);
  out[1] = priv[i & 63];
}
