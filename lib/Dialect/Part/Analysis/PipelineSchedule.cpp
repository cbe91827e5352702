//===- PipelineSchedule.cpp - pipeline schedules and their simulation -----===//

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <map>
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
  }
  return "?";
}

std::optional<ScheduleKind>
partition::part::pipeline::parseScheduleKind(const std::string &name) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
        ScheduleKind::Interleaved1F1B, ScheduleKind::ZeroBubbleH1})
    if (name == scheduleName(kind))
      return kind;
  return std::nullopt;
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

std::optional<Schedule>
partition::part::pipeline::makeSchedule(ScheduleKind kind, int64_t stages,
                                        int64_t microBatches, int64_t chunks,
                                        std::string *error) {
  auto fail = [&](const std::string &why) -> std::optional<Schedule> {
    if (error)
      *error = why;
    return std::nullopt;
  };
  if (stages < 1)
    return fail("a pipeline needs at least one stage, got " +
                std::to_string(stages));
  if (microBatches < 1)
    return fail("a pipeline needs at least one micro-batch, got " +
                std::to_string(microBatches));
  if (kind == ScheduleKind::Interleaved1F1B) {
    if (chunks < 2)
      return fail("the interleaved schedule needs at least 2 virtual stages "
                  "per stage (virtual-stages), got " +
                  std::to_string(chunks));
    if (microBatches % stages)
      return fail("the interleaved schedule needs a number of micro-batches "
                  "that is a multiple of the " +
                  std::to_string(stages) + " stages, got " +
                  std::to_string(microBatches));
  } else if (chunks != 1) {
    return fail(std::string("virtual stages are for the interleaved "
                            "schedule, not ") +
                scheduleName(kind));
  }
  Schedule schedule;
  schedule.kind = kind;
  schedule.stages = stages;
  schedule.microBatches = microBatches;
  schedule.chunks = chunks;
  if (kind == ScheduleKind::ZeroBubbleH1) {
    schedule.steps = zeroBubbleH1(stages, microBatches);
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
      break; // above
    }
    schedule.steps.push_back(std::move(steps));
  }
  return schedule;
}

