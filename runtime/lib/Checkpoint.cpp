//===- Checkpoint.cpp - training checkpoints: shards and manifest ---------===//
//
// manifest.json is small and written by this file only, so it is read with
// a minimal strict JSON parser here (objects, arrays, strings, integers,
// booleans, null) rather than a dependency.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Checkpoint.h"
#include "partition/runtime/Files.h"
#include "partition/runtime/Sharding.h"

#include "FileIO.h"
#include "Json.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace partition::runtime;
namespace plan = partition::plan;

std::string partition::runtime::checkpointFileName(int rank) {
  return "rank-" + std::to_string(rank) + ".safetensors";
}

const CheckpointTensor *
CheckpointManifest::find(const std::string &name) const {
  for (const CheckpointTensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

void appendString(std::string &out, const std::string &s) {
  detail::appendJsonString(out, s);
}

template <typename T>
void appendList(std::string &out, const T &values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  out += ']';
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader sees the old file or the new one, never a partial one.
Status writeAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return detail::ioError(tmp, "cannot create");
  Status s = detail::writeFully(fd, tmp, bytes.data(), bytes.size());
  if (s.isOk() && ::fsync(fd) != 0)
    s = detail::ioError(tmp, "cannot sync");
  ::close(fd);
  if (s.isOk() && std::rename(tmp.c_str(), path.c_str()) != 0)
    s = detail::ioError(path, "cannot rename the temporary file onto");
  if (!s.isOk()) {
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename is durable only once the directory entry is.
  return syncDirectory(std::filesystem::path(path).parent_path().string());
}

std::string hex64(uint64_t x) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", (unsigned long long)x);
  return text;
}

} // namespace

std::string CheckpointManifest::toJson() const {
  std::string out = "{\n  \"format\": \"partition-checkpoint\",\n";
  out += "  \"version\": " + std::to_string(kCheckpointVersion) + ",\n";
  out += "  \"steps\": " + std::to_string(steps) + ",\n";
  if (!dataSource.empty()) {
    out += "  \"data\": {\"source\": ";
    appendString(out, dataSource);
    out += ", \"position\": " + std::to_string(dataPosition) + "},\n";
  }
  out += "  \"meshes\": [";
  for (size_t m = 0; m < meshes.size(); ++m) {
    const CheckpointMesh &mesh = meshes[m];
    out += m ? ",\n    {" : "\n    {";
    out += "\"name\": ";
    appendString(out, mesh.name);
    out += ", \"axis_names\": [";
    for (size_t i = 0; i < mesh.axisNames.size(); ++i) {
      out += i ? ", " : "";
      appendString(out, mesh.axisNames[i]);
    }
    out += "], \"axis_sizes\": ";
    appendList(out, mesh.axisSizes);
    out += ", \"ranks\": ";
    appendList(out, mesh.ranks);
    out += "}";
  }
  out += "\n  ],\n  \"tensors\": {";
  for (size_t t = 0; t < tensors.size(); ++t) {
    const CheckpointTensor &tensor = tensors[t];
    out += t ? ",\n    " : "\n    ";
    appendString(out, tensor.name);
    out += ": {\"role\": ";
    appendString(out, tensor.role);
    out += ", \"dtype\": ";
    appendString(out, safetensorsDTypeName(tensor.dtype));
    out += ", \"shape\": ";
    appendList(out, tensor.shape);
    out += ", \"blocks\": [";
    for (size_t b = 0; b < tensor.blocks.size(); ++b) {
      const CheckpointBlock &block = tensor.blocks[b];
      out += b ? ",\n      {" : "\n      {";
      out += "\"file\": ";
      appendString(out, block.file);
      out += ", \"rank\": " + std::to_string(block.rank) + ", \"offsets\": ";
      appendList(out, block.offsets);
      out += ", \"shape\": ";
      appendList(out, block.shape);
      out += "}";
    }
    out += "]}";
  }
  out += "\n  },\n  \"files\": {";
  bool firstFile = true;
  for (const auto &[name, file] : files) {
    out += firstFile ? "\n    " : ",\n    ";
    firstFile = false;
    appendString(out, name);
    out += ": {\"bytes\": " + std::to_string(file.bytes) + ", \"fnv1a64\": \"" +
           hex64(file.checksum) + "\"}";
  }
  out += "\n  }\n}\n";
  return out;
}

Status CheckpointManifest::write(const std::string &dir) const {
  return writeAtomically(dir + "/manifest.json", toJson());
}

StatusOr<CheckpointManifest>
partition::runtime::describeCheckpoint(const plan::Plan &root, int64_t steps) {
  CheckpointManifest manifest;
  manifest.steps = steps;
  for (const plan::Mesh *mesh : *root.meshes()) {
    CheckpointMesh m;
    m.name = mesh->name()->str();
    for (const auto *name : *mesh->axis_names())
      m.axisNames.push_back(name->str());
    m.axisSizes.assign(mesh->axis_sizes()->begin(), mesh->axis_sizes()->end());
    m.ranks.assign(mesh->ranks()->begin(), mesh->ranks()->end());
    manifest.meshes.push_back(std::move(m));
  }
  std::map<std::string, CheckpointTensor> tensors;
  for (const plan::Program *program : *root.programs()) {
    if (!program->params())
      continue;
    const plan::Mesh &mesh = *root.meshes()->Get(program->mesh());
    for (const plan::Binding *b : *program->params()) {
      if (b->role() != plan::Role::Parameter && b->role() != plan::Role::State)
        continue;
      std::string name = b->name()->str();
      if (b->sharding()->unreduced() && b->sharding()->unreduced()->size())
        return PARTITION_ERROR(InvalidArgument, "persistent value \"", name,
                               "\" is a pending sum over some mesh axes; a "
                               "checkpoint cannot hold it");
      const plan::Value &v = *program->values()->Get(b->value());
      std::vector<int64_t> global(b->global_shape()->begin(),
                                  b->global_shape()->end());
      std::vector<int64_t> local(v.shape()->begin(), v.shape()->end());
      auto [it, fresh] = tensors.try_emplace(name);
      CheckpointTensor &t = it->second;
      if (fresh) {
        t.name = name;
        t.role = b->role() == plan::Role::State ? "state" : "parameter";
        t.dtype = toDType(v.dtype());
        t.shape = global;
      } else if (t.dtype != toDType(v.dtype()) || t.shape != global) {
        return PARTITION_ERROR(InvalidArgument, "persistent value \"", name,
                               "\" has different types in two programs");
      }
      for (uint32_t d = 0; d < mesh.ranks()->size(); ++d) {
        int rank = mesh.ranks()->Get(d);
        CheckpointBlock block;
        block.file = checkpointFileName(rank);
        block.rank = rank;
        block.offsets =
            shardOffsets(mesh, *b->sharding(), meshCoordinates(mesh, d), local);
        // Blocks of a padded tensor hold what lies inside it; a block that
        // is all padding is not written.
        block.shape = clippedShape(global, block.offsets, local);
        if (std::find(block.shape.begin(), block.shape.end(), 0) !=
            block.shape.end())
          continue;
        t.blocks.push_back(std::move(block));
      }
    }
  }
  for (auto &[name, t] : tensors)
    manifest.tensors.push_back(std::move(t));
  return manifest;
}

StatusOr<CheckpointFile>
partition::runtime::writeCheckpointShard(const std::string &dir,
                                         Executor &executor, int rank) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return PARTITION_ERROR(InvalidArgument,
                           "cannot create checkpoint "
                           "directory ",
                           dir, ": ", error.message());
  // A manifest left by an earlier checkpoint would describe a mix of old and
  // new rank files until the new one replaces it: remove it first.
  std::string manifest = dir + "/manifest.json";
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT)
    return detail::ioError(manifest, "cannot remove");
  SafetensorsWriter writer;
  std::vector<HostTensor> kept;
  std::vector<const plan::Binding *> bindings;
  if (const plan::Program *program = executor.program())
    if (program->params())
      for (const plan::Binding *b : *program->params())
        if (b->role() == plan::Role::Parameter ||
            b->role() == plan::Role::State)
          bindings.push_back(b);
  kept.reserve(bindings.size());
  for (const plan::Binding *b : bindings) {
    std::string name = b->name()->str();
    PARTITION_ASSIGN_OR_RETURN(HostTensor t, executor.parameter(name));
    // The part of a padded tensor's block inside it, as the manifest says.
    std::vector<int64_t> global(b->global_shape()->begin(),
                                b->global_shape()->end());
    std::vector<int64_t> offsets = shardOffsets(
        *executor.mesh(), *b->sharding(), executor.coordinates(), t.shape);
    std::vector<int64_t> inside = clippedShape(global, offsets, t.shape);
    if (std::find(inside.begin(), inside.end(), 0) != inside.end())
      continue;
    if (inside != t.shape) {
      int64_t count = 1;
      for (int64_t d : inside)
        count *= d;
      HostTensor clipped{t.dtype, inside,
                         std::vector<char>(count * dtypeSize(t.dtype))};
      extractBlock(t.data.data(), t.shape, clipped.data.data(), inside,
                   std::vector<int64_t>(inside.size(), 0), dtypeSize(t.dtype));
      t = std::move(clipped);
    }
    kept.push_back(std::move(t));
    const HostTensor &h = kept.back();
    PARTITION_RETURN_IF_ERROR(
        writer.add(name, h.dtype, h.shape, h.data.data()));
  }
  PARTITION_ASSIGN_OR_RETURN(std::string bytes, writer.serialize());
  PARTITION_RETURN_IF_ERROR(
      writeAtomically(dir + "/" + checkpointFileName(rank), bytes));
  CheckpointFile file;
  file.bytes = bytes.size();
  file.checksum = fnv1a64(bytes.data(), bytes.size());
  return file;
}

