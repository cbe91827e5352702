//===- Executor.cpp - runs a plan on one rank -----------------------------===//
//
// Collectives along a dimension other than the outermost are done on
// contiguous blocks: the executor moves the group's dimension outermost with
// the backend's Transpose kernel before or after the communicator call, so
// every communicator sees only flat, rank-major buffers.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Executor.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Sharding.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace partition::runtime;
namespace plan = partition::plan;
namespace fb = flatbuffers;

namespace {

std::vector<int64_t> toVector(const fb::Vector<int64_t> *v) {
  return v ? std::vector<int64_t>(v->begin(), v->end())
           : std::vector<int64_t>();
}

int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

ReduceOp toReduceOp(plan::ReduceOp op) {
  switch (op) {
  case plan::ReduceOp::Sum:
    return ReduceOp::Sum;
  case plan::ReduceOp::Max:
    return ReduceOp::Max;
  case plan::ReduceOp::Min:
    return ReduceOp::Min;
  case plan::ReduceOp::Avg:
    return ReduceOp::Avg;
  }
  return ReduceOp::Sum;
}

double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

Executor::Executor(const LoadedPlan &plan, int worldRank, Device &device,
                   CommunicatorFactory &comms, bool trace)
    : plan_(plan), worldRank_(worldRank), device_(device), comms_(comms),
      tracing_(trace) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>>
Executor::create(const LoadedPlan &plan, int worldRank, Device &device,
                 CommunicatorFactory &comms, bool trace) {
  std::unique_ptr<Executor> executor(
      new Executor(plan, worldRank, device, comms, trace));
  PARTITION_RETURN_IF_ERROR(executor->prepare());
  return executor;
}

Status Executor::prepare() {
  const plan::Plan &root = plan_.root();
  // The first program whose mesh holds this rank. (Pipelines will give a rank
  // one program per stage it serves.)
  for (uint32_t p = 0; p < root.programs()->size() && !program_; ++p) {
    const plan::Program *program = root.programs()->Get(p);
    const plan::Mesh *mesh = root.meshes()->Get(program->mesh());
    for (uint32_t d = 0; d < mesh->ranks()->size(); ++d)
      if (mesh->ranks()->Get(d) == worldRank_) {
        program_ = program;
        programIndex_ = p;
        mesh_ = mesh;
        deviceIndex_ = d;
        coordinates_ = meshCoordinates(*mesh, d);
        break;
      }
  }
  PARTITION_ASSIGN_OR_RETURN(stream_, device_.createStream());
  if (!program_)
    return Status::ok();

  if (program_->arena_bytes()) {
    PARTITION_ASSIGN_OR_RETURN(arena_,
                               device_.allocate(program_->arena_bytes()));
    memoryUse_.arena += int64_t(arena_->size());
  }
  auto allocateBindings =
      [&](const fb::Vector<fb::Offset<plan::Binding>> *bindings,
          std::vector<std::unique_ptr<Buffer>> &buffers) -> Status {
    if (!bindings)
      return Status::ok();
    for (const plan::Binding *b : *bindings) {
      int64_t bytes = valueBytes(*program_->values()->Get(b->value()));
      PARTITION_ASSIGN_OR_RETURN(auto buffer,
                                 device_.allocate(std::max<int64_t>(bytes, 1)));
      int64_t size = int64_t(buffer->size());
      switch (b->role()) {
      case plan::Role::Parameter:
        memoryUse_.parameters += size;
        break;
      case plan::Role::State:
        memoryUse_.state += size;
        break;
      case plan::Role::Constant:
        memoryUse_.constants += size;
        break;
      default: // Input, Label
        memoryUse_.inputs += size;
        break;
      }
      buffers.push_back(std::move(buffer));
    }
    return Status::ok();
  };
  PARTITION_RETURN_IF_ERROR(allocateBindings(program_->params(), params_));
  PARTITION_RETURN_IF_ERROR(allocateBindings(program_->inputs(), inputs_));

  // Constants are in the plan.
  if (program_->params())
    for (uint32_t i = 0; i < program_->params()->size(); ++i) {
      const plan::Binding *b = program_->params()->Get(i);
      if (b->role() == plan::Role::Constant)
        PARTITION_RETURN_IF_ERROR(
            device_.copyToDevice(params_[i]->data(), b->data()->data(),
                                 b->data()->size(), *stream_));
    }

  // Communicators, in instruction order: every member of a group reaches
  // its creation in the same order, so creation cannot deadlock.
  for (const plan::Instruction *inst : *program_->instructions()) {
    if (auto c = inst->inst_as_CollectiveInst()) {
      if (c->kind() != plan::CollectiveKind::AllSlice &&
          c->kind() != plan::CollectiveKind::AxisIndex) // no communication
        PARTITION_RETURN_IF_ERROR(groupOf(*c->axes()).status());
    } else if (inst->inst_type() == plan::Inst::SendInst ||
               inst->inst_type() == plan::Inst::RecvInst) {
      uint32_t peer = inst->inst_type() == plan::Inst::SendInst
                          ? inst->inst_as_SendInst()->peer_program()
                          : inst->inst_as_RecvInst()->peer_program();
      const plan::Mesh *peerMesh =
          root.meshes()->Get(root.programs()->Get(peer)->mesh());
      PARTITION_RETURN_IF_ERROR(
          peerOf(peerMesh->ranks()->Get(deviceIndex_)).status());
    }
  }

  // Buffers are fixed from here on, so every instruction's tensors are too.
  for (const plan::Instruction *inst : *program_->instructions()) {
    Decoded d;
    if (inst->operands())
      for (uint32_t id : *inst->operands())
        d.in.push_back(tensor(id));
    if (inst->results())
      for (uint32_t id : *inst->results())
        d.out.push_back(tensor(id));
    if (auto k = inst->inst_as_KernelInst()) {
      d.attrs.ints = toVector(k->ints());
      if (k->floats())
        d.attrs.floats.assign(k->floats()->begin(), k->floats()->end());
    } else if (auto c = inst->inst_as_CollectiveInst()) {
      d.attrs.ints = toVector(c->ints());
    }
    decoded_.push_back(std::move(d));
  }
  return stream_->synchronize();
}

StatusOr<Communicator *>
Executor::groupOf(const fb::Vector<uint32_t> &axesVector) {
  std::vector<uint32_t> axes(axesVector.begin(), axesVector.end());
  auto it = groups_.find(axes);
  if (it != groups_.end())
    return it->second.get();
  // Members: every device whose coordinates equal ours off `axes`, ordered
  // row-major over `axes` in the order listed.
  int64_t size = groupSize(*mesh_, axesVector);
  std::vector<int> ranks;
  for (int64_t g = 0; g < size; ++g) {
    std::vector<int64_t> coords = coordinates_;
    int64_t rest = g;
    for (size_t i = axes.size(); i-- > 0;) {
      int64_t axisSize = mesh_->axis_sizes()->Get(axes[i]);
      coords[axes[i]] = rest % axisSize;
      rest /= axisSize;
    }
    ranks.push_back(mesh_->ranks()->Get(meshDevice(*mesh_, coords)));
  }
  // The key names the mesh, the axes and the group (our coordinates off the
  // axes), so distinct groups never share rendezvous keys.
  std::string key = "mesh-" + std::to_string(program_->mesh()) + "/axes";
  for (uint32_t a : axes)
    key += "-" + std::to_string(a);
  key += "/group";
  for (size_t a = 0; a < coordinates_.size(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      key += "-" + std::to_string(coordinates_[a]);
  PARTITION_ASSIGN_OR_RETURN(auto comm, comms_.create(ranks, key));
  Communicator *raw = comm.get();
  groups_[axes] = std::move(comm);
  return raw;
}

StatusOr<Communicator *> Executor::peerOf(int peerRank) {
  auto it = peers_.find(peerRank);
  if (it != peers_.end())
    return it->second.get();
  std::vector<int> ranks = {std::min(worldRank_, peerRank),
                            std::max(worldRank_, peerRank)};
  std::string key =
      "p2p/" + std::to_string(ranks[0]) + "-" + std::to_string(ranks[1]);
  PARTITION_ASSIGN_OR_RETURN(auto comm, comms_.create(ranks, key));
  Communicator *raw = comm.get();
  peers_[peerRank] = std::move(comm);
  return raw;
}

void *Executor::valuePtr(uint32_t id) {
  const plan::Value *v = program_->values()->Get(id);
  while (v->storage() == plan::Storage::Alias)
    v = program_->values()->Get(v->index());
  switch (v->storage()) {
  case plan::Storage::Arena:
    return static_cast<char *>(arena_->data()) + v->offset();
  case plan::Storage::Persistent:
    return params_[v->index()]->data();
  case plan::Storage::Input:
    return inputs_[v->index()]->data();
  default:
    return nullptr;
  }
}

TensorRef Executor::tensor(uint32_t id) {
  const plan::Value *v = program_->values()->Get(id);
  return TensorRef{valuePtr(id), toDType(v->dtype()), toVector(v->shape())};
}

StatusOr<void *> Executor::scratch(int slot, size_t bytes) {
  if (scratch_.size() <= size_t(slot))
    scratch_.resize(slot + 1);
  if (!scratch_[slot] || scratch_[slot]->size() < bytes) {
    if (scratch_[slot])
      memoryUse_.scratch -= int64_t(scratch_[slot]->size());
    scratch_[slot].reset();
    PARTITION_ASSIGN_OR_RETURN(scratch_[slot],
                               device_.allocate(std::max<size_t>(bytes, 1)));
    memoryUse_.scratch += int64_t(scratch_[slot]->size());
  }
  return scratch_[slot]->data();
}

Status Executor::loadParameters(ParameterSource &source) {
  if (!program_ || !program_->params())
    return Status::ok();
  for (uint32_t i = 0; i < program_->params()->size(); ++i) {
    const plan::Binding *b = program_->params()->Get(i);
    if (b->role() == plan::Role::Constant)
      continue;
    const plan::Value *v = program_->values()->Get(b->value());
    std::vector<int64_t> local = toVector(v->shape());
    std::vector<int64_t> offsets =
        shardOffsets(*mesh_, *b->sharding(), coordinates_, local);
    std::vector<char> host(valueBytes(*v));
    DType dtype = toDType(v->dtype());
    std::vector<int64_t> global = toVector(b->global_shape());
    Status read = source.read(b->name()->str(), dtype, global, offsets, local,
                              host.data());
    // State the source (a checkpoint) lacks starts at its initial value:
    // another tensor of the source (a master copy from the weights it
    // copies) or a constant, zero by default.
    if (!read.isOk() && b->role() == plan::Role::State &&
        read.code() == StatusCode::NotFound) {
      if (b->init_from()) {
        read = source.read(b->init_from()->str(), dtype, global, offsets,
                           local, host.data());
        if (!read.isOk())
          return Status(read.code(), "initial value of state \"" +
                                         b->name()->str() +
                                         "\": " + read.message());
      } else {
        read = Status::ok();
        if (b->init_value() != 0.0f) {
          if (!isFloat(dtype))
            return PARTITION_ERROR(InvalidArgument, "state \"",
                                   b->name()->str(), "\" is ",
                                   dtypeName(dtype),
                                   " but has the float initial value ",
                                   b->init_value());
          int64_t count = 1;
          for (int64_t d : local)
            count *= d;
          for (int64_t e = 0; e < count; ++e)
            storeFloat(host.data(), dtype, e, b->init_value());
        }
      }
    }
    if (!read.isOk())
      return read;
    PARTITION_RETURN_IF_ERROR(device_.copyToDevice(
        params_[i]->data(), host.data(), host.size(), *stream_));
  }
  return stream_->synchronize();
}

Status Executor::setInput(const std::string &name, const HostTensor &whole) {
  if (!program_ || !program_->inputs())
    return PARTITION_ERROR(NotFound, "the plan has no input \"", name, "\"");
  for (uint32_t i = 0; i < program_->inputs()->size(); ++i) {
    const plan::Binding *b = program_->inputs()->Get(i);
    if (b->name()->str() != name)
      continue;
    const plan::Value *v = program_->values()->Get(b->value());
    std::vector<int64_t> global = toVector(b->global_shape());
    if (whole.dtype != toDType(v->dtype()) || whole.shape != global)
      return PARTITION_ERROR(InvalidArgument, "input \"", name, "\" must be ",
                             dtypeName(toDType(v->dtype())),
                             formatShape(global), ", got ",
                             dtypeName(whole.dtype), formatShape(whole.shape));
    std::vector<int64_t> local = toVector(v->shape());
    std::vector<char> host(valueBytes(*v));
    extractBlock(whole.data.data(), global, host.data(), local,
                 shardOffsets(*mesh_, *b->sharding(), coordinates_, local),
                 dtypeSize(whole.dtype));
    PARTITION_RETURN_IF_ERROR(device_.copyToDevice(
        inputs_[i]->data(), host.data(), host.size(), *stream_));
    return stream_->synchronize();
  }
  return PARTITION_ERROR(NotFound, "the plan has no input \"", name, "\"");
}

StatusOr<HostTensor> Executor::output(const std::string &name) {
  if (program_ && program_->outputs())
    for (const plan::Binding *b : *program_->outputs()) {
      if (b->name()->str() != name)
        continue;
      const plan::Value *v = program_->values()->Get(b->value());
      HostTensor result{toDType(v->dtype()), toVector(v->shape()), {}};
      result.data.resize(valueBytes(*v));
      PARTITION_RETURN_IF_ERROR(
          device_.copyToHost(result.data.data(), valuePtr(b->value()),
                             result.data.size(), *stream_));
      PARTITION_RETURN_IF_ERROR(stream_->synchronize());
      return result;
    }
  return PARTITION_ERROR(NotFound, "the plan has no output \"", name, "\"");
}

StatusOr<HostTensor> Executor::parameter(const std::string &name) {
  if (program_ && program_->params())
    for (uint32_t i = 0; i < program_->params()->size(); ++i) {
      const plan::Binding *b = program_->params()->Get(i);
      if (b->name()->str() != name)
        continue;
      const plan::Value *v = program_->values()->Get(b->value());
      HostTensor result{toDType(v->dtype()), toVector(v->shape()), {}};
      result.data.resize(valueBytes(*v));
      PARTITION_RETURN_IF_ERROR(
          device_.copyToHost(result.data.data(), params_[i]->data(),
                             result.data.size(), *stream_));
      PARTITION_RETURN_IF_ERROR(stream_->synchronize());
      return result;
    }
  return PARTITION_ERROR(NotFound, "the plan has no parameter \"", name, "\"");
}

Status Executor::run() {
  if (!program_)
    return Status::ok();
  const plan::Plan &root = plan_.root();
  for (const plan::ScheduleStep *step : *root.schedule()) {
    if (step->program() != programIndex_)
      continue;
    const auto &instructions = *program_->instructions();
    for (uint32_t i = 0; i < instructions.size(); ++i) {
      const plan::Instruction &inst = *instructions.Get(i);
      double start = tracing_ ? nowUs() : 0;
      Status s = runInstruction(inst, decoded_[i]);
      if (!s.isOk()) {
        std::string where = "instruction " + std::to_string(i);
        if (inst.loc() && inst.loc()->size())
          where += " (" + inst.loc()->str() + ")";
        return s.withContext("rank " + std::to_string(worldRank_) + ": " +
                             where);
      }
      if (tracing_) {
        // Time the work, not just its enqueueing.
        PARTITION_RETURN_IF_ERROR(stream_->synchronize());
        TraceEvent event;
        if (auto k = inst.inst_as_KernelInst()) {
          event.name = opKindName(k->op());
          event.category = "kernel";
        } else if (auto c = inst.inst_as_CollectiveInst()) {
          event.name = plan::EnumNameCollectiveKind(c->kind());
          event.category = "collective";
        } else {
          event.name =
              inst.inst_type() == plan::Inst::SendInst ? "Send" : "Recv";
          event.category = "transfer";
        }
        event.startUs = start;
        event.durationUs = nowUs() - start;
        trace_.push_back(std::move(event));
      }
    }
  }
  // New values of parameters and optimizer state replace the old ones.
  if (program_->outputs())
    for (const plan::Binding *b : *program_->outputs()) {
      if (b->updates() < 0)
        continue;
      void *src = valuePtr(b->value());
      void *dst = params_[b->updates()]->data();
      if (src != dst)
        PARTITION_RETURN_IF_ERROR(device_.copy(
            dst, src, valueBytes(*program_->values()->Get(b->value())),
            *stream_));
    }
  return stream_->synchronize();
}

Status Executor::runInstruction(const plan::Instruction &inst,
                                const Decoded &d) {
  const std::vector<TensorRef> &in = d.in, &out = d.out;
  switch (inst.inst_type()) {
  case plan::Inst::KernelInst: {
    const plan::KernelInst &k = *inst.inst_as_KernelInst();
    return device_.kernels().run(k.op(), d.attrs, in, out, *stream_);
  }
  case plan::Inst::CollectiveInst: {
    const plan::CollectiveInst &c = *inst.inst_as_CollectiveInst();
    if (c.kind() == plan::CollectiveKind::AxisIndex) {
      // No communication: this device's row-major index along the axes.
      int32_t index = 0;
      for (uint32_t axis : *c.axes())
        index = index * int32_t(mesh_->axis_sizes()->Get(axis)) +
                int32_t(coordinates_[axis]);
      // The host value must outlive the asynchronous copy: it is kept, at a
      // fixed address, for the executor's lifetime (the same value each step).
      const int32_t &kept =
          axisIndices_.try_emplace(&inst, index).first->second;
      return device_.copyToDevice(out[0].data, &kept, sizeof(kept), *stream_);
    }
    return runCollective(c, d);
  }
  case plan::Inst::SendInst: {
    const plan::SendInst &s = *inst.inst_as_SendInst();
    const plan::Mesh *peerMesh = plan_.root().meshes()->Get(
        plan_.root().programs()->Get(s.peer_program())->mesh());
    int peer = peerMesh->ranks()->Get(deviceIndex_);
    PARTITION_ASSIGN_OR_RETURN(Communicator * comm, peerOf(peer));
    return comm->send(in[0].data, in[0].numElements(), in[0].dtype,
                      peer < worldRank_ ? 0 : 1, s.channel(), *stream_);
  }
  case plan::Inst::RecvInst: {
    const plan::RecvInst &r = *inst.inst_as_RecvInst();
    const plan::Mesh *peerMesh = plan_.root().meshes()->Get(
        plan_.root().programs()->Get(r.peer_program())->mesh());
    int peer = peerMesh->ranks()->Get(deviceIndex_);
    PARTITION_ASSIGN_OR_RETURN(Communicator * comm, peerOf(peer));
    return comm->recv(out[0].data, out[0].numElements(), out[0].dtype,
                      peer < worldRank_ ? 0 : 1, r.channel(), *stream_);
  }
  default:
    return PARTITION_ERROR(Internal, "unknown instruction");
  }
}

Status Executor::runCollective(const plan::CollectiveInst &c,
                               const Decoded &decoded) {
  const TensorRef &in = decoded.in[0], &out = decoded.out[0];
  const std::vector<int64_t> &ints = decoded.attrs.ints;
  Kernels &kernels = device_.kernels();
  if (c.kind() == plan::CollectiveKind::AllSlice) {
    // No communication: keep the block at this device's group index, which
    // is the row-major index of its coordinates along the group's axes.
    int64_t index = 0;
    for (uint32_t axis : *c.axes())
      index = index * mesh_->axis_sizes()->Get(axis) + coordinates_[axis];
    int64_t d = ints[0];
    KernelAttrs slice;
    for (int64_t i = 0; i < in.rank(); ++i)
      slice.ints.push_back(i == d ? index * out.shape[i] : 0);
    slice.ints.insert(slice.ints.end(), in.rank(), 1);
    return kernels.run(plan::OpKind::Slice, slice, {in}, {out}, *stream_);
  }
  PARTITION_ASSIGN_OR_RETURN(Communicator * comm, groupOf(*c.axes()));
  int64_t g = comm->size();
  // Transposes `src` viewed as [a, b, rest] into `dst` as [b, a, rest].
  auto swapOuter = [&](void *src, void *dst, int64_t a, int64_t b,
                       int64_t rest) {
    TensorRef from{src, in.dtype, {a, b, rest}};
    TensorRef to{dst, in.dtype, {b, a, rest}};
    return kernels.run(plan::OpKind::Transpose, KernelAttrs{{1, 0, 2}, {}},
                       {from}, {to}, *stream_);
  };

  switch (c.kind()) {
  case plan::CollectiveKind::AllReduce:
    return comm->allReduce(in.data, out.data, in.numElements(), in.dtype,
                           toReduceOp(c.reduce()), *stream_);
  case plan::CollectiveKind::AllGather: {
    // in [A, n, B] -> gathered [G, A, n*B] -> out [A, G*n, B].
    size_t d = ints[0];
    int64_t outer = product(in.shape, 0, d);
    if (outer == 1)
      return comm->allGather(in.data, out.data, in.numElements(), in.dtype,
                             *stream_);
    PARTITION_ASSIGN_OR_RETURN(void *tmp, scratch(0, out.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        comm->allGather(in.data, tmp, in.numElements(), in.dtype, *stream_));
    return swapOuter(tmp, out.data, g, outer, in.numElements() / outer);
  }
  case plan::CollectiveKind::ReduceScatter: {
    // in [A, G*n, B] viewed [A, G, n*B] -> [G, A, n*B] -> reduce-scatter.
    size_t d = ints[0];
    int64_t outer = product(in.shape, 0, d);
    if (outer == 1)
      return comm->reduceScatter(in.data, out.data, out.numElements(), in.dtype,
                                 toReduceOp(c.reduce()), *stream_);
    PARTITION_ASSIGN_OR_RETURN(void *tmp, scratch(0, in.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        swapOuter(in.data, tmp, outer, g, in.numElements() / outer / g));
    return comm->reduceScatter(tmp, out.data, out.numElements(), in.dtype,
                               toReduceOp(c.reduce()), *stream_);
  }
  case plan::CollectiveKind::AllToAll: {
    size_t split = ints[0], concat = ints[1];
    int64_t block = in.numElements() / g;
    // Pack: in viewed [As, G, rest] -> [G, As, rest], so block i is
    // contiguous and goes to rank i.
    int64_t splitOuter = product(in.shape, 0, split);
    void *send = in.data;
    if (splitOuter != 1) {
      PARTITION_ASSIGN_OR_RETURN(send, scratch(0, in.numBytes()));
      PARTITION_RETURN_IF_ERROR(swapOuter(in.data, send, splitOuter, g,
                                          in.numElements() / splitOuter / g));
    }
    // Unpack: received [G, block] where each block has the input's shape with
    // `split` divided; block j goes to position j along `concat`.
    std::vector<int64_t> blockShape = in.shape;
    blockShape[split] /= g;
    int64_t concatOuter = product(blockShape, 0, concat);
    if (concatOuter == 1)
      return comm->allToAll(send, out.data, block, in.dtype, *stream_);
    PARTITION_ASSIGN_OR_RETURN(void *recv, scratch(1, out.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        comm->allToAll(send, recv, block, in.dtype, *stream_));
    return swapOuter(recv, out.data, g, concatOuter, block / concatOuter);
  }
  case plan::CollectiveKind::AllSlice:
  case plan::CollectiveKind::AxisIndex:
    break; // handled without a communicator
  case plan::CollectiveKind::Permute: {
    std::vector<std::pair<int, int>> pairs;
    for (size_t i = 0; i + 1 < ints.size(); i += 2)
      pairs.emplace_back(int(ints[i]), int(ints[i + 1]));
    return comm->permute(in.data, out.data, in.numElements(), in.dtype, pairs,
                         *stream_);
  }
  }
  return PARTITION_ERROR(Internal, "unknown collective");
}
