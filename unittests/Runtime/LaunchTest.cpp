//===- LaunchTest.cpp - launcher variables, rank records, Gloo address ----===//
//
// readLaunchEnvironment over each launcher's variables and their errors;
// rank records that round-trip, and forged or truncated ones that must give
// a diagnostic naming the key and rank (never an abort); superviseRanks with
// children that exit, die or stop; StoreWatch's alarm and done keys; the
// ranks' join and its verdict on missing ranks; the address Gloo listens on.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Launch.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/cpu/GlooCommunicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

using namespace partition::runtime;

namespace {

using Env = std::map<std::string, std::string>;

StatusOr<std::optional<LaunchEnvironment>> readEnv(const Env &env) {
  return readLaunchEnvironment([&](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

Env master(Env env) {
  env.emplace("MASTER_ADDR", "10.0.0.1");
  env.emplace("MASTER_PORT", "29500");
  env.emplace("PARTITION_STORE_TOKEN", "t0k3n");
  return env;
}

TEST(LaunchEnvironment, NoLauncher) {
  StatusOr<std::optional<LaunchEnvironment>> env = readEnv(master({}));
  ASSERT_TRUE(env.isOk()) << env.status().toString();
  EXPECT_FALSE(env->has_value());
}

TEST(LaunchEnvironment, EachLauncher) {
  struct Case {
    const char *launcher, *rank, *size, *local;
  } cases[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK"},
  };
  for (const Case &c : cases) {
    StatusOr<std::optional<LaunchEnvironment>> env =
        readEnv(master({{c.rank, "5"}, {c.size, "8"}, {c.local, "1"}}));
    ASSERT_TRUE(env.isOk()) << c.launcher << ": " << env.status().toString();
    ASSERT_TRUE(env->has_value()) << c.launcher;
    const LaunchEnvironment &e = **env;
    EXPECT_EQ(e.launcher, c.launcher);
    EXPECT_EQ(e.rank, 5);
    EXPECT_EQ(e.worldSize, 8);
    EXPECT_EQ(e.localRank, 1);
    EXPECT_EQ(e.masterAddr, "10.0.0.1");
    EXPECT_EQ(e.masterPort, 29500);
    EXPECT_EQ(e.token, "t0k3n");
  }
}

TEST(LaunchEnvironment, TorchrunFirstAndSingleTasksIgnored) {
  // partition-run --processes sets RANK in its children, which may run
  // inside a Slurm job.
  StatusOr<std::optional<LaunchEnvironment>> env =
      readEnv(master({{"RANK", "1"},
                      {"WORLD_SIZE", "2"},
                      {"SLURM_PROCID", "3"},
                      {"SLURM_NTASKS", "4"}}));
  ASSERT_TRUE(env.isOk());
  EXPECT_EQ((*env)->launcher, "torchrun");
  EXPECT_EQ((*env)->rank, 1);
  EXPECT_EQ((*env)->localRank, 1) << "no LOCAL_RANK: the rank";
  // One Slurm task (an sbatch script) runs every rank itself.
  env = readEnv(master({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  ASSERT_TRUE(env.isOk());
  EXPECT_FALSE(env->has_value());
}

TEST(LaunchEnvironment, ErrorsNameTheVariable) {
  struct Case {
    Env env;
    const char *message;
  } cases[] = {
      {master({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"MASTER_PORT", "abc"}}),
       "MASTER_PORT=\"abc\" is not a port (an integer in 1..65535)"},
      {master({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"MASTER_PORT", "70000"}}),
       "MASTER_PORT=\"70000\" is not a port"},
      {master({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"MASTER_PORT", ""}}),
       "MASTER_PORT=\"\" is not a port"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"MASTER_PORT", "1"}},
       "missing: MASTER_ADDR)"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "4"}},
       "missing: MASTER_ADDR and MASTER_PORT)"},
      {master({{"OMPI_COMM_WORLD_RANK", "2"}}),
       "OMPI_COMM_WORLD_RANK=2 is set (openmpi), but OMPI_COMM_WORLD_SIZE "
       "is not"},
      {master({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "4"}}),
       "SLURM_PROCID=\"x\" is not a rank of SLURM_NTASKS=4"},
      {master({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}),
       "RANK=\"-1\" is not a rank"},
      {master({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
       "WORLD_SIZE=\"0\" is not a world size"},
      {master({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "a"}}),
       "LOCAL_RANK=\"a\" is not a local rank"},
      {{{"RANK", "0"},
        {"WORLD_SIZE", "4"},
        {"MASTER_ADDR", "h"},
        {"MASTER_PORT", "1"}},
       "PARTITION_STORE_TOKEN is not set"},
  };
  for (const Case &c : cases) {
    StatusOr<std::optional<LaunchEnvironment>> env = readEnv(c.env);
    ASSERT_FALSE(env.isOk()) << c.message;
    EXPECT_EQ(env.status().code(), StatusCode::InvalidArgument);
    EXPECT_NE(env.status().message().find(c.message), std::string::npos)
        << env.status().message();
  }
}

