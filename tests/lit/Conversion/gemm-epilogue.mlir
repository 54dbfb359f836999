// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -split-input-file -verify-diagnostics | FileCheck %s
// A gemm's epilogue written as tile ops after the pipelined loop runs in
// the TMA + WGMMA kernel on each accumulator element: its scalars and
// vectors become parameters after the kernel's seven (and lines of its
// ABI); a row vector is read once for each of a thread's rows, guarded by
// the vector's size.

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<128x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x128xf32>

// CHECK-LABEL: llvm.func @fused(
// CHECK-SAME: %{{.*}}: i64, %[[SCALE:[a-z0-9]*]]: !llvm.ptr<1>, %[[ROWS:[a-z0-9]*]]: i64, %{{[a-z0-9]*}}: i64, %[[STRIDE:[a-z0-9]*]]: i64, %[[ALPHA:[a-z0-9]*]]: f32)
// CHECK-SAME: tilejit.abi = [
// CHECK-SAME: "arg pointer scale f32 2", "arg size scale f32 2 0", "arg size scale f32 2 1", "arg row_stride scale f32 2", "arg scalar alpha f32 0"]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The scale of row 0 and of row 1, each loaded once.
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: arith.mulf %{{.*}}, %[[ALPHA]] fastmath<contract> : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
func.func @fused(%a: !g {tile.name = "a"}, %b: !g {tile.name = "b"}, %c: !g {tile.name = "c"}, %scale: !gf {tile.name = "scale"}, %alpha: f32 {tile.name = "alpha"}) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %kd = memref.dim %a, %c1 : !g
  %n = arith.divui %kd, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %v = tile.load %scale[%c0, %c0] : !gf -> tensor<128x1xf32>
  %rows = tile.broadcast %v : tensor<128x1xf32> -> !acc
  %al = tile.splat %alpha : f32 -> !acc
  %x = arith.mulf %r, %rows fastmath<contract> : !acc
  %y = arith.mulf %x, %al fastmath<contract> : !acc
  %o = arith.truncf %y : !acc to tensor<128x128xbf16>
  tile.store %o, %c[%c0, %c0] : tensor<128x128xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<128x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x128xf32>
func.func @whole_tile(%a: !g, %b: !g, %c: !gf, %d: !gf) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %kd = memref.dim %a, %c1 : !g
  %n = arith.divui %kd, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  // Rows other than the tile's.
  %v = tile.load %d[%c64, %c0] : !gf -> tensor<128x1xf32>
  %other = tile.broadcast %v : tensor<128x1xf32> -> !acc
  // expected-error @+1 {{'arith.addf' op cannot lower to TMA + WGMMA: its epilogue may read only the accumulator, constants, the kernel's float scalars and float vectors loaded at the tile's origin and broadcast (a [128, 1] load at [m0, j], a [1, BN] load at [i, n0])}}
  %x = arith.addf %r, %other : !acc
  tile.store %x, %c[%c0, %c0] : !acc, !gf
  return
}
