// RUN: %tilejit-opt %s -tile-assign-layouts=report-vector-width -split-input-file -verify-diagnostics -o /dev/null
// report-vector-width: each kernel's vector width, and the op that
// narrowed it last (here a store to a tensor without an alignment promise,
// which takes every fragment of the kernel down to one element a thread).

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!gu = memref<?x?xbf16, strided<[?, ?], offset: ?>>
// expected-remark @+1 {{vector width 1 element}}
func.func @narrowed(%x: !g {tile.align = 16 : i64}, %y: !gu) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !g -> tensor<8x512xbf16>
  // expected-note @+1 {{narrowed to 1 by this 'tile.store'}}
  tile.store %t, %y[%c0, %c0] : tensor<8x512xbf16>, !gu
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
// 16-byte accesses of bf16: nothing narrows the kernel's first guess by
// more than the element size.
// expected-remark @+1 {{vector width 8 elements}}
func.func @wide(%x: !g {tile.align = 16 : i64}, %y: !g {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{narrowed to 8 by this 'tile.load'}}
  %t = tile.load %x[%c0, %c0] : !g -> tensor<8x512xbf16>
  tile.store %t, %y[%c0, %c0] : tensor<8x512xbf16>, !g
  return
}
