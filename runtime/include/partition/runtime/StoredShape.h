//===- StoredShape.h - a parameter viewed in another shape ------*- C++ -*-===//
//
// A parameter the program views in a shape other than the one weights files
// store (a fused [in, 3 n] projection viewed as [in, 3, n]): the elements
// are the same, in the same row-major order, and each view dimension is part
// of one stored dimension. The file may also hold the tensor transposed (a
// Linear's weight is [out, in] in torch, [in, out] in the program): the
// view then reshapes transpose(stored, permutation). One definition for the
// compiler (which checks `part.stored_shape` and `part.stored_permutation`)
// and the runtime (which reads a view block from a file in the stored
// layout). Header-only: no runtime library needed.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_STOREDSHAPE_H
#define PARTITION_RUNTIME_STOREDSHAPE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace partition::runtime {

/// For each dimension of `view`, the dimension of `stored` it is part of,
/// when consecutive dimensions of `view` multiply to each dimension of
/// `stored` in order (a view dimension of size 1 may join either
/// neighbour); nullopt otherwise. Sizes must be at least 1.
inline std::optional<std::vector<size_t>>
viewGroups(const std::vector<int64_t> &view,
           const std::vector<int64_t> &stored) {
  std::vector<size_t> group(view.size());
  size_t v = 0;
  for (size_t s = 0; s < stored.size(); ++s) {
    if (stored[s] < 1)
      return std::nullopt;
    int64_t product = 1;
    bool any = false;
    while (v < view.size() && (!any || product < stored[s])) {
      if (view[v] < 1 || product > stored[s] / view[v])
        return std::nullopt;
      product *= view[v];
      group[v++] = s;
      any = true;
    }
    if (!any || product != stored[s])
      return std::nullopt;
  }
  // Trailing view dimensions of size 1 belong to the last stored one.
  for (; v < view.size(); ++v) {
    if (view[v] != 1 || stored.empty())
      return std::nullopt;
    group[v] = stored.size() - 1;
  }
  return group;
}

/// The pieces of the stored tensor that make up the block at `offsets` of
/// shape `block` of its view: each piece is a block of the stored tensor
/// (`storedOffsets`, `storedShape`) that lands at `blockOffsets` of the
/// view block, where it spans a block with the leading dimensions of each
/// group 1 (the same elements). `groups` is viewGroups(view, stored).
struct StoredPiece {
  std::vector<int64_t> storedOffsets, storedShape;
  std::vector<int64_t> blockOffsets, blockShape;
};

inline std::vector<StoredPiece>
storedPieces(const std::vector<int64_t> &view,
             const std::vector<int64_t> &stored,
             const std::vector<size_t> &groups,
             const std::vector<int64_t> &offsets,
             const std::vector<int64_t> &block) {
  size_t rank = view.size();
  // The last view dimension of each group is contiguous in the stored one;
  // the others are iterated, one piece per index combination.
  std::vector<bool> last(rank, false);
  for (size_t d = 0; d < rank; ++d)
    last[d] = d + 1 == rank || groups[d + 1] != groups[d];
  std::vector<int64_t> stride(rank, 1); // within its group
  for (size_t d = rank; d-- > 0;)
    if (!last[d])
      stride[d] = stride[d + 1] * view[d + 1];
  std::vector<StoredPiece> pieces;
  for (int64_t d : block)
    if (d == 0)
      return pieces;
  std::vector<int64_t> index(rank, 0); // over the leading dimensions
  while (true) {
    StoredPiece p;
    p.storedOffsets.assign(stored.size(), 0);
    p.storedShape.assign(stored.size(), 1);
    p.blockOffsets.assign(rank, 0);
    p.blockShape.assign(rank, 1);
    for (size_t d = 0; d < rank; ++d) {
      size_t s = groups[d];
      if (last[d]) {
        p.storedOffsets[s] += offsets[d];
        p.storedShape[s] = block[d];
        p.blockShape[d] = block[d];
      } else {
        p.storedOffsets[s] += (offsets[d] + index[d]) * stride[d];
        p.blockOffsets[d] = index[d];
      }
    }
    pieces.push_back(std::move(p));
    size_t d = rank;
    while (d-- > 0) {
      if (last[d])
        continue;
      if (++index[d] < block[d])
        break;
      index[d] = 0;
    }
    if (d == size_t(-1))
      return pieces;
  }
}

