// The kernel of the stand-in's code objects, built by clang-22 for gfx1250,
// gfx1251 and gfx942 at build time (tests/standin/CMakeLists.txt).
__kernel void standin_kernel(__global int *out, int v) { out[v & 7] = v * 3 + 1; }