TEST(StoreToken, RandomHex) {
  StatusOr<std::string> a = makeStoreToken(), b = makeStoreToken();
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(*a, *b);
}

RankReport sampleReport() {
  RankReport r;
  r.coordinates = {1, 0};
  r.setupMs = 1.5;
  r.stepMs = 0.25;
  r.peakBytes = 4096;
  r.memory.parameters = 64;
  r.memory.scratch = 8;
  HostTensor t;
  t.dtype = DType::F16;
  t.shape = {2, 3};
  t.data.assign(12, 7);
  r.outputs["y"] = t;
  HostTensor s;
  s.dtype = DType::F32;
  s.data.assign(4, 1);
  r.outputs["loss"] = s;
  TraceEvent e;
  e.name = "Matmul";
  e.category = "kernel";
  e.origin = "m.mlir:3:4";
  e.track = TraceTrack::Communication;
  e.instruction = 5;
  e.step = 2;
  e.startUs = 10;
  e.durationUs = 3;
  e.issuedUs = 9;
  r.trace.push_back(e);
  return r;
}

TEST(RankRecord, RoundTrips) {
  std::vector<char> bytes = packRankReport(sampleReport());
  StatusOr<RankMessage> m = unpackRankMessage(bytes, "result/1", 1);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_FALSE(m->failed);
  const RankReport &r = m->report;
  EXPECT_EQ(r.coordinates, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(r.setupMs, 1.5);
  EXPECT_EQ(r.peakBytes, 4096u);
  EXPECT_EQ(r.memory.parameters, 64);
  EXPECT_EQ(r.memory.scratch, 8);
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs.at("y").dtype, DType::F16);
  EXPECT_EQ(r.outputs.at("y").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs.at("y").data, std::vector<char>(12, 7));
  EXPECT_TRUE(r.outputs.at("loss").shape.empty());
  ASSERT_EQ(r.trace.size(), 1u);
  EXPECT_EQ(r.trace[0].origin, "m.mlir:3:4");
  EXPECT_EQ(r.trace[0].track, TraceTrack::Communication);
  EXPECT_EQ(r.trace[0].issuedUs, 9);

  m = unpackRankMessage(packRankError("aborted: boom"), "result/3", 3);
  ASSERT_TRUE(m.isOk());
  EXPECT_TRUE(m->failed);
  EXPECT_EQ(m->errorText, "aborted: boom");
}

/// Overwrites the i64 at byte `at` of `bytes`.
void poke(std::vector<char> &bytes, size_t at, int64_t v) {
  ASSERT_LE(at + 8, bytes.size());
  std::memcpy(bytes.data() + at, &v, 8);
}

