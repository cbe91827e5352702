//===- Sharding.cpp - shard offsets and block copies ----------------------===//

#include "partition/runtime/Sharding.h"
#include "partition/runtime/DeviceGroups.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace partition::runtime;
namespace plan = partition::plan;

std::vector<int64_t> partition::runtime::meshCoordinates(const plan::Mesh &mesh,
                                                         int64_t device) {
  return deviceCoordinates(*mesh.axis_sizes(), device);
}

int64_t
partition::runtime::meshDevice(const plan::Mesh &mesh,
                               const std::vector<int64_t> &coordinates) {
  return deviceIndex(*mesh.axis_sizes(), coordinates);
}

std::vector<int64_t>
partition::runtime::shardOffsets(const plan::Mesh &mesh,
                                 const plan::Sharding &sharding,
                                 const std::vector<int64_t> &coordinates,
                                 const std::vector<int64_t> &localShape) {
  // A dimension split over some axes is cut into one block per member of
  // the group over those axes; a device holds the block at its group index.
  std::vector<int64_t> offsets;
  for (size_t d = 0; d < localShape.size(); ++d)
    offsets.push_back(groupIndex(*mesh.axis_sizes(), coordinates,
                                 *sharding.dims()->Get(d)->axes()) *
                      localShape[d]);
  return offsets;
}

bool partition::runtime::isAssemblingDevice(
    const plan::Mesh &mesh, const plan::Sharding &sharding,
    const std::vector<int64_t> &coordinates) {
  (void)mesh; // Coordinates already follow the mesh's axes.
  std::set<uint32_t> used;
  for (const plan::DimSharding *dim : *sharding.dims())
    for (uint32_t axis : *dim->axes())
      used.insert(axis);
  if (sharding.unreduced())
    for (uint32_t axis : *sharding.unreduced())
      used.insert(axis);
  for (size_t axis = 0; axis < coordinates.size(); ++axis)
    if (!used.count(axis) && coordinates[axis] != 0)
      return false;
  return true;
}

std::vector<int64_t>
partition::runtime::clippedShape(const std::vector<int64_t> &globalShape,
                                 const std::vector<int64_t> &offsets,
                                 const std::vector<int64_t> &localShape) {
  std::vector<int64_t> shape(localShape.size());
  for (size_t d = 0; d < localShape.size(); ++d)
    shape[d] = std::max<int64_t>(
        0, std::min(localShape[d], globalShape[d] - offsets[d]));
  return shape;
}

namespace {
/// Visits every contiguous innermost row of the part of a block inside the
/// global array, calling fn(globalElementOffset, localElementOffset,
/// rowElements).
template <typename Fn>
void forEachRow(const std::vector<int64_t> &globalShape,
                const std::vector<int64_t> &localShape,
                const std::vector<int64_t> &offsets, Fn fn) {
  size_t rank = localShape.size();
  if (rank == 0) {
    fn(0, 0, 1);
    return;
  }
  std::vector<int64_t> extent = clippedShape(globalShape, offsets, localShape);
  for (int64_t d : extent)
    if (d == 0)
      return;
  std::vector<int64_t> globalStride(rank, 1), localStride(rank, 1);
  for (size_t i = rank - 1; i-- > 0;) {
    globalStride[i] = globalStride[i + 1] * globalShape[i + 1];
    localStride[i] = localStride[i + 1] * localShape[i + 1];
  }
  int64_t row = extent[rank - 1];
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t globalOffset = 0, localOffset = 0;
    for (size_t i = 0; i < rank; ++i) {
      globalOffset += (offsets[i] + index[i]) * globalStride[i];
      localOffset += index[i] * localStride[i];
    }
    fn(globalOffset, localOffset, row);
    // Advance the outer indices (all but the last).
    size_t i = rank - 1;
    while (i-- > 0) {
      if (++index[i] < extent[i])
        break;
      index[i] = 0;
    }
    if (i == size_t(-1))
      return;
  }
}
} // namespace

void partition::runtime::extractBlock(const void *global,
                                      const std::vector<int64_t> &globalShape,
                                      void *local,
                                      const std::vector<int64_t> &localShape,
                                      const std::vector<int64_t> &offsets,
                                      int64_t elementSize) {
  const char *src = static_cast<const char *>(global);
  char *dst = static_cast<char *>(local);
  forEachRow(globalShape, localShape, offsets,
             [&](int64_t g, int64_t l, int64_t n) {
               std::memcpy(dst + l * elementSize, src + g * elementSize,
                           n * elementSize);
             });
}

void partition::runtime::insertBlock(void *global,
                                     const std::vector<int64_t> &globalShape,
                                     const void *local,
                                     const std::vector<int64_t> &localShape,
                                     const std::vector<int64_t> &offsets,
                                     int64_t elementSize) {
  char *dst = static_cast<char *>(global);
  const char *src = static_cast<const char *>(local);
  forEachRow(globalShape, localShape, offsets,
             [&](int64_t g, int64_t l, int64_t n) {
               std::memcpy(dst + g * elementSize, src + l * elementSize,
                           n * elementSize);
             });
}
