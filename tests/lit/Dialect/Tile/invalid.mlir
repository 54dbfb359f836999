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

// expected-error @+1 {{'tile.repeats' of argument 0 must be a unit attribute of a memref}}
func.func @repeats_scalar(%s: f32 {tile.repeats}) attributes {tile.threads = 32 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.repeats' of argument 0 must be a unit attribute of a memref}}
func.func @repeats_value(%x: memref<?xf32> {tile.repeats = 1 : i64}) attributes {tile.threads = 32 : i32} {
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

// -----

func.func @scan_dim(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.scan' op dim 2 is out of range for fragment 'tensor<32x64xf32>' of rank 2}}
  %r = tile.scan %t dim 2 : tensor<32x64xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @scan_type(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.scan' op result 'tensor<32x64xf16>' differs from source 'tensor<32x64xf32>'}}
  %r = tile.scan %t dim 1 : tensor<32x64xf32> -> tensor<32x64xf16>
  return
}

// -----

func.func @scan_bf16(%t: tensor<32x64xbf16>) {
  // expected-error @+1 {{'tile.scan' op requires an i32, i64 or f32 fragment, got 'bf16'}}
  %r = tile.scan %t dim 1 : tensor<32x64xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @reduce_dim(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op dim 2 is out of range for fragment 'tensor<32x64xf32>' of rank 2}}
  %r = tile.reduce max %t dim 2 : tensor<32x64xf32> -> tensor<32x1xf32>
  return
}

// -----

func.func @reduce_type(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op result element type 'f16' differs from source element type 'f32'}}
  %r = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf16>
  return
}

// -----

func.func @reduce_absmax_int(%t: tensor<32x64xi32>) {
  // expected-error @+1 {{'tile.reduce' op absmax requires a float fragment, got 'i32'}}
  %r = tile.reduce absmax %t dim 1 : tensor<32x64xi32> -> tensor<32x1xi32>
  return
}

// -----

func.func @reduce_shape(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op result 'tensor<32xf32>' is not the source with dimension 1 of size 1}}
  %r = tile.reduce sum %t dim 1 : tensor<32x64xf32> -> tensor<32xf32>
  return
}

// -----

func.func @broadcast_rank(%t: tensor<32x1xf32>) {
  // expected-error @+1 {{'tile.broadcast' op result 'tensor<32x4x8xf32>' must have the rank and element type of source 'tensor<32x1xf32>'}}
  %r = tile.broadcast %t : tensor<32x1xf32> -> tensor<32x4x8xf32>
  return
}

// -----

func.func @broadcast_dim(%t: tensor<32x2xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source dimension 1 is 2; requires 1 or the result's 8}}
  %r = tile.broadcast %t : tensor<32x2xf32> -> tensor<32x8xf32>
  return
}

// -----

func.func @reshape_count(%t: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.reshape' op result 'tensor<32x32xf32>' must have the element type and element count of source 'tensor<32x64xf32>'}}
  %r = tile.reshape %t : tensor<32x64xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{'tile.iota' op dim 2 is out of range for fragment 'tensor<32x64xi32>' of rank 2}}
  %r = tile.iota dim 2 : tensor<32x64xi32>
  return
}

// -----

func.func @iota_float() {
  // expected-error @+1 {{'tile.iota' op requires an integer fragment, got 'f32'}}
  %r = tile.iota dim 1 : tensor<32x64xf32>
  return
}

// -----

func.func @alloc_global() {
  // expected-error @+1 {{'tile.alloc_shared' op result 'memref<128x64xbf16>' must be statically shaped in #gpu.address_space<workgroup>}}
  %s = tile.alloc_shared : memref<128x64xbf16>
  return
}

// -----

func.func @copy_dest(%a: memref<?x?xbf16>, %s: memref<128x64xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.copy' op destination 'memref<128x64xbf16>' must be a shared tile (tile.alloc_shared)}}
  tile.copy %a[%c0, %c0], %s : memref<?x?xbf16>, memref<128x64xbf16>
  return
}

// -----