std::optional<Timeline>
partition::part::pipeline::simulate(const Schedule &schedule,
                                    std::string *error,
                                    const StepCost &stepCost) {
  auto fail = [&](const std::string &why) -> std::optional<Timeline> {
    if (error)
      *error = why;
    return std::nullopt;
  };
  int64_t p = schedule.stages, m = schedule.microBatches,
          v = schedule.chunks;
  if (int64_t(schedule.steps.size()) != p)
    return fail("the schedule lists " + std::to_string(schedule.steps.size()) +
                " stages for a pipeline of " + std::to_string(p));
  // Every (micro-batch, chunk) once forward and once backward (B, or Bi and
  // W) on every stage.
  for (int64_t s = 0; s < p; ++s) {
    std::map<std::tuple<int, int64_t, int64_t>, int> count;
    bool split = false, whole = false;
    for (const Step &step : schedule.steps[s]) {
      if (step.microBatch < 0 || step.microBatch >= m || step.chunk < 0 ||
          step.chunk >= v)
        return fail("stage " + std::to_string(s) + " runs " +
                    stepText(step, v) + ", outside " + std::to_string(m) +
                    " micro-batches and " + std::to_string(v) + " chunks");
      ++count[{int(step.action), step.microBatch, step.chunk}];
      split |= step.action == Action::BackwardInput ||
               step.action == Action::BackwardWeight;
      whole |= step.action == Action::Backward;
    }
    if (split && whole)
      return fail("stage " + std::to_string(s) +
                  " mixes whole backwards (B) with split ones (Bi, W)");
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
            return fail("stage " + std::to_string(s) +
                        (n ? " repeats " : " lacks ") +
                        stepText({a, b, c}, v));
        }
  }

  // Event-driven: a step starts when its stage is free and what it reads
  // exists; the order the stages are visited in does not change the times.
  // Unit costs unless `stepCost` gives each step's.
  auto cost = [&](int64_t s, const Step &step) {
    if (stepCost)
      return stepCost(s, step);
    return step.action == Action::Backward ? 2.0 : 1.0;
  };
  auto stageOf = [&](int64_t virtualStage) { return virtualStage % p; };
  auto chunkOf = [&](int64_t virtualStage) { return virtualStage / p; };
  // (action, micro-batch, virtual stage) -> end time.
  std::map<std::tuple<int, int64_t, int64_t>, double> done;
  auto ended = [&](Action a, int64_t b, int64_t vs) -> std::optional<double> {
    auto it = done.find({int(a), b, vs});
    if (it == done.end())
      return std::nullopt;
    return it->second;
  };
  // The backward of (b, vs) that its input's producer waits for.
  std::vector<bool> splitStage(p, false);
  for (int64_t s = 0; s < p; ++s)
    for (const Step &step : schedule.steps[s])
      splitStage[s] = splitStage[s] || step.action == Action::BackwardInput;
  auto inputGradient = [&](int64_t b, int64_t vs) {
    return ended(splitStage[stageOf(vs)] ? Action::BackwardInput
                                         : Action::Backward,
                 b, vs);
  };
  int64_t last = p * v - 1;
  // What a step reads: the times they end, or the first missing one.
  auto inputs = [&](const Step &step, int64_t s, std::string *missing)
      -> std::optional<double> {
    int64_t vs = step.chunk * p + s;
    double ready = 0;
    auto need = [&](std::optional<double> t, const std::string &what) {
      if (!t) {
        if (missing && missing->empty())
          *missing = what;
        return false;
      }
      ready = std::max(ready, *t);
      return true;
    };
    auto name = [&](Action a, int64_t b, int64_t at) {
      return stepText({a, b, chunkOf(at)}, v) + " on stage " +
             std::to_string(stageOf(at));
    };
    bool ok = true;
    switch (step.action) {
    case Action::Forward:
      if (vs > 0)
        ok = need(ended(Action::Forward, step.microBatch, vs - 1),
                  name(Action::Forward, step.microBatch, vs - 1));
      break;
    case Action::Backward:
    case Action::BackwardInput:
      ok = need(ended(Action::Forward, step.microBatch, vs),
                name(Action::Forward, step.microBatch, vs));
      if (ok && vs < last)
        ok = need(inputGradient(step.microBatch, vs + 1),
                  name(Action::Backward, step.microBatch, vs + 1));
      break;
    case Action::BackwardWeight:
      ok = need(ended(Action::BackwardInput, step.microBatch, vs),
                name(Action::BackwardInput, step.microBatch, vs));
      break;
    }
    for (const Transfer &x : schedule.transfers)
      if (ok && step.chunk == x.toChunk && x.toStage == s &&
          x.toAction == step.action)
        ok = need(ended(x.fromAction, step.microBatch,
                        x.fromChunk * p + x.fromStage),
                  name(x.fromAction, step.microBatch,
                       x.fromChunk * p + x.fromStage));
    if (!ok)
      return std::nullopt;
    return ready;
  };

  Timeline t;
  t.bubble.assign(p, 0);
  t.peakInFlight.assign(p, 0);
  t.start.resize(p);
  std::vector<size_t> next(p, 0);
  std::vector<double> free(p, 0), busy(p, 0);
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
        double end = begin + cost(s, step);
        t.start[s].push_back(begin);
        done[{int(step.action), step.microBatch, step.chunk * p + s}] = end;
        free[s] = end;
        busy[s] += cost(s, step);
        ++next[s];
        --remaining;
        progress = true;
      }
    if (progress)
      continue;
    std::ostringstream os;
    os << "the schedule deadlocks:";
    for (int64_t s = 0; s < p; ++s) {
      if (next[s] == schedule.steps[s].size())
        continue;
      const Step &step = schedule.steps[s][next[s]];
      std::string missing;
      inputs(step, s, &missing);
      os << " stage " << s << " waits at " << stepText(step, v) << " (step "
         << next[s] << ") for " << missing << ";";
    }
    std::string text = os.str();
    text.pop_back();
    return fail(text);
  }

  for (int64_t s = 0; s < p; ++s)
    t.makespan = std::max(t.makespan, free[s]);
  for (int64_t s = 0; s < p; ++s) {
    t.bubble[s] = t.makespan > 0 ? 1.0 - busy[s] / t.makespan : 0;
    // In flight: a (micro-batch, chunk) from its forward's start to the end
    // of its last backward step; frees before takes at the same time.
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
    int64_t live = 0;
    for (auto [time, delta] : events) {
      live += delta;
      t.peakInFlight[s] = std::max(t.peakInFlight[s], live);
    }
  }
  return t;
}
