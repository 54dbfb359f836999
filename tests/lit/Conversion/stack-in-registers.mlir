// RUN: %tilejit-opt %s -tile-assign-layouts | FileCheck %s --check-prefix=LAYOUT
// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu | FileCheck %s
// tile.stack and tile.unstack rename slots: eight codes a thread (k.relayout)
// summed into three words (each sliced along the group), stacked as three
// consecutive words a thread and stored as 12-byte chunks (three 4-byte
// stores: a chunk is aligned to its bytes' power-of-two factor); and three
// words a thread loaded straight in groups of three (the load feeds the
// unstack through a reshape), unstacked and stacked again as pairs. No
// shared buffer, no barrier.

!g = memref<?x?xi32, strided<[?, 1], offset: ?>>
// LAYOUT-LABEL: func.func @pack
// The sums' sliced layout is made compact (one element a thread, vector 1)
// without moving data; the stack has three times its vector.
// LAYOUT: tile.convert_layout {{.*}} -> tensor<128x1xi32, #tile.layout<shape = [128, 1], threads = 128, vector = 1>>
// LAYOUT: tile.stack {{.*}} -> tensor<128x3xi32, #tile.layout<shape = [128, 3], threads = 128, vector = 3>>
// LAYOUT: tile.reshape {{.*}} -> tensor<1x384xi32, #tile.layout<shape = [1, 384], threads = 128, vector = 3>>
// CHECK-LABEL: gpu.func @pack
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<?x?xi32, strided<[?, 1], offset: ?>>, vector<3xi32>
// CHECK: gpu.return
func.func @pack(%codes: !g {tile.align = 16 : i64}, %words: !g {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %codes[%c0, %c0] : !g -> tensor<1x1024xi32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<1x1024xi32> -> tensor<1x1024xi32>
  %g = tile.reshape %r : tensor<1x1024xi32> -> tensor<128x8xi32>
  %a = tile.reduce sum %g dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %b = tile.reduce max %g dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %c = tile.reduce min %g dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %s = tile.stack %a, %b, %c : tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32> -> tensor<128x3xi32>
  %w = tile.reshape %s : tensor<128x3xi32> -> tensor<1x384xi32>
  tile.store %w, %words[%c0, %c0] : tensor<1x384xi32>, !g
  return
}

// LAYOUT-LABEL: func.func @unpack
// LAYOUT: tile.load {{.*}} -> tensor<1x384xi32, #tile.layout<shape = [1, 384], threads = 128, vector = 3>>
// LAYOUT: tile.unstack {{.*}} -> tensor<128x1xi32, #tile.layout<shape = [128, 1], threads = 128, vector = 1>>, tensor<128x1xi32, #tile.layout<shape = [128, 1], threads = 128, vector = 1>>, tensor<128x1xi32, #tile.layout<shape = [128, 1], threads = 128, vector = 1>>
// LAYOUT: tile.stack {{.*}} -> tensor<128x2xi32, #tile.layout<shape = [128, 2], threads = 128, vector = 2>>
// CHECK-LABEL: gpu.func @unpack
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.barrier
// CHECK: vector.load {{.*}} {alignment = 4 : i64} : memref<?x?xi32, strided<[?, 1], offset: ?>>, vector<3xi32>
// Part j is slot 3 s + j of the loaded chunks; the pair is part 2, part 0.
// CHECK: %[[P0:.*]] = vector.from_elements %{{.*}} : vector<1xi32>
// CHECK-NEXT: vector.extract %[[S:.*]][1] : i32 from vector<3xi32>
// CHECK-NEXT: %[[P1:.*]] = vector.from_elements %{{.*}} : vector<1xi32>
// CHECK-NEXT: vector.extract %[[S]][2] : i32 from vector<3xi32>
// CHECK-NEXT: %[[P2:.*]] = vector.from_elements %{{.*}} : vector<1xi32>
// CHECK-NEXT: %[[A:.*]] = vector.extract %[[P2]][0] : i32 from vector<1xi32>
// CHECK-NEXT: %[[B:.*]] = vector.extract %[[P0]][0] : i32 from vector<1xi32>
// CHECK-NEXT: vector.from_elements %[[A]], %[[B]] : vector<2xi32>
// CHECK: vector.store {{.*}} : memref<?x?xi32, strided<[?, 1], offset: ?>>, vector<2xi32>
// CHECK: gpu.return
func.func @unpack(%words: !g {tile.align = 16 : i64}, %out: !g {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %words[%c0, %c0] : !g -> tensor<1x384xi32>
  %g = tile.reshape %t : tensor<1x384xi32> -> tensor<128x3xi32>
  %p:3 = tile.unstack %g : tensor<128x3xi32> -> tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32>
  %s = tile.stack %p#2, %p#0 : tensor<128x1xi32>, tensor<128x1xi32> -> tensor<128x2xi32>
  %w = tile.reshape %s : tensor<128x2xi32> -> tensor<1x256xi32>
  tile.store %w, %out[%c0, %c0] : tensor<1x256xi32>, !g
  return
}
