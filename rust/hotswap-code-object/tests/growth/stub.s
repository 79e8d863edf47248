// A stub kernel whose body ends without s_endpgm (as in rocPRIM objects): it
// falls through into the next function, `work`, which holds a DS two-address
// load and so moves. Nothing the rewriter sees enters `work` from `stub`; the
// fall-through reaches its old entry, which must be a gateway to its copy.
// A second kernel, `far`, is followed by 200 KiB of code and enters `work2`
// by fall-through too: its image is out of s_branch reach, so its gateway is
// a far jump through a pair dead at its entry (s[0:1]: written before any
// read in `work2`, and no calling convention preserves it). `work2` reads s2
// first, so s[2:3] is live there: the test's control that the independent
// liveness check of the gateway pair can refuse a pair.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
  .text
  .p2align 8
  .globl far
  .type far,@function
far:
  v_mov_b32 v2, 0
.Lfar_end:
  .size far, .Lfar_end-far
  .globl work2
  .type work2,@function
work2:
  s_mov_b32 s3, s2
  s_mov_b64 s[0:1], 0
  ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
  s_wait_dscnt 0
  s_nop 0
  s_endpgm
.Lwork2_end:
  .size work2, .Lwork2_end-work2

  .p2align 8
  .globl filler
  .type filler,@function
filler:
  .rept 51200
  s_nop 0
  .endr
  s_endpgm
.Lfiller_end:
  .size filler, .Lfiller_end-filler


  .p2align 8
  .globl stub
  .type stub,@function
stub:
  v_mov_b32 v2, 0
.Lstub_end:
  .size stub, .Lstub_end-stub
  .globl work
  .type work,@function
work:
  ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
  s_wait_dscnt 0
  s_endpgm
.Lwork_end:
  .size work, .Lwork_end-work

  .rodata
  .p2align 6
  .amdhsa_kernel stub
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 8
  .end_amdhsa_kernel
  .p2align 6
  .amdhsa_kernel far
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 8
  .end_amdhsa_kernel
