//===- ArenaPlannerBench.cpp - arena placement time against value count ---===//
//
// Times part-to-plan's arena planner (ArenaPlanner.h) on generated programs
// of n = 10k, 100k and 1M values shaped like a training step: one value per
// instruction, most read within a few instructions, one in ten saved for
// the backward (live until the instruction mirroring its definition), and
// a few live for the whole step; sizes from a handful of activation shapes.
// Prints the time of each n and the planner's range-set operations (its
// work, apart from the caches), their ratios to the previous n against the
// ratio of n log n, and, as the baseline, the plain scan over every placed
// value (what part-to-plan did before) at the sizes it finishes in
// reasonable time, checking both place every value at the same offset.
//
// Usage: ArenaPlannerBench [--max N] [--scan-max N] [--reps R]
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ArenaPlanner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

using namespace partition::part::arena;

namespace {

constexpr uint64_t kAlignment = 64;

enum class Schedule { OneFOneB, GPipe };

/// One pipeline stage's training step over enough micro-batches for about
/// `n` values: per micro-batch a forward of 200 values and a backward of
/// 300, each value at its own instruction. Most values are read within a
/// few instructions; 15% of the forward's are saved for the micro-batch's
/// backward, and 5% of the backward's (accumulated gradients) live until
/// the next micro-batch's backward. 1F1B runs 4 forwards ahead, so the saved
/// activations of at most 4 micro-batches are live at once; GPipe runs
/// every forward first, so those of every micro-batch are.
std::vector<Buffer> pipelineStep(size_t n, Schedule schedule, uint64_t seed) {
  constexpr int64_t kForward = 200, kBackward = 300, kAhead = 4;
  int64_t microBatches = std::max<int64_t>(1, n / (kForward + kBackward));
  // Where each micro-batch's forward and backward start.
  std::vector<int64_t> forwardAt(microBatches), backwardAt(microBatches);
  int64_t at = 0;
  auto forward = [&](int64_t j) { forwardAt[j] = at, at += kForward; };
  auto backward = [&](int64_t j) { backwardAt[j] = at, at += kBackward; };
  int64_t ahead = schedule == Schedule::GPipe ? microBatches
                                              : std::min(kAhead, microBatches);
  for (int64_t j = 0; j < ahead; ++j)
    forward(j);
  for (int64_t j = 0; j < microBatches; ++j) {
    backward(j);
    if (j + ahead < microBatches)
      forward(j + ahead);
  }
  int64_t last = at - 1;

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> percent(0, 99);
  std::geometric_distribution<int64_t> shortLife(0.4);
  // Activation shapes of a transformer block (bytes, in units of 64 KiB),
  // and small values (norm statistics, scalars).
  const uint64_t shapes[] = {16, 16, 16, 48, 64, 4, 1};
  std::uniform_int_distribution<size_t> shape(0, std::size(shapes) - 1);
  std::uniform_int_distribution<uint64_t> smallBytes(4, 4096);
  auto bytes = [&] {
    return percent(rng) < 20 ? smallBytes(rng) : shapes[shape(rng)] * 65536;
  };
  std::vector<Buffer> buffers;
  for (int64_t j = 0; j < microBatches; ++j) {
    for (int64_t i = 0; i < kForward; ++i) {
      int64_t def = forwardAt[j] + i;
      int64_t lastUse = percent(rng) < 15
                            ? backwardAt[j] + kBackward - 1 - i
                            : def + shortLife(rng);
      buffers.push_back({def, std::min(lastUse, last), bytes()});
    }
    for (int64_t i = 0; i < kBackward; ++i) {
      int64_t def = backwardAt[j] + i;
      int64_t lastUse =
          percent(rng) >= 5         ? def + shortLife(rng)
          : j + 1 < microBatches ? backwardAt[j + 1] + i
                                 : last;
      buffers.push_back({def, std::min(lastUse, last), bytes()});
    }
  }
  return buffers;
}

/// Greedy by size, first fit, by scanning every placed buffer: part-to-plan's
/// planner before ArenaPlanner.
Plan scanPlan(const std::vector<Buffer> &buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t id : order) {
    const Buffer &v = buffers[id];
    uint64_t size = alignedSize(v.bytes, kAlignment);
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t other : placed) {
      const Buffer &o = buffers[other];
      if (o.def <= v.lastUse && v.def <= o.lastUse)
        busy.push_back(
            {plan.offsets[other],
             plan.offsets[other] + alignedSize(o.bytes, kAlignment)});
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[id] = offset;
    plan.peak = std::max(plan.peak, offset + size);
    placed.push_back(id);
  }
  return plan;
}

/// The best of `reps` runs, in seconds.
template <typename F> double bestOf(int reps, F &&run) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

/// Times the planner (and the scan up to `scanMax` values) at n = 10k,
/// 100k, ... up to `max`; false if the two place some value differently.
bool runSchedule(Schedule schedule, size_t max, size_t scanMax, int reps) {
  std::printf("%s\n%8s %9s %12s %12s %10s %12s %10s %10s\n",
              schedule == Schedule::GPipe ? "GPipe" : "1F1B", "values",
              "planner s", "time ratio", "ops/value", "ops ratio",
              "nlogn ratio", "peak MiB", "scan s");
  double previous = 0, previousOps = 0;
  for (size_t n = 10000; n <= max; n *= 10) {
    std::vector<Buffer> buffers = pipelineStep(n, schedule, 28);
    Plan plan;
    double seconds =
        bestOf(reps, [&] { plan = planArena(buffers, kAlignment); });
    std::string scanSeconds = "-";
    if (n <= scanMax) {
      Plan scan;
      scanSeconds =
          std::to_string(bestOf(1, [&] { scan = scanPlan(buffers); }));
      if (scan.offsets != plan.offsets) {
        std::fprintf(stderr,
                     "n = %zu: the planner's offsets differ from the scan's\n",
                     n);
        return false;
      }
    }
    // n log n over (n / 10) log(n / 10).
    double nlogn = 10 * std::log(double(n)) / std::log(double(n) / 10);
    double ops = plan.operations;
    std::printf("%8zu %9.4f %12.2f %12.1f %10.2f %12.2f %10.0f %10s\n",
                buffers.size(), seconds, previous ? seconds / previous : 0.0,
                ops / buffers.size(), previous ? ops / previousOps : 0.0,
                previous ? nlogn : 0.0, plan.peak / 1048576.0,
                scanSeconds.c_str());
    previous = seconds;
    previousOps = ops;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  size_t max = 1000000, scanMax = 10000;
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max"))
      max = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--scan-max"))
      scanMax = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
  }
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe})
    if (!runSchedule(schedule, max, scanMax, reps))
      return 1;
  return 0;
}
