//===- Checkpoint.h - training checkpoints: shards and manifest -*- C++ -*-===//
//
// A checkpoint is a directory: one safetensors file per rank,
// rank-<r>.safetensors, holding that rank's block of every persistent
// Parameter and State value under the binding's name, and manifest.json,
// written last, saying for each tensor its dtype, global shape and which
// block of it each rank file holds (replicated copies are all listed), plus
// the plan's meshes and the number of completed steps. Since version 2 the
// manifest also records each rank file's size and checksum (FNV-1a, 64
// bits), checked when the file is first opened for loading.
//
// Reading needs no plan: a requested block (offsets and shape in the global
// tensor) is assembled from whichever blocks of the manifest intersect it,
// so a checkpoint written under one partitioning loads under another.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CHECKPOINT_H
#define PARTITION_RUNTIME_CHECKPOINT_H

#include "partition/runtime/Executor.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Safetensors.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace partition::runtime {

/// Version of manifest.json this runtime reads and writes. Version 1 had no
/// file sizes and checksums, so its rank files cannot be verified: it is
/// refused (scripts/upgrade-checkpoint.py records the sizes and checksums of
/// rank files the user vouches for).
constexpr int64_t kCheckpointVersion = 2;

/// The most steps, and the most batches of a stream, a manifest records:
/// 2^53, which every JSON reader holds exactly, and far from overflow when
/// a run adds its steps.
constexpr int64_t kMaxCheckpointSteps = int64_t(1) << 53;

/// Bounds on what a manifest describes: ranks (as the plan loader allows)
/// and a tensor's dimensions and elements.
constexpr int64_t kMaxCheckpointRanks = int64_t(1) << 20;
constexpr int64_t kMaxCheckpointElements = int64_t(1) << 50;

/// What the manifest records of one rank file, to detect a torn or changed
/// file on load.
struct CheckpointFile {
  uint64_t bytes = 0;
  /// fnv1a64 of the whole file.
  uint64_t checksum = 0;
};

/// The file a rank writes its blocks to: "rank-<rank>.safetensors".
std::string checkpointFileName(int rank);

/// One rank file's block of a tensor.
struct CheckpointBlock {
  /// File name inside the checkpoint directory.
  std::string file;
  /// The world rank that wrote it.
  int rank = 0;
  /// Position and extent of the block in the global tensor.
  std::vector<int64_t> offsets, shape;
};

/// One persistent value of the checkpoint.
struct CheckpointTensor {
  std::string name;
  /// "parameter" or "state".
  std::string role;
  DType dtype = DType::F32;
  /// Global shape.
  std::vector<int64_t> shape;
  std::vector<CheckpointBlock> blocks;
};

/// A mesh of the plan that wrote the checkpoint (for the reader's
/// information: loading does not depend on it).
struct CheckpointMesh {
  std::string name;
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;
  std::vector<int> ranks;
};

/// The contents of manifest.json.
struct CheckpointManifest {
  /// Steps completed by the runs that led to this checkpoint.
  int64_t steps = 0;
  /// The batch stream that fed the runs (BatchSource::describe), or empty
  /// when their inputs were fixed ("data" is then left out of the JSON).
  std::string dataSource;
  /// Batches of that stream consumed (one per step): where a resumed run
  /// continues the stream.
  int64_t dataPosition = 0;
  std::vector<CheckpointMesh> meshes;
  /// Sorted by name.
  std::vector<CheckpointTensor> tensors;
  /// Size and checksum of each rank file, by file name.
  std::map<std::string, CheckpointFile> files;

  /// The tensor called `name`, or null.
  const CheckpointTensor *find(const std::string &name) const;
  /// manifest.json's text.
  std::string toJson() const;
  /// Parses manifest.json's text; `source` names it in errors. Checks the
  /// format, the version, the counts (kMaxCheckpointSteps), the meshes
  /// (named axes, sizes whose product is the number of distinct ranks),
  /// that every block lies inside its tensor and names its own rank's file
  /// (checkpointFileName) of a rank of some mesh, and that every such file
  /// has its size and checksum and every file listed is a mesh rank's.
  static StatusOr<CheckpointManifest> parse(const std::string &json,
                                            const std::string &source);
  /// Reads and parses DIR/manifest.json.
  static StatusOr<CheckpointManifest> read(const std::string &dir);
  /// Writes DIR/manifest.json atomically (a temporary file, fsync, rename,
  /// fsync of DIR).
  Status write(const std::string &dir) const;
};

