//===- ParameterSources.cpp - where a run's parameters come from ----------===//

#include "partition/runtime/ParameterSources.h"

#include "partition/runtime/DType.h"

using namespace partition::runtime;

Status SafetensorsSource::read(const std::string &name, DType dtype,
                               const std::vector<int64_t> &globalShape,
                               const std::vector<int64_t> &offsets,
                               const std::vector<int64_t> &localShape,
                               void *dst) {
  if (!reader_.contains(name)) {
    std::string names;
    for (const std::string &n : reader_.names())
      names += (names.empty() ? "" : ", ") + n;
    return PARTITION_ERROR(NotFound, reader_.path(), ": parameter \"", name,
                           "\" is missing (the file has: ", names, ")");
  }
  PARTITION_ASSIGN_OR_RETURN(SafetensorsTensorInfo info, reader_.info(name));
  bool converts = info.dtype != dtype && isFloat(info.dtype) && isFloat(dtype);
  if ((info.dtype != dtype && !converts) || info.shape != globalShape)
    return PARTITION_ERROR(
        InvalidArgument, reader_.path(), ": parameter \"", name, "\" is ",
        dtypeName(info.dtype), formatShape(info.shape), " in the file but ",
        dtypeName(dtype), formatShape(globalShape), " in the ", holder_);
  int64_t count = 1;
  for (int64_t d : localShape)
    count *= d;
  if (!converts)
    return reader_.readSlice(name, offsets, localShape, dst,
                             count * dtypeSize(dtype));
  std::vector<char> stored(count * dtypeSize(info.dtype));
  PARTITION_RETURN_IF_ERROR(reader_.readSlice(
      name, offsets, localShape, stored.data(), int64_t(stored.size())));
  convertFloats(stored.data(), info.dtype, dst, dtype, count);
  return Status::ok();
}

float partition::runtime::randomUniform(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return float(x >> 40) / float(1ull << 24);
}

uint64_t partition::runtime::randomKey(uint64_t seed, const std::string &name) {
  uint64_t key = seed * 0x9e3779b97f4a7c15ull;
  for (char c : name) // FNV-1a over the name
    key = (key ^ uint8_t(c)) * 0x100000001b3ull;
  return key;
}

Status RandomSource::read(const std::string &name, DType dtype,
                          const std::vector<int64_t> &globalShape,
                          const std::vector<int64_t> &offsets,
                          const std::vector<int64_t> &localShape, void *dst) {
  if (state_.count(name))
    return PARTITION_ERROR(NotFound, "state \"", name,
                           "\" is not made up by --random-weights");
  if (!isFloat(dtype))
    return PARTITION_ERROR(InvalidArgument, "parameter \"", name, "\" is ",
                           dtypeName(dtype),
                           "; --random-weights makes float parameters only "
                           "(give a weights file)");
  uint64_t key = randomKey(seed_, name);
  int64_t n = 1;
  for (int64_t d : localShape)
    n *= d;
  size_t rank = localShape.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d)
      flat = flat * globalShape[d] + offsets[d] + index[d];
    float value = (randomUniform(key + uint64_t(flat)) * 2 - 1) * scale_;
    storeFloat(dst, dtype, i, value);
    for (size_t d = rank; d-- > 0;) // next local index, row-major
      if (++index[d] < localShape[d])
        break;
      else
        index[d] = 0;
  }
  return Status::ok();
}
