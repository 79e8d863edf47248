// A kernel holding 400 floats per lane: clang-22 allocates more than 256
// VGPRs (606) and reaches v256+ through s_set_vgpr_msb.
#define __global__ __attribute__((global))
#define N 400
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(32, 32), amdgpu_waves_per_eu(1, 1)))
void big(float *out, const float *in, int n) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = in[t + i * 32];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < N; ++i) acc[i] = acc[i] * acc[(i + 1) % N] + 1.0f;
  }
#pragma unroll
  for (int i = 0; i < N; ++i) out[t + i * 32] = acc[i];
}
