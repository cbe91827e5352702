//===- PipelineSchedule.cpp - pipeline schedules and their simulation -----===//

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

using namespace partition::part::pipeline;

const char *partition::part::pipeline::actionName(Action action) {
  switch (action) {
  case Action::Forward:
    return "F";
  case Action::Backward:
    return "B";
  case Action::BackwardInput:
    return "Bi";
  case Action::BackwardWeight:
    return "W";
  }
  return "?";
}

std::string partition::part::pipeline::stepText(const Step &step,
                                                int64_t chunks) {
  std::string text = actionName(step.action) + std::to_string(step.microBatch);
  if (chunks > 1)
    text += "." + std::to_string(step.chunk);
  return text;
}

std::optional<Step>
partition::part::pipeline::parseStepText(const std::string &text) {
  Step step{Action::Forward, 0, 0};
  size_t at = 0;
  auto take = [&](const char *prefix, Action action) {
    size_t n = std::strlen(prefix);
    if (text.compare(0, n, prefix) != 0)
      return false;
    step.action = action;
    at = n;
    return true;
  };
  // "Bi" before "B".
  if (!take("Bi", Action::BackwardInput) && !take("B", Action::Backward) &&
      !take("W", Action::BackwardWeight) && !take("F", Action::Forward))
    return std::nullopt;
  auto number = [&](int64_t &out) {
    size_t begin = at;
    out = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) &&
           at - begin < 18)
      out = out * 10 + (text[at++] - '0');
    return at > begin;
  };
  if (!number(step.microBatch))
    return std::nullopt;
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (!number(step.chunk))
      return std::nullopt;
  }
  if (at != text.size())
    return std::nullopt;
  return step;
}
const char *partition::part::pipeline::scheduleName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved1F1B:
    return "interleaved-1f1b";
  case ScheduleKind::ZeroBubbleH1:
    return "zero-bubble";
  case ScheduleKind::ZeroBubbleV:
    return "zb-v";
  case ScheduleKind::VHalf:
    return "v-half";
  case ScheduleKind::VMin:
    return "v-min";
  }
  return "?";
}

std::optional<ScheduleKind>
partition::part::pipeline::parseScheduleKind(const std::string &name) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
        ScheduleKind::Interleaved1F1B, ScheduleKind::ZeroBubbleH1,
        ScheduleKind::ZeroBubbleV, ScheduleKind::VHalf, ScheduleKind::VMin})
    if (name == scheduleName(kind))
      return kind;
  return std::nullopt;
}

Placement partition::part::pipeline::placementOf(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::ZeroBubbleV:
  case ScheduleKind::VHalf:
  case ScheduleKind::VMin:
    return Placement::V;
  case ScheduleKind::GPipe:
  case ScheduleKind::OneFOneB:
  case ScheduleKind::Interleaved1F1B:
  case ScheduleKind::ZeroBubbleH1:
    break;
  }
  return Placement::Interleaved;
}

bool partition::part::pipeline::splitsBackward(ScheduleKind kind) {
  return kind == ScheduleKind::ZeroBubbleH1 ||
         placementOf(kind) == Placement::V;
}

int64_t partition::part::pipeline::virtualStage(Placement placement,
                                                int64_t stages, int64_t stage,
                                                int64_t chunk) {
  if (placement == Placement::V)
    return chunk == 0 ? stage : 2 * stages - 1 - stage;
  return chunk * stages + stage;
}

StageChunk partition::part::pipeline::stageChunkOf(Placement placement,
                                                   int64_t stages,
                                                   int64_t virtualStage) {
  if (placement == Placement::V)
    return virtualStage < stages
               ? StageChunk{virtualStage, 0}
               : StageChunk{2 * stages - 1 - virtualStage, 1};
  return {virtualStage % stages, virtualStage / stages};
}

int64_t Schedule::virtualStage(int64_t stage, int64_t chunk) const {
  return pipeline::virtualStage(placement, stages, stage, chunk);
}

StageChunk Schedule::stageChunkOf(int64_t virtualStage) const {
  return pipeline::stageChunkOf(placement, stages, virtualStage);
}

