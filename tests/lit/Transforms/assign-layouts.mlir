// RUN: %tilejit-opt %s -tile-assign-layouts -split-input-file -verify-diagnostics | FileCheck %s
// Layout assignment: blocked layouts for loads, slices for reductions,
// free broadcasts back, reshapes that keep the order, splats placed in
// their users' layouts, conversions where layouts meet; and every error the
// pass reports.

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!gf = memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-LABEL: func.func @groups
func.func @groups(%x: !g {tile.align = 16 : i64}, %out: !g {tile.align = 16 : i64}, %sf: !gf) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  // 16-byte vectors of bf16: vector = 8.
  // CHECK: tile.load {{.*}} -> tensor<8x512xbf16, #tile.layout<shape = [8, 512], threads = 128, vector = 8>>
  %t = tile.load %x[%c0, %c0] : !g -> tensor<8x512xbf16>
  %f = arith.extf %t : tensor<8x512xbf16> to tensor<8x512xf32>
  // CHECK: tile.reshape {{.*}} -> tensor<8x4x128xf32, #tile.layout<shape = [8, 4, 128], threads = 128, vector = 8>>
  %g = tile.reshape %f : tensor<8x512xf32> -> tensor<8x4x128xf32>
  // CHECK: tile.reduce absmax {{.*}} -> tensor<8x4x1xf32, #tile.layout<shape = [8, 4, 128], threads = 128, vector = 8, sliced = [2]>>
  %m = tile.reduce absmax %g dim 2 : tensor<8x4x128xf32> -> tensor<8x4x1xf32>
  // A splat meeting the reduction takes its sliced layout.
  // CHECK: tile.splat {{.*}} -> tensor<8x4x1xf32, #tile.layout<shape = [8, 4, 128], threads = 128, vector = 8, sliced = [2]>>
  %cst = arith.constant 448.0 : f32
  %s = tile.splat %cst : f32 -> tensor<8x4x1xf32>
  %d = arith.divf %s, %m : tensor<8x4x1xf32>
  // The broadcast back un-slices: the same slots.
  // CHECK: tile.broadcast {{.*}} -> tensor<8x4x128xf32, #tile.layout<shape = [8, 4, 128], threads = 128, vector = 8>>
  %b = tile.broadcast %d : tensor<8x4x1xf32> -> tensor<8x4x128xf32>
  %q = arith.mulf %g, %b : tensor<8x4x128xf32>
  %q8 = arith.truncf %q : tensor<8x4x128xf32> to tensor<8x4x128xbf16>
  %r = tile.reshape %q8 : tensor<8x4x128xbf16> -> tensor<8x512xbf16>
  tile.store %r, %out[%c0, %c0] : tensor<8x512xbf16>, !g
  // A reshaped reduction result keeps its slots (and does not limit the
  // vector width of the kernel's other accesses, though sf has no promise).
  // CHECK: tile.reshape {{.*}} -> tensor<8x4xf32, #tile.layout<shape = [8, 4, 128], threads = 128, vector = 8, sliced = [2]>>
  %dr = tile.reshape %d : tensor<8x4x1xf32> -> tensor<8x4xf32>
  tile.store %dr, %sf[%c0, %c0] : tensor<8x4xf32>, !gf
  return
}

// -----

// A splat used in two layouts is copied for the second.
// CHECK-LABEL: func.func @splat_twice
func.func @splat_twice(%x: memref<?x?xf32>, %o: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 1.0 : f32
  %s = tile.splat %cst : f32 -> tensor<32x1xf32>
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x32xf32>
  %m = tile.reduce max %t dim 1 : tensor<32x32xf32> -> tensor<32x1xf32>
  // CHECK-DAG: tile.splat {{.*}} -> tensor<32x1xf32, #tile.layout<shape = [32, 32], threads = 32, vector = 1, sliced = [1]>>
  // CHECK-DAG: tile.splat {{.*}} -> tensor<32x1xf32, #tile.layout<shape = [32, 1], threads = 32, vector = 1>>
  %a = arith.addf %m, %s : tensor<32x1xf32>
  %u = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x1xf32>
  %b = arith.addf %u, %s : tensor<32x1xf32>
  tile.store %a, %o[%c0, %c0] : tensor<32x1xf32>, memref<?x?xf32>
  tile.store %b, %o[%c0, %c0] : tensor<32x1xf32>, memref<?x?xf32>
  return
}

// -----

