//===- Sharding.h - where a rank's shard sits in a global tensor -*- C++
//-*-===//
//
// The runtime's view of a plan sharding: mesh coordinates of a device, the
// offsets of its block in the global tensor, and copying blocks between a
// global host array and a local one.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_SHARDING_H
#define PARTITION_RUNTIME_SHARDING_H

#include "partition/runtime/Status.h"
#include "partition/runtime/plan/plan_generated.h"

#include <cstdint>
#include <vector>

namespace partition::runtime {

/// Mesh coordinates of the device at row-major position `device`
/// (deviceCoordinates of DeviceGroups.h over the mesh's axis sizes).
std::vector<int64_t> meshCoordinates(const plan::Mesh &mesh, int64_t device);

/// Row-major position of the device at `coordinates`.
int64_t meshDevice(const plan::Mesh &mesh,
                   const std::vector<int64_t> &coordinates);

/// Offset, per dimension, of the block of the device at `coordinates` for a
/// tensor with local shape `localShape` sharded by `sharding`: its group
/// index over the dimension's axes times the local size.
std::vector<int64_t> shardOffsets(const plan::Mesh &mesh,
                                  const plan::Sharding &sharding,
                                  const std::vector<int64_t> &coordinates,
                                  const std::vector<int64_t> &localShape);

/// True when the device at `coordinates` is the one that contributes its
/// block to the assembled global value: coordinate 0 along every axis the
/// value is replicated over (axes that neither split it nor are unreduced).
bool isAssemblingDevice(const plan::Mesh &mesh, const plan::Sharding &sharding,
                        const std::vector<int64_t> &coordinates);

/// The part of a block at `offsets` with shape `localShape` that lies inside
/// a tensor of shape `globalShape`: the block itself, except where the
/// tensor was padded to split it evenly (the last blocks of a dimension
/// the shards do not divide); a dimension of size 0 where the block is all
/// padding.
std::vector<int64_t> clippedShape(const std::vector<int64_t> &globalShape,
                                  const std::vector<int64_t> &offsets,
                                  const std::vector<int64_t> &localShape);

/// Copies the block at `offsets` with shape `localShape` out of the global
/// row-major array `global` (shape `globalShape`) into `local`. Only the
/// part inside the global array (clippedShape) is copied; the rest of
/// `local` is left as it is.
void extractBlock(const void *global, const std::vector<int64_t> &globalShape,
                  void *local, const std::vector<int64_t> &localShape,
                  const std::vector<int64_t> &offsets, int64_t elementSize);

/// Writes `local` into the block at `offsets` of `global`: the part of it
/// inside the global array (clippedShape).
void insertBlock(void *global, const std::vector<int64_t> &globalShape,
                 const void *local, const std::vector<int64_t> &localShape,
                 const std::vector<int64_t> &offsets, int64_t elementSize);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_SHARDING_H
