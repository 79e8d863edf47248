// Kernels calling functions (clang-22 gfx1250 calls: s_get_pc_i64,
// s_add_nc_u64 lit64, s_swap_pc_i64), one callee calling another.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define TID __builtin_amdgcn_workitem_id_x()
__attribute__((noinline)) __device__ float leaf(float x, float *p) {
  p[TID] = x;
  return x * 3.0f + p[1];
}
__attribute__((noinline)) __device__ float mid(float x, float *p) {
  if (x > 1.0f)
    x = leaf(x, p);
  return x + 1.0f;
}
extern "C" __global__ void calls_mid(float *p) { p[TID] = mid(p[TID], p); }
extern "C" __global__ void calls_leaf(float *p) { p[TID] = leaf(p[TID], p); }
extern "C" __global__ void calls_none(float *p) { p[TID] = p[TID] * 2.0f; }
