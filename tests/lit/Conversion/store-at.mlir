// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu | FileCheck %s
// tile.match_any over 64 threads, a lane an element: one match.sync over
// the whole warp a slot; tile.store_at into a shared tile, a slot each,
// where both indices are inside (unsigned compares) and the mask holds: an
// atomic add with `combine add`, a plain store without.

// CHECK-LABEL: gpu.func @histogram
// CHECK: %[[ALL:.*]] = arith.constant -1 : i32
// CHECK: nvvm.match.sync any %[[ALL]], %{{.*}} : i32 -> i32
// CHECK: %[[ROWS:.*]] = memref.dim %[[HIST:.*]], %c0
// CHECK: arith.cmpi ult, %{{.*}}, %[[ROWS]] : index
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[DO:.*]] = arith.andi %[[IN]], %{{.*}} : i1
// CHECK: scf.if %[[DO]] {
// CHECK:   memref.atomic_rmw addi %{{.*}}, %[[HIST]][%{{.*}}, %{{.*}}]
// CHECK: scf.if
// CHECK:   memref.store %{{.*}}, %[[HIST]][%{{.*}}, %{{.*}}]
func.func @histogram(%ids: memref<?x?xi32, strided<[?, 1], offset: ?>>)
    attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %h = tile.alloc_shared : memref<2x32xi32, #gpu.address_space<workgroup>>
  %id = tile.load %ids[%c0, %c0] : memref<?x?xi32, strided<[?, 1], offset: ?>> -> tensor<2x32xi32>
  %m = tile.match_any %id dim 1 : tensor<2x32xi32> -> tensor<2x32xi32>
  %w = tile.iota dim 0 : tensor<2x32xi32>
  %zero = arith.constant dense<0> : tensor<2x32xi32>
  %some = arith.cmpi sgt, %m, %zero : tensor<2x32xi32>
  tile.store_at %m, %h[%w, %id] mask(%some : tensor<2x32xi1>) combine add : tensor<2x32xi32>, memref<2x32xi32, #gpu.address_space<workgroup>>, tensor<2x32xi32>, tensor<2x32xi32>
  tile.store_at %m, %h[%w, %id] : tensor<2x32xi32>, memref<2x32xi32, #gpu.address_space<workgroup>>, tensor<2x32xi32>, tensor<2x32xi32>
  return
}