namespace {

/// The steps of 1F1B on stage `s` (PipeDream-flush): p - s - 1 forwards to
/// fill the pipeline, then one forward and one backward in turn, then the
/// remaining backwards.
std::vector<Step> oneFOneB(int64_t p, int64_t m, int64_t s) {
  std::vector<Step> steps;
  int64_t warmup = std::min(p - s - 1, m);
  for (int64_t b = 0; b < warmup; ++b)
    steps.push_back({Action::Forward, b});
  for (int64_t b = 0; b < m; ++b) {
    if (warmup + b < m)
      steps.push_back({Action::Forward, warmup + b});
    steps.push_back({Action::Backward, b});
  }
  return steps;
}

/// ZB-H1: 1F1B with each backward split into Bi (the input's gradient,
/// which the previous stage waits for) and W (the weights' gradients, which
/// nothing waits for), ordered by running the pipeline under unit costs
/// with the priorities Bi, then F, then W, and at most p micro-batches
/// between a stage's F and W (1F1B's peak, on its first stage): a stage
/// that would wait runs a pending W instead, which fills 1F1B's cool-down
/// gaps.
std::vector<std::vector<Step>> zeroBubbleH1(int64_t p, int64_t m) {
  std::vector<std::vector<Step>> steps(p);
  // End times; -1 while not run.
  std::vector<std::vector<double>> fEnd(p, std::vector<double>(m, -1)),
      biEnd(p, std::vector<double>(m, -1));
  std::vector<int64_t> nextF(p, 0), nextBi(p, 0), doneW(p, 0);
  std::vector<std::deque<int64_t>> pendingW(p);
  std::vector<double> free(p, 0);
  int64_t remaining = 3 * p * m;
  for (double t = 0; remaining > 0; t += 1) {
    for (int64_t s = 0; s < p; ++s) {
      if (free[s] > t)
        continue;
      auto doneBy = [&](double end) { return end >= 0 && end <= t; };
      int64_t b = nextBi[s];
      if (b < m && doneBy(fEnd[s][b]) && (s == p - 1 || doneBy(biEnd[s + 1][b]))) {
        steps[s].push_back({Action::BackwardInput, b});
        biEnd[s][b] = t + 1;
        pendingW[s].push_back(b);
        ++nextBi[s];
      } else if (nextF[s] < m && nextF[s] - doneW[s] < p &&
                 (s == 0 || doneBy(fEnd[s - 1][nextF[s]]))) {
        steps[s].push_back({Action::Forward, nextF[s]});
        fEnd[s][nextF[s]] = t + 1;
        ++nextF[s];
      } else if (!pendingW[s].empty()) {
        steps[s].push_back({Action::BackwardWeight, pendingW[s].front()});
        pendingW[s].pop_front();
        ++doneW[s];
      } else {
        continue;
      }
      free[s] = t + 1;
      --remaining;
    }
  }
  return steps;
}

/// Megatron's interleaved 1F1B: stage s holds chunks c = 0..v-1 (virtual
/// stage c * p + s). The k-th forward of a stage runs chunk (k / p) % v of
/// micro-batch (k / (p v)) p + k % p; backwards run the chunks in reverse.
/// Warm-up: (p - s - 1) * 2 + (v - 1) * p forwards.
std::vector<Step> interleaved(int64_t p, int64_t m, int64_t v, int64_t s) {
  int64_t total = m * v;
  auto forwardAt = [&](int64_t k) {
    return Step{Action::Forward, (k / (p * v)) * p + k % p, (k / p) % v};
  };
  auto backwardAt = [&](int64_t k) {
    return Step{Action::Backward, (k / (p * v)) * p + k % p,
                v - 1 - (k / p) % v};
  };
  int64_t warmup = std::min((p - s - 1) * 2 + (v - 1) * p, total);
  std::vector<Step> steps;
  for (int64_t k = 0; k < warmup; ++k)
    steps.push_back(forwardAt(k));
  for (int64_t k = 0; k < total - warmup; ++k) {
    steps.push_back(forwardAt(warmup + k));
    steps.push_back(backwardAt(k));
  }
  for (int64_t k = total - warmup; k < total; ++k)
    steps.push_back(backwardAt(k));
  return steps;
}

/// The building block of V-Half and V-Min (Qi et al. 2024, "Pipeline
/// Parallelism with Controllable Memory", its V-shape building blocks; the
/// slots are those of the reference implementation's stable patterns): the unit-time slots in which
/// stage s runs micro-batch 0's F of chunk 0, F of chunk 1, Bi of chunk 1
/// and Bi of chunk 0, the order the micro-batch visits them. Each step costs
/// one unit; micro-batch b's block is 6 b units later, 6 units being one
/// micro-batch's F, Bi and W of both chunks. The four slots differ modulo 6,
/// so the blocks repeat without colliding, and W fills the other two.
/// The gap between a stage's F of chunk 0 and its Bi of chunk 0 (the
/// block's lifespan) sets the activations held: about 4p units for V-Min
/// (p/3 micro-batches' worth; 1F1B holds p), 6p for V-Half (p/2).
std::array<int64_t, 4> vBlockSlots(ScheduleKind kind, int64_t p, int64_t s) {
  if (kind == ScheduleKind::VMin) {
    // Forwards down the V a unit a stage and back; the backwards right
    // after, 2 units later where p is a multiple of 3 (else two of a stage's
    // slots are equal modulo 6).
    int64_t gap = p % 3 == 0 ? 2 : 0;
    return {s, 2 * p - 1 - s, 2 * p + gap + s, 4 * p + gap - 1 - s};
  }
  // V-Half: chunk 0's forwards and chunk 1's backwards 2 units a stage,
  // the others 1; the backwards 3 units later where p is even (else two
  // slots are equal modulo 6).
  int64_t gap = p % 2 == 0 ? 3 : 0;
  return {2 * s, 3 * p - 2 - s, 3 * p + gap + 2 * s - 1,
          6 * p + gap - 2 - s};
}

/// One stage of a V-shape schedule as unit-time slots: `slots[k][i]` is
/// when the i-th step of kind k runs. Kinds 0-3 are the block's F of chunk
/// 0, F of chunk 1, Bi of chunk 1 and Bi of chunk 0 (the i-th of each is
/// micro-batch i's); then either kind 4, every W in the order of the Bi, or
/// kinds 4 and 5, W of chunk 1 and W of chunk 0.
using Slots = std::vector<std::vector<int64_t>>;

/// The most chunks' activations a stage's slots hold: one from each F to a
/// W. Without W slots, each free slot runs a pending W.
int64_t slotPeak(const Slots &slots) {
  std::vector<std::pair<int64_t, size_t>> taken;
  for (size_t k = 0; k < slots.size(); ++k)
    for (int64_t t : slots[k])
      taken.push_back({t, k});
  std::sort(taken.begin(), taken.end());
  int64_t live = 0, peak = 0, pendingW = 0, next = 0;
  for (auto [t, k] : taken) {
    if (slots.size() == 4) {
      int64_t run = std::min(t - next, pendingW);
      live -= run;
      pendingW -= run;
    }
    next = t + 1;
    if (k < 2)
      ++live;
    else if (k < 4)
      ++pendingW;
    else
      --live;
    peak = std::max(peak, live);
  }
  return peak;
}

/// `slots` (kinds 0-3) with each W in the first free slot after its Bi,
/// oldest first: one kind 4 for all, or per chunk (chunk 1's first).
Slots withWeightSlots(Slots slots, bool perChunk) {
  slots.resize(4);
  std::map<int64_t, size_t> taken;
  for (size_t k = 0; k < 4; ++k)
    for (int64_t t : slots[k])
      taken[t] = k;
  int64_t bound = taken.empty() ? -1 : taken.rbegin()->first;
  slots.resize(perChunk ? 6 : 5);
  int64_t pending[2] = {0, 0};
  for (int64_t t = 0; t <= bound || pending[0] || pending[1]; ++t) {
    auto it = taken.find(t);
    if (it != taken.end()) {
      if (it->second >= 2)
        ++pending[perChunk ? it->second - 2 : 0];
      continue;
    }
    for (int w = 0; w < 2; ++w)
      if (pending[w]) {
        slots[4 + w].push_back(t);
        --pending[w];
        break;
      }
  }
  return slots;
}

/// The slot after which step (k, i) of stage s may run: the steps it reads
/// (the previous virtual stage's for F of chunk 0 and Bi of chunk 1, which
/// go down the stages, the next one's for the others; the micro-batch's
/// previous kind on the stage; W after its Bi) and the step of the same
/// kind before it.
int64_t earliestSlot(const std::vector<Slots> &stages, int64_t s, size_t k,
                     size_t i) {
  int64_t p = stages.size(), after = -1;
  const Slots &own = stages[s];
  if ((k == 0 || k == 2) && s > 0)
    after = std::max(after, stages[s - 1][k][i]);
  if ((k == 1 || k == 3) && s < p - 1)
    after = std::max(after, stages[s + 1][k][i]);
  if (k > 0 && k < 4)
    after = std::max(after, own[k - 1][i]);
  if (k == 4) {
    std::vector<int64_t> bi = own[2];
    bi.insert(bi.end(), own[3].begin(), own[3].end());
    std::sort(bi.begin(), bi.end());
    after = std::max(after, bi[i]);
  }
  if (i > 0)
    after = std::max(after, own[k][i - 1]);
  return after;
}

/// The paper's reordering: steps are taken in slot order and each one of
/// the warm-up (with W slots only) or the cool-down moves to the earliest
/// free slot after what it reads where its stage holds no more than the
/// schedule's most activations. The warm-up lasts until stage 0's first Bi
/// of chunk 0, the cool-down starts after the last F of chunk 0 of any
/// stage; the steady state between keeps its slots.
void reorderSlots(std::vector<Slots> &stages, bool withW) {
  if (withW)
    for (Slots &slots : stages)
      slots = withWeightSlots(slots, /*perChunk=*/false);
  int64_t limit = 0;
  for (const Slots &slots : stages)
    limit = std::max(limit, slotPeak(slots));
  // Steps move only to slots before their own, so the order of those not
  // taken yet stays that of the start.
  std::vector<std::tuple<int64_t, int64_t, size_t, size_t>> order;
  for (int64_t s = 0; s < int64_t(stages.size()); ++s)
    for (size_t k = 0; k < stages[s].size(); ++k)
      for (size_t i = 0; i < stages[s][k].size(); ++i)
        order.push_back({stages[s][k][i], s, k, i});
  std::sort(order.begin(), order.end());
  std::vector<std::set<int64_t>> taken(stages.size());
  enum { WarmUp, Steady, CoolDown } phase = WarmUp;
  size_t lastForward = stages[0][0].size() - 1;
  for (auto [now, s, k, i] : order) {
    if (phase == WarmUp && k == 3 && s == 0)
      phase = Steady;
    if (phase == Steady || (phase == WarmUp && !withW)) {
      if (phase == Steady && k == 0 && i == lastForward)
        phase = CoolDown;
      taken[s].insert(now);
      continue;
    }
    int64_t &slot = stages[s][k][i];
    for (int64_t t = earliestSlot(stages, s, k, i) + 1; t < now; ++t) {
      if (taken[s].count(t))
        continue;
      slot = t;
      if (slotPeak(stages[s]) <= limit)
        break;
      slot = now;
    }
    taken[s].insert(slot);
  }
}

/// V-Half or V-Min (Qi et al. 2024, the paper's construction: building
/// block, repeating, squeezing, reordering; its steps as the reference
/// implementation's generators take them): the block repeated for every
/// micro-batch, reordered with W in the free slots, then reordered again
/// without W, which then take the free slots per chunk. Each stage runs its
/// steps in slot order; the simulation squeezes out the free slots left.
std::vector<std::vector<Step>> vShape(ScheduleKind kind, int64_t p,
                                      int64_t m) {
  std::vector<Slots> stages(p, Slots(4));
  for (int64_t s = 0; s < p; ++s) {
    std::array<int64_t, 4> block = vBlockSlots(kind, p, s);
    for (size_t k = 0; k < 4; ++k)
      for (int64_t b = 0; b < m; ++b)
        stages[s][k].push_back(block[k] + 6 * b);
  }
  reorderSlots(stages, /*withW=*/true);
  for (Slots &slots : stages)
    slots.resize(4);
  reorderSlots(stages, /*withW=*/false);
  const Step kinds[6] = {
      {Action::Forward, 0, 0},        {Action::Forward, 0, 1},
      {Action::BackwardInput, 0, 1},  {Action::BackwardInput, 0, 0},
      {Action::BackwardWeight, 0, 1}, {Action::BackwardWeight, 0, 0}};
  std::vector<std::vector<Step>> steps(p);
  for (int64_t s = 0; s < p; ++s) {
    Slots slots = withWeightSlots(stages[s], /*perChunk=*/true);
    std::vector<std::pair<int64_t, Step>> timed;
    for (size_t k = 0; k < 6; ++k)
      for (size_t b = 0; b < slots[k].size(); ++b)
        timed.push_back({slots[k][b], Step{kinds[k].action, int64_t(b),
                                           kinds[k].chunk}});
    std::sort(timed.begin(), timed.end(),
              [](const auto &x, const auto &y) { return x.first < y.first; });
    for (const auto &entry : timed)
      steps[s].push_back(entry.second);
  }
  return steps;
}

/// ZB-V's planned F and Bi on stage `s`, counting stages from 0 (Qi et al.
/// 2023, "Zero Bubble Pipeline Parallelism", §6): a warm-up of 2p - 1
/// forwards, 2p - 1 - s of chunk 0 and s of chunk 1 (chunk 0 alone until
/// chunk 1's first forward comes back up the V, then the two in turn); then
/// groups of one chunk's F and Bi (only Bi once the chunk's forwards are
/// done): p - 1 - s groups of chunk 1, then chunk 1 and chunk 0 in turn
/// until every forward is placed. `backwards` counts the Bi placed per
/// chunk; the rest, and every W, zeroBubbleV places as the pipeline runs.
std::vector<Step> zeroBubbleVPlan(int64_t p, int64_t m, int64_t s,
                                  int64_t backwards[2]) {
  std::vector<Step> plan;
  int64_t forwards[2] = {0, 0};
  backwards[0] = backwards[1] = 0;
  auto forward = [&](int64_t c) {
    if (forwards[c] < m)
      plan.push_back({Action::Forward, forwards[c]++, c});
  };
  auto group = [&](int64_t c) {
    if (backwards[c] >= m)
      return;
    forward(c);
    plan.push_back({Action::BackwardInput, backwards[c]++, c});
  };
  for (int64_t k = 0; k < 2 * p - 1 - 2 * s; ++k)
    forward(0);
  for (int64_t k = 0; k < s; ++k) {
    forward(1);
    forward(0);
  }
  for (int64_t k = 0; k < p - 1 - s; ++k)
    group(1);
  for (int64_t c = 1; forwards[0] < m || forwards[1] < m; c = 1 - c)
    group(c);
  return plan;
}

/// ZB-V: each stage runs its plan in order, all steps one unit. A W runs
/// where the next planned step is not ready yet (it fills what would be a
/// bubble) or before a forward that would hold more than 2p chunks'
/// activations (1F1B's p micro-batches: the paper's memory limit; W frees
/// them). Once the plan is done, the remaining Bi run as they become ready
/// (chunk 1 first), W filling the waits, as the paper's cool-down does.
std::vector<std::vector<Step>> zeroBubbleV(int64_t p, int64_t m) {
  std::vector<std::vector<Step>> steps(p), plans(p);
  std::vector<std::array<int64_t, 2>> backwards(p);
  for (int64_t s = 0; s < p; ++s)
    plans[s] = zeroBubbleVPlan(p, m, s, backwards[s].data());
  // (action, micro-batch, virtual stage) -> end time.
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> end;
  auto doneBy = [&](Action a, int64_t b, int64_t vs, int64_t t) {
    auto it = end.find({int(a), b, vs});
    return it != end.end() && it->second <= t;
  };
  auto ready = [&](int64_t s, const Step &step, int64_t t) {
    int64_t vs = virtualStage(Placement::V, p, s, step.chunk);
    int64_t b = step.microBatch;
    if (step.action == Action::Forward)
      return vs == 0 || doneBy(Action::Forward, b, vs - 1, t);
    return doneBy(Action::Forward, b, vs, t) &&
           (vs == 2 * p - 1 || doneBy(Action::BackwardInput, b, vs + 1, t));
  };
  std::vector<size_t> next(p, 0);
  std::vector<int64_t> live(p, 0), free(p, 0);
  std::vector<std::deque<Step>> pendingW(p);
  int64_t remaining = 6 * p * m;
  // Every step runs by 6pm + 4p units; the bound only guards the loop.
  for (int64_t t = 0; remaining > 0 && t <= 12 * p * m + 4 * p; ++t) {
    for (int64_t s = 0; s < p; ++s) {
      if (free[s] > t)
        continue;
      std::optional<Step> choice;
      if (next[s] < plans[s].size()) {
        const Step &want = plans[s][next[s]];
        bool full = want.action == Action::Forward && live[s] >= 2 * p;
        if (!(full && !pendingW[s].empty()) && ready(s, want, t)) {
          choice = want;
          ++next[s];
        }
      } else {
        for (int64_t c : {1, 0}) {
          Step bi{Action::BackwardInput, backwards[s][c], c};
          if (bi.microBatch < m && ready(s, bi, t)) {
            choice = bi;
            ++backwards[s][c];
            break;
          }
        }
      }
      if (!choice && !pendingW[s].empty()) {
        choice = pendingW[s].front();
        pendingW[s].pop_front();
      }
      if (!choice)
        continue;
      if (choice->action == Action::BackwardInput)
        pendingW[s].push_back(
            {Action::BackwardWeight, choice->microBatch, choice->chunk});
      live[s] += choice->action == Action::Forward          ? 1
                 : choice->action == Action::BackwardWeight ? -1
                                                            : 0;
      end[{int(choice->action), choice->microBatch,
           virtualStage(Placement::V, p, s, choice->chunk)}] = t + 1;
      free[s] = t + 1;
      steps[s].push_back(*choice);
      --remaining;
    }
  }
  return steps;
}

} // namespace

