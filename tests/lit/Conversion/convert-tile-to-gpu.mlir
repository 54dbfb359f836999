// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// A 4x64 fragment over 128 threads: 2 slots per thread; slot s of thread t
// is element s*128 + t, at row (s*128+t) / 64, column (s*128+t) % 64.

// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @tilejit_kernels
// CHECK: gpu.func @k(%[[X:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[O:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[S:.*]]: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[BID:.*]] = gpu.block_id x
// Is the whole 4x64 tile inside? Rows: bid < dim 0 and bid + 4 <= dim 0;
// columns likewise; the same answer for every thread.
// CHECK: %[[D0:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: %[[END:.*]] = arith.addi %[[BID]], %c4
// CHECK: arith.cmpi ule, %[[END]], %[[D0]]
// CHECK: arith.cmpi ult, %[[BID]], %[[D0]]
// CHECK: arith.constant 64 : index
// CHECK: arith.andi
// Then both slots load with no check.
// CHECK: %[[V:.*]] = scf.if %{{.*}} -> (vector<2xf32>) {
// CHECK-NOT: scf.if
// CHECK:   memref.load %[[X]]
// CHECK-NOT: scf.if
// CHECK:   memref.load %[[X]]
// CHECK-NOT: scf.if
// CHECK:   scf.yield %{{.*}} : vector<2xf32>
// CHECK: } else {
// Else slot 0: bounds check on both dimensions, zero outside.
// CHECK: arith.divui
// CHECK: memref.dim %[[X]]
// CHECK: arith.cmpi ult
// CHECK: arith.remui
// CHECK: arith.andi
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK:   memref.load %[[X]]
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : f32
// Slot 1 is 128 elements further.
// CHECK: arith.constant 128 : index
// CHECK: scf.if
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[S]] : f32 to vector<2xf32>
// CHECK: %[[R:.*]] = arith.mulf %[[V]], %[[SPLAT]] : vector<2xf32>
// The store asks the same of the output's tile.
// CHECK: memref.dim %[[O]]
// CHECK: arith.andi
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: scf.if
// CHECK:   vector.extract %[[R]][0]
// CHECK:   memref.store %{{.*}}, %[[O]]
// CHECK-NOT: scf.if
// CHECK:   vector.extract %[[R]][1]
// CHECK:   memref.store %{{.*}}, %[[O]]
// CHECK: } else {
// CHECK:   vector.extract %[[R]][0]
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}}, %[[O]]
// CHECK:   vector.extract %[[R]][1]
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}}, %[[O]]
// CHECK: gpu.return
// CHECK-NOT: func.func
func.func @k(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>,
             %out: memref<?x?xf32, strided<[?, ?], offset: ?>>,
             %scale: f32) attributes {tile.threads = 128 : i32} {
  %bx = tile.block_id 0
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%bx, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<4x64xf32>
  %s = tile.splat %scale : f32 -> tensor<4x64xf32>
  %r = arith.mulf %t, %s : tensor<4x64xf32>
  tile.store %r, %out[%bx, %c0] : tensor<4x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

// in_bounds: no bounds checks, no scf.if.
// CHECK-LABEL: gpu.func @promised
// CHECK-NOT: scf.if
// CHECK-NOT: memref.dim
// CHECK: arith.constant dense<2.000000e+00> : vector<1xf32>
// CHECK: gpu.return
func.func @promised(%x: memref<?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] {in_bounds} : memref<?xf32> -> tensor<32xf32>
  %two = arith.constant dense<2.0> : tensor<32xf32>
  %r = arith.addf %t, %two : tensor<32xf32>
  tile.store %r, %x[%c0] {in_bounds} : tensor<32xf32>, memref<?xf32>
  return
}

// -----

