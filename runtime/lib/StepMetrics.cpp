//===- StepMetrics.cpp - training progress figures of a plan's steps ------===//
//
// Model FLOPs and tokens per step counted from a plan, peak FLOP/s from a
// cluster description, and the per-step figures as text and JSON.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/StepMetrics.h"

#include "Json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

using namespace partition::runtime;
namespace plan = partition::plan;

namespace {

const plan::Value &operand(const plan::Program &program,
                           const plan::Instruction &instruction, unsigned i) {
  return *program.values()->Get(instruction.operands()->Get(i));
}

/// The product of `shape[begin, end)`, as a double (FLOP counts of large
/// models pass 2^53 only far beyond any plan's size).
double product(const flatbuffers::Vector<int64_t> &shape, unsigned begin,
               unsigned end) {
  double p = 1;
  for (unsigned i = begin; i < end; ++i)
    p *= double(shape.Get(i));
  return p;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

double
partition::runtime::instructionFlops(const plan::Program &program,
                                     const plan::Instruction &instruction) {
  const plan::KernelInst *k = instruction.inst_as_KernelInst();
  if (!k || !instruction.operands())
    return 0;
  switch (k->op()) {
  case plan::OpKind::Matmul:
  case plan::OpKind::BatchMatmul: {
    if (instruction.operands()->size() < 2)
      return 0;
    const auto &lhs = *operand(program, instruction, 0).shape();
    const auto &rhs = *operand(program, instruction, 1).shape();
    unsigned lr = lhs.size(), rr = rhs.size();
    if (lr < 2 || rr < 2)
      return 0;
    const plan::MatmulAttrs *a = k->attrs_as_MatmulAttrs();
    bool ta = a && a->transpose_a(), tb = a && a->transpose_b();
    // lhs [..., M, K] (Matmul: any leading dimensions, rhs [K, N]).
    double m = double(lhs.Get(ta ? lr - 1 : lr - 2));
    double kk = double(lhs.Get(ta ? lr - 2 : lr - 1));
    double n = double(rhs.Get(tb ? rr - 2 : rr - 1));
    return 2 * product(lhs, 0, lr - 2) * m * n * kk;
  }
  case plan::OpKind::Attention:
  case plan::OpKind::AttentionGrad: {
    if (instruction.operands()->size() < 3)
      return 0;
    const auto &q = *operand(program, instruction, 0).shape();
    const auto &key = *operand(program, instruction, 1).shape();
    const auto &v = *operand(program, instruction, 2).shape();
    if (q.size() != 4 || key.size() != 4 || v.size() != 4)
      return 0;
    // q [B, H, Sq, D], k [B, Hk, Sk, D], v [B, Hk, Sk, Dv]: every query
    // head takes q k^T (Sq x Sk x D) and p v (Sq x Dv x Sk).
    double rows = double(q.Get(0)) * double(q.Get(1)) * double(q.Get(2));
    double sk = double(key.Get(2));
    double forward =
        2 * rows * sk * double(q.Get(3)) + 2 * rows * sk * double(v.Get(3));
    // Its backward: q k^T again, do v^T and p^T do, ds k and ds^T q.
    if (k->op() == plan::OpKind::AttentionGrad)
      return forward + 2 * rows * sk * double(q.Get(3)) +
             2 * rows * sk * (double(q.Get(3)) + double(v.Get(3)));
    return forward;
  }
  default:
    return 0;
  }
}

double StepFlops::total() const {
  double sum = 0;
  for (const auto &[dtype, flops] : byDType)
    sum += flops;
  return sum;
}

StepFlops partition::runtime::countStepFlops(const plan::Plan &root) {
  StepFlops result;
  // Each step runs its fragment's instructions, or the whole program's:
  // (program, first, end) -> schedule steps running that range.
  std::map<std::tuple<unsigned, uint32_t, uint32_t>, int64_t> runs;
  for (const plan::ScheduleStep *s : *root.schedule()) {
    if (s->program() >= root.programs()->size())
      continue;
    const plan::Program &program = *root.programs()->Get(s->program());
    uint32_t first = 0, end = program.instructions()->size();
    if (s->fragment() >= 0 && program.fragments() &&
        uint32_t(s->fragment()) < program.fragments()->size()) {
      const plan::Fragment &f = *program.fragments()->Get(s->fragment());
      first = f.first();
      end = std::min<uint64_t>(end, uint64_t(f.first()) + f.count());
    }
    ++runs[{s->program(), first, end}];
  }
  for (const auto &[range, count] : runs) {
    auto [index, first, end] = range;
    const plan::Program &program = *root.programs()->Get(index);
    const plan::Mesh &mesh = *root.meshes()->Get(program.mesh());
    double devices = mesh.ranks() ? double(mesh.ranks()->size()) : 0;
    for (uint32_t i = first; i < end; ++i) {
      const plan::Instruction &inst = *program.instructions()->Get(i);
      double flops = instructionFlops(program, inst);
      if (flops == 0)
        continue;
      DType dtype = toDType(operand(program, inst, 0).dtype());
      result.byDType[dtypeName(dtype)] += flops * devices * double(count);
    }
  }
  return result;
}

StepFlops partition::runtime::modelStepFlops(const plan::Plan &root) {
  StepFlops counted = countStepFlops(root);
  if (!root.model_flops())
    return counted;
  double model = *root.model_flops(), perDevice = counted.total();
  StepFlops result;
  result.ofGlobalProgram = true;
  // The global program's dtypes may differ from the per-device programs'
  // (a mixed-precision pass after part-spmd): the latter run, so their
  // shares price the model FLOPs.
  if (perDevice > 0)
    for (const auto &[dtype, flops] : counted.byDType)
      result.byDType[dtype] = model * (flops / perDevice);
  else if (model > 0)
    result.byDType["f32"] = model;
  return result;
}

StepTokens partition::runtime::countStepTokens(const plan::Plan &root) {
  static const char *const kTokenNames[] = {"input_ids", "tokens", "token_ids",
                                            "ids"};
  static const char *const kLabelNames[] = {"labels", "targets"};
  auto find = [&](const char *const *names, size_t count) -> StepTokens {
    for (const plan::Program *program : *root.programs()) {
      if (!program->inputs())
        continue;
      for (const plan::Binding *b : *program->inputs()) {
        DType dtype = toDType(program->values()->Get(b->value())->dtype());
        std::string name = lower(b->name()->str());
        if (isFloat(dtype) ||
            std::find(names, names + count, name) == names + count)
          continue;
        int64_t elements = 1;
        for (int64_t d : *b->global_shape())
          elements *= d;
        return {b->name()->str(), elements};
      }
    }
    return {};
  };
  StepTokens t = find(kTokenNames, std::size(kTokenNames));
  return t.input.empty() ? find(kLabelNames, std::size(kLabelNames)) : t;
}

std::optional<double> partition::runtime::secondsAtPeak(const StepFlops &flops,
                                                        const Cluster &cluster,
                                                        int64_t devices) {
  if (devices <= 0)
    return std::nullopt;
  double seconds = 0;
  for (const auto &[dtype, count] : flops.byDType) {
    double peak = cluster.peakFor(dtype);
    if (!(peak > 0))
      return std::nullopt;
    seconds += count / (peak * double(devices));
  }
  return seconds;
}

namespace {

void appendNumber(std::string &out, double value, const char *format) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  out += buffer;
}

} // namespace

std::string partition::runtime::formatMetricsJson(const StepFigures &f) {
  static const char *const kFixed[] = {"step", "step_ms",    "tokens_per_s",
                                       "mfu",  "peak_bytes", "eta_s"};
  std::string out = "{\"step\": " + std::to_string(f.step);
  for (const auto &[name, value] : f.scalars) {
    out += ", ";
    bool taken = std::find(std::begin(kFixed), std::end(kFixed), name) !=
                 std::end(kFixed);
    detail::appendJsonString(out, taken ? "output." + name : name);
    out += ": ";
    appendNumber(out, value, "%.9g");
  }
  out += ", \"step_ms\": ";
  appendNumber(out, f.stepMs, "%.6g");
  out += ", \"tokens_per_s\": ";
  appendNumber(out, f.tokensPerS, "%.6g");
  out += ", \"mfu\": ";
  appendNumber(out, f.mfu, "%.6g");
  out += ", \"peak_bytes\": " + std::to_string(f.peakBytes);
  out += ", \"eta_s\": ";
  appendNumber(out, f.etaS, "%.6g");
  out += "}";
  return out;
}

std::string partition::runtime::formatBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double value = double(bytes);
  size_t unit = 0;
  while (value >= 999.5 && unit + 1 < std::size(kUnits)) {
    value /= 1000;
    ++unit;
  }
  char buffer[32];
  if (unit == 0)
    std::snprintf(buffer, sizeof(buffer), "%llu B", (unsigned long long)bytes);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3g %s", value, kUnits[unit]);
  return buffer;
}

