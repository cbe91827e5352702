//===- ParameterSources.h - where a run's parameters come from ---*- C++ -*-===//
//
// The parameter sources partition-run and partition-check share: a
// safetensors file (each rank reads the block of every tensor it holds) and
// weights made up from a seed (the same whatever block a rank asks for, so
// that a plan partitioned any way sees the same weights). Checkpoints have
// their own (Checkpoint.h).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_PARAMETERSOURCES_H
#define PARTITION_RUNTIME_PARAMETERSOURCES_H

#include "partition/runtime/Executor.h"
#include "partition/runtime/Safetensors.h"

#include <cstdint>
#include <set>
#include <string>

namespace partition::runtime {

/// Reads each rank's parameter slices from one safetensors file. Float
/// weights load into a parameter of another float type (f32 weights into a
/// bf16 model), rounded to nearest even, as `model.to(torch.bfloat16)`
/// would; any other difference of type or shape is an error naming both
/// (`holder` says what the other side is: "plan", "model").
class SafetensorsSource final : public ParameterSource {
public:
  explicit SafetensorsSource(SafetensorsReader reader,
                             std::string holder = "plan")
      : reader_(std::move(reader)), holder_(std::move(holder)) {}

  Status read(const std::string &name, DType dtype,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override;

private:
  SafetensorsReader reader_;
  std::string holder_;
};

/// Parameters made up from (seed, name, global index), uniform in
/// [-scale, scale): the same whatever block a rank asks for.
///
/// Only parameters are made up: the names in `state` (optimizer state: Adam
/// moments, step counts, a loss scale) are reported missing, so that they
/// start at their initial value (the binding's init_from or init_value,
/// zero by default) as with a weights file. Random moments or step counts
/// make training diverge.
class RandomSource final : public ParameterSource {
public:
  RandomSource(uint64_t seed, float scale, std::set<std::string> state)
      : seed_(seed), scale_(scale), state_(std::move(state)) {}

  Status read(const std::string &name, DType dtype,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override;

private:
  uint64_t seed_;
  float scale_;
  std::set<std::string> state_;
};

/// The generator RandomSource uses, for other values made up the same way
/// (partition-check's inputs): the key of (seed, name), and splitmix64 of a
/// key plus an index as a float in [0, 1).
uint64_t randomKey(uint64_t seed, const std::string &name);
float randomUniform(uint64_t x);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_PARAMETERSOURCES_H