func.func @divides(%x: memref<?x?xf32>, %t: tensor<32x65xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.store' op fragment 'tensor<32x65xf32>' has 2080 elements; requires a multiple of the kernel's 256 threads}}
  tile.store %t, %x[%c0, %c0] : tensor<32x65xf32>, memref<?x?xf32>
  return
}

// -----

func.func @reduce_pow2(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x96xf32>
  // expected-error @+1 {{'tile.reduce' op over dimension 1 of 'tensor<32x96xf32>' requires power-of-two sizes from that dimension on and a power-of-two thread count (the kernel has 32), or the dimensions after it to hold a multiple of threads x vector = 32 elements (they hold 1)}}
  %m = tile.reduce max %t dim 1 : tensor<32x96xf32> -> tensor<32x1xf32>
  return
}

// -----

func.func @reduce_reshaped(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf32>
  %r = tile.reshape %m : tensor<32x1xf32> -> tensor<1x32xf32>
  // expected-error @+1 {{'tile.reduce' op of a reshaped reduction result is not supported; reduce before reshaping}}
  %n = tile.reduce max %r dim 1 : tensor<1x32xf32> -> tensor<1x1xf32>
  return
}

// -----

// A loaded fragment broadcast along a dimension: converted to the slice of
// the result's blocked layout first.
// CHECK-LABEL: func.func @broadcast_loaded
// CHECK: %[[T:.*]] = tile.load {{.*}} -> tensor<32x1xf32, #tile.layout<shape = [32, 1], threads = 32, vector = 1>>
// CHECK: %[[C:.*]] = tile.convert_layout %[[T]] : {{.*}} -> tensor<32x1xf32, #tile.layout<shape = [32, 64], threads = 32, vector = 1, sliced = [1]>>
// CHECK: tile.broadcast %[[C]] : {{.*}} -> tensor<32x64xf32, #tile.layout<shape = [32, 64], threads = 32, vector = 1>>
func.func @broadcast_loaded(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x1xf32>
  %b = tile.broadcast %t : tensor<32x1xf32> -> tensor<32x64xf32>
  tile.store %b, %x[%c0, %c0] : tensor<32x64xf32>, memref<?x?xf32>
  return
}

// -----

// A splat of fewer elements than threads (16 rows, 32 threads) broadcast
// along a dimension: placed in the slice of the result's blocked layout
// (it has no blocked layout of its own).
// CHECK-LABEL: func.func @broadcast_small_splat
// CHECK: tile.splat {{.*}} -> tensor<16x1xf32, #tile.layout<shape = [16, 16], threads = 32, vector = 1, sliced = [1]>>
// CHECK: tile.broadcast {{.*}} -> tensor<16x16xf32, #tile.layout<shape = [16, 16], threads = 32, vector = 1>>
func.func @broadcast_small_splat(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %s = tile.splat %cst : f32 -> tensor<16x1xf32>
  %b = tile.broadcast %s : tensor<16x1xf32> -> tensor<16x16xf32>
  tile.store %b, %x[%c0, %c0] : tensor<16x16xf32>, memref<?x?xf32>
  return
}

// -----

func.func @transpose_reduced(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %m = tile.reduce max %t dim 0 : tensor<32x64xf32> -> tensor<1x64xf32>
  // expected-error @+1 {{'tile.transpose' op of a reduction result is not supported; broadcast it first}}
  %u = tile.transpose %m : tensor<1x64xf32> -> tensor<64x1xf32>
  return
}

// -----

// Operands in two layouts: the second is converted to the first's.
// CHECK-LABEL: func.func @mismatch
// CHECK: %[[M:.*]] = tile.reduce max
// CHECK: %[[U:.*]] = tile.load
// CHECK: %[[C:.*]] = tile.convert_layout %[[U]] : tensor<32x1xf32, #tile.layout<shape = [32, 1], threads = 32, vector = 1>> -> tensor<32x1xf32, #tile.layout<shape = [32, 64], threads = 32, vector = 1, sliced = [1]>>
// CHECK: arith.addf %[[M]], %[[C]]
func.func @mismatch(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf32>
  %u = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x1xf32>
  %a = arith.addf %m, %u : tensor<32x1xf32>
  tile.store %a, %x[%c0, %c0] : tensor<32x1xf32>, memref<?x?xf32>
  return
}

// -----

