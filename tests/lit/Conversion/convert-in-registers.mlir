// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu | FileCheck %s
// One value a thread, loaded as (1, 64, 1) with vectors of 1 (k.relayout),
// then broadcast over each thread's vector of 8 (16 bytes of bf16): thread
// t holds element [0, t, 0] in both layouts, so the conversion to the
// broadcast's sliced layout permutes registers (each of its 8 slots is the
// source's slot 0): no shared buffer, no barrier.

// CHECK-LABEL: gpu.func @per_thread_scale
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.barrier
// The value, in one slot: every slot of the sliced layout is slot 0.
// CHECK: %[[ONE:.*]] = vector.from_elements %{{.*}} : vector<1xf32>
// CHECK-COUNT-8: vector.extract %[[ONE]][0] : f32 from vector<1xf32>
// CHECK-NEXT: vector.from_elements {{.*}} : vector<8xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @per_thread_scale(%x: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                            %s: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
    attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x512xbf16>
  %f = arith.extf %t : tensor<1x512xbf16> to tensor<1x512xf32>
  %v = tile.reshape %f : tensor<1x512xf32> -> tensor<1x64x8xf32>
  %l = tile.load %s[%c0, %c0, %c0] : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> -> tensor<1x64x1xf32>
  %one = tile.convert_layout %l {vector = 1 : i64} : tensor<1x64x1xf32> -> tensor<1x64x1xf32>
  %b = tile.broadcast %one : tensor<1x64x1xf32> -> tensor<1x64x8xf32>
  %p = arith.mulf %v, %b : tensor<1x64x8xf32>
  %o = tile.reshape %p : tensor<1x64x8xf32> -> tensor<1x512xf32>
  %h = arith.truncf %o : tensor<1x512xf32> to tensor<1x512xbf16>
  tile.store %h, %x[%c0, %c0] : tensor<1x512xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
  return
}