//===----------------------------------------------------------------------===//
// Reading manifest.json
//===----------------------------------------------------------------------===//

namespace {

using Json = detail::JsonValue;

/// Field readers that name the offending field.
class Fields {
public:
  explicit Fields(std::string source) : source_(std::move(source)) {}

  Status error(const std::string &where, const std::string &what) const {
    return PARTITION_ERROR(InvalidArgument, source_, ": ", where, ": ", what);
  }
  StatusOr<const Json *> field(const Json &object, const std::string &key,
                               Json::Kind kind,
                               const std::string &where) const {
    const Json *v = object.get(key);
    static const char *names[] = {"null",     "a boolean", "an integer",
                                  "a string", "an array",  "an object",
                                  "a number"};
    if (!v)
      return error(where, "\"" + key + "\" is missing");
    if (v->kind != kind)
      return error(where, "\"" + key + "\" must be " + names[kind]);
    return v;
  }
  StatusOr<std::vector<int64_t>> ints(const Json &object,
                                      const std::string &key,
                                      const std::string &where) const {
    PARTITION_ASSIGN_OR_RETURN(const Json *v,
                               field(object, key, Json::Array, where));
    std::vector<int64_t> out;
    for (const Json &e : v->array) {
      if (e.kind != Json::Int)
        return error(where, "\"" + key + "\" must hold integers");
      out.push_back(e.integer);
    }
    return out;
  }

private:
  std::string source_;
};

} // namespace

