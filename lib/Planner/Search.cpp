//===- Search.cpp - plans composed from probes, searched ------------------===//

#include "Composer.h"
#include "Probe.h"

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/Analysis/StageBalance.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "llvm/Support/Format.h"

using namespace mlir;
using partition::runtime::Cluster;
using partition::runtime::Link;
namespace pl = partition::part::pipeline;

namespace partition::planner {

//===----------------------------------------------------------------------===//
// Constraints (--fix)
//===----------------------------------------------------------------------===//

std::optional<PlanConstraint> PlanConstraint::parse(const std::string &text,
                                                    std::string *error) {
  PlanConstraint c;
  SmallVector<StringRef> items;
  StringRef(text).split(items, ',', -1, /*KeepEmpty=*/false);
  std::map<std::string, std::string> given; // key -> its item
  for (StringRef item : items) {
    StringRef key = item.trim().split('=').first.trim();
    StringRef value = item.trim().split('=').second.trim();
    auto [seen, first] = given.emplace(key.str(), item.trim().str());
    if (!first) {
      *error = "--fix: " + key.str() + " is given twice (" + seen->second +
               ", " + item.trim().str() + ")";
      return std::nullopt;
    }
    int64_t n = 0;
    bool isNumber = !value.getAsInteger(10, n) && n >= 0;
    auto number = [&](std::optional<int64_t> &field, int64_t least,
                      int64_t most) {
      if (!isNumber || n < least) {
        *error = "--fix: " + key.str() + "=" + value.str() +
                 " is not a whole number of at least " +
                 std::to_string(least);
        return false;
      }
      if (n > most) {
        *error = "--fix: " + key.str() + "=" + value.str() +
                 " is too large (at most " + std::to_string(most) + ")";
        return false;
      }
      field = n;
      return true;
    };
    bool ok = true;
    if (key == "dp")
      ok = number(c.dp, 1, kMaxDevices);
    else if (key == "tp")
      ok = number(c.tp, 1, kMaxDevices);
    else if (key == "pp")
      ok = number(c.pp, 1, kMaxDevices);
    else if (key == "cp")
      ok = number(c.cp, 1, kMaxDevices);
    else if (key == "ep")
      ok = number(c.ep, 1, kMaxDevices);
    else if (key == "vpp")
      ok = number(c.virtualStages, 1, kMaxDevices);
    else if (key == "mbs")
      ok = number(c.microBatchSize, 1, kMaxGlobalBatch);
    else if (key == "zero") {
      ok = number(c.zero, 0, 3);
      if (!ok && isNumber && n > 3)
        *error = "--fix: zero=" + value.str() + " is not a ZeRO stage (0-3)";
    } else if (key == "schedule") {
      if (!pl::parseScheduleKind(value.str())) {
        *error = "--fix: schedule=" + value.str() +
                 " is not one of gpipe, 1f1b, interleaved-1f1b, zero-bubble, "
                 "zb-v, v-half, v-min";
        ok = false;
      } else {
        c.schedule = value.str();
      }
    } else if (key == "recompute") {
      if (std::optional<Recompute> r = parseRecompute(value)) {
        c.recompute = *r;
      } else {
        *error = "--fix: recompute=" + value.str() +
                 " is not none, selective or full";
        ok = false;
      }
    } else if (key == "sp") {
      if (value != "0" && value != "1") {
        *error = "--fix: sp=" + value.str() + " is not 0 or 1";
        ok = false;
      } else {
        c.sequenceParallel = value == "1";
      }
    } else if (key == "tp-overlap") {
      ok = number(c.tpOverlap, 0, 64);
      if (ok && n == 1) {
        *error = "--fix: tp-overlap=1 is not 0 (off) or a number of chunks "
                 "(at least 2)";
        ok = false;
      }
    } else if (key == "dp-overlap") {
      if (value != "0" && value != "1") {
        *error = "--fix: dp-overlap=" + value.str() + " is not 0 or 1";
        ok = false;
      } else {
        c.dpOverlap = value == "1";
      }
    } else if (key == "sync") {
      if (value != "step" && value != "micro-batch") {
        *error = "--fix: sync=" + value.str() + " is not step or micro-batch";
        ok = false;
      } else {
        c.syncPerStep = value == "step";
      }
    } else {
      *error = "--fix: unknown key \"" + key.str() +
               "\" (known: dp tp pp cp ep vpp mbs schedule zero recompute sp "
               "sync tp-overlap dp-overlap)";
      ok = false;
    }
    if (!ok)
      return std::nullopt;
  }
  return c;
}

std::vector<PlanConstraint::Choice>
PlanConstraint::choices(const PlanConfig &c) const {
  std::vector<Choice> out;
  auto n = [](int64_t v) { return std::to_string(v); };
  auto rc = [](Recompute r) { return std::string(recomputeName(r)); };
  if (dp)
    out.push_back({"dp", n(*dp), n(c.dp)});
  if (tp)
    out.push_back({"tp", n(*tp), n(c.tp)});
  if (pp)
    out.push_back({"pp", n(*pp), n(c.pp)});
  if (cp)
    out.push_back({"cp", n(*cp), n(c.cp)});
  if (ep)
    out.push_back({"ep", n(*ep), n(c.ep)});
  if (virtualStages)
    out.push_back({"vpp", n(*virtualStages), n(c.virtualStages)});
  if (microBatchSize)
    out.push_back({"mbs", n(*microBatchSize), n(c.microBatchSize)});
  if (schedule)
    out.push_back({"schedule", *schedule, c.schedule});
  if (zero)
    out.push_back({"zero", n(*zero), n(c.zero)});
  if (recompute)
    out.push_back({"recompute", rc(*recompute), rc(c.recompute)});
  if (sequenceParallel)
    out.push_back({"sp", n(*sequenceParallel), n(c.sequenceParallel)});
  auto sync = [](bool step) {
    return std::string(step ? "step" : "micro-batch");
  };
  if (syncPerStep)
    out.push_back({"sync", sync(*syncPerStep), sync(c.syncPerStep)});
  if (tpOverlap)
    out.push_back({"tp-overlap", n(*tpOverlap), n(c.tpOverlap)});
  if (dpOverlap)
    out.push_back({"dp-overlap", n(*dpOverlap), n(c.dpOverlap)});
  return out;
}

bool PlanConstraint::admits(const PlanConfig &c) const {
  return llvm::all_of(choices(c),
                      [](const Choice &x) { return x.fixed == x.actual; });
}

bool checkSearchOptions(const SearchOptions &options, std::string *error) {
  auto name = [&](const char *option, int64_t value) {
    return options.flags
               ? "--" + std::string(option) + " " + std::to_string(value)
               : std::string(option) + "=" + std::to_string(value);
  };
  auto fail = [&](const std::string &message) {
    *error = message;
    return false;
  };
  if (options.devices < 1)
    return fail(name("devices", options.devices) + " must be at least 1");
  if (options.devices > kMaxDevices)
    return fail(name("devices", options.devices) + " is too large (at most " +
                std::to_string(kMaxDevices) + ")");
  const runtime::Cluster &cluster = options.cluster;
  if (options.devices > cluster.devices())
    return fail(name("devices", options.devices) + " is more than the " +
                std::to_string(cluster.devices()) + " devices of cluster \"" +
                runtime::printableName(cluster.name) + "\" (" +
                std::to_string(cluster.nodes) + " nodes of " +
                std::to_string(cluster.devicesPerNode) + ")");
  if (options.globalBatch < 0)
    return fail(name("global-batch", options.globalBatch) +
                " must be at least 0 (0: the model's batch)");
  if (options.globalBatch > kMaxGlobalBatch)
    return fail(name("global-batch", options.globalBatch) +
                " is too large (at most " + std::to_string(kMaxGlobalBatch) +
                ")");
  if (options.maxMicroBatchSize < 1 ||
      options.maxMicroBatchSize > kMaxGlobalBatch)
    return fail("the largest micro-batch size searched, " +
                std::to_string(options.maxMicroBatchSize) + ", is not in [1, " +
                std::to_string(kMaxGlobalBatch) + "]");
  // The products run at the precision asked for: its peak must be the
  // cluster's own, not another dtype's standing in for it.
  const std::string &precision = options.training.precision;
  if (!cluster.peakFlops.count(precision)) {
    std::string named;
    for (const auto &[dtype, peak] : cluster.peakFlops)
      named += (named.empty() ? "" : ", ") + dtype;
    return fail("cluster \"" + runtime::printableName(cluster.name) +
                "\" gives no peak_flops for " + precision + ", the precision " +
                "asked for (it gives " + named + "): add \"" + precision +
                "\" to its peak_flops or plan with " +
                (options.flags ? "--precision " : "precision=") +
                (precision == "bf16" ? "f32" : "bf16"));
  }
  return true;
}

double scheduleStepSeconds(double forward, double backward, double weight,
                           int64_t chunks, pl::Action action) {
  double n = double(std::max<int64_t>(1, chunks));
  double f = forward / n, b = backward / n;
  double w = weight > 0 ? std::min(weight / n, b) : b / 2;
  switch (action) {
  case pl::Action::Forward:
    return f;
  case pl::Action::Backward:
    return b;
  case pl::Action::BackwardInput:
    return b - w;
  case pl::Action::BackwardWeight:
    return w;
  }
  return 0.0;
}

double chunkStepSeconds(double forward, double backward, double weight,
                        const std::vector<double> &forwardShare,
                        const std::vector<double> &backwardShare,
                        int64_t stage, int64_t chunks, const pl::Step &step) {
  double n = double(std::max<int64_t>(1, chunks));
  auto share = [&](const std::vector<double> &shares) {
    return size_t(step.chunk) < shares.size() ? shares[step.chunk] * n : 1.0;
  };
  double f = share(forwardShare), b = share(backwardShare);
  bool first = stage == 0 && step.chunk == 0;
  return scheduleStepSeconds(f * forward, b * backward,
                             b * (first ? backward : weight), chunks,
                             step.action);
}

namespace {

/// What a probe is compiled for: (tp, sequence parallelism, recomputation,
/// tp-overlap chunks, ep, cp).
using ProbeKey =
    std::tuple<int64_t, bool, Recompute, int64_t, int64_t, int64_t>;

ProbeKey probeKeyOf(const PlanConfig &c) {
  return {c.tp, c.sequenceParallel, c.recompute, c.tpOverlap, c.ep, c.cp};
}

/// The ranking: faster first; between plans equally fast (within a
/// millionth), the one that needs less memory, then the simpler (less
/// ZeRO, no recomputation, fewer stages).
bool faster(const PlanEstimate &a, const PlanEstimate &b) {
  double tie = 1e-6 * std::max(a.seconds, b.seconds);
  if (std::abs(a.seconds - b.seconds) > tie)
    return a.seconds < b.seconds;
  double ma = a.memory.total(), mb = b.memory.total();
  if (std::abs(ma - mb) > 1e-6 * std::max(ma, mb))
    return ma < mb;
  auto simple = [](const PlanConfig &c) {
    return std::make_tuple(c.zero, c.recompute, c.pp, c.cp, c.ep,
                           c.virtualStages, c.sequenceParallel, c.syncPerStep,
                           c.tpOverlap);
  };
  return simple(a.config) < simple(b.config);
}

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> out;
  // i <= n / i: i * i overflows int64 for n near 2^63.
  for (int64_t i = 1; i <= n / i; ++i)
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i)
        out.push_back(n / i);
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// What --fix left out while the candidates were listed: per fixed choice
/// ("pp=16"), the values the plans it excluded had, and whether any plan
/// had the fixed value.
struct Exclusions {
  std::map<std::string, std::set<int64_t>> numbers;
  std::map<std::string, std::set<std::string>> names;
  std::set<std::string> met;

