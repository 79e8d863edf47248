// HIP kernels for the command line's tests, compiled by clang-22 for gfx1250
// and gfx942 without the HIP headers (-nogpuinc): offload bundles (plain and
// compressed), a host object and a host shared library with .hip_fatbin.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// What clang's host code needs to emit kernel stubs.
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);

extern "C" __global__ void add_one(int *p) { p[__builtin_amdgcn_workitem_id_x()] += 1; }

extern "C" __global__ void sum4(const float *a, const float *b, const float *c, const float *d,
                                float *out) {
  out[0] = a[0] + b[1] + c[2] + d[3];
}

extern "C" __global__ void lds_swap(float *out) {
  __shared__ float tile[64];
  unsigned i = __builtin_amdgcn_workitem_id_x();
  tile[i] = out[i];
  __builtin_amdgcn_s_barrier();
  out[i] = tile[i ^ 1];
}