namespace {

/// A count of the manifest ("steps", "position"): in [0, kMaxCheckpointSteps].
StatusOr<int64_t> parseCount(const Fields &f, const Json &object,
                             const std::string &key, const std::string &where) {
  PARTITION_ASSIGN_OR_RETURN(const Json *v,
                             f.field(object, key, Json::Int, where));
  if (v->integer < 0 || v->integer > kMaxCheckpointSteps)
    return f.error(where, "\"" + key + "\" is " + std::to_string(v->integer) +
                              ", not in [0, " +
                              std::to_string(kMaxCheckpointSteps) + "]");
  return v->integer;
}

/// One entry of "meshes": named axes, each of a size in [1, 2^20], whose
/// product is the number of ranks, which are distinct and in [0, 2^20).
StatusOr<CheckpointMesh> parseMesh(const Fields &f, const Json &mj,
                                   const std::string &where) {
  if (mj.kind != Json::Object)
    return f.error(where, "must be an object");
  CheckpointMesh mesh;
  PARTITION_ASSIGN_OR_RETURN(const Json *name,
                             f.field(mj, "name", Json::String, where));
  mesh.name = name->string;
  if (mesh.name.empty())
    return f.error(where, "\"name\" is empty");
  PARTITION_ASSIGN_OR_RETURN(const Json *axes,
                             f.field(mj, "axis_names", Json::Array, where));
  std::set<std::string> seen;
  for (const Json &a : axes->array) {
    if (a.kind != Json::String)
      return f.error(where, "\"axis_names\" must hold strings");
    if (a.string.empty() || !seen.insert(a.string).second)
      return f.error(where,
                     "axis name \"" + a.string + "\" is empty or repeated");
    mesh.axisNames.push_back(a.string);
  }
  PARTITION_ASSIGN_OR_RETURN(mesh.axisSizes, f.ints(mj, "axis_sizes", where));
  if (mesh.axisSizes.size() != mesh.axisNames.size())
    return f.error(where, std::to_string(mesh.axisNames.size()) +
                              " axis names but " +
                              std::to_string(mesh.axisSizes.size()) + " sizes");
  int64_t devices = 1;
  for (int64_t size : mesh.axisSizes) {
    if (size < 1 || size > kMaxCheckpointRanks)
      return f.error(where, "axis size " + std::to_string(size) +
                                " is not in [1, " +
                                std::to_string(kMaxCheckpointRanks) + "]");
    devices *= size; // at most 2^40 after the check below
    if (devices > kMaxCheckpointRanks)
      return f.error(where, "axis sizes " + formatShape(mesh.axisSizes) +
                                " make more than " +
                                std::to_string(kMaxCheckpointRanks) +
                                " devices");
  }
  PARTITION_ASSIGN_OR_RETURN(std::vector<int64_t> ranks,
                             f.ints(mj, "ranks", where));
  if (int64_t(ranks.size()) != devices)
    return f.error(where, "axis sizes " + formatShape(mesh.axisSizes) +
                              " make " + std::to_string(devices) +
                              " devices but " + std::to_string(ranks.size()) +
                              " ranks are listed");
  std::set<int64_t> distinct;
  for (int64_t r : ranks)
    if (r < 0 || r >= kMaxCheckpointRanks || !distinct.insert(r).second)
      return f.error(where, "rank " + std::to_string(r) +
                                " is out of range or repeated");
  mesh.ranks.assign(ranks.begin(), ranks.end());
  return mesh;
}

/// One entry of "tensors": a shape of at most kMaxCheckpointElements
/// elements, and blocks inside it, each naming its own rank's file.
StatusOr<CheckpointTensor> parseTensor(const Fields &f, const std::string &name,
                                       const Json &tj) {
  std::string where = "tensor \"" + name + "\"";
  if (tj.kind != Json::Object)
    return f.error(where, "must be an object");
  CheckpointTensor t;
  t.name = name;
  PARTITION_ASSIGN_OR_RETURN(const Json *role,
                             f.field(tj, "role", Json::String, where));
  t.role = role->string;
  PARTITION_ASSIGN_OR_RETURN(const Json *dtype,
                             f.field(tj, "dtype", Json::String, where));
  std::optional<DType> parsed = parseSafetensorsDType(dtype->string);
  if (!parsed)
    return f.error(where, "unknown dtype \"" + dtype->string + "\"");
  t.dtype = *parsed;
  PARTITION_ASSIGN_OR_RETURN(t.shape, f.ints(tj, "shape", where));
  int64_t elements = 1;
  for (int64_t d : t.shape)
    if (d < 0 || __builtin_mul_overflow(elements, d, &elements) ||
        elements > kMaxCheckpointElements)
      return f.error(where, "shape " + formatShape(t.shape) +
                                " has a negative dimension or more than " +
                                std::to_string(kMaxCheckpointElements) +
                                " elements");
  PARTITION_ASSIGN_OR_RETURN(const Json *blocks,
                             f.field(tj, "blocks", Json::Array, where));
  for (const Json &bj : blocks->array) {
    std::string bwhere = where + ", block " + std::to_string(t.blocks.size());
    if (bj.kind != Json::Object)
      return f.error(bwhere, "must be an object");
    CheckpointBlock b;
    PARTITION_ASSIGN_OR_RETURN(const Json *file,
                               f.field(bj, "file", Json::String, bwhere));
    b.file = file->string;
    if (Status plain = checkFileNameComponent(b.file, "file"); !plain.isOk())
      return f.error(bwhere, plain.message());
    PARTITION_ASSIGN_OR_RETURN(const Json *rank,
                               f.field(bj, "rank", Json::Int, bwhere));
    if (rank->integer < 0 || rank->integer >= kMaxCheckpointRanks)
      return f.error(bwhere, "rank " + std::to_string(rank->integer) +
                                 " is out of range");
    b.rank = int(rank->integer);
    // Each rank reads and writes only its own file: a block that points
    // at another rank's file would load that rank's data.
    if (b.file != checkpointFileName(b.rank))
      return f.error(bwhere, "file \"" + b.file +
                                 "\" is not the file of rank " +
                                 std::to_string(b.rank) + " (\"" +
                                 checkpointFileName(b.rank) + "\")");
    PARTITION_ASSIGN_OR_RETURN(b.offsets, f.ints(bj, "offsets", bwhere));
    PARTITION_ASSIGN_OR_RETURN(b.shape, f.ints(bj, "shape", bwhere));
    if (b.offsets.size() != t.shape.size() || b.shape.size() != t.shape.size())
      return f.error(bwhere, "offsets " + formatShape(b.offsets) +
                                 " and shape " + formatShape(b.shape) +
                                 " must have the rank of the tensor's " +
                                 formatShape(t.shape));
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (b.offsets[d] < 0 || b.shape[d] < 0 ||
          b.offsets[d] > t.shape[d] - b.shape[d])
        return f.error(bwhere, "the block at offsets " +
                                   formatShape(b.offsets) + " with shape " +
                                   formatShape(b.shape) +
                                   " does not lie inside the tensor's " +
                                   formatShape(t.shape));
    t.blocks.push_back(std::move(b));
  }
  return t;
}

/// "files": the size and checksum of each rank file.
Status parseFiles(const Fields &f, const Json &root, CheckpointManifest &m) {
  PARTITION_ASSIGN_OR_RETURN(const Json *files,
                             f.field(root, "files", Json::Object, "manifest"));
  for (const auto &[name, fj] : files->object) {
    std::string where = "file \"" + name + "\"";
    if (Status plain = checkFileNameComponent(name, "file"); !plain.isOk())
      return f.error(where, plain.message());
    if (fj.kind != Json::Object)
      return f.error(where, "must be an object");
    PARTITION_ASSIGN_OR_RETURN(const Json *bytes,
                               f.field(fj, "bytes", Json::Int, where));
    PARTITION_ASSIGN_OR_RETURN(const Json *sum,
                               f.field(fj, "fnv1a64", Json::String, where));
    if (bytes->integer < 0)
      return f.error(where, "\"bytes\" is negative");
    CheckpointFile file;
    file.bytes = uint64_t(bytes->integer);
    char *end = nullptr;
    errno = 0;
    file.checksum = std::strtoull(sum->string.c_str(), &end, 16);
    if (sum->string.size() != 16 || errno || *end)
      return f.error(where, "\"fnv1a64\" is \"" + sum->string +
                                "\", not 16 hexadecimal digits");
    if (!m.files.emplace(name, file).second)
      return f.error(where, "is listed twice");
  }
  return Status::ok();
}

/// The meshes, the blocks and the files agree: every block's rank is a rank
/// of a mesh and its file has a size and checksum; every file listed is the
/// file of a mesh's rank.
Status checkRanksAndFiles(const Fields &f, const CheckpointManifest &m) {
  std::set<int64_t> ranks;
  std::set<std::string> names;
  for (const CheckpointMesh &mesh : m.meshes) {
    if (!names.insert(mesh.name).second)
      return f.error("mesh \"" + mesh.name + "\"", "is listed twice");
    ranks.insert(mesh.ranks.begin(), mesh.ranks.end());
  }
  for (const CheckpointTensor &t : m.tensors)
    for (const CheckpointBlock &b : t.blocks) {
      if (!ranks.count(b.rank))
        return f.error("tensor \"" + t.name + "\"", "a block of rank " +
                                                        std::to_string(b.rank) +
                                                        ", which no mesh has");
      if (!m.files.count(b.file))
        return f.error("tensor \"" + t.name + "\"",
                       "file \"" + b.file +
                           "\" has no size and checksum under \"files\"");
    }
  std::set<std::string> rankFiles;
  for (int64_t r : ranks)
    rankFiles.insert(checkpointFileName(int(r)));
  for (const auto &entry : m.files)
    if (!rankFiles.count(entry.first))
      return f.error("file \"" + entry.first + "\"",
                     "is not the file of a rank of the manifest's meshes");
  return Status::ok();
}

} // namespace

