; A function-pointer table entry for an exported (preemptible) function: an
; R_AMDGPU_ABS64 relocation (and a GOT slot), both into g0, which holds a DS
; two-address site (two LDS loads two apart), so it moves; f0 through an
; internal table (R_AMDGPU_RELATIVE64).
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [64 x i32] poison, align 16
@table = internal addrspace(1) constant [2 x ptr] [ptr @f0, ptr @f1], align 8
@ext_table = addrspace(1) constant [1 x ptr] [ptr @g0], align 8

define hidden i32 @f0(i32 %i) noinline {
  %p0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i
  %p1 = getelementptr i32, ptr addrspace(3) %p0, i32 1
  %a = load i32, ptr addrspace(3) %p0, align 4
  %b = load i32, ptr addrspace(3) %p1, align 4
  %s = add i32 %a, %b
  ret i32 %s
}

define hidden i32 @f1(i32 %i) noinline {
  %r = mul i32 %i, 3
  ret i32 %r
}

define i32 @g0(i32 %i) noinline {
  %p0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i
  %p1 = getelementptr i32, ptr addrspace(3) %p0, i32 2
  %a = load i32, ptr addrspace(3) %p0, align 4
  %b = load i32, ptr addrspace(3) %p1, align 4
  %s = sub i32 %a, %b
  ret i32 %s
}

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %sel, i32 %i) {
  %slot = getelementptr [2 x ptr], ptr addrspace(1) @table, i32 0, i32 %sel
  %fp = load ptr, ptr addrspace(1) %slot, align 8
  %r = call i32 %fp(i32 %i)
  %gslot = getelementptr [1 x ptr], ptr addrspace(1) @ext_table, i32 0, i32 0
  %gp = load ptr, ptr addrspace(1) %gslot, align 8
  %r2 = call i32 %gp(i32 %r)
  store i32 %r2, ptr addrspace(1) %out
  ret void
}
