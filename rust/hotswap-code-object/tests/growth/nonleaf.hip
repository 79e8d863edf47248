// A non-leaf callee reached through a computed address: the kernel's call
// through `table[sel & 0]` folds (clang-22 -O2) to an s_get_pc_i64 + literal
// computation of nonleaf's address, kept in s[2:3] across a barrier and
// called with s_swap_pc_i64 (re-aimed where it is built). nonleaf keeps its
// return address in VGPR lanes (v_writelane s30/s31) across two nested calls
// through one computed pair (the second s_swap_pc_i64 reuses it), spills the
// lane VGPR to scratch around them, and holds a DS two-address site (two
// adjacent LDS loads), so it moves.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define TID __builtin_amdgcn_workitem_id_x()
typedef int (*op)(int);
__shared__ int lds[256];
static __attribute__((noinline)) __device__ int leaf(int i) { return lds[(i * 7) & 255] ^ i; }
static __attribute__((noinline)) __device__ int nested(int i) { return leaf(i) + leaf(i + 3); }
static __attribute__((noinline)) __device__ int nonleaf(int i) {
  int a = lds[i] + lds[i + 1];
  int b = nested(a);
  return nested(b + a) * a;
}
__device__ op const table[1] = {nonleaf};
extern "C" __global__ void calls_nonleaf(int *out, int sel) {
  lds[TID] = out[TID];
  __builtin_amdgcn_s_barrier();
  out[TID] = table[sel & 0](TID);
}