std::string Schedule::describe() const {
  std::ostringstream os;
  for (int64_t s = 0; s < int64_t(steps.size()); ++s) {
    os << "stage " << s << ":";
    for (const Step &step : steps[s])
      os << " " << stepText(step, chunks);
    os << "\n";
  }
  return os.str();
}

namespace {

/// Why `kind` cannot run on `stages` stages, `microBatches` micro-batches
/// and `chunks` chunks per stage; empty if it can.
std::string unsupportedShape(ScheduleKind kind, int64_t stages,
                             int64_t microBatches, int64_t chunks) {
  if (stages < 1)
    return "a pipeline needs at least one stage, got " +
           std::to_string(stages);
  if (microBatches < 1)
    return "a pipeline needs at least one micro-batch, got " +
           std::to_string(microBatches);
  std::string name = scheduleName(kind);
  if (kind == ScheduleKind::Interleaved1F1B) {
    if (chunks < 2)
      return "the interleaved schedule needs at least 2 virtual stages "
             "per stage (virtual-stages), got " +
             std::to_string(chunks);
    if (microBatches % stages)
      return "the interleaved schedule needs a number of micro-batches "
             "that is a multiple of the " +
             std::to_string(stages) + " stages, got " +
             std::to_string(microBatches);
    return "";
  }
  if (placementOf(kind) == Placement::V) {
    if (chunks != 2)
      return "the " + name +
             " schedule runs 2 chunks per stage (virtual stages, in a V), "
             "got " +
             std::to_string(chunks);
    if (kind == ScheduleKind::ZeroBubbleV && microBatches < 2 * stages - 1)
      return "the zb-v schedule needs at least 2 * stages - 1 = " +
             std::to_string(2 * stages - 1) + " micro-batches for " +
             std::to_string(stages) +
             " stages (its first stage's warm-up runs that many forwards), "
             "got " +
             std::to_string(microBatches);
    return "";
  }
  if (chunks != 1)
    return "virtual stages are for the interleaved and V schedules, not " +
           name;
  return "";
}

} // namespace

