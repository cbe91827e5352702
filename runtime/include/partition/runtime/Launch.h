//===- Launch.h - ranks as processes ----------------------------*- C++ -*-===//
//
// What a multi-process run needs beyond the store: reading how a launcher
// (torchrun, Slurm, Open MPI, or partition-run --processes) started this rank,
// starting and supervising one child process per rank, watching the store of
// rank 0, and the record in which a rank hands its results to rank 0.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_LAUNCH_H
#define PARTITION_RUNTIME_LAUNCH_H

#include "partition/runtime/Communicator.h"
#include "partition/runtime/Executor.h"
#include "partition/runtime/Status.h"
#include "partition/runtime/Trace.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partition::runtime {

/// The environment variable that carries the store's token to every rank.
inline constexpr const char *kStoreTokenVariable = "PARTITION_STORE_TOKEN";
/// Set (to 1) in the ranks `partition-run --processes` starts: their parent
/// watches them, so they need not pledge their results to each other.
inline constexpr const char *kSupervisedVariable = "PARTITION_SUPERVISED";
/// Set in the ranks `partition-run --processes` starts: the descriptor of
/// the store's listening socket, which the parent bound (port 0) and every
/// rank inherits. Rank 0 serves on it and the others close it, so that no
/// other process can take the port between its choice and rank 0's bind.
inline constexpr const char *kStoreSocketVariable = "PARTITION_STORE_FD";

/// How a launcher started this process as one rank of a job.
struct LaunchEnvironment {
  /// "torchrun" (RANK, WORLD_SIZE, LOCAL_RANK; also --processes), "slurm"
  /// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) or "openmpi"
  /// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK).
  std::string launcher;
  int rank = 0;
  int worldSize = 0;
  /// The rank's index on its host (its GPU); the rank itself when unset.
  int localRank = 0;
  /// Where rank 0 serves the store (MASTER_ADDR, MASTER_PORT).
  std::string masterAddr;
  int masterPort = 0;
  /// PARTITION_STORE_TOKEN.
  std::string token;
};

/// Reads the launcher's variables through `getenv`, torchrun's first. No
/// launcher variables, or Slurm's or Open MPI's for a single task:
/// std::nullopt. Errors (InvalidArgument, naming the variable and its value):
/// a rank, size or port that is not a number in range, a rank without a world
/// size, MASTER_ADDR or MASTER_PORT missing, PARTITION_STORE_TOKEN missing.
StatusOr<std::optional<LaunchEnvironment>>
readLaunchEnvironment(const std::function<const char *(const char *)> &getenv);

/// A fresh random token for a job's store: 32 hex digits from /dev/urandom.
StatusOr<std::string> makeStoreToken();

/// How superviseRanks starts and stops the ranks.
struct SupervisorOptions {
  /// After a rank is killed by a signal or stopped, or after rank 0 (which
  /// serves the store and reports) has exited, how long the other ranks get
  /// before they are killed with SIGKILL.
  std::chrono::milliseconds grace = std::chrono::seconds(1);
  /// After rank 0 has exited with code 0 (it has every rank's result), how
  /// long the other ranks get to exit before they are killed and the run
  /// fails: they only read "done" and tear down, but on a loaded machine
  /// that took over a second.
  std::chrono::milliseconds afterSuccess = std::chrono::seconds(10);
  /// After a rank other than 0 has exited with an error, how long the
  /// others get to finish (rank 0 reports that rank's error) before they
  /// are killed.
  std::chrono::milliseconds afterError = std::chrono::seconds(90);
  /// Called once every rank has been started (e.g. to close what only the
  /// children needed).
  std::function<void()> started;
};

/// How a supervised run ended.
struct SupervisedRun {
  /// 0 when every rank exited with 0, else 1.
  int exitCode = 0;
  /// What the supervisor saw go wrong and did about it, e.g. "rank 2 was
  /// killed by signal 9 (Killed); killed the other ranks"; empty when
  /// the ranks ended by themselves (they report their own errors).
  std::string failure;
};

