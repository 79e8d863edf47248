// Kernels whose every A0 site has a same-size fix, compiled by clang-22 for
// gfx1250 (tests/native/CMakeLists.txt): cluster loads and the isfirst barrier
// signal, from their builtins, around ordinary arithmetic and memory code.
#define gid() (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x())
typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));

kernel void k_cluster(global int *out, global int *in, global v2i *in2, global v4i *in4, int m) {
  int a = __builtin_amdgcn_cluster_load_b32(in + gid(), 0, m);
  v2i b = __builtin_amdgcn_cluster_load_b64(in2 + gid(), 0, m);
  v4i c = __builtin_amdgcn_cluster_load_b128(in4 + gid(), 0, m);
  out[gid()] = a * 3 + b.x - b.y + c.x * c.w;
}

kernel void k_barrier(global int *out, int n) {
  int acc = 0;
  for (int i = 0; i < n; ++i)
    acc += out[gid() + i * 64] ^ i;
  out[gid()] = acc;
  __builtin_amdgcn_s_barrier_signal_isfirst(-1);
  __builtin_amdgcn_s_barrier_wait(-1);
  out[gid() + 64] = acc + 1;
}
