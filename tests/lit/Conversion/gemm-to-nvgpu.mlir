// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -split-input-file -verify-diagnostics | FileCheck %s
// A pipelined copy + gemm main loop becomes a warp-specialised TMA + WGMMA
// kernel (programs it does not handle: gemm-to-nvgpu-invalid.mlir).

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>

// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[LOOP:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK: gpu.module @tilejit_kernels
// CHECK: llvm.func @gemm(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}
// CHECK-SAME: "arg blocks grid i64 0 0", "persistent"
// CHECK-SAME: tilejit.shared_bytes = 197632 : i64
// Persistent: the producer and the consumers walk the tiles from the block
// id in strides of the grid; the author's block id along x is the tile.
// CHECK: %[[FIRST:.*]] = gpu.block_id  x
// CHECK: %[[STRIDE:.*]] = gpu.grid_dim  x
// CHECK: nvgpu.mbarrier.create
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %[[STRIDE]] iter_args
// CHECK: gpu.block_id  y
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// The K tile's four wgmma instructions are one asm statement, and the main
// loop's back edge asks LLVM not to unroll or peel it.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async.sync
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: cf.br ^{{.*}} {loop_annotation = #[[LOOP]]}
// Once every group has retired, the stage of the tile's last K tile is
// released for the producer's next tile.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.arrive
// CHECK: llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xbf16>
// The stores are masked at the M and N edges.
// CHECK: scf.if
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.store
// CHECK-NOT: func.func @gemm
func.func @gemm(%a: !g, %b: !g, %c: !g) attributes {tile.threads = 384 : i32} {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %bx = tile.block_id 0
  %by = tile.block_id 1
  %m0 = arith.muli %by, %c128 : index
  %n0 = arith.muli %bx, %c256 : index
  %k = memref.dim %a, %c1 : !g
  %k63 = arith.addi %k, %c63 : index
  %steps = arith.divui %k63, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %steps, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%m0, %k0], %sa : !g, !sa
    tile.copy %b[%n0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x256xbf16>
  tile.store %o, %c[%m0, %n0] : tensor<128x256xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>

// A store promised inside C (whole tiles only) is not masked.
// CHECK-LABEL: llvm.func @gemm_whole_tiles
// CHECK: llvm.fptrunc
// CHECK-NOT: scf.if
// CHECK: llvm.store
// CHECK-NOT: scf.if
// CHECK: llvm.return
func.func @gemm_whole_tiles(%a: !g, %b: !g, %c: !g) attributes {tile.threads = 384 : i32} {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %bx = tile.block_id 0
  %by = tile.block_id 1
  %m0 = arith.muli %by, %c128 : index
  %n0 = arith.muli %bx, %c256 : index
  %k = memref.dim %a, %c1 : !g
  %k63 = arith.addi %k, %c63 : index
  %steps = arith.divui %k63, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %steps, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%m0, %k0], %sa : !g, !sa
    tile.copy %b[%n0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x256xbf16>
  tile.store %o, %c[%m0, %n0] {in_bounds} : tensor<128x256xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>

// A C whose rows the author declared 16-byte aligned is stored through
// TMA: each consumer fills its 64 x 128 buffer (after the previous stores
// have read it), fences it for the async proxy and meets its warpgroup on
// its named barrier, and one thread stores two 64 x 64 boxes; the block
// waits for its last stores before it exits. C arrives as a tensor map.
// CHECK-LABEL: llvm.func @gemm_tma_store(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %[[MAP:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}
// CHECK-SAME: "arg tensor_map ? bf16 2 64 64"
// CHECK-SAME: tilejit.shared_bytes = 230400 : i64
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: llvm.store %{{.*}} !llvm.ptr<1>
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK: llvm.return
func.func @gemm_tma_store(%a: !g, %b: !g, %c: !g {tile.align = 16 : i64}) attributes {tile.threads = 384 : i32} {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %bx = tile.block_id 0
  %m0 = arith.muli %bx, %c128 : index
  %n0 = arith.constant 0 : index
  %k = memref.dim %a, %c1 : !g
  %k63 = arith.addi %k, %c63 : index
  %steps = arith.divui %k63, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %steps, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%m0, %k0], %sa : !g, !sa
    tile.copy %b[%n0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x256xbf16>
  tile.store %o, %c[%m0, %n0] : tensor<128x256xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<96x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x96xf32>

// 96 columns do not fill the store buffers in whole 64-column boxes: an
// aligned C goes out through st.global.
// CHECK-LABEL: llvm.func @gemm_96_columns_aligned(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias}
// CHECK-SAME: "arg pointer ? bf16 2"
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: llvm.return
func.func @gemm_96_columns_aligned(%a: !g, %b: !g, %c: !g {tile.align = 16 : i64}) attributes {tile.threads = 384 : i32} {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = tile.block_id 0
  %m0 = arith.muli %bx, %c128 : index
  %n0 = arith.constant 0 : index
  %k = memref.dim %a, %c1 : !g
  %k63 = arith.addi %k, %c63 : index
  %steps = arith.divui %k63, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %steps, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%m0, %k0], %sa : !g, !sa
    tile.copy %b[%n0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x96xbf16>
  tile.store %o, %c[%m0, %n0] : tensor<128x96xbf16>, !g
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<128x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x128xf32>

// Seven stages of 128 x 128 leave no room for the store buffers (7 x 32768
// + 32768 + 1024 > 232448): an aligned C goes out through st.global.
// CHECK-LABEL: llvm.func @gemm_seven_stages_aligned(
// CHECK-SAME: "arg pointer ? bf16 2"
// CHECK-SAME: tilejit.shared_bytes = 230400 : i64
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: llvm.return
func.func @gemm_seven_stages_aligned(%a: !g, %b: !g, %c: !g {tile.align = 16 : i64}) attributes {tile.threads = 384 : i32} {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = tile.block_id 0
  %m0 = arith.muli %bx, %c128 : index
  %n0 = arith.constant 0 : index
  %k = memref.dim %a, %c1 : !g
  %k63 = arith.addi %k, %c63 : index
  %steps = arith.divui %k63, %c64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %steps, %init {stages = 7 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%m0, %k0], %sa : !g, !sa
    tile.copy %b[%n0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x128xbf16>
  tile.store %o, %c[%m0, %n0] : tensor<128x128xbf16>, !g
  return
}