  /// Checks one fixed number at one level of the listing.
  bool admits(const char *key, const std::optional<int64_t> &fixed,
              int64_t value) {
    if (!fixed)
      return true;
    std::string item = std::string(key) + "=" + std::to_string(*fixed);
    if (*fixed == value) {
      met.insert(item);
      return true;
    }
    numbers[item].insert(value);
    return false;
  }
};

/// The V schedules: two chunks per stage, down and back up.
bool isVShape(pl::ScheduleKind kind) {
  return kind == pl::ScheduleKind::ZeroBubbleV ||
         kind == pl::ScheduleKind::VHalf || kind == pl::ScheduleKind::VMin;
}

/// The most pipeline groups (stages x chunks) a model of `layers` layers
/// fills: a layer each, and the embedding and the head a group of their own
/// (pl::mostGroups; Llama 3 405B's 126 layers in 128 chunks). The cut
/// (Composer::stageLayers) has the last word: a model with nothing before
/// or after its layers fills fewer.
int64_t mostGroups(int64_t layers) { return layers > 0 ? layers + 2 : 0; }

/// The cp degrees a search tries: the one fixed, else 1 and each power of
/// two that divides the devices, whose 2 cp chunks divide the `sequence`
/// (part-context-parallel's balanced order) and leave each device at least
/// kMinContextTokens of it; 1 alone for a model without attention
/// (`sequence` 0) or with shorter sequences.
std::vector<int64_t> contextDegrees(const SearchOptions &options,
                                    int64_t sequence) {
  if (options.constraint.cp)
    return {*options.constraint.cp};
  std::vector<int64_t> cps = {1};
  for (int64_t c = 2; sequence > 0 && c <= options.devices; c *= 2)
    if (options.devices % c == 0 && sequence % (2 * c) == 0 &&
        sequence / c >= kMinContextTokens)
      cps.push_back(c);
  return cps;
}

/// Why the fixed choices cannot all hold, from the devices, the layers, the
/// sequence and the global batch alone: "tp=8 does not divide the 12
/// devices"; nullopt when nothing is seen yet.
std::optional<std::string> fixMismatch(const SearchOptions &options,
                                       int64_t layers, int64_t globalBatch,
                                       int64_t experts, int64_t sequence) {
  const PlanConstraint &fix = options.constraint;
  const int64_t devices = options.devices;
  auto n = [](int64_t v) { return std::to_string(v); };
  int64_t product = 1;
  std::string named;
  for (auto [key, value] :
       {std::pair<const char *, std::optional<int64_t>>{"dp", fix.dp},
        {"tp", fix.tp},
        {"pp", fix.pp},
        {"cp", fix.cp},
        {"ep", fix.ep}}) {
    if (!value)
      continue;
    product *= *value; // at most 2^24 x devices (2^24): no overflow
    named += (named.empty() ? "" : " x ") + std::string(key) + "=" + n(*value);
    if (double(product) > double(devices) || devices % product != 0)
      return named + " does not divide the " + n(devices) + " devices";
  }
  // cp is 1 where it is not fixed and the search tries no other.
  bool cpKnown = fix.cp || contextDegrees(options, sequence).size() == 1;
  if (fix.dp && fix.tp && fix.pp && (fix.ep || experts == 0) && cpKnown &&
      product != devices)
    return named + " is " + n(product) + " devices, not the " + n(devices) +
           " given";
  bool train = options.training.train;
  if (fix.pp && *fix.pp > 1) {
    if (!train)
      return "pp=" + n(*fix.pp) + ": pipelines need a training step";
    if (*fix.pp > mostGroups(layers))
      return "pp=" + n(*fix.pp) + " is more stages than the " + n(layers) +
             " layers and the embedding and the head fill";
  }
  if (fix.ep && *fix.ep > 1 && experts == 0)
    return "ep=" + n(*fix.ep) +
           " needs a mixture-of-experts model (part.expert_dispatch); this "
           "one has no experts";
  if (fix.ep && experts > 0 && experts % *fix.ep)
    return "ep=" + n(*fix.ep) + " does not divide the model's " + n(experts) +
           " experts";
  if (fix.cp && *fix.cp > 1 && sequence == 0)
    return "cp=" + n(*fix.cp) +
           " needs a model with attention (part.attention): context "
           "parallelism splits the sequence its attentions run over; this "
           "one has none";
  if (fix.cp && sequence > 0 && sequence % (2 * *fix.cp))
    return "cp=" + n(*fix.cp) +
           " cuts each sequence into 2 x cp = " + n(2 * *fix.cp) +
           " chunks (the balanced causal order), which do "
           "not divide the model's sequence of " +
           n(sequence) + " tokens";
  // The batch is split over dp x ep.
  int64_t split = fix.dp.value_or(1) * fix.ep.value_or(1);
  std::string splitName =
      fix.dp && fix.ep ? "dp=" + n(*fix.dp) + " x ep=" + n(*fix.ep)
      : fix.dp         ? "dp=" + n(*fix.dp)
                       : "ep=" + n(fix.ep.value_or(1));
  if ((fix.dp || fix.ep) && globalBatch % split)
    return splitName + " does not divide the global batch " + n(globalBatch);
  if (fix.microBatchSize) {
    int64_t perGroup = globalBatch / split;
    if (perGroup % *fix.microBatchSize)
      return "mbs=" + n(*fix.microBatchSize) + " does not divide the " +
             n(perGroup) + " sequences of " +
             (fix.ep   ? "each of the " + splitName + " groups' share of "
              : fix.dp ? "a dp group's share of "
                       : "") +
             "the global batch";
  }
  if (fix.sequenceParallel && *fix.sequenceParallel &&
      ((fix.tp && *fix.tp == 1) || devices == 1))
    return "sp=1 needs tp above 1 (sequence parallelism splits over tp)";
  if (fix.tpOverlap && *fix.tpOverlap > 0 &&
      ((fix.tp && *fix.tp == 1) || devices == 1))
    return "tp-overlap=" + n(*fix.tpOverlap) +
           " needs tp above 1 (it splits tensor-parallel collectives)";
  if (!train && fix.recompute && *fix.recompute != Recompute::None)
    return std::string("recompute=") + recomputeName(*fix.recompute) +
           " needs a training step";
  if (!train && fix.zero && *fix.zero > 0)
    return "zero=" + n(*fix.zero) + " needs a training step";
  // ZeRO shards over dp x cp x ep: one of them above 1.
  if (fix.zero && *fix.zero > 0 && fix.dp && *fix.dp == 1 &&
      (experts == 0 || fix.ep.value_or(experts) == 1) &&
      fix.cp.value_or(contextDegrees(options, sequence).back()) == 1) {
    std::vector<std::string> axes = {"dp"};
    if (fix.cp)
      axes.push_back("cp");
    if (experts)
      axes.push_back("ep");
    std::string listed;
    for (size_t i = 0; i < axes.size(); ++i)
      listed += (i == 0 ? "" : i + 1 == axes.size() ? " or " : ", ") + axes[i];
    return "zero=" + n(*fix.zero) + " needs " + listed + " above 1";
  }
  if (!train && fix.dpOverlap && !*fix.dpOverlap)
    return "dp-overlap=0 needs a training step (it places the gradients' "
           "reductions)";
  if (fix.syncPerStep && *fix.syncPerStep && fix.zero && *fix.zero != 1)
    return "sync=step is ZeRO-1's gradients reduce-scattered once per step, "
           "not zero=" + n(*fix.zero);
  std::optional<pl::ScheduleKind> kind =
      fix.schedule ? pl::parseScheduleKind(*fix.schedule) : std::nullopt;
  bool vSchedule = kind && isVShape(*kind);
  if (vSchedule && fix.virtualStages && *fix.virtualStages != 2)
    return "schedule=" + *fix.schedule + " runs 2 chunks per stage (a V), not "
           "vpp=" + n(*fix.virtualStages);
  if (fix.virtualStages && *fix.virtualStages > 1 && !vSchedule) {
    if (kind && *kind != pl::ScheduleKind::Interleaved1F1B)
      return "vpp=" + n(*fix.virtualStages) +
             " is for the interleaved-1f1b schedule, not " + *fix.schedule;
    if (fix.pp && *fix.pp == 1)
      return "vpp=" + n(*fix.virtualStages) + " needs pp above 1";
    if (fix.pp && mostGroups(layers) < *fix.pp * *fix.virtualStages)
      return "vpp=" + n(*fix.virtualStages) + " chunks on each of pp=" +
             n(*fix.pp) + " stages need at least " +
             n(*fix.pp * *fix.virtualStages - 2) +
             " layers (the embedding and the head may fill a chunk each), "
             "the model has " + n(layers);
  }
  if (kind && *kind == pl::ScheduleKind::Interleaved1F1B &&
      fix.virtualStages && *fix.virtualStages < 2)
    return "schedule=interleaved-1f1b needs vpp of at least 2";
  return std::nullopt;
}

/// Every combination of the probed tp, cp and ep degrees (`probeKeys`: tp,
/// sp, recompute, tp-overlap, ep, cp), pp, dp, micro-batch size, schedule,
/// virtual stages and ZeRO that the constraint admits; what a rule leaves out
/// is counted in `pruned`, what the constraint leaves out in `excluded`.
std::vector<PlanConfig>
listCandidates(const SearchOptions &options,
               const std::vector<ProbeKey> &probeKeys,
               int64_t L, int64_t globalBatch,
               std::map<std::string, int64_t> &pruned, Exclusions &excluded) {
  const PlanConstraint &fix = options.constraint;
  const bool train = options.training.train;
  using pl::ScheduleKind;
  const ScheduleKind kinds[] = {
      ScheduleKind::GPipe,        ScheduleKind::OneFOneB,
      ScheduleKind::Interleaved1F1B, ScheduleKind::ZeroBubbleH1,
      ScheduleKind::ZeroBubbleV,  ScheduleKind::VHalf,
      ScheduleKind::VMin};
  int64_t largestMicroBatch =
      std::max(options.maxMicroBatchSize, fix.microBatchSize.value_or(0));
  // The (tp, cp, ep) degrees probed, each once, in order.
  std::set<std::tuple<int64_t, int64_t, int64_t>> degrees;
  for (const ProbeKey &key : probeKeys)
    degrees.insert({std::get<0>(key), std::get<5>(key), std::get<4>(key)});
  std::vector<PlanConfig> candidates;
  for (auto [t, cp, e] : degrees) {
    if (!excluded.admits("cp", fix.cp, cp) || !excluded.admits("ep", fix.ep, e))
      continue;
    for (int64_t p : divisorsOf(options.devices / (t * cp * e))) {
      if (!excluded.admits("pp", fix.pp, p))
        continue;
      // The batch is split over dp x ep, each sequence over cp.
      int64_t d = options.devices / (t * p * cp * e);
      if (!excluded.admits("dp", fix.dp, d))
        continue;
      // A pp that does not divide the layers cuts them unevenly (the
      // compiler's balance by FLOPs); one chunk per stage then.
      if (p > 1 && mostGroups(L) < p) {
        pruned["pp exceeds the " + std::to_string(L) +
               " layers, the embedding and the head"] += 1;
        continue;
      }
      if (p > 1 && !train) {
        pruned["pipelines need a training step"] += 1;
        continue;
      }
      // The batch is split over dp x ep.
      if (globalBatch % (d * e) != 0) {
        pruned[std::string(e > 1 ? "dp x ep" : "dp") +
               " does not divide the global batch " +
               std::to_string(globalBatch)] += 1;
        continue;
      }
      for (int64_t b : divisorsOf(globalBatch / (d * e))) {
        if (b > largestMicroBatch)
          break;
        if (!excluded.admits("mbs", fix.microBatchSize, b))
          continue;
        int64_t mb = globalBatch / (d * e * b);
        if (!train && mb != 1)
          continue;
        if (mb > kMaxMicroBatches) {
          pruned["more than " + std::to_string(kMaxMicroBatches) +
                 " micro-batches per step"] += 1;
          continue;
        }
        for (ScheduleKind kind : kinds) {
          const std::string schedule = pl::scheduleName(kind);
          if (p == 1 && kind != ScheduleKind::OneFOneB)
            continue;
          std::vector<int64_t> vs = {1};
          // Chunks are cut by FLOPs as part-pipeline cuts them: each needs
          // a layer, none needs to divide them.
          if (kind == ScheduleKind::Interleaved1F1B) {
            vs.clear();
            for (int64_t v = 2; v <= std::max<int64_t>(
                                         8, fix.virtualStages.value_or(0));
                 ++v)
              if (p * v <= mostGroups(L) &&
                  (v <= 8 || fix.virtualStages == v))
                vs.push_back(v);
            if (mb % p != 0)
              vs.clear();
          }
          // The V schedules: two chunks per stage; ZB-V warms up with
          // 2p - 1 forwards.
          if (isVShape(kind)) {
            vs = {2};
            if (mostGroups(L) < 2 * p ||
                (kind == ScheduleKind::ZeroBubbleV && mb < 2 * p - 1))
              vs.clear();
          }
          for (int64_t v : vs) {
            // ZeRO shards over dp x cp x ep.
            for (int64_t z = 0; z <= (d * cp * e > 1 && train ? 3 : 0); ++z) {
              // ZeRO-1 under a pipeline: each micro-batch's gradients
              // reduce-scattered, or the whole sum once (Megatron's
              // distributed optimizer). ZeRO-2's once-per-step form holds
              // the whole gradients too: the same plan, left out.
              bool pipelined = train && (p > 1 || mb > 1);
              for (auto [pt, sp, rc, ov, pe, pc] : probeKeys)
                for (bool sync : {false, true}) {
                  if (pt != t || pe != e || pc != cp ||
                      (sync && !(pipelined && mb > 1 && z == 1)))
                    continue;
                  PlanConfig c;
                  c.syncPerStep = sync;
                  c.tp = t;
                  c.pp = p;
                  c.dp = d;
                  c.cp = cp;
                  c.ep = e;
                  c.virtualStages = v;
                  c.microBatchSize = b;
                  c.microBatches = mb;
                  c.schedule = train && (p > 1 || mb > 1) ? schedule : "none";
                  c.zero = z;
                  c.recompute = rc;
                  c.sequenceParallel = sp;
                  c.tpOverlap = ov;
                  c.dpOverlap = fix.dpOverlap.value_or(true);
                  bool admitted = true;
                  for (const PlanConstraint::Choice &x : fix.choices(c)) {
                    std::string item = x.key + "=" + x.fixed;
                    if (x.fixed == x.actual) {
                      excluded.met.insert(item);
                    } else {
                      excluded.names[item].insert(x.actual);
                      admitted = false;
                    }
                  }
                  if (admitted)
                    candidates.push_back(c);
                }
            }
          }
        }
      }
    }
  }
  return candidates;
}

/// The name of the first figure of `e` that is not finite; nullopt when
/// all are.
std::optional<std::string> nonFiniteFigure(const PlanEstimate &e) {
  std::vector<std::pair<const char *, double>> figures = {
      {"step time", e.seconds},
      {"compute time", e.compute},
      {"exposed communication", e.exposedCommunication},
      {"bubble", e.bubble},
      {"memory", e.memory.total()},
      {"model FLOPs", e.modelFlops},
      {"hardware FLOPs", e.hardwareFlops},
      {"TFLOP/s per device", e.tflopsPerDevice},
      {"MFU", e.mfu}};
  for (size_t s = 0; s < e.stageForward.size(); ++s) {
    figures.push_back({"a stage's forward", e.stageForward[s]});
    figures.push_back({"a stage's backward", e.stageBackward[s]});
    figures.push_back({"a stage's update", e.stageUpdate[s]});
    figures.push_back({"a stage's memory", e.stageMemory[s].total()});
  }
  for (auto [name, value] : figures)
    if (!std::isfinite(value))
      return name + std::string(" is ") + (std::isnan(value) ? "nan" : "inf");
  return std::nullopt;
}

/// False with `error` naming the plan and the figure when the cost model
/// gives `e` a figure that is not finite (a cluster's figures at the ends
/// of their ranges, a model of extreme sizes): never a plan of inf seconds.
bool checkFinite(const PlanEstimate &e, const Cluster &cluster,
                 std::string *error) {
  std::optional<std::string> figure = nonFiniteFigure(e);
  if (!figure)
    return true;
  *error = "the cost model's estimate of plan " + e.config.text() +
           " on cluster \"" + runtime::printableName(cluster.name) +
           "\" is not finite (" + *figure +
           "): the cluster's figures or the model's sizes are beyond what "
           "it can estimate";
  return false;
}

/// The error when no plan fits: how many were considered, what each rule
/// and each fixed choice left out, and the least memory a plan needs.
std::string noPlanMessage(const SearchResult &result,
                          const Exclusions &excluded,
                          const std::optional<PlanEstimate> &leastMemory,
                          const Cluster &cluster) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "no plan fits: " << result.considered << " considered";
  for (auto &[why, n] : result.pruned)
    os << "; " << n << " pruned by " << why;
  // A fixed choice no listed plan had: the values the others had.
  auto list = [&](const std::string &item, const auto &values) {
    if (excluded.met.count(item) || values.empty())
      return;
    os << "; no plan has " << item << " (";
    StringRef key = StringRef(item).split('=').first;
    os << "the plans left out have " << key << " ";
    size_t i = 0;
    for (const auto &v : values) {
      if (i == 8) {
        os << ", ...";
        break;
      }
      os << (i++ ? ", " : "") << v;
    }
    os << ")";
  };
  if (result.considered == 0) {
    for (auto &[item, values] : excluded.numbers)
      list(item, values);
    for (auto &[item, values] : excluded.names)
      list(item, values);
  }
  if (leastMemory) {
    const MemoryEstimate &m = leastMemory->memory;
    auto gib = [](double bytes) { return bytes / double(1ull << 30); };
    os << "; the least memory a plan needs is "
       << llvm::format("%.4g", gib(m.total())) << " GiB per device ("
       << leastMemory->config.text() << ": parameters "
       << llvm::format("%.3g", gib(m.parameters)) << ", gradients "
       << llvm::format("%.3g", gib(m.gradients)) << ", optimizer state "
       << llvm::format("%.3g", gib(m.optimizerState)) << ", activations "
       << llvm::format("%.3g", gib(m.activations)) << ", workspace "
       << llvm::format("%.3g", gib(m.workspace)) << " GiB), of "
       << llvm::format("%.4g", gib(cluster.memoryBytes)) << " GiB";
  }
  return text;
}

