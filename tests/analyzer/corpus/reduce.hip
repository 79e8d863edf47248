// A HIP kernel for the analyzer corpus (LDS reduction: DS two-address ops),
// compiled by clang-22 for gfx1250 without HIP headers or device libraries.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void h_reduce(float *out, const float *in) {
  __shared__ float s[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  s[t] = in[__builtin_amdgcn_workgroup_id_x() * 256 + t];
  __builtin_amdgcn_s_barrier();
  for (unsigned w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __builtin_amdgcn_s_barrier();
  }
  if (t == 0) out[__builtin_amdgcn_workgroup_id_x()] = s[0] + s[1];
}
