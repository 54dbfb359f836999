// RUN: %tilejit-opt %s -split-input-file -verify-diagnostics
// Every verifier message of the tile dialect, one deliberate mistake each.

func.func @rank(%x: memref<?x?xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op expects 2 indices for a rank-2 tensor, got 1}}
  %t = tile.load %x[%c0] : memref<?x?xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @fragment_rank(%x: memref<?x?xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op fragment rank 1 differs from tensor rank 2}}
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<256xf32>
  return
}

// -----

func.func @element_type(%x: memref<?x?xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op fragment element type 'f16' differs from tensor element type 'f32'}}
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf16>
  return
}

// -----

func.func @empty(%x: memref<?x?xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op fragment dimension 1 is 0; requires a positive size}}
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x0xf32>
  return
}

// -----

// expected-error @+1 {{'tile.threads' is 100; requires a multiple of 32 between 32 and 1024}}
func.func @threads() attributes {tile.threads = 100 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.threads' must be an i32 integer attribute}}
func.func @threads_type() attributes {tile.threads = "many"} {
  return
}

// -----

// expected-error @+1 {{'tile.threads' may only be set on a func.func}}
module attributes {tile.threads = 256 : i32} {
}

// -----

// expected-error @+1 {{unknown tile dialect attribute 'tile.speed'}}
func.func @unknown() attributes {tile.speed = 1 : i32} {
  return
}

// -----

func.func @block_id() {
  // expected-error @+1 {{'tile.block_id' op attribute 'dim' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %b = tile.block_id 3
  return
}

// -----

func.func @splat(%s: f16) {
  // expected-error @+1 {{'tile.splat' op failed to verify that element type of the result matches the scalar}}
  %t = tile.splat %s : f16 -> tensor<32x64xf32>
  return
}

// -----

// expected-error @+1 {{'tile.align' of argument 0 must be a power of two of at least the 4-byte element size}}
func.func @align_value(%x: memref<?xf32> {tile.align = 12 : i64}) attributes {tile.threads = 32 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.align' on argument 0 of type 'f32'; requires a memref argument}}
func.func @align_scalar(%s: f32 {tile.align = 16 : i64}) attributes {tile.threads = 32 : i32} {
  return
}

// -----

// expected-error @+1 {{unknown tile dialect argument attribute 'tile.speed'}}
func.func @arg_unknown(%x: memref<?xf32> {tile.speed = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'tile.name' of argument 0 must be a string}}
func.func @arg_name(%x: memref<?xf32> {tile.name = 1 : i64}) {
  return
}

// -----

func.func @transpose_shape(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.transpose' op result 'tensor<32x64xf32>' is not the source with its last two dimensions swapped}}
  %u = tile.transpose %t : tensor<32x64xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @transpose_rank(%t: tensor<64xf32>) {
  // expected-error @+1 {{'tile.transpose' op fragment 'tensor<64xf32>' has rank 1; requires rank 2 or more}}
  %u = tile.transpose %t : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @transpose_type(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.transpose' op result element type 'f16' differs from source element type 'f32'}}
  %u = tile.transpose %t : tensor<32x64xf32> -> tensor<64x32xf16>
  return
}