std::string partition::runtime::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "-";
  // Each form is chosen by the value it prints, rounded: 9.96 ms is "10ms",
  // 999.6 ms "1.0s", 9.96 s "10s", 59.7 s "1m00s", 3599.8 s "1h00m".
  char buffer[32];
  if (seconds == 0)
    return "0s";
  if (seconds < 0.00995) {
    std::snprintf(buffer, sizeof(buffer), "%.1fms", seconds * 1000);
    return buffer;
  }
  if (seconds < 0.9995) {
    std::snprintf(buffer, sizeof(buffer), "%.0fms", seconds * 1000);
    return buffer;
  }
  if (seconds < 9.95) {
    std::snprintf(buffer, sizeof(buffer), "%.1fs", seconds);
    return buffer;
  }
  long long whole = std::llround(seconds);
  if (whole < 60)
    std::snprintf(buffer, sizeof(buffer), "%llds", whole);
  else if (whole < 3600)
    std::snprintf(buffer, sizeof(buffer), "%lldm%02llds", whole / 60,
                  whole % 60);
  else {
    long long minutes = std::llround(seconds / 60);
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm", minutes / 60,
                  minutes % 60);
  }
  return buffer;
}

std::string partition::runtime::formatProgress(const StepFigures &f) {
  char buffer[64];
  std::string line =
      "[" + std::to_string(f.step) + "/" + std::to_string(f.ofSteps) + "]";
  for (const auto &[name, value] : f.scalars) {
    std::snprintf(buffer, sizeof(buffer), " %.6g", value);
    line += " " + name + buffer + " |";
  }
  std::snprintf(buffer, sizeof(buffer), " %.4g ms", f.stepMs);
  line += buffer;
  if (std::isfinite(f.tokensPerS)) {
    std::snprintf(buffer, sizeof(buffer), " | %.4g tokens/s", f.tokensPerS);
    line += buffer;
  }
  if (std::isfinite(f.mfu)) {
    std::snprintf(buffer, sizeof(buffer), " | MFU %.3g%%", f.mfu * 100);
    line += buffer;
  } else {
    line += " | MFU -";
  }
  line += " | peak " + formatBytes(f.peakBytes);
  line += " | ETA " + formatDuration(f.etaS);
  return line;
}

double partition::runtime::meanStepMs(const std::vector<double> &stepMs) {
  if (stepMs.empty())
    return 0;
  size_t first = stepMs.size() > 1 ? 1 : 0;
  double sum = 0;
  for (size_t i = first; i < stepMs.size(); ++i)
    sum += stepMs[i];
  return sum / double(stepMs.size() - first);
}