std::optional<Schedule>
partition::part::pipeline::makeSchedule(ScheduleKind kind, int64_t stages,
                                        int64_t microBatches, int64_t chunks,
                                        std::string *error) {
  std::string why = unsupportedShape(kind, stages, microBatches, chunks);
  if (!why.empty()) {
    if (error)
      *error = why;
    return std::nullopt;
  }
  Schedule schedule;
  schedule.kind = kind;
  schedule.placement = placementOf(kind);
  schedule.stages = stages;
  schedule.microBatches = microBatches;
  schedule.chunks = chunks;
  if (kind == ScheduleKind::ZeroBubbleH1) {
    schedule.steps = zeroBubbleH1(stages, microBatches);
    return schedule;
  }
  if (kind == ScheduleKind::ZeroBubbleV) {
    schedule.steps = zeroBubbleV(stages, microBatches);
    return schedule;
  }
  if (kind == ScheduleKind::VHalf || kind == ScheduleKind::VMin) {
    schedule.steps = vShape(kind, stages, microBatches);
    return schedule;
  }
  for (int64_t s = 0; s < stages; ++s) {
    std::vector<Step> steps;
    switch (kind) {
    case ScheduleKind::GPipe:
      for (int64_t b = 0; b < microBatches; ++b)
        steps.push_back({Action::Forward, b});
      for (int64_t b = 0; b < microBatches; ++b)
        steps.push_back({Action::Backward, b});
      break;
    case ScheduleKind::OneFOneB:
      steps = oneFOneB(stages, microBatches, s);
      break;
    case ScheduleKind::Interleaved1F1B:
      steps = interleaved(stages, microBatches, chunks, s);
      break;
    case ScheduleKind::ZeroBubbleH1:
    case ScheduleKind::ZeroBubbleV:
    case ScheduleKind::VHalf:
    case ScheduleKind::VMin:
      break; // above
    }
    schedule.steps.push_back(std::move(steps));
  }
  return schedule;
}

