// Device functions called through function-pointer tables (clang-22 gfx1250:
// the loaded table entries are R_AMDGPU_RELATIVE64 relocations for the
// internal functions, R_AMDGPU_ABS64 for the exported one), each callee
// holding a DS two-address site (two adjacent LDS loads), so it moves.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define TID __builtin_amdgcn_workitem_id_x()
typedef int (*op)(int);
__shared__ int lds[256];
static __attribute__((noinline)) __device__ int add_pair(int i) {
  return lds[i] + lds[i + 1];
}
static __attribute__((noinline)) __device__ int triple(int i) { return i * 3; }
extern "C" __attribute__((noinline, visibility("default"))) __device__ int sub_pair(int i) {
  return lds[i] - lds[i + 2];
}
__device__ op const table[2] = {add_pair, triple};
extern "C" __device__ op const exported[1] = {sub_pair};
extern "C" __global__ void calls_table(int *out, int sel) {
  lds[TID] = out[TID];
  __builtin_amdgcn_s_barrier();
  out[TID] = exported[0](table[sel & 1](TID));
}