func.func @copy_indices(%a: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.copy' op expects 2 indices for a rank-2 tensor, got 1}}
  tile.copy %a[%c0], %s : memref<?x?xbf16>, memref<128x64xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @copy_type(%a: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.copy' op shared tile 'memref<128x64xbf16, #gpu.address_space<workgroup>>' must have the rank and element type of 'memref<?x?xf16>'}}
  tile.copy %a[%c0, %c0], %s : memref<?x?xf16>, memref<128x64xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @gemm_rank(%acc: tensor<128x256xf32>) {
  %a = tile.alloc_shared : memref<128x64x1xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<256x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op operands must be 2-D (a: M x K, b: N x K, acc: M x N)}}
  %r = tile.gemm %a, %b, %acc : memref<128x64x1xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
  return
}

// -----

func.func @gemm_shapes(%acc: tensor<128x256xf32>) {
  %a = tile.alloc_shared : memref<128x32xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<256x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op shapes 'memref<128x32xbf16, #gpu.address_space<workgroup>>', 'memref<256x64xbf16, #gpu.address_space<workgroup>>' and 'tensor<128x256xf32>' do not make acc(M x N) += a(M x K) * b(N x K)^T}}
  %r = tile.gemm %a, %b, %acc : memref<128x32xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
  return
}

// -----

func.func @gemm_transposed_shapes(%acc: tensor<32x64xf32>) {
  %a = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<64x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op shapes 'memref<32x64xf32, #gpu.address_space<workgroup>>', 'memref<64x64xbf16, #gpu.address_space<workgroup>>' and 'tensor<32x64xf32>' do not make acc(M x N) += (a(K x M))^T * b(K x N)}}
  %r = tile.gemm %a, %b, %acc {transpose_a, transpose_b} : memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xbf16, #gpu.address_space<workgroup>>, tensor<32x64xf32>
  return
}

// -----

func.func @gemm_transposed_fp8(%acc: tensor<64x64xf32>) {
  %a = tile.alloc_shared : memref<128x64xf8E4M3FN, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op transposed operands are read by mma.sync, which takes no fp8; got 'f8E4M3FN' and 'f8E4M3FN'}}
  %r = tile.gemm %a, %b, %acc {transpose_a} : memref<128x64xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, tensor<64x64xf32>
  return
}

// -----

func.func @gemm_dtype(%acc: tensor<128x256xf32>) {
  %a = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<256x64xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op operands must both be bf16, both f16, both f32 (multiplied as tf32), both fp8 (f8E4M3FN, f8E5M2) or one bf16 or f16 and one f32 (multiplied as tf32), got 'bf16' and 'f16'}}
  %r = tile.gemm %a, %b, %acc : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
  return
}

// -----

func.func @gemm_round_tf32(%acc: tensor<128x256xf32>) {
  %a = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<256x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op round_tf32 requires an f32 operand, got 'bf16' and 'bf16'}}
  %r = tile.gemm %a, %b, %acc {round_tf32} : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
  return
}

// -----

func.func @gemm_acc(%acc: tensor<128x256xf16>) {
  %a = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<256x64xbf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'tile.gemm' op accumulator must be f32, got 'f16'}}
  %r = tile.gemm %a, %b, %acc : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf16>
  return
}

// -----

func.func @pipelined_args(%n: index, %t: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.pipelined' op body must take the step (index) and one argument per iter_arg}}
  %r = tile.pipelined %n, %t {stages = 2 : i64} : tensor<4x4xf32> -> tensor<4x4xf32> {
  ^bb0(%acc: tensor<4x4xf32>):
    tile.yield %acc : tensor<4x4xf32>
  }
  return
}

// -----

func.func @pipelined_arg_type(%n: index, %t: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.pipelined' op body argument type 'tensor<4x4xf16>' differs from iter_arg type 'tensor<4x4xf32>'}}
  %r = tile.pipelined %n, %t {stages = 2 : i64} : tensor<4x4xf32> -> tensor<4x4xf32> {
  ^bb0(%k: index, %acc: tensor<4x4xf16>):
    tile.yield %t : tensor<4x4xf32>
  }
  return
}

// -----

func.func @pipelined_yield(%n: index, %t: tensor<4x4xf32>, %u: tensor<4x4xf16>) {
  // expected-error @+1 {{'tile.pipelined' op yielded values and results must have the iter_args' types}}
  %r = tile.pipelined %n, %t {stages = 2 : i64} : tensor<4x4xf32> -> tensor<4x4xf32> {
  ^bb0(%k: index, %acc: tensor<4x4xf32>):
    tile.yield %u : tensor<4x4xf16>
  }
  return
}

