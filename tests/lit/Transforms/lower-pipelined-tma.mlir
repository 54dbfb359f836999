// RUN: %tilejit-opt %s -tile-lower-pipelined -split-input-file | FileCheck %s
// A pipelined loop whose every copy can be one TMA copy runs on TMA: a
// tensor map argument appended to the kernel (by value later, its ABI line
// and count as attributes), an mbarrier a stage initialised by thread 0,
// each stage's buffer 128-byte aligned; step k passes a barrier, thread 0
// expects step k + S - 1's bytes and issues its copies (coordinates
// innermost first), and every thread waits for phase k / S of stage k mod S.
// Loops with a copy TMA cannot make (unaligned rows, a view that may repeat
// elements, gemm operands) stay on cp.async.

!g = memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
!s = memref<1x64x64xbf16, #gpu.address_space<workgroup>>
!f = tensor<1x64x64xbf16>

// CHECK-LABEL: func.func @transpose_like
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>> {tile.align = 16 : i64, tile.name = "x"}
// CHECK-SAME: %[[N:[a-z0-9]+]]: index, %[[MAP:[a-z0-9]+]]: !llvm.ptr)
// CHECK-SAME: tilejit.abi_extra = ["arg tensor_map x bf16 3 1 64 64 swizzle 0"], tilejit.tensor_maps = 1 : i64
// CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %[[MAP]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x64x64xbf16, 3>, swizzle = none, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[BUF:.*]] = tile.alloc_shared {tilejit.align = 128 : i64} : memref<3x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[BARS]][%{{.*}}], %{{.*}}, predicate = %[[LEADER]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[DESC]], predicate = %[[LEADER]]
// CHECK-NEXT: gpu.barrier
// Steps 0 and 1 before the loop.
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.*}}], %{{.*}} :
// CHECK: nvgpu.tma.async.load %[[DESC]][%{{.*}}, %{{.*}}, %{{.*}}], %[[BARS]]
// CHECK: scf.if
// CHECK: nvgpu.tma.async.load
// CHECK-NOT: nvvm.cp.async
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[N]] step
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK: scf.if
// CHECK: %[[SLOTN:.*]] = arith.remui %[[NEXT]]
// CHECK: scf.if %[[LEADER]] {
// CHECK: %[[Y:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK: %[[VN:.*]] = memref.subview %[[BUF]][%[[SLOTN]], 0, 0, 0] [1, 1, 64, 64]
// CHECK: %[[BYTES:.*]] = arith.constant 8192 : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[SLOTN]]], %[[BYTES]]
// The origin [0, 0, y] as TMA's coordinates (y, 0, 0).
// CHECK: nvgpu.tma.async.load %[[DESC]][%[[Y]], %[[C0:.*]], %[[C0]]], %[[BARS]][%[[SLOTN]]] to %[[VN]]
// CHECK: %[[SLOT:.*]] = arith.remui %[[K]], %[[S:.*]] : index
// CHECK: %[[ROUND:.*]] = arith.divui %[[K]], %{{.*}} : index
// CHECK: %[[ODD:.*]] = arith.andi %[[ROUND]], %{{.*}} : index
// CHECK: %[[PARITY:.*]] = arith.index_cast %[[ODD]] : index to i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[SLOT]]], %[[PARITY]]
// CHECK: %[[V:.*]] = memref.subview %[[BUF]]
// CHECK: tile.load %[[V]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK-NOT: nvvm.mbarrier.inval
// CHECK: return
func.func @transpose_like(%x: !g {tile.align = 16 : i64, tile.name = "x"}, %out: !g {tile.name = "out"}, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t = tile.alloc_shared : !s
  %r = tile.pipelined %n, %n {stages = 3 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    %y = arith.muli %s, %c64 : index
    tile.copy %x[%c0, %c0, %y], %t : !g, !s
    %v = tile.load %t[%c0, %c0, %c0] : !s -> !f
    %w = tile.transpose %v : !f -> !f
    tile.store %w, %out[%c0, %y, %c0] : !f, !g
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>

// Two copies of one tensor with one box share a map; the step's bytes are
// both tiles'. Inside another loop, the loop ends with a barrier and
// thread 0 invalidating the mbarriers, which the next run initialises again.
// CHECK-LABEL: func.func @shared_map
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK-SAME: tilejit.abi_extra = ["arg tensor_map a f32 2 32 64 swizzle 0"], tilejit.tensor_maps = 1 : i64
// CHECK: scf.for
// CHECK-NEXT: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK-COUNT-1: nvgpu.tma.prefetch.descriptor
// CHECK-NOT: nvgpu.tma.prefetch.descriptor
// CHECK: gpu.barrier
// CHECK: arith.constant 16384 : index
// CHECK: nvgpu.tma.async.load %[[D:[a-z0-9]+]][
// CHECK-NEXT: nvgpu.tma.async.load %[[D]][
// CHECK: %[[R:.*]] = scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %{{.*}} {
// CHECK: %[[P0:.*]] = nvgpu.mbarrier.get %[[BARS]][%{{.*}}] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> i64
// CHECK-NEXT: %[[Q0:.*]] = llvm.inttoptr %[[P0]] : i64 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.mbarrier.inval %[[Q0]] : !llvm.ptr<3>
// CHECK: nvvm.mbarrier.inval
// CHECK: tile.store %[[R]]
func.func @shared_map(%a: !g {tile.align = 16 : i64, tile.name = "a"}, %c: !g {tile.name = "c"}, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  scf.for %j = %c0 to %n step %c1 {
    %r = tile.pipelined %n, %init {stages = 2 : i64} : !f -> !f {
    ^bb0(%s: index, %acc: !f):
      %k0 = arith.muli %s, %c64 : index
      tile.copy %a[%c0, %k0], %sa : !g, !s
      tile.copy %a[%c32, %k0], %sb : !g, !s
      %x = tile.load %sa[%c0, %c0] : !s -> !f
      %y = tile.load %sb[%c0, %c0] : !s -> !f
      %p = arith.addf %acc, %x : !f
      %q = arith.addf %p, %y : !f
      tile.yield %q : !f
    }
    tile.store %r, %c[%j, %c0] : !f, !g
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>

// Rows promised only 8-byte aligned: cp.async, no tensor map.
// CHECK-LABEL: func.func @unaligned
// CHECK-NOT: !llvm.ptr
// CHECK-NOT: tilejit.abi_extra
// CHECK: tile.copy {{.*}} {async}
// CHECK-NOT: nvgpu
// CHECK: return
func.func @unaligned(%a: !g {tile.align = 8 : i64, tile.name = "a"}, %c: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 2 : i64} : !f -> !f {
  ^bb0(%s: index, %acc: !f):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !s
    %x = tile.load %sa[%c0, %c0] : !s -> !f
    %y = arith.addf %acc, %x : !f
    tile.yield %y : !f
  }
  tile.store %r, %c[%c0, %c0] : !f, !g
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>

// A view that may repeat elements (a zero stride, which TMA cannot read):
// cp.async, no tensor map.
// CHECK-LABEL: func.func @repeats
// CHECK-NOT: !llvm.ptr
// CHECK-NOT: tilejit.abi_extra
// CHECK: tile.copy {{.*}} {async}
// CHECK-NOT: nvgpu
// CHECK: return
func.func @repeats(%a: !g {tile.align = 16 : i64, tile.repeats, tile.name = "a"}, %c: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 2 : i64} : !f -> !f {
  ^bb0(%s: index, %acc: !f):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !s
    %x = tile.load %sa[%c0, %c0] : !s -> !f
    %y = arith.addf %acc, %x : !f
    tile.yield %y : !f
  }
  tile.store %r, %c[%c0, %c0] : !f, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!s = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>

// Tiles an mma.sync gemm reads get padded rows: cp.async.
// CHECK-LABEL: func.func @gemm_operands
// CHECK-NOT: tilejit.abi_extra
// CHECK: tile.copy {{.*}} {async}
func.func @gemm_operands(%a: !g {tile.align = 16 : i64, tile.name = "a"}, %c: !gf, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 2 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !s
    tile.copy %a[%c0, %k0], %sb : !g, !s
    %p = tile.gemm %sa, %sb, %acc : !s, !s, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}
