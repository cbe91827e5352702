//===- DeviceGroups.h - device numbering and groups on a mesh ---*- C++ -*-===//
//
// The numbering the compiler and the runtime share: which device of a mesh
// has which coordinates, and which index a device has in the group of a
// collective over some of the mesh's axes. The compiler lays out shards and
// permute pairs by these numbers (part dialect) and the runtime cuts weights,
// forms communicators and answers axis_index by them, so both use this one
// definition. Plain C++ (no MLIR, no FlatBuffers): the functions are
// templates over any indexable sequence of integers (std::vector,
// llvm::ArrayRef, flatbuffers::Vector).
//
// Conventions:
//  - devices of a mesh are numbered row-major over its axes (the last axis
//    varies fastest);
//  - the group over `axes` of a device is every device whose coordinates
//    equal its own off `axes`; members are numbered row-major over `axes` in
//    the order listed (the first listed axis is the most significant), which
//    is also the order of the blocks a tensor split over those axes is cut
//    into.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_DEVICEGROUPS_H
#define PARTITION_RUNTIME_DEVICEGROUPS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace partition::runtime {

/// Coordinates of device `device` of a mesh with axis sizes `axisSizes`
/// (0 <= device < the product of the sizes).
template <typename Sizes>
std::vector<int64_t> deviceCoordinates(const Sizes &axisSizes, int64_t device) {
  size_t n = axisSizes.size();
  std::vector<int64_t> coordinates(n);
  for (size_t i = n; i-- > 0;) {
    int64_t size = static_cast<int64_t>(axisSizes[i]);
    coordinates[i] = device % size;
    device /= size;
  }
  return coordinates;
}

/// The device at `coordinates` (one per axis) of a mesh with `axisSizes`.
template <typename Sizes, typename Coordinates>
int64_t deviceIndex(const Sizes &axisSizes, const Coordinates &coordinates) {
  int64_t device = 0;
  for (size_t i = 0; i < axisSizes.size(); ++i)
    device = device * static_cast<int64_t>(axisSizes[i]) +
             static_cast<int64_t>(coordinates[i]);
  return device;
}

/// The number of devices in a group over `axes` (indices into `axisSizes`).
template <typename Sizes, typename Axes>
int64_t groupSize(const Sizes &axisSizes, const Axes &axes) {
  int64_t size = 1;
  for (auto axis : axes)
    size *= static_cast<int64_t>(axisSizes[axis]);
  return size;
}

/// The index of the device at `coordinates` in its group over `axes`.
template <typename Sizes, typename Coordinates, typename Axes>
int64_t groupIndex(const Sizes &axisSizes, const Coordinates &coordinates,
                   const Axes &axes) {
  int64_t index = 0;
  for (auto axis : axes)
    index = index * static_cast<int64_t>(axisSizes[axis]) +
            static_cast<int64_t>(coordinates[axis]);
  return index;
}

/// The coordinates of member `index` of the group over `axes` that holds the
/// device at `coordinates` (the inverse of groupIndex).
template <typename Sizes, typename Coordinates, typename Axes>
std::vector<int64_t> groupMemberCoordinates(const Sizes &axisSizes,
                                            const Coordinates &coordinates,
                                            const Axes &axes, int64_t index) {
  std::vector<int64_t> member(coordinates.begin(), coordinates.end());
  std::vector<size_t> order;
  for (auto axis : axes)
    order.push_back(static_cast<size_t>(axis));
  for (size_t i = order.size(); i-- > 0;) {
    int64_t size = static_cast<int64_t>(axisSizes[order[i]]);
    member[order[i]] = index % size;
    index /= size;
  }
  return member;
}

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_DEVICEGROUPS_H