// -----

// expected-error @+1 {{layout shape of 100 elements does not split into vectors of 4 over 32 threads}}
func.func private @layout_split(tensor<100xf32, #tile.layout<shape = [100], threads = 32, vector = 4>>)

// -----

// expected-error @+1 {{layout sliced dimensions must be increasing dimensions of the shape}}
func.func private @layout_sliced(tensor<32x1xf32, #tile.layout<shape = [32, 128], threads = 256, vector = 8, sliced = [2]>>)

// -----

// expected-error @+1 {{layout threads and vector must be positive}}
func.func private @layout_threads(tensor<32xf32, #tile.layout<shape = [32], threads = 0, vector = 1>>)

// -----

// expected-error @+1 {{layout shape must be non-empty with positive sizes}}
func.func private @layout_shape(tensor<32xf32, #tile.layout<shape = [0], threads = 32, vector = 1>>)

// -----

func.func @atomic_umax_float(%x: memref<?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  // expected-error @+1 {{'tile.atomic' op umax of 'f32' is not supported; requires i32 or i64}}
  tile.atomic umax %t, %x[%c0, %c0] : tensor<32x64xf32>, memref<?x?xf32>
  return
}

// -----

func.func @atomic_add_bf16(%x: memref<?x?xbf16>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xbf16> -> tensor<32x64xbf16>
  // expected-error @+1 {{'tile.atomic' op add of 'bf16' is not supported; requires f32, f64, i32 or i64}}
  tile.atomic add %t, %x[%c0, %c0] : tensor<32x64xbf16>, memref<?x?xbf16>
  return
}

// -----

func.func @atomic_indices(%x: memref<?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  // expected-error @+1 {{'tile.atomic' op expects 2 indices for a rank-2 tensor, got 1}}
  tile.atomic add %t, %x[%c0] : tensor<32x64xf32>, memref<?x?xf32>
  return
}

// -----

func.func @shuffle_dim(%t: tensor<2x128x4xf32>) {
  // expected-error @+1 {{'tile.shuffle_xor' op dim 3 is out of range for fragment 'tensor<2x128x4xf32>' of rank 3}}
  %s = tile.shuffle_xor %t dim 3 mask 1 : tensor<2x128x4xf32>
  return
}

// -----

func.func @shuffle_width(%t: tensor<2x128x8xbf16>) {
  // expected-error @+1 {{'tile.shuffle_xor' op requires 32-bit elements, got 'bf16'; cast to f32 or i32 first}}
  %s = tile.shuffle_xor %t dim 1 mask 1 : tensor<2x128x8xbf16>
  return
}

// -----

func.func @shuffle_mask(%t: tensor<2x128x4xf32>) {
  // expected-error @+1 {{'tile.shuffle_xor' op mask 32 must be in 1..31 (lanes of one warp)}}
  %s = tile.shuffle_xor %t dim 1 mask 32 : tensor<2x128x4xf32>
  return
}

// -----

func.func @shuffle_past(%t: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'tile.shuffle_xor' op mask 8 reaches past dimension 1 of size 8}}
  %s = tile.shuffle_xor %t dim 1 mask 8 : tensor<2x8x4xf32>
  return
}

// -----

func.func @convert_shape(%t: tensor<32x1xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op result 'tensor<1x32xf32>' is not the source's shape and element type ('tensor<32x1xf32>')}}
  %c = tile.convert_layout %t : tensor<32x1xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @convert_vector(%t: tensor<32x1xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op vector 3 is not a power of two}}
  %c = tile.convert_layout %t {vector = 3 : i64} : tensor<32x1xf32> -> tensor<32x1xf32>
  return
}

// -----

func.func @shuffle_lane_range(%t: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'tile.shuffle_idx' op lane 16 must be in 0..15}}
  %s = tile.shuffle_idx %t dim 1 lane 16 : tensor<2x16x4xf32>
  return
}

// -----

func.func @shuffle_lane_segment(%t: tensor<2x12x4xf32>) {
  // expected-error @+1 {{'tile.shuffle_idx' op dimension 1 of size 12 must be a power of two when below 32}}
  %s = tile.shuffle_idx %t dim 1 lane 0 : tensor<2x12x4xf32>
  return
}