/// Whether `perm` holds each of 0 .. rank - 1 once.
inline bool isPermutation(const std::vector<int64_t> &perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || size_t(p) >= rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// The shape of transpose(x, perm) for x of `shape`: shape[perm[i]] at i.
/// `perm` empty is the identity. `perm` must be a permutation of `shape`'s
/// rank (isPermutation).
inline std::vector<int64_t> permuteShape(const std::vector<int64_t> &shape,
                                         const std::vector<int64_t> &perm) {
  if (perm.empty())
    return shape;
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    out[i] = shape[perm[i]];
  return out;
}

/// The permutation that undoes `perm`: transpose(transpose(x, perm),
/// inversePermutation(perm)) is x.
inline std::vector<int64_t>
inversePermutation(const std::vector<int64_t> &perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = int64_t(i);
  return inverse;
}

/// The block of the stored tensor that holds the block at `offsets` of
/// shape `shape` of transpose(stored, perm): the same ranges, dimension
/// perm[i] of the stored tensor taking dimension i's.
inline void unpermuteBlock(const std::vector<int64_t> &perm,
                           const std::vector<int64_t> &offsets,
                           const std::vector<int64_t> &shape,
                           std::vector<int64_t> &storedOffsets,
                           std::vector<int64_t> &storedShape) {
  storedOffsets.assign(perm.size(), 0);
  storedShape.assign(perm.size(), 1);
  for (size_t i = 0; i < perm.size(); ++i) {
    storedOffsets[perm[i]] = offsets[i];
    storedShape[perm[i]] = shape[i];
  }
}

/// Writes transpose(src, perm) to `dst`, both row-major: `src` has shape
/// `srcShape`, `dst` permuteShape(srcShape, perm); elements of
/// `elementBytes` bytes.
inline void transposeCopy(const void *src, const std::vector<int64_t> &srcShape,
                          const std::vector<int64_t> &perm, void *dst,
                          size_t elementBytes) {
  size_t rank = srcShape.size();
  int64_t count = 1;
  for (int64_t d : srcShape)
    count *= d;
  if (count == 0)
    return;
  // The stride in `src` of each dimension of `dst`.
  std::vector<int64_t> srcStride(rank, 1), stride(rank);
  for (size_t d = rank; d-- > 1;)
    srcStride[d - 1] = srcStride[d] * srcShape[d];
  std::vector<int64_t> shape = permuteShape(srcShape, perm);
  for (size_t i = 0; i < rank; ++i)
    stride[i] = srcStride[perm[i]];
  std::vector<int64_t> index(rank, 0);
  const char *in = static_cast<const char *>(src);
  char *out = static_cast<char *>(dst);
  int64_t at = 0; // offset in `src` of `index`
  for (int64_t e = 0; e < count; ++e) {
    std::memcpy(out + e * elementBytes, in + at * elementBytes, elementBytes);
    for (size_t d = rank; d-- > 0;) {
      at += stride[d];
      if (++index[d] < shape[d])
        break;
      at -= stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

/// A whole tensor the program views (row-major `view`, of elementBytes-byte
/// elements) laid out as weights files store it, in shape `stored`: the
/// same bytes when `perm` is empty, else transposed back by `perm`'s
/// inverse.
inline std::vector<char> toStoredOrder(const std::vector<char> &view,
                                       const std::vector<int64_t> &stored,
                                       const std::vector<int64_t> &perm,
                                       size_t elementBytes) {
  if (perm.empty())
    return view;
  std::vector<char> out(view.size());
  transposeCopy(view.data(), permuteShape(stored, perm),
                inversePermutation(perm), out.data(), elementBytes);
  return out;
}

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_STOREDSHAPE_H