/// A probe and its costs by micro-batch size, made as plans ask for them.
struct Probed {
  Probe probe;
  std::map<int64_t, ProbeCosts> costs;
};

/// The summary of `model` (`layers` of it, `alike` or not) and the probed
/// layer each layer costs as; the batch is its first input's first
/// dimension.
Model modelOf(ModuleOp model, int64_t layers, bool alike) {
  Model m;
  m.summary.layers = layers;
  m.summary.layersAlike = alike;
  int64_t probed = alike ? std::min<int64_t>(layers, 3) : layers;
  m.probedLayerOf = [alike, probed, layers](int64_t l) -> int64_t {
    if (layers == 0)
      return 0;
    if (!alike)
      return l;
    if (probed < 3)
      return std::min(l, probed - 1);
    return 1; // a layer with layers on both sides
  };
  // Its experts: the experts every dispatch has (their greatest common
  // divisor, which ep must divide).
  model.walk([&](part::ExpertDispatchOp d) {
    int64_t experts =
        cast<RankedTensorType>(d.getResult().getType()).getDimSize(0);
    m.summary.experts = std::gcd(m.summary.experts, experts);
  });
  // Its sequence: the first attention's queries' (part-context-parallel
  // refuses attentions of different lengths).
  model.walk([&](part::AttentionOp a) {
    m.summary.sequence =
        cast<RankedTensorType>(a.getQuery().getType()).getDimSize(2);
    return WalkResult::interrupt();
  });
  // The model's batch: its first input's first dimension.
  for (auto f : model.getOps<func::FuncOp>()) {
    if (f.isDeclaration())
      continue;
    for (auto [i, arg] : llvm::enumerate(f.getArguments())) {
      auto role = f.getArgAttrOfType<part::ArgRoleAttr>(
          i, part::PartDialect::getRoleAttrName());
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (role && role.getValue() == part::ArgRole::Input && t &&
          t.getRank() > 0) {
        m.summary.batch = t.getDimSize(0);
        break;
      }
    }
    break;
  }
  return m;
}

