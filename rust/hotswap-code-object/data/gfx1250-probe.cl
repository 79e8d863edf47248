// The smallest kernel that yields a complete code object (kernel descriptor,
// metadata note, .text). Built by clang-22 for every processor in the tests, and
// for the committed gfx1250 probe object (see README.md in this directory).
__kernel void hotswap_kernel(__global int *out) { *out = 42; }
