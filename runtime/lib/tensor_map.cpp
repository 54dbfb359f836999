// tensor_map.cpp - cuTensorMapEncodeTiled for 2-D row-major tiles.
#include "tilejit/runtime/tensor_map.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

namespace tilejit::rt {

static CUtensorMapDataType tma_dtype(DType dtype, const char *name) {
  switch (dtype) {
  case DType::bf16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::f16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::f32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::e4m3:
  case DType::e5m2:
  case DType::u8:
  case DType::i8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  default:
    throw UserError(fmt::format("tensor map for '{}': dtype {} is not "
                                "supported by TMA here",
                                name, name_of(dtype)));
  }
}

CUtensorMap encode_tensor_map_2d(const TensorView &t, const char *name,
                                 uint32_t box_rows, uint32_t box_cols,
                                 bool swizzle_128b) {
  const uint64_t elt = size_of(t.dtype);
  if (t.rank != 2 || (t.shape[1] > 1 && t.strides[1] != 1))
    throw UserError(fmt::format("tensor map for '{}': {} must be 2-D with "
                                "unit inner stride",
                                name, t.to_string()));
  if (t.data % 16 != 0 || (t.strides[0] * elt) % 16 != 0)
    throw UserError(fmt::format("tensor map for '{}': base {:#x} and row "
                                "stride {} bytes must be multiples of 16",
                                name, t.data, t.strides[0] * elt));
  if (box_rows < 1 || box_rows > 256 || box_cols < 1 || box_cols > 256 ||
      (swizzle_128b && box_cols * elt > 128))
    throw UserError(fmt::format("tensor map for '{}': box {} x {} is not "
                                "encodable",
                                name, box_rows, box_cols));
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(t.shape[1]),
                              static_cast<cuuint64_t>(t.shape[0])};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(t.strides[0]) * elt};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CUresult r = driver().cuTensorMapEncodeTiled(
      &map, tma_dtype(t.dtype, name), 2, reinterpret_cast<void *>(t.data), dims,
      strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle_128b ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DriverError(fmt::format("cuTensorMapEncodeTiled for '{}' ({}, box "
                                  "{} x {}) failed with CUresult {}",
                                  name, t.to_string(), box_rows, box_cols,
                                  static_cast<int>(r)));
  return map;
}

} // namespace tilejit::rt