func.func @unsupported(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %pad = arith.constant 0.0 : f32
  // expected-error @+1 {{'vector.transfer_read' op is not supported on fragments}}
  %e = vector.transfer_read %t[%c0, %c0], %pad : tensor<32x64xf32>, vector<4xf32>
  return
}

// -----

// A loop carries its fragments in their initial layouts (here the reduction
// result's slice), and an if's results take its then-branch's layouts.
!g2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @carried
func.func @carried(%x: !g2 {tile.align = 16 : i64}, %n: index, %c: i1) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !g2 -> tensor<16x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<16x64xf32> -> tensor<16x1xf32>
  // CHECK: scf.for {{.*}} -> (tensor<16x1xf32, #tile.layout<shape = [16, 64], threads = 256, vector = 4, sliced = [1]>>)
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %m) -> (tensor<16x1xf32>) {
    %d = arith.addf %a, %a : tensor<16x1xf32>
    scf.yield %d : tensor<16x1xf32>
  }
  // CHECK: scf.if {{.*}} -> (tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 256, vector = 4>>)
  %s = scf.if %c -> (tensor<16x64xf32>) {
    scf.yield %t : tensor<16x64xf32>
  } else {
    %u = arith.mulf %t, %t : tensor<16x64xf32>
    scf.yield %u : tensor<16x64xf32>
  }
  %b = tile.broadcast %r : tensor<16x1xf32> -> tensor<16x64xf32>
  %o = arith.addf %s, %b : tensor<16x64xf32>
  tile.store %o, %x[%c0, %c0] : tensor<16x64xf32>, !g2
  return
}

// -----

// A carried splat takes the layout its first use in the body wants (here
// the reduction's slice: 16 elements could not be spread over 256 threads).
!g4 = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @carried_splat
func.func @carried_splat(%x: !g4 {tile.align = 16 : i64}, %n: index) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // CHECK: tile.splat {{.*}} -> tensor<16x1xf32, #tile.layout<shape = [16, 64], threads = 256, vector = 4, sliced = [1]>>
  %init = tile.splat %zero : f32 -> tensor<16x1xf32>
  %t = tile.load %x[%c0, %c0] : !g4 -> tensor<16x64xf32>
  // CHECK: scf.for {{.*}} -> (tensor<16x1xf32, #tile.layout<shape = [16, 64], threads = 256, vector = 4, sliced = [1]>>)
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<16x1xf32>) {
    %m = tile.reduce max %t dim 1 : tensor<16x64xf32> -> tensor<16x1xf32>
    %d = arith.maximumf %m, %a : tensor<16x1xf32>
    scf.yield %d : tensor<16x1xf32>
  }
  %b = tile.broadcast %r : tensor<16x1xf32> -> tensor<16x64xf32>
  tile.store %b, %x[%c0, %c0] : tensor<16x64xf32>, !g4
  return
}

// -----

// A loop body that yields a carried fragment in another layout: converted
// to the loop's before the yield.
!g3 = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @carried_relayout
// CHECK: %[[M:.*]] = tile.reduce max
// CHECK: %[[C:.*]] = tile.convert_layout %[[M]] : {{.*}} -> tensor<32x1xf32, #tile.layout<shape = [32, 1], threads = 32, vector = 1>>
// CHECK: scf.yield %[[C]]
func.func @carried_relayout(%x: !g3 {tile.align = 16 : i64}, %n: index) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !g3 -> tensor<32x64xf32>
  %col = tile.load %x[%c0, %c0] : !g3 -> tensor<32x1xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %col) -> (tensor<32x1xf32>) {
    %m = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf32>
    scf.yield %m : tensor<32x1xf32>
  }
  tile.store %r, %x[%c0, %c0] : tensor<32x1xf32>, !g3
  return
}

// -----