/// The ep degrees a search tries: those that divide the experts and the
/// devices (1 alone without experts), or the one fixed.
std::vector<int64_t> expertDegrees(const SearchOptions &options,
                                   int64_t experts) {
  std::vector<int64_t> eps;
  for (int64_t e : divisorsOf(std::max<int64_t>(1, experts)))
    if (options.devices % e == 0 &&
        (!options.constraint.ep || *options.constraint.ep == e))
      eps.push_back(e);
  return eps;
}

/// The tensor-parallel choices a search probes: tp degrees that divide the
/// devices (within a node unless fixed), with and without sequence
/// parallelism (and with it the chunked tensor-parallel collectives), and
/// each recomputation.
std::vector<PlanConfig> tensorParallelProbes(const SearchOptions &options) {
  const Cluster &cluster = options.cluster;
  std::vector<PlanConfig> toProbe;
  const PlanConstraint &fix = options.constraint;
  for (int64_t t : divisorsOf(options.devices)) {
    if (t > std::max<int64_t>(1, cluster.devicesPerNode) && !(fix.tp && *fix.tp == t))
      continue; // tp within a node, as Megatron keeps it
    if (fix.tp && *fix.tp != t)
      continue;
    for (bool sp : {false, true}) {
      if (sp && t == 1)
        continue;
      if (fix.sequenceParallel && *fix.sequenceParallel != sp)
        continue;
      for (Recompute rc :
           {Recompute::None, Recompute::Selective, Recompute::Full}) {
        if (!options.training.train && rc != Recompute::None)
          continue;
        if (fix.recompute && *fix.recompute != rc)
          continue;
        // Chunked tensor-parallel collectives: searched with sequence
        // parallelism (Megatron-Core's overlap needs it), or as fixed.
        std::vector<int64_t> overlaps = {0};
        if (fix.tpOverlap)
          overlaps = {t > 1 ? *fix.tpOverlap : 0};
        else if (sp)
          overlaps.push_back(kTpOverlapChunks);
        for (int64_t ov : overlaps) {
          PlanConfig pc;
          pc.tp = t;
          pc.sequenceParallel = sp;
          pc.recompute = rc;
          pc.tpOverlap = ov;
          toProbe.push_back(pc);
        }
      }
    }
  }
  return toProbe;
}

