// RUN: %tilejit-opt %s -tile-lower-pipelined -tile-assign-shared-layouts -tile-assign-layouts -convert-tile-to-gpu -split-input-file | FileCheck %s
// tile.copy: each thread's cp.async pieces of the box (16 bytes where the
// rows are promised aligned, zeros outside the tensor), then the group's
// wait and a barrier; `async` copies (a pipelined loop's) only issue. A
// pipelined gemm's operand buffers are padded like any mma.sync operand,
// and the views of them follow.

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>

// 32 x 64 f32 = 512 pieces of 16 bytes over 128 threads: 4 rounds, each
// piece's element count min(4, columns left) inside the tensor, else 0 and
// the tensor's first element.
// CHECK-LABEL: gpu.func @whole
// CHECK-SAME: workgroup(%[[TILE:.*]] : memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[ROWS:.*]] = memref.dim %[[A:.*]], %{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[COLS:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[INSIDE:.*]] = arith.andi
// CHECK: %[[LEFT:.*]] = arith.subi %[[COLS]], %{{.*}} : index
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[LEFT]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.select %[[FEW]], %[[LEFT]], %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.select %[[INSIDE]], %[[N]], %{{.*}} : index
// CHECK: nvgpu.device_async_copy %[[A]][%{{.*}}, %{{.*}}], %[[TILE]][%{{.*}}, %{{.*}}], 4, %[[COUNT]] {bypassL1}
// CHECK-COUNT-3: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %[[TILE]]{{.*}} vector<4xf32>
func.func @whole(%a: !g {tile.align = 16 : i64}, %c: !g {tile.align = 16 : i64}, %r: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  tile.copy %a[%r, %c0], %sa : !g, !s
  %x = tile.load %sa[%c0, %c0] : !s -> tensor<32x64xf32>
  tile.store %x, %c[%r, %c0] : tensor<32x64xf32>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!s = memref<16x24xbf16, #gpu.address_space<workgroup>>

// Rows of 48 bytes: 16-byte pieces, 3 a row, 48 pieces for 128 threads: the
// threads past the last piece skip it.
// CHECK-LABEL: gpu.func @tail_round
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[HAS:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : index
// CHECK: scf.if %[[HAS]] {
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<?x?xbf16, strided<[?, 1], offset: ?>> to memref<16x24xbf16, #gpu.address_space<workgroup>>
// CHECK: }
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
func.func @tail_round(%a: !g {tile.align = 16 : i64}, %c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  tile.copy %a[%c0, %c0], %sa : !g, !s
  %x = tile.load %sa[%c0, %c0] : !s -> tensor<16x24xbf16>
  tile.store %x, %c[%c0, %c0] : tensor<16x24xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, ?], offset: ?>>
!s = memref<16x32xbf16, #gpu.address_space<workgroup>>

// Any inner stride: no cp.async, an element a thread at a time, zero outside.
// CHECK-LABEL: gpu.func @strided
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.if
// CHECK: memref.load
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<16x32xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.barrier
func.func @strided(%a: !g, %c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  tile.copy %a[%c0, %c0], %sa : !g, !s
  %x = tile.load %sa[%c0, %c0] : !s -> tensor<16x32xbf16>
  tile.store %x, %c[%c0, %c0] : tensor<16x32xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>

// Two stages of the operands, rows padded by 16 bytes: 2 x 32 x 72 buffers,
// each step's views 72 elements a row, copies into them only issued.
// CHECK-LABEL: gpu.func @pipelined_mma
// CHECK-SAME: memref<2x32x72xbf16, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<2x32x72xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy {{.*}} to memref<32x64xbf16, strided<[72, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: vector.load %{{.*}} : memref<32x64xbf16, strided<[72, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.mma.sync
func.func @pipelined_mma(%a: !g {tile.align = 16 : i64}, %b: !g {tile.align = 16 : i64}, %c: !gf, %n: index) attributes {tile.threads = 128 : i32} {
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