StatusOr<CheckpointManifest>
CheckpointManifest::parse(const std::string &json, const std::string &source) {
  Json root;
  std::string error;
  if (!detail::parseJson(json, root, error))
    return PARTITION_ERROR(InvalidArgument, source, ": not valid JSON: ", error);
  Fields f(source);
  if (root.kind != Json::Object)
    return f.error("manifest", "must be a JSON object");
  PARTITION_ASSIGN_OR_RETURN(const Json *format,
                             f.field(root, "format", Json::String, "manifest"));
  if (format->string != "partition-checkpoint")
    return f.error("manifest", "\"format\" is \"" + format->string +
                                   "\", expected \"partition-checkpoint\"");
  PARTITION_ASSIGN_OR_RETURN(const Json *version,
                             f.field(root, "version", Json::Int, "manifest"));
  if (version->integer == 1)
    return f.error("manifest",
                   "version 1 records no size or checksum of the rank files, "
                   "so they cannot be verified; if you trust them, record "
                   "them with scripts/upgrade-checkpoint.py");
  if (version->integer != kCheckpointVersion)
    return f.error("manifest", "version " + std::to_string(version->integer) +
                                   " is not the version this runtime reads (" +
                                   std::to_string(kCheckpointVersion) + ")");
  CheckpointManifest m;
  PARTITION_ASSIGN_OR_RETURN(m.steps, parseCount(f, root, "steps", "manifest"));
  if (const Json *data = root.get("data")) {
    if (data->kind != Json::Object)
      return f.error("manifest", "\"data\" must be an object");
    PARTITION_ASSIGN_OR_RETURN(const Json *source,
                               f.field(*data, "source", Json::String, "data"));
    PARTITION_ASSIGN_OR_RETURN(m.dataPosition,
                               parseCount(f, *data, "position", "data"));
    m.dataSource = source->string;
  }
  PARTITION_ASSIGN_OR_RETURN(const Json *meshes,
                             f.field(root, "meshes", Json::Array, "manifest"));
  for (const Json &mj : meshes->array) {
    PARTITION_ASSIGN_OR_RETURN(
        CheckpointMesh mesh,
        parseMesh(f, mj, "mesh " + std::to_string(m.meshes.size())));
    m.meshes.push_back(std::move(mesh));
  }
  PARTITION_ASSIGN_OR_RETURN(
      const Json *tensors, f.field(root, "tensors", Json::Object, "manifest"));
  for (const auto &[name, tj] : tensors->object) {
    if (m.find(name))
      return f.error("tensor \"" + name + "\"", "is listed twice");
    PARTITION_ASSIGN_OR_RETURN(CheckpointTensor t, parseTensor(f, name, tj));
    m.tensors.push_back(std::move(t));
  }
  std::sort(m.tensors.begin(), m.tensors.end(),
            [](const CheckpointTensor &a, const CheckpointTensor &b) {
              return a.name < b.name;
            });
  PARTITION_RETURN_IF_ERROR(parseFiles(f, root, m));
  PARTITION_RETURN_IF_ERROR(checkRanksAndFiles(f, m));
  return m;
}