/// The probes a search compiles: each of tensorParallelProbes' with every
/// cp and ep degree whose product with its tp divides the devices (each
/// compiled on cp:c,ep:e,tp:t, so that attention's K/V all-gathers over cp
/// and the experts' all-to-alls are costed as compiled, on the link their
/// group spans).
std::vector<PlanConfig> probeConfigs(const SearchOptions &options,
                                     int64_t experts, int64_t sequence) {
  std::vector<PlanConfig> toProbe;
  for (int64_t c : contextDegrees(options, sequence))
    for (int64_t e : expertDegrees(options, experts))
      for (PlanConfig pc : tensorParallelProbes(options)) {
        // c, e and tp each divide the devices (at most 2^24): no overflow.
        if (options.devices % (pc.tp * e * c) != 0)
          continue;
        pc.cp = c;
        pc.ep = e;
        toProbe.push_back(pc);
      }
  return toProbe;
}

/// Until the first `options.exactSchedules` plans of `ranked` are all final
/// (simulated, or without a pipeline), the first that is not is simulated
/// and put back where it now ranks -- or dropped, when the simulation's
/// activation sets do not fit or it cannot be simulated. False with `error`
/// set when a simulated figure is not finite.
bool rankBySimulation(
    std::vector<PlanEstimate> &ranked, const SearchOptions &options,
    llvm::function_ref<std::optional<PlanEstimate>(const PlanConfig &)>
        simulate,
    std::map<std::string, int64_t> &pruned, std::string *error) {
  size_t exact = size_t(std::max<int64_t>(1, options.exactSchedules));
  auto final = [](const PlanEstimate &e) {
    return e.simulated || e.config.pp == 1;
  };
  for (;;) {
    size_t i = 0;
    while (i < ranked.size() && i < exact && final(ranked[i]))
      ++i;
    if (i >= ranked.size() || i >= exact)
      return true;
    const PlanConfig c = ranked[i].config;
    ranked.erase(ranked.begin() + i);
    std::optional<PlanEstimate> e = simulate(c);
    if (e && !checkFinite(*e, options.cluster, error))
      return false;
    if (!e)
      continue;
    if (!e->fits) {
      pruned["memory"] += 1;
      continue;
    }
    ranked.insert(std::upper_bound(ranked.begin(), ranked.end(), *e, faster),
                  *e);
  }
}

