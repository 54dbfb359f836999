// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu | FileCheck %s
// tile.load_at over 32 threads, one element a thread, laid out as its
// indices: each slot checks both indices against the tensor's extents
// (unsigned: a negative index is outside) and loads one scalar, or 0.

// CHECK-LABEL: gpu.func @load_at
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[ROWS:.*]] = memref.dim %[[MAP:.*]], %c0
// CHECK: %[[COLS:.*]] = memref.dim %[[MAP]], %c1
// CHECK: %[[R:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %[[R]], %[[ROWS]] : index
// CHECK: %[[C:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[CIN:.*]] = arith.cmpi ult, %[[C]], %[[COLS]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[RIN]], %[[CIN]] : i1
// CHECK: scf.if %[[IN]] -> (i32) {
// CHECK:   memref.load %[[MAP]][%[[R]], %[[C]]]
// CHECK: } else {
// CHECK:   scf.yield %[[ZERO]] : i32
func.func @load_at(%map: memref<?x?xi32, strided<[?, 1], offset: ?>>,
                   %out: memref<?x?xi32, strided<[?, 1], offset: ?>>)
    attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %r = tile.iota dim 0 : tensor<4x8xi32>
  %c = tile.iota dim 1 : tensor<4x8xi32>
  %v = tile.load_at %map[%r, %c] : memref<?x?xi32, strided<[?, 1], offset: ?>>, tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  tile.store %v, %out[%c0, %c0] : tensor<4x8xi32>, memref<?x?xi32, strided<[?, 1], offset: ?>>
  return
}