TEST(RankRecord, ForgedOrTruncatedIsADiagnostic) {
  const std::vector<char> good = packRankReport(sampleReport());
  // Byte offsets in the record of sampleReport(): '+', coordinates (8 + 16),
  // setup, step, peak (24), memory (48), output count (8), then the first
  // output ("loss", the map's first): name length at 105.
  const size_t outputCount = 1 + 24 + 24 + 48, lossName = outputCount + 8;
  struct Case {
    const char *what;
    std::function<void(std::vector<char> &)> forge;
    const char *message;
  } cases[] = {
      {"empty", [](std::vector<char> &b) { b.clear(); }, "it is empty"},
      {"bad tag", [](std::vector<char> &b) { b[0] = 'x'; },
       "it starts with byte 120"},
      {"huge coordinate count",
       [](std::vector<char> &b) { poke(b, 1, 1ll << 60); },
       "coordinate count is 1152921504606846976, but only"},
      {"negative output count",
       [&](std::vector<char> &b) { poke(b, outputCount, -1); },
       "output count is -1"},
      {"huge name length",
       [&](std::vector<char> &b) { poke(b, lossName, (1ll << 62)); },
       "output name length is 4611686018427387904"},
      {"bad dtype",
       [&](std::vector<char> &b) { poke(b, lossName + 8 + 4, 77); },
       "output \"loss\" has dtype 77"},
      {"data size does not fit the shape",
       [&](std::vector<char> &b) { poke(b, lossName + 8 + 4 + 16, 3); },
       "output \"loss\" of shape [] claims 3 bytes"},
      {"truncated", [](std::vector<char> &b) { b.resize(b.size() - 5); },
       "needs 8 bytes, but 3 remain"},
      {"trailing bytes", [](std::vector<char> &b) { b.push_back(0); },
       "1 bytes follow the record"},
  };
  for (const Case &c : cases) {
    std::vector<char> bytes = good;
    c.forge(bytes);
    StatusOr<RankMessage> m = unpackRankMessage(bytes, "result/2", 2);
    ASSERT_FALSE(m.isOk()) << c.what;
    EXPECT_EQ(m.status().code(), StatusCode::InvalidArgument) << c.what;
    EXPECT_NE(m.status().message().find(
                  "store value 'result/2' from rank 2 is malformed: "),
              std::string::npos)
        << m.status().message();
    EXPECT_NE(m.status().message().find(c.message), std::string::npos)
        << c.what << ": " << m.status().message();
  }
  // Every prefix of a record is an error, never a crash.
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<char> prefix(good.begin(), good.begin() + n);
    EXPECT_FALSE(unpackRankMessage(prefix, "result/0", 0).isOk()) << n;
  }
}

TEST(SuperviseRanks, AllExitZero) {
  StatusOr<SupervisedRun> run = superviseRanks(
      "/bin/sh", {"sh", "-c", "test \"$RANK\" -ge 0"}, 3,
      [](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)}};
      });
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(run->exitCode, 0);
  EXPECT_EQ(run->failure, "");
}

TEST(SuperviseRanks, AKilledRankEndsTheRunAtOnce) {
  // Rank 1 kills itself; the others would sleep for a minute.
  auto start = std::chrono::steady_clock::now();
  StatusOr<SupervisedRun> run = superviseRanks(
      "/bin/sh",
      {"sh", "-c",
       "if [ \"$RANK\" = 1 ]; then kill -KILL $$; else sleep 60; fi"},
      3, [](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)}};
      });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(run->exitCode, 1);
  EXPECT_EQ(run->failure,
            "rank 1 was killed by signal 9 (Killed); killed the other ranks");
  EXPECT_LT(seconds, 10);
}

TEST(SuperviseRanks, AStoppedRankEndsTheRun) {
  StatusOr<SupervisedRun> run = superviseRanks(
      "/bin/sh",
      {"sh", "-c",
       "if [ \"$RANK\" = 0 ]; then kill -STOP $$; else sleep 60; fi"},
      2, [](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)}};
      });
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(run->exitCode, 1);
  EXPECT_NE(run->failure.find("rank 0 was stopped by signal 19"),
            std::string::npos)
      << run->failure;
}

TEST(SuperviseRanks, StragglersAfterRankZeroAreKilled) {
  SupervisorOptions options;
  options.afterSuccess = std::chrono::milliseconds(200);
  StatusOr<SupervisedRun> run = superviseRanks(
      "/bin/sh",
      {"sh", "-c", "if [ \"$RANK\" = 0 ]; then exit 0; else sleep 60; fi"}, 3,
      [](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)}};
      },
      options);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(run->exitCode, 1);
  EXPECT_EQ(run->failure, "rank 0 exited with code 0; killed ranks 1, 2, "
                          "which had not finished");
}

TEST(SuperviseRanks, RanksSlowToExitAfterRankZeroSucceededAreWaitedFor) {
  // Rank 0 has every result; rank 1 takes 1.5 s to exit (a loaded machine
  // tearing down its connections): the run succeeds (with a 1 s grace,
  // rank 1 was killed and a finished run failed).
  StatusOr<SupervisedRun> run = superviseRanks(
      "/bin/sh",
      {"sh", "-c", "if [ \"$RANK\" = 0 ]; then exit 0; else sleep 1.5; fi"},
      2, [](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)}};
      });
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(run->exitCode, 0) << run->failure;
}