namespace {

/// Why `schedule` does not list every (micro-batch, chunk) once forward and
/// once backward (B, or Bi and W) on every stage; empty if it does.
std::string malformedSteps(const Schedule &schedule) {
  int64_t p = schedule.stages, m = schedule.microBatches,
          v = schedule.chunks;
  if (int64_t(schedule.steps.size()) != p)
    return "the schedule lists " + std::to_string(schedule.steps.size()) +
           " stages for a pipeline of " + std::to_string(p);
  if (schedule.placement == Placement::V && v != 2)
    return "a V placement has 2 chunks per stage, not " + std::to_string(v);
  for (int64_t s = 0; s < p; ++s) {
    std::map<std::tuple<int, int64_t, int64_t>, int> count;
    bool split = false, whole = false;
    for (const Step &step : schedule.steps[s]) {
      if (step.microBatch < 0 || step.microBatch >= m || step.chunk < 0 ||
          step.chunk >= v)
        return "stage " + std::to_string(s) + " runs " + stepText(step, v) +
               ", outside " + std::to_string(m) + " micro-batches and " +
               std::to_string(v) + " chunks";
      ++count[{int(step.action), step.microBatch, step.chunk}];
      split |= step.action == Action::BackwardInput ||
               step.action == Action::BackwardWeight;
      whole |= step.action == Action::Backward;
    }
    if (split && whole)
      return "stage " + std::to_string(s) +
             " mixes whole backwards (B) with split ones (Bi, W)";
    std::vector<Action> needed = {Action::Forward};
    if (split) {
      needed.push_back(Action::BackwardInput);
      needed.push_back(Action::BackwardWeight);
    } else {
      needed.push_back(Action::Backward);
    }
    for (int64_t c = 0; c < v; ++c)
      for (int64_t b = 0; b < m; ++b)
        for (Action a : needed) {
          int n = count[{int(a), b, c}];
          if (n != 1)
            return "stage " + std::to_string(s) +
                   (n ? " repeats " : " lacks ") + stepText({a, b, c}, v);
        }
  }
  return "";
}

/// simulate()'s run: a step starts when its stage is free and what it reads
/// exists; the order the stages are visited in does not change the times.
class Run {
public:
  Run(const Schedule &schedule, const StepCost &stepCost)
      : schedule(schedule), stepCost(stepCost), p(schedule.stages),
        splitStage(p, false) {
    for (int64_t s = 0; s < p; ++s)
      for (const Step &step : schedule.steps[s])
        splitStage[s] = splitStage[s] || step.action == Action::BackwardInput;
  }