// Unit inner stride and 16-byte aligned rows: 4-element vectors, one
// 16-byte load or store per chunk, element by element only at the edges.
// CHECK-LABEL: gpu.func @vectorized
// CHECK-NOT: tile.align
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK:   vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK: } else {
// CHECK:   memref.load
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
func.func @vectorized(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                      %out: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64})
    attributes {tile.threads = 128 : i32} {
  %bx = tile.block_id 0
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%bx, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<8x128xf32>
  tile.store %t, %out[%bx, %c0] : tensor<8x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// One tensor without the promise: every access stays scalar (one layout per
// kernel).
// CHECK-LABEL: gpu.func @mixed
// CHECK-NOT: vector.load
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @mixed(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                 %out: memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<8x128xf32>
  tile.store %t, %out[%c0, %c0] : tensor<8x128xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// -----

// A transpose owns a padded shared buffer: stores, one barrier, loads in the
// transposed order.
// CHECK-LABEL: gpu.func @transpose
// CHECK-SAME: workgroup(%[[BUF:.*]] : memref<32x33xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: memref.store %{{.*}}, %[[BUF]][%{{.*}}, %{{.*}}] : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %[[BUF]][%{{.*}}, %{{.*}}] : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: tile.transpose
func.func @transpose(%x: memref<?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x32xf32>
  %u = tile.transpose %t : tensor<32x32xf32> -> tensor<32x32xf32>
  tile.store %u, %x[%c0, %c0] : tensor<32x32xf32>, memref<?x?xf32>
  return
}

// -----

// One-byte elements move a word at a time: the four threads of four
// consecutive rows exchange words (three idx shuffles), transpose 4x4-byte
// blocks with byte permutes, store words into swizzled rows of i32, and the
// result is read back in 16-byte vectors.
// CHECK-LABEL: gpu.func @transpose_bytes
// CHECK-SAME: workgroup(%[[BUF:.*]] : memref<64x16xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-3: gpu.shuffle  idx
// CHECK: nvvm.prmt
// CHECK: memref.store %{{.*}}, %[[BUF]][%{{.*}}, %{{.*}}] : memref<64x16xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.load %[[BUF]][%{{.*}}, %{{.*}}] : memref<64x16xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK-NOT: tile.transpose
func.func @transpose_bytes(%x: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> -> tensor<64x64xf8E4M3FN>
  %u = tile.transpose %t : tensor<64x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  tile.store %u, %x[%c0, %c0] : tensor<64x64xf8E4M3FN>, memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
  return
}

// -----

// Chunks of 8 bytes (from a bf16 load) hold half the 4x4 blocks a group
// needs: each thread merges two chunks (rows 32 apart) and the group still
// moves whole words: per merged pair three shuffles and four word stores;
// the result is read in 8-byte vectors.
// CHECK-LABEL: gpu.func @transpose_bytes_merged
// CHECK-SAME: workgroup(%[[BUF:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-2: vector.shuffle %{{.*}} [{{[0-9]+}}, {{[0-9, ]+}}] : vector<32xf8E4M3FN>
// CHECK-COUNT-3: gpu.shuffle  idx
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BUF]][%{{.*}}, %{{.*}}] : memref<64x32xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: gpu.shuffle  idx
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BUF]][%{{.*}}, %{{.*}}] : memref<64x32xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[BUF]][%{{.*}}, %{{.*}}] : memref<64x32xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK-NOT: memref.load %[[BUF]]
// CHECK-NOT: tile.transpose
func.func @transpose_bytes_merged(%x: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<128x64xbf16>
  %e = arith.truncf %t : tensor<128x64xbf16> to tensor<128x64xf8E4M3FN>
  %u = tile.transpose %e : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
  tile.store %u, %o[%c0, %c0] : tensor<64x128xf8E4M3FN>, memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
  return
}

// -----

// The author's shared tile becomes a 16-byte-aligned workgroup buffer;
// fragments move to and from it in 16-byte vectors, around a barrier.
// CHECK-LABEL: gpu.func @through_shared
// CHECK-SAME: workgroup(%[[TILE:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.store %{{.*}}, %[[TILE]][%{{.*}}, %{{.*}}] {{.*}}: memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: vector.load %[[TILE]][%{{.*}}, %{{.*}}] {{.*}}: memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: tile.alloc_shared
func.func @through_shared(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %s = tile.alloc_shared : memref<16x64xf32, #gpu.address_space<workgroup>>
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x64xf32>
  tile.store %t, %s[%c0, %c0] : tensor<16x64xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %u = tile.load %s[%c0, %c32] : memref<16x64xf32, #gpu.address_space<workgroup>> -> tensor<16x32xf32>
  tile.store %u, %x[%c0, %c0] : tensor<16x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// The author's chunks of 8 f32 from a tensor promising 16-byte rows: each
// chunk is one vector<8xf32> access aligned to 16 bytes (two 16-byte
// instructions in PTX), not to its 32 bytes; a promise of 8 bytes, 8.
!ga = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @wide_chunks
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
func.func @wide_chunks(%x: !ga {tile.align = 16 : i64}, %y: !ga {tile.align = 8 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] {in_bounds} : !ga -> tensor<16x64xf32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<16x64xf32> -> tensor<16x64xf32>
  tile.store %r, %y[%c0, %c0] {in_bounds} : tensor<16x64xf32>, !ga
  return
}