/// Runs `program` with arguments `argv` (argv[0] is the name it is given)
/// once per rank 0..worldSize-1 as child processes, with the variables of
/// envFor(rank) added to the environment, and waits for them. Each child dies
/// with its parent (PR_SET_PDEATHSIG: strictly, with the thread that calls
/// this, so call it from one that lives as long as the run). A rank killed by a
/// signal or stopped (SIGSTOP) ends the run: the others are killed and the
/// failure names the rank. No child outlives the call. Errors: Internal when a
/// child cannot be started.
StatusOr<SupervisedRun> superviseRanks(
    const std::string &program, const std::vector<std::string> &argv,
    int worldSize,
    const std::function<std::vector<std::pair<std::string, std::string>>(int)>
        &envFor,
    const SupervisorOptions &options = {});

/// Watches the store served by rank 0: a thread waits on `doneKey`; when
/// the server goes away before the key is set (rank 0 died), it calls onLost
/// once with the error. With an `alarmKey` (e.g.
/// TcpStore::kBrokenPledgeKey: another rank died), it also waits on that
/// key and, when it is set first, calls onAlarm once with its value. Stop it
/// by setting `doneKey` or by destroying the watch (which waits at most one
/// poll interval).
class StoreWatch {
public:
  StoreWatch(std::shared_ptr<Store> store, std::string doneKey,
             std::function<void(const Status &)> onLost,
             std::string alarmKey = "",
             std::function<void(const std::vector<char> &)> onAlarm = {});
  ~StoreWatch();
  StoreWatch(const StoreWatch &) = delete;
  StoreWatch &operator=(const StoreWatch &) = delete;

private:
  struct State;
  std::shared_ptr<State> state_;
};

/// The meeting of the ranks at the start of a multi-process run, so that a
/// rank that never appears is named instead of its peers timing out on a
/// store key of its. Each rank sets "job/joined/R"; rank 0 waits up to
/// `timeout` for every rank's and sets "job/joined" to the ranks that are
/// missing ("" when none); the others wait for that verdict (up to twice
/// `timeout` and a minute more: rank 0 may start later than they do; its
/// death or stop is the StoreWatch's to see). Errors (Unavailable, on every
/// rank): "rank 2 did not join within 20000 ms (3 of 4 did)"; before a rank
/// other than 0 returns it, it calls `beforeLeaving` (e.g. to stop its
/// StoreWatch) and acknowledges the verdict, and rank 0 returns only once
/// the ranks that joined have acknowledged it (or `timeout` more has passed),
/// so that none of them sees rank 0's store go away first. Errors of the
/// store are returned as they are.
Status joinRanks(Store &store, int rank, int worldSize,
                 std::chrono::milliseconds timeout,
                 const std::function<void()> &beforeLeaving = {});

/// What a rank hands to rank 0 at the end of a multi-process run.
struct RankReport {
  std::vector<int64_t> coordinates;
  double setupMs = 0, stepMs = 0;
  size_t peakBytes = 0;
  MemoryUse memory;
  std::map<std::string, HostTensor> outputs;
  std::vector<TraceEvent> trace;
};

/// A rank's message to rank 0: its report, or the text of its error.
struct RankMessage {
  bool failed = false;
  std::string errorText;
  RankReport report;
};

/// Serialises a report as a store value ('+' and the fields).
std::vector<char> packRankReport(const RankReport &report);
/// Serialises a rank's error as a store value ('!' and the text).
std::vector<char> packRankError(const std::string &text);
/// Reads a value written by packRankReport or packRankError. Errors
/// (InvalidArgument, naming `key` and `rank`): a value that is truncated,
/// too long, or whose counts, sizes, dtypes or shapes do not fit together.
StatusOr<RankMessage> unpackRankMessage(const std::vector<char> &bytes,
                                        const std::string &key, int rank);

/// Writes `line` and a newline to stderr with one write(), so that lines of
/// processes sharing the terminal never interleave.
void printLine(const std::string &line);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_LAUNCH_H