Status partition::runtime::checkResumable(const CheckpointManifest &manifest,
                                          int64_t steps) {
  // Both are at most 2^53 after parse; `steps` is the run's own count.
  if (steps < 0 || steps > kMaxCheckpointSteps - manifest.steps ||
      steps > kMaxCheckpointSteps - manifest.dataPosition)
    return PARTITION_ERROR(
        InvalidArgument, steps, " more steps after the checkpoint's ",
        manifest.steps, " steps (data position ", manifest.dataPosition,
        ") would pass the most a checkpoint records (", kMaxCheckpointSteps,
        ")");
  return Status::ok();
}

StatusOr<CheckpointManifest> CheckpointManifest::read(const std::string &dir) {
  std::string path = dir + "/manifest.json";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return PARTITION_ERROR(NotFound, "checkpoint ", dir, " is not a directory");
  StatusOr<RegularFile> file = RegularFile::open(path, "checkpoint manifest");
  if (!file.isOk()) {
    if (file.status().code() == StatusCode::NotFound)
      return PARTITION_ERROR(NotFound, "checkpoint ", dir,
                             " has no manifest.json (it is not a checkpoint, "
                             "or its writing did not finish)");
    return file.status();
  }
  PARTITION_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                             file->readAll(uint64_t(1) << 30));
  return parse(std::string(bytes.begin(), bytes.end()), path);
}