  /// Runs every step; returns the deadlock, if any, naming each stage that
  /// waits, the step it waits at and the first input it lacks.
  std::string run(Timeline &t) {
    t.start.assign(p, {});
    std::vector<size_t> next(p, 0);
    free.assign(p, 0);
    busy.assign(p, 0);
    size_t remaining = 0;
    for (const auto &steps : schedule.steps)
      remaining += steps.size();
    while (remaining) {
      bool progress = false;
      for (int64_t s = 0; s < p; ++s)
        while (next[s] < schedule.steps[s].size()) {
          const Step &step = schedule.steps[s][next[s]];
          std::optional<double> ready = inputs(step, s, nullptr);
          if (!ready)
            break;
          double begin = std::max(free[s], *ready);
          t.start[s].push_back(begin);
          done[{int(step.action), step.microBatch,
                schedule.virtualStage(s, step.chunk)}] =
              begin + cost(s, step);
          free[s] = begin + cost(s, step);
          busy[s] += cost(s, step);
          ++next[s];
          --remaining;
          progress = true;
        }
      if (!progress)
        return deadlock(next);
    }
    return "";
  }

  /// The times, bubbles and activations in flight of a run that ended.
  void measure(Timeline &t) const {
    t.bubble.assign(p, 0);
    t.peakInFlight.assign(p, 0);
    t.begin.assign(p, 0);
    t.end.assign(p, 0);
    for (int64_t s = 0; s < p; ++s)
      t.makespan = std::max(t.makespan, free[s]);
    double longest = 0, most = 0;
    for (int64_t s = 0; s < p; ++s) {
      t.bubble[s] = t.makespan > 0 ? 1.0 - busy[s] / t.makespan : 0;
      t.end[s] = free[s];
      t.begin[s] = t.start[s].empty() ? 0 : t.start[s].front();
      longest = std::max(longest, t.end[s] - t.begin[s]);
      most = std::max(most, busy[s]);
      t.peakInFlight[s] = peakInFlight(t, s);
    }
    t.bubbleRate = longest > 0 ? 1.0 - most / longest : 0;
  }

private:
  double cost(int64_t s, const Step &step) const {
    if (stepCost)
      return stepCost(s, step);
    return step.action == Action::Backward ? 2.0 : 1.0;
  }