// -----

func.func @shuffle_lane_width(%t: tensor<2x128x4xi64>) {
  // expected-error @+1 {{'tile.shuffle_idx' op requires 32-bit elements, got 'i64'; cast to f32 or i32 first}}
  %s = tile.shuffle_idx %t dim 1 lane 0 : tensor<2x128x4xi64>
  return
}

// -----

// expected-error @+1 {{'tile.min_blocks' must be an i32 from 1 to 32 on a func.func}}
func.func @min_blocks_range() attributes {tile.threads = 64 : i32, tile.min_blocks = 40 : i32} {
  return
}

// -----

func.func @stack_one_part(%a: tensor<8x1xi32>) {
  // expected-error @+1 {{'tile.stack' op requires at least 2 parts, got 1}}
  %s = tile.stack %a : tensor<8x1xi32> -> tensor<8x1xi32>
  return
}

// -----

func.func @stack_mixed_parts(%a: tensor<8x1xi32>, %b: tensor<4x1xi32>) {
  // expected-error @+1 {{'tile.stack' op parts must have one shape and element type; got 'tensor<8x1xi32>' and 'tensor<4x1xi32>'}}
  %s = tile.stack %a, %b : tensor<8x1xi32>, tensor<4x1xi32> -> tensor<8x2xi32>
  return
}

// -----

func.func @stack_last_dim(%a: tensor<8x2xi32>) {
  // expected-error @+1 {{'tile.stack' op parts must have a last dimension of size 1, got 'tensor<8x2xi32>'}}
  %s = tile.stack %a, %a : tensor<8x2xi32>, tensor<8x2xi32> -> tensor<8x4xi32>
  return
}

// -----

func.func @stack_result(%a: tensor<8x1xi32>) {
  // expected-error @+1 {{'tile.stack' op stacked fragment 'tensor<8x3xi32>' must be 'tensor<8x2xi32>' for 2 parts of 'tensor<8x1xi32>'}}
  %s = tile.stack %a, %a : tensor<8x1xi32>, tensor<8x1xi32> -> tensor<8x3xi32>
  return
}

// -----

func.func @unstack_parts(%a: tensor<8x3xi32>) {
  // expected-error @+1 {{'tile.unstack' op stacked fragment 'tensor<8x3xi32>' must be 'tensor<8x2xi32>' for 2 parts of 'tensor<8x1xi32>'}}
  %u:2 = tile.unstack %a : tensor<8x3xi32> -> tensor<8x1xi32>, tensor<8x1xi32>
  return
}

// -----

// expected-error @+1 {{'tile.programmatic' must be a unit attribute on a func.func}}
func.func @programmatic_not_unit() attributes {tile.threads = 32 : i32, tile.programmatic = 1 : i32} {
  return
}

// -----

func.func @load_at_count(%m: memref<?x?xi32>, %i: tensor<8xi32>) {
  // expected-error @+1 {{'tile.load_at' op expects 2 index fragments for a rank-2 tensor, got 1}}
  %v = tile.load_at %m[%i] : memref<?x?xi32>, tensor<8xi32> -> tensor<8xi32>
  return
}

// -----

func.func @load_at_shape(%m: memref<?xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'tile.load_at' op index 0 is 'tensor<4xi32>'; requires an i32 or i64 fragment of the result's shape 'tensor<8xf32>'}}
  %v = tile.load_at %m[%i] : memref<?xf32>, tensor<4xi32> -> tensor<8xf32>
  return
}

// -----

func.func @load_at_type(%m: memref<?xf32>, %i: tensor<8xi32>) {
  // expected-error @+1 {{'tile.load_at' op result element type 'i32' differs from tensor element type 'f32'}}
  %v = tile.load_at %m[%i] : memref<?xf32>, tensor<8xi32> -> tensor<8xi32>
  return
}

// -----

