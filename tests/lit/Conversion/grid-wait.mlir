// RUN: %tilejit-opt %s -split-input-file -tile-assign-layouts -convert-tile-to-gpu | FileCheck %s
// A programmatic launch waits for the grid before it where tile.grid_wait
// stands (what comes before runs while that grid finishes), then lets the
// grid after it launch; without tile.grid_wait, both at the kernel's start.

// CHECK-LABEL: gpu.func @wait_after_load
// CHECK: memref.load %arg0
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK: memref.store
func.func @wait_after_load(%x: memref<?xf32, strided<[1], offset: ?>>,
                           %y: memref<?xf32, strided<[1], offset: ?>>)
    attributes {tile.threads = 32 : i32, tile.programmatic} {
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<32xf32>
  tile.grid_wait
  tile.store %v, %y[%c0] : tensor<32xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// CHECK-LABEL: gpu.func @wait_at_start
// CHECK-NEXT: gpu.thread_id
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
func.func @wait_at_start(%x: memref<?xf32, strided<[1], offset: ?>>)
    attributes {tile.threads = 32 : i32, tile.programmatic} {
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<32xf32>
  tile.store %v, %x[%c0] : tensor<32xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}