std::string partition::runtime::periodicCheckpointDir(const std::string &dir,
                                                      int64_t steps) {
  return dir + "/step-" + std::to_string(steps);
}

namespace {

/// N of a folder named "step-<N>", or -1.
int64_t stepOfName(const std::string &name) {
  if (name.size() <= 5 || name.compare(0, 5, "step-") != 0 ||
      name.find_first_not_of("0123456789", 5) != std::string::npos ||
      name.size() > 5 + 18)
    return -1;
  return std::stoll(name.substr(5));
}

} // namespace

StatusOr<std::string>
partition::runtime::findCheckpoint(const std::string &dir,
                                   std::vector<std::string> *warnings) {
  struct stat st;
  if (::stat((dir + "/manifest.json").c_str(), &st) == 0)
    return dir;
  // The latest whole periodic checkpoint: a step-<N> directory whose writing
  // finished (it has its manifest, and the manifest reads), with the largest
  // N.
  std::vector<int64_t> steps;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error)) {
    int64_t step = stepOfName(entry.path().filename().string());
    if (step >= 0 &&
        ::stat((entry.path().string() + "/manifest.json").c_str(), &st) == 0)
      steps.push_back(step);
  }
  std::sort(steps.rbegin(), steps.rend());
  std::vector<std::pair<std::string, Status>> passed;
  for (int64_t step : steps) {
    std::string candidate = periodicCheckpointDir(dir, step);
    StatusOr<CheckpointManifest> manifest = CheckpointManifest::read(candidate);
    if (!manifest.isOk()) {
      passed.emplace_back(candidate, manifest.status());
      continue;
    }
    if (warnings)
      for (const auto &[bad, why] : passed)
        warnings->push_back("checkpoint " + bad + " is not usable (" +
                            why.message() + "); using " + candidate +
                            " instead");
    return candidate;
  }
  if (!passed.empty())
    return passed.front().second;
  StatusOr<CheckpointManifest> manifest = CheckpointManifest::read(dir);
  if (!manifest.isOk())
    return manifest.status();
  return dir; // written meanwhile
}

