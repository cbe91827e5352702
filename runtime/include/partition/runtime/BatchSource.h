//===- BatchSource.h - the batches a training run reads ---------*- C++ -*-===//
//
// A training run feeds every input and label binding a new value each step:
// batch k of a stream, k = 0, 1, 2, ... counted over the whole run, resumed
// runs included. A BatchSource hands out any block of any batch, so each
// rank reads only its own slice (a data-parallel rank its rows of the
// batch), and what a rank gets depends on the global position of its block
// only: any partitioning of the same plan sees the same batches.
//
// Two sources:
// - a safetensors file holding, per binding name, an array [S, ...global
//   shape] of S batches; batch k is entry k mod S (the file is read in
//   order, again and again: shuffle when writing it);
// - a synthetic stream, every element a fixed function of (seed, name,
//   batch, global index): floats uniform in [-1, 1), integers uniform in
//   [0, range) (a vocabulary size: it cannot be read from the binding).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_BATCHSOURCE_H
#define PARTITION_RUNTIME_BATCHSOURCE_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Safetensors.h"
#include "partition/runtime/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace partition::runtime {

/// What a plan's input or label binding takes each step.
struct BatchSpec {
  /// The binding's name.
  std::string name;
  DType dtype = DType::F32;
  /// The binding's global shape (one batch).
  std::vector<int64_t> shape;
};

/// Where the batch of every step comes from.
class BatchSource {
public:
  virtual ~BatchSource() = default;
  /// The source in messages and checkpoint manifests: the file's path, or
  /// "synthetic SEED".
  virtual std::string describe() const = 0;
  /// Checks that the source can feed every binding of `specs`: an error
  /// names the source, the array and both types. Call once before read.
  virtual Status check(const std::vector<BatchSpec> &specs) = 0;
  /// Fills `dst` (row-major, dense) with the block at `offsets` of shape
  /// `localShape` of `spec`'s value in batch `batch` (>= 0) of the stream.
  /// Thread-safe after check: the ranks of a process share one source.
  virtual Status read(const BatchSpec &spec, int64_t batch,
                      const std::vector<int64_t> &offsets,
                      const std::vector<int64_t> &localShape,
                      void *dst) const = 0;
};

/// Batches from a safetensors file: array NAME of shape [S, ...shape] for
/// each binding NAME, the same S for every array; batch k is entry k mod S.
/// Only the requested block's bytes are read.
class SafetensorsBatches final : public BatchSource {
public:
  /// Opens `path` and validates its header.
  static StatusOr<std::unique_ptr<SafetensorsBatches>>
  open(const std::string &path);

  std::string describe() const override { return reader_.path(); }
  Status check(const std::vector<BatchSpec> &specs) override;
  Status read(const BatchSpec &spec, int64_t batch,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) const override;

  /// S, the number of batches the file holds (0 before check).
  int64_t numBatches() const { return numBatches_; }

private:
  explicit SafetensorsBatches(SafetensorsReader reader)
      : reader_(std::move(reader)) {}

  SafetensorsReader reader_;
  int64_t numBatches_ = 0;
};

/// A deterministic stream of random batches: element i (row-major, in the
/// global value) of binding NAME in batch k is a function of (seed, NAME,
/// k, i) only. Floats are uniform in [-1, 1); integers uniform in
/// [0, `integerRange`), and an integer binding with `integerRange` 0 is an
/// error of check.
class SyntheticBatches final : public BatchSource {
public:
  SyntheticBatches(uint64_t seed, int64_t integerRange)
      : seed_(seed), integerRange_(integerRange) {}

  std::string describe() const override;
  Status check(const std::vector<BatchSpec> &specs) override;
  Status read(const BatchSpec &spec, int64_t batch,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) const override;

private:
  uint64_t seed_;
  int64_t integerRange_;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_BATCHSOURCE_H
