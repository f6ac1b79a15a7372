//===- ConstantTranspose.cpp - Constants transposed at compile time -------===//
//
// transposeBytes and transposeConstant (Packing.h): the elements of a dense
// or dense_resource constant permuted, as mlir-rl-pack-rhs packs a constant
// right-hand side into panels at compile time.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace mlir::rl {

std::vector<char> transposeBytes(ArrayRef<char> in, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> perm, size_t bytes) {
  int64_t rank = shape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * shape[d + 1];
  SmallVector<int64_t> outShape, strides;
  for (int64_t d = 0; d < rank; ++d) {
    outShape.push_back(shape[perm[d]]);
    strides.push_back(inStrides[perm[d]]);
  }
  std::vector<char> out(in.size());
  SmallVector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (size_t o = 0, e = in.size() / bytes; o < e; ++o) {
    std::memcpy(out.data() + o * bytes, in.data() + offset * bytes, bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < outShape[d])
        break;
      offset -= strides[d] * outShape[d];
      idx[d] = 0;
    }
  }
  return out;
}

/// `value` (dense or dense_resource elements) rebuilt as an attribute of
/// `outType` from the bytes `rebuild` makes of its raw data, a splat resized
/// as it is; a resource gets the input's key with `keySuffix`. Null where
/// `value` is neither or `rebuild` gives nothing.
static TypedAttr
rebuildConstant(Attribute value, RankedTensorType outType, StringRef keySuffix,
                function_ref<std::optional<std::vector<char>>(ArrayRef<char>)>
                    rebuild) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return dense.resizeSplat(outType);
    std::optional<std::vector<char>> out = rebuild(dense.getRawData());
    if (!out)
      return {};
    return DenseElementsAttr::getFromRawBuffer(outType, *out);
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    DenseResourceElementsHandle handle = resource.getRawHandle();
    AsmResourceBlob *blob = handle.getBlob();
    if (!blob)
      return {};
    std::optional<std::vector<char>> out = rebuild(blob->getData());
    if (!out)
      return {};
    // At least the new elements' alignment (an extension widens them).
    size_t align = std::max<size_t>(
        blob->getDataAlignment(),
        std::max<size_t>(1, outType.getElementTypeBitWidth() / 8));
    return DenseResourceElementsAttr::get(
        outType, (handle.getKey() + keySuffix).str(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(*out, align,
                                                      /*dataIsMutable=*/false));
  }
  return {};
}

TypedAttr transposeConstant(Attribute value, ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> perm, RankedTensorType outType,
                            StringRef keySuffix) {
  Type elt = outType.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  size_t bytes = elt.getIntOrFloatBitWidth() / 8;
  size_t total = (size_t)outType.getNumElements() * bytes;
  if (total > (size_t(256) << 20))
    return {};
  return rebuildConstant(
      value, outType, keySuffix,
      [&](ArrayRef<char> raw) -> std::optional<std::vector<char>> {
        if (raw.size() != total)
          return std::nullopt;
        return transposeBytes(raw, shape, perm, bytes);
      });
}

TypedAttr sliceConstant(Attribute value, int64_t offset,
                        RankedTensorType outType, StringRef keySuffix) {
  Type elt = outType.getElementType();
  auto typed = dyn_cast<TypedAttr>(value);
  auto shaped = typed ? dyn_cast<ShapedType>(typed.getType()) : ShapedType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0 ||
      offset < 0 || !shaped || shaped.getElementType() != elt)
    return {};
  size_t bytes = elt.getIntOrFloatBitWidth() / 8;
  size_t size = (size_t)outType.getNumElements() * bytes;
  size_t start = (size_t)offset * bytes;
  return rebuildConstant(
      value, outType, keySuffix,
      [&](ArrayRef<char> raw) -> std::optional<std::vector<char>> {
        if (start + size > raw.size())
          return std::nullopt;
        ArrayRef<char> part = raw.slice(start, size);
        return std::vector<char>(part.begin(), part.end());
      });
}

/// The f32 bits of the f16 value of bits `h` (exact).
static uint32_t halfToFloatBits(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0x1F)
    return sign | 0x7F800000 | (mant << 13);
  if (exp != 0)
    return sign | ((exp + 112) << 23) | (mant << 13);
  if (mant == 0)
    return sign;
  // A subnormal f16 is a normal f32.
  int32_t e = 113;
  while (!(mant & 0x400)) {
    mant <<= 1;
    --e;
  }
  return sign | (uint32_t(e) << 23) | ((mant & 0x3FF) << 13);
}

TypedAttr extendConstant(Attribute value, RankedTensorType outType,
                         StringRef keySuffix) {
  auto typed = dyn_cast<TypedAttr>(value);
  auto shaped = typed ? dyn_cast<ShapedType>(typed.getType()) : ShapedType();
  if (!shaped || !outType.getElementType().isF32() ||
      shaped.getShape() != outType.getShape())
    return {};
  Type from = shaped.getElementType();
  bool bf16 = from.isBF16();
  if (!bf16 && !from.isF16())
    return {};
  size_t n = outType.getNumElements();
  if (n * 4 > (size_t(256) << 20))
    return {};
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat()) {
    bool lost;
    APFloat v = dense.getSplatValue<APFloat>();
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    return DenseElementsAttr::get(outType, v);
  }
  auto extend = [&](ArrayRef<char> raw) -> std::optional<std::vector<char>> {
    if (raw.size() != n * 2)
      return std::nullopt;
    std::vector<char> out(n * 4);
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      uint32_t f = bf16 ? uint32_t(h) << 16 : halfToFloatBits(h);
      std::memcpy(out.data() + 4 * i, &f, 4);
    }
    return out;
  };
  return rebuildConstant(value, outType, keySuffix, extend);
}

} // namespace mlir::rl