std::vector<std::string>
partition::runtime::removeCheckpointLeftovers(const std::string &dir,
                                              int64_t upToStep) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  auto removeTmp = [&](const fs::path &folder) {
    std::error_code error;
    for (const auto &entry : fs::directory_iterator(folder, error)) {
      std::string name = entry.path().filename().string();
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 &&
          entry.is_regular_file(error) && fs::remove(entry.path(), error))
        removed.push_back(entry.path().string());
    }
  };
  removeTmp(dir);
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(dir, error)) {
    int64_t step = stepOfName(entry.path().filename().string());
    if (step < 0 || step > upToStep || !entry.is_directory(error))
      continue;
    if (step < upToStep && !fs::exists(entry.path() / "manifest.json", error)) {
      std::error_code ignored;
      if (fs::remove_all(entry.path(), ignored) != uintmax_t(-1) && !ignored)
        removed.push_back(entry.path().string());
      continue;
    }
    removeTmp(entry.path());
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

//===----------------------------------------------------------------------===//
// Assembling blocks
//===----------------------------------------------------------------------===//

StatusOr<std::vector<BlockPiece>>
partition::runtime::assembleBlock(const CheckpointTensor &tensor,
                                  const std::vector<int64_t> &offsets,
                                  const std::vector<int64_t> &shape) {
  size_t rank = tensor.shape.size();
  if (offsets.size() != rank || shape.size() != rank)
    return PARTITION_ERROR(InvalidArgument, "tensor \"", tensor.name,
                           "\": the requested block has rank ", shape.size(),
                           ", the tensor ", rank);
  int64_t wanted = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (offsets[d] < 0 || shape[d] < 0 ||
        offsets[d] > tensor.shape[d] - shape[d])
      return PARTITION_ERROR(InvalidArgument, "tensor \"", tensor.name,
                             "\": the requested block at offsets ",
                             formatShape(offsets), " with shape ",
                             formatShape(shape), " lies outside its ",
                             formatShape(tensor.shape));
    wanted *= shape[d];
  }
  std::vector<BlockPiece> pieces;
  if (wanted == 0)
    return pieces;
  // Distinct blocks, each taken once (replicated copies are identical).
  std::vector<size_t> distinct;
  std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> seen;
  for (size_t i = 0; i < tensor.blocks.size(); ++i) {
    const CheckpointBlock &b = tensor.blocks[i];
    if (seen.insert({b.offsets, b.shape}).second)
      distinct.push_back(i);
  }
  // Distinct blocks must not overlap, so that counting the elements copied
  // proves the request is covered.
  auto overlap = [&](const CheckpointBlock &a, const CheckpointBlock &b) {
    for (size_t d = 0; d < rank; ++d)
      if (std::max(a.offsets[d], b.offsets[d]) >=
          std::min(a.offsets[d] + a.shape[d], b.offsets[d] + b.shape[d]))
        return false;
    return true;
  };
  for (size_t i = 0; i < distinct.size(); ++i)
    for (size_t j = i + 1; j < distinct.size(); ++j) {
      const CheckpointBlock &a = tensor.blocks[distinct[i]];
      const CheckpointBlock &b = tensor.blocks[distinct[j]];
      if (overlap(a, b))
        return PARTITION_ERROR(
            InvalidArgument, "tensor \"", tensor.name, "\": the block at ",
            formatShape(a.offsets), " with shape ", formatShape(a.shape), " (",
            a.file, ") overlaps the block at ", formatShape(b.offsets),
            " with shape ", formatShape(b.shape), " (", b.file,
            ") without being the same block");
    }
  int64_t covered = 0;
  for (size_t i : distinct) {
    const CheckpointBlock &b = tensor.blocks[i];
    BlockPiece piece;
    piece.block = i;
    int64_t elements = 1;
    for (size_t d = 0; d < rank; ++d) {
      int64_t lo = std::max(b.offsets[d], offsets[d]);
      int64_t hi = std::min(b.offsets[d] + b.shape[d], offsets[d] + shape[d]);
      elements *= std::max<int64_t>(hi - lo, 0);
      piece.blockOffsets.push_back(lo - b.offsets[d]);
      piece.requestOffsets.push_back(lo - offsets[d]);
      piece.shape.push_back(hi - lo);
    }
    if (elements <= 0)
      continue;
    covered += elements;
    pieces.push_back(std::move(piece));
    if (covered == wanted)
      break;
  }
  if (covered != wanted)
    return PARTITION_ERROR(
        InvalidArgument, "tensor \"", tensor.name,
        "\": the checkpoint's blocks cover ", covered, " of the ", wanted,
        " elements of the block at offsets ", formatShape(offsets),
        " with shape ", formatShape(shape));
  return pieces;
}

