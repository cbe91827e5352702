//===- BatchSource.cpp - the batches a training run reads -----------------===//

#include "partition/runtime/BatchSource.h"
#include "partition/runtime/Tensor.h"

using namespace partition::runtime;

namespace {

/// "i32[S, 4, 8]": the type a data array needs for `spec`.
std::string batchedType(const BatchSpec &spec) {
  std::string shape = formatShape(spec.shape); // "[4, 8]" or "[]"
  return std::string(dtypeName(spec.dtype)) +
         (spec.shape.empty() ? "[S]" : "[S, " + shape.substr(1));
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// splitmix64's finaliser.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

//===----------------------------------------------------------------------===//
// SafetensorsBatches
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<SafetensorsBatches>>
SafetensorsBatches::open(const std::string &path) {
  PARTITION_ASSIGN_OR_RETURN(SafetensorsReader reader,
                             SafetensorsReader::open(path));
  return std::unique_ptr<SafetensorsBatches>(
      new SafetensorsBatches(std::move(reader)));
}

Status SafetensorsBatches::check(const std::vector<BatchSpec> &specs) {
  const std::string &path = reader_.path();
  std::string first; // the array that set numBatches_
  numBatches_ = 0;
  for (const BatchSpec &spec : specs) {
    if (!reader_.contains(spec.name)) {
      std::string names;
      for (const std::string &n : reader_.names())
        names += (names.empty() ? "" : ", ") + n;
      return PARTITION_ERROR(NotFound, path, ": no array \"", spec.name,
                             "\" for input \"", spec.name, "\" (the file has: ",
                             names.empty() ? "nothing" : names, ")");
    }
    StatusOr<SafetensorsTensorInfo> info = reader_.info(spec.name);
    if (!info.isOk())
      return PARTITION_ERROR(InvalidArgument, path, ": array \"", spec.name,
                             "\" cannot feed input \"", spec.name, "\" of ",
                             batchedType(spec), ": ", info.status().message());
    std::vector<int64_t> tail(
        info->shape.begin() + (info->shape.empty() ? 0 : 1), info->shape.end());
    if (info->dtype != spec.dtype || info->shape.empty() ||
        tail != spec.shape || info->shape[0] < 1)
      return PARTITION_ERROR(
          InvalidArgument, path, ": array \"", spec.name, "\" is ",
          dtypeName(info->dtype), formatShape(info->shape), " but input \"",
          spec.name, "\" takes ", batchedType(spec), ", S >= 1 batches of ",
          dtypeName(spec.dtype), formatShape(spec.shape));
    if (numBatches_ && info->shape[0] != numBatches_)
      return PARTITION_ERROR(
          InvalidArgument, path, ": array \"", spec.name, "\" holds ",
          info->shape[0], " batches but array \"", first, "\" holds ",
          numBatches_, "; every array needs the same number");
    if (!numBatches_) {
      numBatches_ = info->shape[0];
      first = spec.name;
    }
  }
  return Status::ok();
}

Status SafetensorsBatches::read(const BatchSpec &spec, int64_t batch,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &localShape,
                                void *dst) const {
  if (numBatches_ < 1 || batch < 0)
    return PARTITION_ERROR(Internal, reader_.path(), ": batch ", batch,
                           " read before check");
  std::vector<int64_t> at{batch % numBatches_}, sizes{1};
  at.insert(at.end(), offsets.begin(), offsets.end());
  sizes.insert(sizes.end(), localShape.begin(), localShape.end());
  return reader_.readSlice(spec.name, at, sizes, dst,
                           product(localShape) * dtypeSize(spec.dtype));
}

//===----------------------------------------------------------------------===//
// SyntheticBatches
//===----------------------------------------------------------------------===//

std::string SyntheticBatches::describe() const {
  return "synthetic " + std::to_string(seed_);
}

Status SyntheticBatches::check(const std::vector<BatchSpec> &specs) {
  for (const BatchSpec &spec : specs)
    if (!isFloat(spec.dtype) && integerRange_ < 1)
      return PARTITION_ERROR(InvalidArgument, describe(), ": input \"",
                             spec.name, "\" is ", dtypeName(spec.dtype),
                             formatShape(spec.shape),
                             ", and random integers need a range [0, N) "
                             "(a vocabulary size)");
  return Status::ok();
}

Status SyntheticBatches::read(const BatchSpec &spec, int64_t batch,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &localShape,
                              void *dst) const {
  if (!isFloat(spec.dtype) && integerRange_ < 1)
    return PARTITION_ERROR(Internal, describe(), ": input \"", spec.name,
                           "\" needs an integer range");
  // One key per (seed, name, batch); elements hash their global index.
  uint64_t key = mix(seed_);
  for (char c : spec.name) // FNV-1a over the name
    key = (key ^ uint8_t(c)) * 0x100000001b3ull;
  key = mix(key ^ mix(uint64_t(batch)));
  size_t rank = localShape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t n = product(localShape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d)
      flat = flat * spec.shape[d] + offsets[d] + index[d];
    uint64_t bits = mix(key + uint64_t(flat));
    if (isFloat(spec.dtype)) {
      float value = float(bits >> 40) / float(1ull << 24) * 2 - 1;
      storeFloat(dst, spec.dtype, i, value);
    } else {
      int64_t value = int64_t(bits % uint64_t(integerRange_));
      if (spec.dtype == DType::I32)
        static_cast<int32_t *>(dst)[i] = int32_t(value);
      else
        static_cast<int64_t *>(dst)[i] = value;
    }
    for (size_t d = rank; d-- > 0;) // next local index, row-major
      if (++index[d] < localShape[d])
        break;
      else
        index[d] = 0;
  }
  return Status::ok();
}