// A shuffle asks for the vector its inner dimensions hold (2 here, under
// the 4 the f32 accesses allow) and keeps its source's layout.
!gs = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @shuffle_vector
func.func @shuffle_vector(%x: !gs {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  // CHECK: tile.load {{.*}} -> tensor<4x128xf32, #tile.layout<shape = [4, 128], threads = 64, vector = 2>>
  %t = tile.load %x[%c0, %c0] : !gs -> tensor<4x128xf32>
  %r = tile.reshape %t : tensor<4x128xf32> -> tensor<4x64x2xf32>
  // CHECK: tile.shuffle_xor {{.*}} : tensor<4x64x2xf32, #tile.layout<shape = [4, 64, 2], threads = 64, vector = 2>>
  %s = tile.shuffle_xor %r dim 1 mask 5 : tensor<4x64x2xf32>
  %b = tile.reshape %s : tensor<4x64x2xf32> -> tensor<4x128xf32>
  tile.store %b, %x[%c0, %c0] : tensor<4x128xf32>, !gs
  return
}

// -----

func.func @shuffle_not_threads(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x128xf32>
  %r = tile.reshape %t : tensor<4x128xf32> -> tensor<4x128x1xf32>
  %s = tile.shuffle_xor %r dim 1 mask 1 : tensor<4x128x1xf32>
  // A second shuffle whose inner dimensions hold more than the vector the
  // first one set.
  %r4 = tile.reshape %t : tensor<4x128xf32> -> tensor<2x64x4xf32>
  // expected-error @+1 {{'tile.shuffle_xor' op along dimension 1 of 'tensor<2x64x4xf32>' requires the dimensions after it to hold one vector of the kernel's layout (1 elements; they hold 4): reshape so that they do}}
  %s4 = tile.shuffle_xor %r4 dim 1 mask 1 : tensor<2x64x4xf32>
  return
}

// -----

func.func @shuffle_span(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<6x128xf32>
  %r = tile.reshape %t : tensor<6x128xf32> -> tensor<16x12x4xf32>
  // expected-error @+1 {{'tile.shuffle_xor' op with mask 5 along dimension 1 of 'tensor<16x12x4xf32>' requires that dimension's size (12) and the thread count (64) to be multiples of 8}}
  %s = tile.shuffle_xor %r dim 1 mask 5 : tensor<16x12x4xf32>
  return
}

// -----

func.func @shuffle_reduced(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %l = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x256xf32>
  %t = tile.reshape %l : tensor<4x256xf32> -> tensor<4x64x4xf32>
  %m = tile.reduce max %t dim 0 : tensor<4x64x4xf32> -> tensor<1x64x4xf32>
  // expected-error @+1 {{'tile.shuffle_xor' op of a reduction result is not supported; broadcast it first}}
  %s = tile.shuffle_xor %m dim 1 mask 1 : tensor<1x64x4xf32>
  return
}

// -----

// k.relayout: the author's vector of 8 f32 a thread. A tensor promising
// 16-byte rows of 64 takes chunks of 8 as two 16-byte accesses: the load
// reads straight into the author's layout (the conversion is the identity)
// and the store writes from it.
!gr = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @relayout
// CHECK: %[[T:.*]] = tile.load {{.*}} -> tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 8>>
// CHECK: %[[R:.*]] = tile.convert_layout %[[T]] {vector = 8 : i64} : tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 8>> -> tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 8>>
// CHECK-NEXT: tile.store %[[R]]
func.func @relayout(%x: !gr {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !gr -> tensor<16x64xf32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<16x64xf32> -> tensor<16x64xf32>
  tile.store %r, %x[%c0, %c0] : tensor<16x64xf32>, !gr
  return
}

// -----

// Without a promise the accesses are element by element (the kernel's
// vector is 1): the load is converted to the author's chunks, and the store
// goes back through the kernel's layout.
!gu = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @relayout_unaligned
// CHECK: %[[T:.*]] = tile.load {{.*}} -> tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 1>>
// CHECK: %[[R:.*]] = tile.convert_layout %[[T]] {vector = 8 : i64} : {{.*}} -> tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 8>>
// CHECK: %[[B:.*]] = tile.convert_layout %[[R]] : {{.*}} -> tensor<16x64xf32, #tile.layout<shape = [16, 64], threads = 128, vector = 1>>
// CHECK: tile.store %[[B]]
func.func @relayout_unaligned(%x: !gu) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !gu -> tensor<16x64xf32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<16x64xf32> -> tensor<16x64xf32>
  tile.store %r, %x[%c0, %c0] : tensor<16x64xf32>, !gu
  return
}

// -----

func.func @relayout_count(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x128xf32>
  // expected-error @+1 {{'tile.convert_layout' op to vectors of 8 elements: fragment 'tensor<4x128xf32>' has 512 elements; requires a multiple of threads x vector = 1024}}
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<4x128xf32> -> tensor<4x128xf32>
  return
}

// -----

func.func @shuffle_lane_span(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<3x256xf32>
  %r = tile.reshape %t : tensor<3x256xf32> -> tensor<4x48x4xf32>
  // expected-error @+1 {{'tile.shuffle_idx' op from lane 3 along dimension 1 of 'tensor<4x48x4xf32>' requires that dimension's size (48) and the thread count (64) to be multiples of 32}}
  %s = tile.shuffle_idx %r dim 1 lane 3 : tensor<4x48x4xf32>
  return
}

// -----

func.func @match_any_span(%x: memref<?x?xi32, strided<[?, 1], offset: ?>> {tile.align = 4 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xi32, strided<[?, 1], offset: ?>> -> tensor<4x16xi32>
  // expected-error @+1 {{'tile.match_any' op along dimension 1 of 'tensor<4x16xi32>' requires that dimension's size (16) and the thread count (64) to be multiples of 32}}
  %m = tile.match_any %t dim 1 : tensor<4x16xi32> -> tensor<4x16xi32>
  return
}

// -----

// An iota compared with a splat index has no layout of its own: the compare
// and its iota take the layout of the value they meet (the author's vector
// of 8), so the select needs no conversion; used twice, in two layouts, they
// are copied. An iota nobody lays out is blocked; one nobody uses is erased.
!gi = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @iota_takes_users_layout
// CHECK: %[[T:.*]] = tile.load
// CHECK: %[[R:.*]] = tile.convert_layout %[[T]] {vector = 8 : i64}
// CHECK-DAG: %[[I4:.*]] = tile.iota dim 1 : tensor<128x8xi32, #tile.layout<shape = [128, 8], threads = 128, vector = 4>>
// CHECK-DAG: %[[I8:.*]] = tile.iota dim 1 : tensor<128x8xi32, #tile.layout<shape = [128, 8], threads = 128, vector = 8>>
// CHECK-DAG: %[[M4:.*]] = arith.cmpi eq, %[[I4]], %{{.*}} : tensor<128x8xi32, #tile.layout<shape = [128, 8], threads = 128, vector = 4>>
// CHECK-DAG: %[[M8:.*]] = arith.cmpi eq, %[[I8]], %{{.*}} : tensor<128x8xi32, #tile.layout<shape = [128, 8], threads = 128, vector = 8>>
// CHECK: arith.select %[[M8]], %[[R]], %{{.*}} : tensor<128x8xi1, #tile.layout<shape = [128, 8], threads = 128, vector = 8>>
// CHECK: arith.select %[[M4]], %[[T]], %{{.*}} : tensor<128x8xi1, #tile.layout<shape = [128, 8], threads = 128, vector = 4>>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.iota dim 0 : tensor<128x8xi32, #tile.layout<shape = [128, 8], threads = 128, vector = 4>>
// CHECK-NOT: tile.iota
// CHECK: return
func.func @iota_takes_users_layout(%x: !gi {tile.align = 16 : i64}, %n: i32, %o: memref<?x?xi32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %t = tile.load %x[%c0, %c0] : !gi -> tensor<128x8xf32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<128x8xf32> -> tensor<128x8xf32>
  %iota = tile.iota dim 1 : tensor<128x8xi32>
  %s = tile.splat %n : i32 -> tensor<128x8xi32>
  %match = arith.cmpi eq, %iota, %s : tensor<128x8xi32>
  %z = tile.splat %zero : f32 -> tensor<128x8xf32>
  %picked = arith.select %match, %r, %z : tensor<128x8xi1>, tensor<128x8xf32>
  tile.store %picked, %x[%c0, %c0] : tensor<128x8xf32>, !gi
  %other = arith.select %match, %t, %z : tensor<128x8xi1>, tensor<128x8xf32>
  tile.store %other, %x[%c0, %c0] : tensor<128x8xf32>, !gi
  %rows = tile.iota dim 0 : tensor<128x8xi32>
  tile.store %rows, %o[%c0, %c0] : tensor<128x8xi32>, memref<?x?xi32, strided<[?, 1], offset: ?>>
  %unused = tile.iota dim 0 : tensor<128x8xi32>
  return
}

// -----

// A mask computed from a broadcast (a row's flag, reduced from a fragment
// in another layout) meets a loaded fragment: the load's layout wins, and
// the mask is computed again from the reduction result converted to the
// slice of that layout (a few elements a thread), not converted itself.
!bf = memref<?x?xbf16, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @mask_from_broadcast
// CHECK: %[[R:.*]] = tile.reduce max {{.*}} -> tensor<1x1xi32, #tile.layout<shape = [1, 512], threads = 64, vector = 1, sliced = [1]>>
// CHECK: %[[C:.*]] = tile.convert_layout %[[R]] : {{.*}} -> tensor<1x1xi32, #tile.layout<shape = [1, 512], threads = 64, vector = 8, sliced = [1]>>
// CHECK: %[[B:.*]] = tile.broadcast %[[C]] : {{.*}} -> tensor<1x512xi32, #tile.layout<shape = [1, 512], threads = 64, vector = 8>>
// CHECK: %[[M:.*]] = arith.cmpi sgt, %[[B]], {{.*}} : tensor<1x512xi32, #tile.layout<shape = [1, 512], threads = 64, vector = 8>>
// CHECK: arith.select %[[M]], {{.*}} : tensor<1x512xi1, #tile.layout<shape = [1, 512], threads = 64, vector = 8>>
// CHECK: tile.store {{.*}} : tensor<1x512xbf16, #tile.layout<shape = [1, 512], threads = 64, vector = 8>>
func.func @mask_from_broadcast(%x: !bf {tile.align = 16 : i64}, %flags: memref<?x?xi32>) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %f = tile.load %flags[%c0, %c0] : memref<?x?xi32> -> tensor<1x512xi32>
  %fr = tile.convert_layout %f {vector = 1 : i64} : tensor<1x512xi32> -> tensor<1x512xi32>
  %r = tile.reduce max %fr dim 1 : tensor<1x512xi32> -> tensor<1x1xi32>
  %b = tile.broadcast %r : tensor<1x1xi32> -> tensor<1x512xi32>
  %zero = arith.constant 0 : i32
  %z = tile.splat %zero : i32 -> tensor<1x512xi32>
  %m = arith.cmpi sgt, %b, %z : tensor<1x512xi32>
  %t = tile.load %x[%c0, %c0] : !bf -> tensor<1x512xbf16>
  %zb = arith.constant 0.0 : bf16
  %zs = tile.splat %zb : bf16 -> tensor<1x512xbf16>
  %s = arith.select %m, %zs, %t : tensor<1x512xi1>, tensor<1x512xbf16>
  tile.store %s, %x[%c0, %c0] : tensor<1x512xbf16>, !bf
  return
}

// -----

// The author's relayout of an iota: the iota is made in that layout
// (nothing converted), and an element-wise op with it takes it.
// CHECK-LABEL: func.func @relayout_iota
// CHECK: %[[I:.*]] = tile.iota dim 1 : tensor<32x16xi32, #tile.layout<shape = [32, 16], threads = 32, vector = 16>>
// CHECK-NEXT: %[[R:.*]] = tile.convert_layout %[[I]] {vector = 16 : i64} : tensor<32x16xi32, #tile.layout<shape = [32, 16], threads = 32, vector = 16>> -> tensor<32x16xi32, #tile.layout<shape = [32, 16], threads = 32, vector = 16>>
// CHECK-NEXT: arith.addi %[[R]], %[[R]]
func.func @relayout_iota(%x: memref<?x?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %i = tile.iota dim 1 : tensor<32x16xi32>
  %r = tile.convert_layout %i {vector = 16 : i64} : tensor<32x16xi32> -> tensor<32x16xi32>
  %s = arith.addi %r, %r : tensor<32x16xi32>
  tile.store %s, %x[%c0, %c0] : tensor<32x16xi32>, memref<?x?xi32>
  return
}

// -----

// A broadcast laid out first in the loaded operand's layout and computed
// again in the author's layout its user wants: the first copy and its
// conversion, left unused, are erased (no shared buffer, no barrier).
// CHECK-LABEL: func.func @dead_copy_erased
// CHECK-COUNT-1: tile.broadcast
// CHECK-NOT: tile.broadcast
func.func @dead_copy_erased(%x: memref<?x?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xi32> -> tensor<32x1xi32>
  %b = tile.broadcast %t : tensor<32x1xi32> -> tensor<32x16xi32>
  %i = tile.iota dim 1 : tensor<32x16xi32>
  %r = tile.convert_layout %i {vector = 16 : i64} : tensor<32x16xi32> -> tensor<32x16xi32>
  %e = arith.cmpi eq, %b, %r : tensor<32x16xi32>
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %o = tile.splat %one : i32 -> tensor<32x16xi32>
  %z = tile.splat %zero : i32 -> tensor<32x16xi32>
  %s = arith.select %e, %o, %z : tensor<32x16xi1>, tensor<32x16xi32>
  tile.store %s, %x[%c0, %c0] : tensor<32x16xi32>, memref<?x?xi32>
  return
}