/// Checks that a run of `steps` more steps resumed from `manifest` keeps
/// its step count and data position within kMaxCheckpointSteps, so that
/// every checkpoint it writes reads back.
Status checkResumable(const CheckpointManifest &manifest, int64_t steps);

/// The directory of the periodic checkpoint after `steps` steps:
/// "DIR/step-<steps>".
std::string periodicCheckpointDir(const std::string &dir, int64_t steps);

/// The checkpoint that `dir` names: `dir` itself when it holds
/// manifest.json, else its subdirectory step-<N> with the largest N whose
/// manifest reads (the latest whole periodic checkpoint); otherwise the error
/// of CheckpointManifest::read(dir). A newer step-<N> whose manifest exists
/// but does not read (torn, or edited) is passed over, and a line naming it,
/// its error and the step used instead is added to `warnings`.
StatusOr<std::string>
findCheckpoint(const std::string &dir,
               std::vector<std::string> *warnings = nullptr);

/// Removes what interrupted checkpoint writes left in `dir`: "*.tmp" files in
/// `dir` and in its step-<N> folders with N <= `upToStep`, and step-<N>
/// folders with N < `upToStep` that have no manifest.json (never whole). A
/// writer calls it once the checkpoint after `upToStep` steps is whole, so
/// nothing another rank is still writing is touched. Returns the paths it
/// removed.
std::vector<std::string> removeCheckpointLeftovers(const std::string &dir,
                                                   int64_t upToStep);

/// The manifest of a checkpoint of `plan` after `steps` steps: every
/// Parameter and State binding of every program, with the block each rank
/// of the program's mesh holds. A persistent value that is a pending sum
/// (unreduced axes) is an error.
StatusOr<CheckpointManifest> describeCheckpoint(const plan::Plan &plan,
                                                int64_t steps);

/// Writes `executor`'s blocks of every Parameter and State value to
/// DIR/rank-<rank>.safetensors atomically, creating DIR when needed; returns
/// the file's size and checksum for the manifest.
StatusOr<CheckpointFile> writeCheckpointShard(const std::string &dir,
                                              Executor &executor, int rank);

/// One copy that assembling a requested block takes from a checkpoint block.
struct BlockPiece {
  /// Index into CheckpointTensor::blocks.
  size_t block = 0;
  /// Where the piece starts inside that block, and inside the request.
  std::vector<int64_t> blockOffsets, requestOffsets;
  /// The piece's extent.
  std::vector<int64_t> shape;
};

/// The copies that assemble the block of `tensor` at `offsets` with shape
/// `shape` from the checkpoint's blocks. Identical blocks (replicated copies)
/// are used once; distinct blocks must not overlap, and together they must
/// cover the request: otherwise an error naming the tensor and the numbers.
StatusOr<std::vector<BlockPiece>>
assembleBlock(const CheckpointTensor &tensor,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &shape);

/// Parameters and optimizer state from a checkpoint directory, reassembled
/// for whatever block a rank asks for. A tensor the checkpoint lacks is an
/// error (InvalidArgument, so that state is not silently zeroed).
class CheckpointSource final : public ParameterSource {
public:
  /// Checkpoints hold each tensor in the program's view (global_shape).
  bool readsStoredShapes() const override { return false; }
  CheckpointSource(std::string dir, std::shared_ptr<const CheckpointManifest>);

  Status read(const std::string &name, DType dtype,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override;

private:
  StatusOr<const SafetensorsReader *> reader(const std::string &file);

  std::string dir_;
  std::shared_ptr<const CheckpointManifest> manifest_;
  std::map<std::string, std::unique_ptr<SafetensorsReader>> readers_;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_CHECKPOINT_H