TEST(StoreWatch, RaisesTheAlarmOnceWithItsValue) {
  auto store = std::make_shared<InProcessStore>();
  std::atomic<int> alarms{0}, losses{0};
  std::string seen;
  {
    StoreWatch watch(
        store, "done", [&](const Status &) { ++losses; }, "alarm",
        [&](const std::vector<char> &value) {
          seen.assign(value.begin(), value.end());
          ++alarms;
        });
    ASSERT_TRUE(store->set("alarm", {'r', '/', '2'}).isOk());
    // Waits for the state (the alarm), however loaded the machine.
    for (int i = 0; i < 3000 && alarms == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(alarms, 1);
  EXPECT_EQ(losses, 0);
  EXPECT_EQ(seen, "r/2");
}

TEST(StoreWatch, DoneEndsTheWatchWithoutAnAlarm) {
  auto store = std::make_shared<InProcessStore>();
  std::atomic<int> alarms{0}, losses{0};
  {
    StoreWatch watch(
        store, "done", [&](const Status &) { ++losses; }, "alarm",
        [&](const std::vector<char> &) { ++alarms; });
    ASSERT_TRUE(store->set("done", {'1'}).isOk());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // Set after the watch saw "done": no longer watched.
    ASSERT_TRUE(store->set("alarm", {'x'}).isOk());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(alarms, 0);
  EXPECT_EQ(losses, 0);
}

TEST(JoinRanks, EveryRankJoins) {
  auto store = std::make_shared<InProcessStore>();
  std::vector<std::thread> ranks;
  std::vector<Status> results(4);
  for (int rank = 0; rank < 4; ++rank)
    ranks.emplace_back([&, rank] {
      results[rank] =
          joinRanks(*store, rank, 4, std::chrono::seconds(30), [] {});
    });
  for (std::thread &t : ranks)
    t.join();
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_TRUE(results[rank].isOk()) << results[rank].toString();
}

TEST(JoinRanks, MissingRanksAreNamedOnEveryRank) {
  // Ranks 1 and 3 of 5 never appear: once the join timeout has passed,
  // every rank that joined fails naming them, each rank other than 0 having
  // called beforeLeaving first and acknowledged, so that rank 0 leaves last.
  // Ranks 2 and 4 have joined before rank 0 starts its deadline, however
  // slowly their threads start.
  auto store = std::make_shared<InProcessStore>();
  std::vector<std::thread> ranks;
  std::vector<Status> results(5);
  std::atomic<int> left{0};
  for (int rank : {2, 4, 0}) {
    if (rank == 0)
      for (const char *key : {"job/joined/2", "job/joined/4"})
        EXPECT_TRUE(store->get(key, std::chrono::seconds(60)).isOk());
    ranks.emplace_back([&, rank] {
      results[rank] = joinRanks(*store, rank, 5, std::chrono::milliseconds(300),
                                [&] { ++left; });
      if (rank == 0) {
        EXPECT_EQ(left, 2) << "rank 0 returned before the others had left";
      }
    });
  }
  for (std::thread &t : ranks)
    t.join();
  EXPECT_EQ(left, 2);
  for (int rank : {0, 2, 4}) {
    EXPECT_EQ(results[rank].code(), StatusCode::Unavailable);
    EXPECT_EQ(results[rank].message(),
              "ranks 1 and 3 did not join within 300 ms (3 of 5 did)")
        << "rank " << rank;
  }
}

TEST(GlooAddress, FollowsTheRouteToMasterAddrOrTheInterface) {
  cpu::GlooOptions base;
  StatusOr<cpu::GlooOptions> o = cpu::chooseGlooAddress("127.0.0.1", "", base);
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o->hostname, "127.0.0.1");
  EXPECT_EQ(o->interface, "");
  o = cpu::chooseGlooAddress("127.0.0.1", "eth7,eth8", base);
  ASSERT_TRUE(o.isOk());
  EXPECT_EQ(o->interface, "eth7");
  o = cpu::chooseGlooAddress("no-such-host.invalid", "", base);
  ASSERT_FALSE(o.isOk());
  EXPECT_EQ(o.status().code(), StatusCode::Unavailable);
  EXPECT_NE(o.status().message().find("MASTER_ADDR 'no-such-host.invalid'"),
            std::string::npos)
      << o.status().message();
}

} // namespace