  std::optional<double> ended(Action a, int64_t b, int64_t vs) const {
    auto it = done.find({int(a), b, vs});
    if (it == done.end())
      return std::nullopt;
    return it->second;
  }

  /// "F3.1 on stage 2": the step of micro-batch b on virtual stage vs.
  std::string name(Action a, int64_t b, int64_t vs) const {
    StageChunk at = schedule.stageChunkOf(vs);
    return stepText({a, b, at.chunk}, schedule.chunks) + " on stage " +
           std::to_string(at.stage);
  }

  /// When what `step` of stage `s` reads exists, or nullopt with `missing`
  /// naming the first input that does not.
  std::optional<double> inputs(const Step &step, int64_t s,
                               std::string *missing) const {
    int64_t vs = schedule.virtualStage(s, step.chunk);
    int64_t b = step.microBatch;
    int64_t last = p * schedule.chunks - 1;
    double ready = 0;
    // `shown`: how the diagnostic names the step.
    auto need = [&](Action a, int64_t at, Action shown) {
      std::optional<double> t = ended(a, b, at);
      if (!t) {
        if (missing && missing->empty())
          *missing = name(shown, b, at);
        return false;
      }
      ready = std::max(ready, *t);
      return true;
    };
    // The backward of (b, at) that its input's producer waits for.
    auto inputGradient = [&](int64_t at) {
      return splitStage[schedule.stageChunkOf(at).stage]
                 ? Action::BackwardInput
                 : Action::Backward;
    };
    bool ok = true;
    switch (step.action) {
    case Action::Forward:
      if (vs > 0)
        ok = need(Action::Forward, vs - 1, Action::Forward);
      break;
    case Action::Backward:
    case Action::BackwardInput:
      ok = need(Action::Forward, vs, Action::Forward);
      // The producer's backward is named B whether whole or split.
      if (ok && vs < last)
        ok = need(inputGradient(vs + 1), vs + 1, Action::Backward);
      break;
    case Action::BackwardWeight:
      ok = need(Action::BackwardInput, vs, Action::BackwardInput);
      break;
    }
    for (const Transfer &x : schedule.transfers)
      if (ok && step.chunk == x.toChunk && x.toStage == s &&
          x.toAction == step.action)
        ok = need(x.fromAction,
                  schedule.virtualStage(x.fromStage, x.fromChunk),
                  x.fromAction);
    if (!ok)
      return std::nullopt;
    return ready;
  }

