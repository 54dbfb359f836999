// RUN: %tilejit-opt %s -convert-tile-to-gpu -verify-diagnostics
// The conversion needs the layouts tile-assign-layouts gives.

func.func @no_layout(%x: memref<?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op fragment 'tensor<32xf32>' has no layout; run tile-assign-layouts first}}
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<32xf32>
  return
}