//===----------------------------------------------------------------------===//
// CheckpointSource
//===----------------------------------------------------------------------===//

CheckpointSource::CheckpointSource(
    std::string dir, std::shared_ptr<const CheckpointManifest> manifest)
    : dir_(std::move(dir)), manifest_(std::move(manifest)) {}

StatusOr<const SafetensorsReader *>
CheckpointSource::reader(const std::string &file) {
  auto it = readers_.find(file);
  if (it != readers_.end())
    return it->second.get();
  std::string path = dir_ + "/" + file;
  auto recorded = manifest_->files.find(file);
  if (recorded != manifest_->files.end()) {
    // The size first (cheap), then the checksum of the whole file.
    PARTITION_ASSIGN_OR_RETURN(RegularFile opened,
                               RegularFile::open(path, "checkpoint file"));
    if (opened.size() != recorded->second.bytes)
      return PARTITION_ERROR(InvalidArgument, path, ": ", opened.size(),
                             " bytes, but the manifest records ",
                             recorded->second.bytes,
                             " (the file was cut or replaced)");
    PARTITION_ASSIGN_OR_RETURN(uint64_t sum, fileChecksum(path));
    if (sum != recorded->second.checksum)
      return PARTITION_ERROR(InvalidArgument, path, ": checksum ", hex64(sum),
                             ", but the manifest records ",
                             hex64(recorded->second.checksum),
                             " (the file is corrupted or was replaced)");
  }
  PARTITION_ASSIGN_OR_RETURN(SafetensorsReader r,
                             SafetensorsReader::open(path));
  auto owned = std::make_unique<SafetensorsReader>(std::move(r));
  const SafetensorsReader *raw = owned.get();
  readers_[file] = std::move(owned);
  return raw;
}

Status CheckpointSource::read(const std::string &name, DType dtype,
                              const std::vector<int64_t> &globalShape,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &localShape,
                              void *dst) {
  const CheckpointTensor *t = manifest_->find(name);
  if (!t) {
    std::string names;
    for (const CheckpointTensor &c : manifest_->tensors)
      names += (names.empty() ? "" : ", ") + c.name;
    return PARTITION_ERROR(InvalidArgument, "checkpoint ", dir_, ": tensor \"",
                           name, "\" is missing (the checkpoint has: ", names,
                           ")");
  }
  if (t->dtype != dtype || t->shape != globalShape)
    return PARTITION_ERROR(
        InvalidArgument, "checkpoint ", dir_, ": tensor \"", name, "\" is ",
        dtypeName(t->dtype), formatShape(t->shape), " in the checkpoint but ",
        dtypeName(dtype), formatShape(globalShape), " in the plan");
  StatusOr<std::vector<BlockPiece>> pieces =
      assembleBlock(*t, offsets, localShape);
  if (!pieces.isOk())
    return pieces.status().withContext("checkpoint " + dir_);
  int64_t element = dtypeSize(dtype);
  for (const BlockPiece &piece : *pieces) {
    const CheckpointBlock &block = t->blocks[piece.block];
    PARTITION_ASSIGN_OR_RETURN(const SafetensorsReader *r, reader(block.file));
    // InvalidArgument, not NotFound: the manifest promised this tensor.
    if (!r->contains(name))
      return PARTITION_ERROR(InvalidArgument, r->path(), ": tensor \"", name,
                             "\" is missing, but the manifest lists it there");
    PARTITION_ASSIGN_OR_RETURN(SafetensorsTensorInfo info, r->info(name));
    if (info.dtype != t->dtype || info.shape != block.shape)
      return PARTITION_ERROR(InvalidArgument, r->path(), ": tensor \"", name,
                             "\" is ", dtypeName(info.dtype),
                             formatShape(info.shape), " but the manifest says ",
                             dtypeName(t->dtype), formatShape(block.shape));
    int64_t bytes = element;
    for (int64_t d : piece.shape)
      bytes *= d;
    if (piece.shape == localShape) { // one block holds the whole request
      PARTITION_RETURN_IF_ERROR(
          r->readSlice(name, piece.blockOffsets, piece.shape, dst, bytes));
      continue;
    }
    std::vector<char> staging(static_cast<size_t>(bytes));
    PARTITION_RETURN_IF_ERROR(r->readSlice(name, piece.blockOffsets,
                                           piece.shape, staging.data(), bytes));
    insertBlock(dst, localShape, staging.data(), piece.shape,
                piece.requestOffsets, element);
  }
  return Status::ok();
}