  std::string deadlock(const std::vector<size_t> &next) const {
    std::ostringstream os;
    os << "the schedule deadlocks:";
    for (int64_t s = 0; s < p; ++s) {
      if (next[s] == schedule.steps[s].size())
        continue;
      const Step &step = schedule.steps[s][next[s]];
      std::string missing;
      inputs(step, s, &missing);
      os << " stage " << s << " waits at "
         << stepText(step, schedule.chunks) << " (step " << next[s]
         << ") for " << missing << ";";
    }
    std::string text = os.str();
    text.pop_back();
    return text;
  }

  /// The most (micro-batch, chunk) pairs stage `s` holds at once: each from
  /// its forward's start to the end of its last backward step; frees before
  /// takes at the same time.
  int64_t peakInFlight(const Timeline &t, int64_t s) const {
    std::vector<std::pair<double, int>> events;
    const auto &steps = schedule.steps[s];
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step &step = steps[i];
      if (step.action == Action::Forward)
        events.push_back({t.start[s][i], +1});
      else if (step.action != Action::BackwardInput)
        events.push_back({t.start[s][i] + cost(s, step), -1});
    }
    std::sort(events.begin(), events.end());
    int64_t live = 0, peak = 0;
    for (auto [time, delta] : events) {
      live += delta;
      peak = std::max(peak, live);
    }
    return peak;
  }

  const Schedule &schedule;
  const StepCost &stepCost;
  int64_t p;
  std::vector<bool> splitStage;
  /// (action, micro-batch, virtual stage) -> end time.
  std::map<std::tuple<int, int64_t, int64_t>, double> done;
  std::vector<double> free, busy;
};

} // namespace

std::optional<Timeline>
partition::part::pipeline::simulate(const Schedule &schedule,
                                    std::string *error,
                                    const StepCost &stepCost) {
  auto fail = [&](const std::string &why) -> std::optional<Timeline> {
    if (error)
      *error = why;
    return std::nullopt;
  };
  std::string malformed = malformedSteps(schedule);
  if (!malformed.empty())
    return fail(malformed);
  Run run(schedule, stepCost);
  Timeline t;
  std::string deadlock = run.run(t);
  if (!deadlock.empty())
    return fail(deadlock);
  run.measure(t);
  return t;
}