func.func @row_pad_zero() {
  // expected-error @+1 {{'tile.alloc_shared' op attribute 'row_pad' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %a = tile.alloc_shared {row_pad = 0 : i64} : memref<32x64xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @row_pad_misaligned() {
  // expected-error @+1 {{'tile.alloc_shared' op row_pad 4 of 16-bit elements must be a multiple of 16 bytes}}
  %a = tile.alloc_shared {row_pad = 4 : i64} : memref<32x64xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @match_any_dim(%t: tensor<4x32xi32>) {
  // expected-error @+1 {{'tile.match_any' op dim 2 is out of range for fragment 'tensor<4x32xi32>' of rank 2}}
  %m = tile.match_any %t dim 2 : tensor<4x32xi32> -> tensor<4x32xi32>
  return
}

// -----

func.func @match_any_float(%t: tensor<4x32xf32>) {
  // expected-error @+1 {{'tile.match_any' op requires i32 or i64 elements, got 'f32'}}
  %m = tile.match_any %t dim 1 : tensor<4x32xf32> -> tensor<4x32xi32>
  return
}

// -----

func.func @match_any_result(%t: tensor<4x32xi64>) {
  // expected-error @+1 {{'tile.match_any' op result 'tensor<4x32xi64>' must be an i32 fragment of the source's shape}}
  %m = tile.match_any %t dim 1 : tensor<4x32xi64> -> tensor<4x32xi64>
  return
}

// -----

func.func @store_at_rank(%h: memref<8x64xi32>, %v: tensor<4x32xi32>, %r: tensor<4x32xi32>) {
  // expected-error @+1 {{'tile.store_at' op expects 2 index fragments for a rank-2 tensor, got 1}}
  tile.store_at %v, %h[%r] : tensor<4x32xi32>, memref<8x64xi32>, tensor<4x32xi32>
  return
}

// -----

func.func @store_at_type(%h: memref<64xf32>, %v: tensor<4x32xi32>, %r: tensor<4x32xi32>) {
  // expected-error @+1 {{'tile.store_at' op value element type 'i32' differs from tensor element type 'f32'}}
  tile.store_at %v, %h[%r] : tensor<4x32xi32>, memref<64xf32>, tensor<4x32xi32>
  return
}

// -----

func.func @store_at_index(%h: memref<64xi32>, %v: tensor<4x32xi32>, %r: tensor<4x16xi32>) {
  // expected-error @+1 {{'tile.store_at' op index 0 is 'tensor<4x16xi32>'; requires an i32 or i64 fragment of the shape of 'tensor<4x32xi32>'}}
  tile.store_at %v, %h[%r] : tensor<4x32xi32>, memref<64xi32>, tensor<4x16xi32>
  return
}

// -----

func.func @store_at_mask(%h: memref<64xi32>, %v: tensor<4x32xi32>, %r: tensor<4x32xi32>, %m: tensor<4x32xi32>) {
  // expected-error @+1 {{'tile.store_at' op mask is 'tensor<4x32xi32>'; requires an i1 fragment of the shape of 'tensor<4x32xi32>'}}
  tile.store_at %v, %h[%r] mask(%m : tensor<4x32xi32>) : tensor<4x32xi32>, memref<64xi32>, tensor<4x32xi32>
  return
}

// -----

func.func @store_at_combine(%h: memref<64xf32>, %v: tensor<4x32xf32>, %r: tensor<4x32xi32>) {
  // expected-error @+1 {{'tile.store_at' op cannot combine 'f32' with umax; requires i32, i64 (or f32, f64 for add and max)}}
  tile.store_at %v, %h[%r] combine umax : tensor<4x32xf32>, memref<64xf32>, tensor<4x32xi32>
  return
}

// -----

func.func @grid_wait_not_programmatic() attributes {tile.threads = 32 : i32} {
  // expected-error @+1 {{'tile.grid_wait' op requires a kernel with the 'tile.programmatic' attribute}}
  tile.grid_wait
  return
}

// -----

func.func @grid_wait_in_loop(%n: index) attributes {tile.threads = 32 : i32, tile.programmatic} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'tile.grid_wait' op must be directly in a kernel's body (not in a loop or a branch)}}
    tile.grid_wait
  }
  return
}

// -----

func.func @grid_wait_twice() attributes {tile.threads = 32 : i32, tile.programmatic} {
  tile.grid_wait
  // expected-error @+1 {{'tile.grid_wait' op follows another in the same kernel; requires at most one wait}}
  tile.grid_wait
  return
}