/// Reports a search's progress.
using ReportFn = llvm::function_ref<void(SearchProgress::Stage, int64_t,
                                         int64_t, std::string)>;

/// Compiles the probes probeConfigs lists for `cut` into `probes` (those
/// that fail into `pruned` with the compiler's reason), counting them in
/// `compiled`; returns the unpartitioned probe (tp 1, ep 1, no
/// recomputation: compiled once more when the constraint leaves it out), or
/// nullopt with its error in `modelWhy`.
std::optional<Probe> compileProbes(ModuleOp cut, const SearchOptions &options,
                                   int64_t experts, int64_t sequence,
                                   std::map<ProbeKey, Probed> &probes,
                                   std::map<std::string, int64_t> &pruned,
                                   int64_t &compiled, ReportFn report,
                                   std::string *modelWhy) {
  const Cluster &cluster = options.cluster;
  const std::vector<PlanConfig> toProbe =
      probeConfigs(options, experts, sequence);
  // The model's own FLOPs and parameters come from the tp = 1 probe
  // without recomputation, experts or sequence split: probed once more
  // when the constraint leaves it out.
  auto isModel = [](const PlanConfig &pc) {
    return pc.tp == 1 && pc.ep == 1 && pc.cp == 1 && !pc.sequenceParallel &&
           pc.recompute == Recompute::None;
  };
  bool probesModel = llvm::any_of(toProbe, isModel);
  int64_t probeCount = int64_t(toProbe.size()) + (probesModel ? 0 : 1);
  auto degrees = [](const PlanConfig &pc) {
    return "tp=" + std::to_string(pc.tp) +
           (pc.cp > 1 ? " cp=" + std::to_string(pc.cp) : std::string()) +
           (pc.ep > 1 ? " ep=" + std::to_string(pc.ep) : std::string());
  };
  auto probeName = [&](const PlanConfig &pc) {
    return degrees(pc) + (pc.sequenceParallel ? " sp" : "") +
           (pc.tpOverlap ? " tp-overlap=" + std::to_string(pc.tpOverlap)
                         : std::string()) +
           (pc.recompute == Recompute::None
                ? std::string()
                : std::string(" recompute=") + recomputeName(pc.recompute));
  };
  std::optional<Probe> modelProbe;
  for (const PlanConfig &pc : toProbe) {
    std::string why;
    std::optional<Probe> probe =
        runProbe(cut, options.training, pc, cluster, &why);
    ++compiled;
    report(SearchProgress::Stage::Probe, compiled, probeCount,
           probeName(pc) + (probe ? "" : " (fails)"));
    if (isModel(pc)) {
      modelProbe = probe;
      *modelWhy = why;
    }
    if (!probe) {
      pruned[degrees(pc) + (pc.sequenceParallel ? " sp" : "") + ": " + why] +=
          1;
      continue;
    }
    probes[probeKeyOf(pc)].probe = std::move(*probe);
  }
  if (!probesModel) {
    PlanConfig pc;
    modelProbe = runProbe(cut, options.training, pc, cluster, modelWhy);
    ++compiled;
    report(SearchProgress::Stage::Probe, compiled, probeCount,
           probeName(pc) + (modelProbe ? "" : " (fails)"));
  }
  return modelProbe;
}

} // namespace

