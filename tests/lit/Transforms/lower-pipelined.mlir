// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -tile-lower-pipelined -split-input-file -verify-diagnostics | FileCheck %s
// tile.pipelined outside the gemm template: each copied tile gets a buffer a
// stage, the copies of steps 0 .. S - 2 go before the loop, step k waits for
// its group, passes a barrier and issues step k + S - 1's copies; and every
// loop the pass cannot pipeline is reported.

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>

// CHECK-LABEL: func.func @three_stages
// CHECK: %[[BUF:.*]] = tile.alloc_shared : memref<3x32x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: tile.alloc_shared
// Steps 0 and 1, each its own group, only where the loop has them.
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[HAS0:.*]] = arith.cmpi slt, %[[C0]], %[[N:.*]] : index
// CHECK: scf.if %[[HAS0]] {
// CHECK: %[[K0:.*]] = arith.muli %[[C0]], %{{.*}} : index
// CHECK: %[[V0:.*]] = memref.subview %[[BUF]][%[[C0]], 0, 0] [1, 32, 64] [1, 1, 1] : memref<3x32x64xf32, #gpu.address_space<workgroup>> to memref<32x64xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK: tile.copy %{{.*}}[%{{.*}}, %[[K0]]], %[[V0]] {async}
// CHECK: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK: scf.if
// CHECK: tile.copy {{.*}} {async}
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<32x64xf32>) {
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK: %[[HAS:.*]] = arith.cmpi slt, %[[NEXT]], %[[N]] : index
// CHECK: scf.if %[[HAS]] {
// CHECK: %[[SLOTN:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK: %[[KN:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK: %[[VN:.*]] = memref.subview %[[BUF]][%[[SLOTN]], 0, 0]
// CHECK: tile.copy %{{.*}}[%{{.*}}, %[[KN]]], %[[VN]] {async}
// CHECK: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK: %[[SLOT:.*]] = arith.remui %[[K]], %{{.*}} : index
// CHECK: %[[V:.*]] = memref.subview %[[BUF]][%[[SLOT]], 0, 0]
// CHECK-NOT: tile.copy
// CHECK: %[[X:.*]] = tile.load %[[V]][
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[X]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield %[[SUM]] : tensor<32x64xf32>
// CHECK: tile.store %[[R]]
func.func @three_stages(%a: !g, %c: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 3 : i64} : !f -> !f {
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

// One stage: copy, wait for everything, barrier, the body, a barrier before
// the next step's copy overwrites the tile.
// CHECK-LABEL: func.func @one_stage
// CHECK: tile.alloc_shared : memref<1x32x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.cp.async
// CHECK: scf.for
// CHECK: tile.copy {{.*}} {async}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: tile.load
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
func.func @one_stage(%a: !g, %c: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 1 : i64} : !f -> !f {
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
!sa = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>

// A gemm loop of a 128-thread kernel is not the TMA + WGMMA template's: the
// two tiles are pipelined here and the gemm reads this step's buffers.
// CHECK-LABEL: func.func @mma_loop
// CHECK-DAG: %[[A:.*]] = tile.alloc_shared : memref<2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = tile.alloc_shared : memref<2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[VA:.*]] = memref.subview %[[A]]
// CHECK: %[[VB:.*]] = memref.subview %[[B]]
// CHECK: tile.gemm %[[VA]], %[[VB]], %{{.*}} : memref<32x64xbf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<32x64xbf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>, tensor<32x32xf32>
func.func @mma_loop(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sa
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 2 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sa
    %p = tile.gemm %sa, %sb, %acc : !sa, !sa, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>
func.func @origin_from_carried(%a: !g, %n: index, %i0: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %r = tile.pipelined %n, %i0 {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    // expected-error @+1 {{'tile.copy' op cannot be pipelined: its origin depends on a loop-carried value; it may use only the step and values from outside the loop}}
    tile.copy %a[%c0, %i], %sa : !g, !s
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>
func.func @tile_read_after(%a: !g, %c: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  // expected-note @+1 {{the loop}}
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    tile.copy %a[%c0, %s], %sa : !g, !s
    tile.yield %i : index
  }
  // expected-error @+1 {{'tile.load' op cannot be pipelined: it uses a tile that a pipelined loop fills stages ahead; such a tile lives only in its loop}}
  %x = tile.load %sa[%c0, %c0] : !s -> !f
  tile.store %x, %c[%c0, %c0] : !f, !g
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>
func.func @tile_stored(%a: !g, %n: index, %x: !f) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    tile.copy %a[%c0, %s], %sa : !g, !s
    // expected-error @+1 {{'tile.store' op cannot be pipelined: it writes a tile that the loop's copy fills stages ahead}}
    tile.store %x, %sa[%c0, %c0] : !f, !s
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
func.func @nested_copy(%a: !g, %n: index, %p: i1) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    scf.if %p {
      // expected-error @+1 {{'tile.copy' op cannot be pipelined: it lies in a branch or loop inside the pipelined body; only copies at the body's top level run ahead}}
      tile.copy %a[%c0, %s], %sa : !g, !s
    }
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
func.func @two_copies(%a: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    tile.copy %a[%c0, %s], %sa : !g, !s
    // expected-error @+1 {{'tile.copy' op cannot be pipelined: it writes a tile that the loop's copy fills stages ahead}}
    tile.copy %a[%s, %c0], %sa : !g, !s
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?xf32, strided<[1], offset: ?>>
!s = memref<3xf32, #gpu.address_space<workgroup>>
func.func @small_tile(%a: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !s
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    // expected-error @+1 {{'tile.copy' op cannot be pipelined: its tile holds 12 bytes; a tile with one buffer a stage must hold a multiple of 16 bytes}}
    tile.copy %a[%s], %sa : !g, !s
    tile.yield %i : index
  }
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>
func.func @tile_in_loop(%a: !g, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %r = tile.pipelined %n, %n {stages = 2 : i64} : index -> index {
  ^bb0(%s: index, %i: index):
    %sa = tile.alloc_shared : !s
    // expected-error @+1 {{'tile.copy' op cannot be pipelined: its tile must come from a tile.alloc_shared outside the loop}}
    tile.copy %a[%c0, %s], %sa : !g, !s
    tile.yield %i : index
  }
  return
}