std::optional<SearchResult> search(ModuleOp model, const SearchOptions &options,
                                   std::string *error) {
  auto started = std::chrono::steady_clock::now();
  SearchResult result;
  const Cluster &cluster = options.cluster;
  if (!checkSearchOptions(options, error))
    return std::nullopt;
  OwningOpRef<ModuleOp> cut(model.clone());
  bool alike = false;
  int64_t layers = truncateLayers(*cut, 3, &alike);
  Model m = modelOf(model, layers, alike);
  int64_t globalBatch =
      options.globalBatch ? options.globalBatch : m.summary.batch;
  if (globalBatch < 1) {
    *error = "the global batch is unknown: the model has no input with a "
             "batch dimension; give the global batch";
    return std::nullopt;
  }
  if (globalBatch > kMaxGlobalBatch) {
    *error = "the model's batch " + std::to_string(globalBatch) +
             " is too large for a global batch (at most " +
             std::to_string(kMaxGlobalBatch) + "); give the global batch";
    return std::nullopt;
  }
  if (std::optional<std::string> why =
          fixMismatch(options, layers, globalBatch, m.summary.experts,
                      m.summary.sequence)) {
    *error = "no plan fits: " + *why;
    return std::nullopt;
  }

  // Probes: tp degrees that divide the devices, with and without sequence
  // parallelism and recomputation. A degree the model cannot be split by
  // fails in the compiler, whose message is the reason it is pruned.
  std::map<ProbeKey, Probed> probes;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         started)
        .count();
  };
  auto report = [&](SearchProgress::Stage stage, int64_t done, int64_t total,
                    std::string detail = "") {
    if (!options.progress)
      return;
    SearchProgress p;
    p.stage = stage;
    p.done = done;
    p.total = total;
    p.detail = std::move(detail);
    p.seconds = elapsed();
    options.progress(p);
  };
  // The probes, compiled; the unpartitioned one gives the model's own
  // FLOPs and parameters.
  std::string modelWhy;
  std::optional<Probe> modelProbe =
      compileProbes(*cut, options, m.summary.experts, m.summary.sequence,
                    probes, result.pruned, m.summary.probes, report, &modelWhy);
  if (!modelProbe) {
    *error = "the model does not compile unpartitioned: " + modelWhy;
    return std::nullopt;
  }
  {
    double params = modelProbe->preParams + modelProbe->postParams;
    for (int64_t l = 0; l < m.summary.layers; ++l)
      params += modelProbe->layerParams[m.probedLayerOf(l)];
    m.summary.parameters = params;
  }

  // Enumerate: every combination the constraint admits, listed first (so
  // that progress can say "k of n"), then composed and costed in order.
  std::vector<PlanEstimate> fitting;
  std::optional<PlanEstimate> leastMemory; // of the plans that do not fit
  std::map<std::string, int64_t> &pruned = result.pruned;
  const int64_t L = m.summary.layers;
  std::vector<ProbeKey> probeKeys;
  for (auto &[key, probed] : probes)
    probeKeys.push_back(key);
  Exclusions excluded;
  ComposerCache cache;
  std::vector<PlanConfig> candidates =
      listCandidates(options, probeKeys, L, globalBatch, pruned, excluded);
  result.considered = int64_t(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const PlanConfig &c = candidates[i];
    Probed &probed = probes[probeKeyOf(c)];
    int64_t b = c.microBatchSize;
    auto costs = probed.costs.find(b);
    if (costs == probed.costs.end())
      costs =
          probed.costs.emplace(b, costProbe(probed.probe, double(b), cluster))
              .first;
    Composer composer(probed.probe, costs->second, m, cluster, *modelProbe,
                      globalBatch, options.training, cache);
    std::string why;
    std::optional<PlanEstimate> e = composer.estimate(c, /*exact=*/false, &why);
    report(SearchProgress::Stage::Evaluate, int64_t(i + 1),
           int64_t(candidates.size()));
    if (e && !checkFinite(*e, cluster, error))
      return std::nullopt;
    if (!e) {
      pruned[why] += 1;
      continue;
    }
    if (!e->fits) {
      pruned["memory"] += 1;
      if (!leastMemory || e->memory.total() < leastMemory->memory.total())
        leastMemory = *e;
      continue;
    }
    fitting.push_back(*e);
  }
  std::sort(fitting.begin(), fitting.end(), faster);
  // The best by formula, simulated.
  int64_t simulated = 0;
  std::vector<PlanEstimate> ranked = std::move(fitting);
  auto simulate = [&](const PlanConfig &c) {
    Probed &probed = probes[probeKeyOf(c)];
    Composer composer(probed.probe, probed.costs[c.microBatchSize], m, cluster,
                      *modelProbe, globalBatch, options.training, cache);
    std::string why;
    std::optional<PlanEstimate> e = composer.estimate(c, /*exact=*/true, &why);
    report(SearchProgress::Stage::Simulate, ++simulated, 0, c.text());
    if (!e)
      pruned[why] += 1;
    return e;
  };
  if (!rankBySimulation(ranked, options, simulate, pruned, error))
    return std::nullopt;
  report(SearchProgress::Stage::Simulate, simulated, simulated);
  result.plans = std::move(ranked);
  result.model = m.summary;
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  if (result.plans.empty()) {
    *error = noPlanMessage(result, excluded, leastMemory, cluster);
    return std::nullopt;
  }
  return result;
}

} // namespace partition::planner
