//===- Launch.cpp - ranks as processes: launchers, supervision, results ---===//
//
// readLaunchEnvironment, superviseRanks (fork, exec, waitpid with a poll so
// that stopped ranks and deadlines are seen), StoreWatch, and the rank report
// record with a bounds-checked reader.
//
// Rank record (integers i64 little-endian as the host writes them, doubles
// as 8 raw bytes): '+', coordinate count and coordinates, setupMs, stepMs,
// peak bytes, six memory figures, output count, then per output: name
// length, name, dtype, rank, dims, byte count, bytes; event count, then per
// event: name, category, origin (each length and bytes), track, instruction,
// step, start, duration, issued. An error is '!' and its text.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Launch.h"
#include "partition/runtime/Tensor.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace partition::runtime;
using Clock = std::chrono::steady_clock;

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

namespace {

/// The variables one launcher sets.
struct LauncherVariables {
  const char *name, *rank, *size, *localRank;
};

constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
};

/// Parses `text` as a decimal integer in [low, high].
std::optional<int> parseInt(const char *text, long low, long high) {
  if (!text || !*text)
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || *end || v < low || v > high)
    return std::nullopt;
  return static_cast<int>(v);
}

} // namespace

StatusOr<std::optional<LaunchEnvironment>>
partition::runtime::readLaunchEnvironment(
    const std::function<const char *(const char *)> &getenv) {
  // Slurm and Open MPI also set their variables for a single task (an
  // sbatch script, a plain mpirun -n 1): that task runs every rank itself.
  const LauncherVariables *found = nullptr;
  for (const LauncherVariables &l : kLaunchers) {
    if (!getenv(l.rank))
      continue;
    const char *size = getenv(l.size);
    if (&l != &kLaunchers[0] && size && std::string(size) == "1")
      continue;
    found = &l;
    break;
  }
  if (!found)
    return std::optional<LaunchEnvironment>();
  LaunchEnvironment env;
  env.launcher = found->name;
  const char *rankText = getenv(found->rank);
  const char *sizeText = getenv(found->size);
  if (!sizeText)
    return PARTITION_ERROR(InvalidArgument, found->rank, "=", rankText,
                           " is set (", found->name, "), but ", found->size,
                           " is not");
  std::optional<int> size = parseInt(sizeText, 1, 1 << 20);
  if (!size)
    return PARTITION_ERROR(InvalidArgument, found->size, "=\"", sizeText,
                           "\" is not a world size (an integer in 1..", 1 << 20,
                           ")");
  std::optional<int> rank = parseInt(rankText, 0, *size - 1);
  if (!rank)
    return PARTITION_ERROR(InvalidArgument, found->rank, "=\"", rankText,
                           "\" is not a rank of ", found->size, "=", *size,
                           " (an integer in 0..", *size - 1, ")");
  env.worldSize = *size;
  env.rank = *rank;
  env.localRank = env.rank;
  if (const char *local = getenv(found->localRank)) {
    std::optional<int> l = parseInt(local, 0, 1 << 20);
    if (!l)
      return PARTITION_ERROR(InvalidArgument, found->localRank, "=\"", local,
                             "\" is not a local rank (an integer >= 0)");
    env.localRank = *l;
  }
  const char *addr = getenv("MASTER_ADDR");
  const char *port = getenv("MASTER_PORT");
  if (!addr || !*addr || !port)
    return PARTITION_ERROR(
        InvalidArgument, found->rank, " is set (", found->name,
        "), so MASTER_ADDR and MASTER_PORT must name where rank 0 serves "
        "the store (missing: ",
        (!addr || !*addr) ? "MASTER_ADDR" : "",
        (!addr || !*addr) && !port ? " and " : "", !port ? "MASTER_PORT" : "",
        ")");
  std::optional<int> portNumber = parseInt(port, 1, 65535);
  if (!portNumber)
    return PARTITION_ERROR(InvalidArgument, "MASTER_PORT=\"", port,
                           "\" is not a port (an integer in 1..65535)");
  env.masterAddr = addr;
  env.masterPort = *portNumber;
  const char *token = getenv(kStoreTokenVariable);
  if (!token || !*token)
    return PARTITION_ERROR(
        InvalidArgument, kStoreTokenVariable,
        " is not set: under a launcher every rank needs the same secret "
        "token for the store, e.g. export ",
        kStoreTokenVariable,
        "=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')");
  env.token = token;
  return std::optional<LaunchEnvironment>(std::move(env));
}

StatusOr<std::string> partition::runtime::makeStoreToken() {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  unsigned char bytes[16];
  size_t got = 0;
  while (fd >= 0 && got < sizeof(bytes)) {
    ssize_t n = ::read(fd, bytes + got, sizeof(bytes) - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += size_t(n);
  }
  int error = errno;
  if (fd >= 0)
    ::close(fd);
  if (got < sizeof(bytes))
    return PARTITION_ERROR(Internal,
                           "cannot read /dev/urandom for the store "
                           "token: ",
                           std::strerror(error));
  static const char digits[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += digits[b >> 4];
    token += digits[b & 15];
  }
  return token;
}

//===----------------------------------------------------------------------===//
// Supervision
//===----------------------------------------------------------------------===//

namespace {

std::string signalText(int sig) {
  const char *name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
}

} // namespace

StatusOr<SupervisedRun> partition::runtime::superviseRanks(
    const std::string &program, const std::vector<std::string> &argv,
    int worldSize,
    const std::function<std::vector<std::pair<std::string, std::string>>(int)>
        &envFor,
    const SupervisorOptions &options) {
  std::vector<pid_t> pids(worldSize, -1);
  std::vector<bool> live(worldSize, false);
  auto killAll = [&] {
    for (int r = 0; r < worldSize; ++r)
      if (live[r])
        ::kill(pids[r], SIGKILL);
  };
  auto reapAll = [&] {
    for (int r = 0; r < worldSize; ++r)
      if (live[r]) {
        int status;
        while (::waitpid(pids[r], &status, 0) < 0 && errno == EINTR) {
        }
        live[r] = false;
      }
  };
  // Everything the children need is prepared before the first fork.
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  for (int rank = 0; rank < worldSize; ++rank) {
    std::vector<std::pair<std::string, std::string>> env = envFor(rank);
    pid_t pid = ::fork();
    if (pid < 0) {
      int error = errno;
      killAll();
      reapAll();
      return PARTITION_ERROR(Internal, "cannot start rank ", rank,
                             ": fork: ", std::strerror(error));
    }
    if (pid == 0) {
      // Die with the parent, whatever kills it. It may have died before
      // the request took effect: then this process has a new parent.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(1);
      for (const auto &[name, value] : env)
        ::setenv(name.c_str(), value.c_str(), 1);
      ::execv(program.c_str(), args.data());
      std::string line = "partition-run: rank " + std::to_string(rank) +
                         ": cannot run " + program + ": " +
                         std::strerror(errno) + "\n";
      (void)!::write(2, line.data(), line.size());
      ::_exit(127);
    }
    pids[rank] = pid;
    live[rank] = true;
  }

  if (options.started)
    options.started();
  SupervisedRun run;
  std::optional<Clock::time_point> deadline;
  std::string deadlineReason;
  int left = worldSize;
  while (left > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid < 0) // No children left (ECHILD): someone reaped them.
      break;
    if (pid == 0) {
      if (deadline && Clock::now() >= *deadline) {
        std::string stragglers;
        for (int r = 0; r < worldSize; ++r)
          if (live[r])
            stragglers += (stragglers.empty() ? "" : ", ") + std::to_string(r);
        run.failure = deadlineReason + "; killed rank" +
                      (left > 1 ? "s " : " ") + stragglers +
                      ", which had not finished";
        run.exitCode = 1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    int rank = 0;
    while (rank < worldSize && pids[rank] != pid)
      ++rank;
    if (rank == worldSize)
      continue;
    if (WIFSTOPPED(status) || WIFSIGNALED(status)) {
      bool stopped = WIFSTOPPED(status);
      if (!stopped) {
        live[rank] = false;
        --left;
      }
      run.exitCode = 1;
      run.failure = "rank " + std::to_string(rank) + " was " +
                    (stopped ? "stopped" : "killed") + " by " +
                    signalText(stopped ? WSTOPSIG(status) : WTERMSIG(status));
      if (left > (stopped ? 1 : 0))
        run.failure += "; killed the other ranks";
      break;
    }
    if (!WIFEXITED(status))
      continue;
    live[rank] = false;
    --left;
    int code = WEXITSTATUS(status);
    if (code != 0)
      run.exitCode = 1;
    if (rank == 0 && !deadline.has_value()) {
      deadline = Clock::now() + (code == 0 ? options.afterSuccess
                                           : options.grace);
      deadlineReason = "rank 0 exited with code " + std::to_string(code);
    } else if (code != 0 && !deadline.has_value()) {
      deadline = Clock::now() + options.afterError;
      deadlineReason = "rank " + std::to_string(rank) + " exited with code " +
                       std::to_string(code);
    } else if (rank == 0 && deadline.has_value()) {
      // Rank 0 has reported: the others need only read "done".
      deadline = std::min(*deadline, Clock::now() + options.grace);
    }
  }
  killAll();
  reapAll();
  return run;
}

//===----------------------------------------------------------------------===//
// StoreWatch
//===----------------------------------------------------------------------===//

struct StoreWatch::State {
  std::mutex mutex;
  std::condition_variable stopped;
  bool stop = false;
  std::thread thread;
};

StoreWatch::StoreWatch(std::shared_ptr<Store> store, std::string doneKey,
                       std::function<void(const Status &)> onLost,
                       std::string alarmKey,
                       std::function<void(const std::vector<char> &)> onAlarm)
    : state_(std::make_shared<State>()) {
  state_->thread = std::thread([state = state_, store = std::move(store),
                                done = std::move(doneKey),
                                alarm = std::move(alarmKey),
                                onLost = std::move(onLost),
                                onAlarm = std::move(onAlarm)] {
    // Short waits, so that destroying the watch is quick; the server
    // answers at once when it is gone.
    auto wait = std::chrono::milliseconds(alarm.empty() ? 200 : 100);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(state->mutex);
        if (state->stop)
          return;
      }
      StatusOr<std::vector<char>> finished = store->get(done, wait);
      if (finished.isOk())
        return;
      Status lost = finished.status();
      if (lost.code() == StatusCode::DeadlineExceeded && !alarm.empty()) {
        StatusOr<std::vector<char>> raised = store->get(alarm, wait);
        if (raised.isOk()) {
          std::lock_guard<std::mutex> lock(state->mutex);
          if (!state->stop)
            onAlarm(*raised);
          return;
        }
        lost = raised.status();
      }
      if (lost.code() == StatusCode::DeadlineExceeded)
        continue;
      std::lock_guard<std::mutex> lock(state->mutex);
      if (!state->stop)
        onLost(lost);
      return;
    }
  });
}

StoreWatch::~StoreWatch() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  if (state_->thread.joinable())
    state_->thread.join();
}

//===----------------------------------------------------------------------===//
// Joining
//===----------------------------------------------------------------------===//

namespace {

std::string joinedKey(int rank) { return "job/joined/" + std::to_string(rank); }
std::string ackKey(int rank) {
  return "job/joined-ack/" + std::to_string(rank);
}
constexpr const char *kVerdictKey = "job/joined";

/// "rank 2" or "ranks 2, 5 and 7".
std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0)
      text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

} // namespace

Status
partition::runtime::joinRanks(Store &store, int rank, int worldSize,
                              std::chrono::milliseconds timeout,
                              const std::function<void()> &beforeLeaving) {
  using std::chrono::milliseconds;
  PARTITION_RETURN_IF_ERROR(store.set(joinedKey(rank), {'1'}));
  auto verdictOf = [&](const std::string &missing) {
    std::vector<int> ranks;
    for (size_t at = 0; at < missing.size();) {
      size_t comma = std::min(missing.find(',', at), missing.size());
      ranks.push_back(std::atoi(missing.substr(at, comma - at).c_str()));
      at = comma + 1;
    }
    return PARTITION_ERROR(
        Unavailable, rankList(ranks), " did not join within ", timeout.count(),
        " ms (", worldSize - int(ranks.size()), " of ", worldSize, " did)");
  };
  if (rank != 0) {
    PARTITION_ASSIGN_OR_RETURN(
        std::vector<char> verdict,
        store.get(kVerdictKey, 2 * timeout + std::chrono::minutes(1)));
    if (verdict.empty())
      return Status::ok();
    if (beforeLeaving)
      beforeLeaving();
    (void)store.set(ackKey(rank), {'1'});
    return verdictOf(std::string(verdict.begin(), verdict.end()));
  }
  auto deadline = Clock::now() + timeout;
  std::string missing;
  std::vector<int> joined;
  for (int r = 0; r < worldSize; ++r) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    StatusOr<std::vector<char>> mark =
        store.get(joinedKey(r), std::max(left, milliseconds(0)));
    if (mark.isOk()) {
      joined.push_back(r);
      continue;
    }
    if (mark.status().code() != StatusCode::DeadlineExceeded)
      return mark.status();
    missing += (missing.empty() ? "" : ",") + std::to_string(r);
  }
  PARTITION_RETURN_IF_ERROR(store.set(
      kVerdictKey, std::vector<char>(missing.begin(), missing.end())));
  if (missing.empty())
    return Status::ok();
  deadline = Clock::now() + timeout;
  for (int r : joined) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (r != 0 && !store.get(ackKey(r), std::max(left, milliseconds(0))).isOk())
      break;
  }
  return verdictOf(missing);
}

//===----------------------------------------------------------------------===//
// Rank reports
//===----------------------------------------------------------------------===//

namespace {

class Writer {
public:
  explicit Writer(char tag) : bytes_(1, tag) {}
  void raw(const void *p, size_t n) {
    const char *c = static_cast<const char *>(p);
    bytes_.insert(bytes_.end(), c, c + n);
  }
  void i64(int64_t x) { raw(&x, 8); }
  void f64(double x) { raw(&x, 8); }
  void text(const std::string &s) {
    i64(int64_t(s.size()));
    raw(s.data(), s.size());
  }
  std::vector<char> take() { return std::move(bytes_); }

private:
  std::vector<char> bytes_;
};

/// Reads fields, checking every count against the bytes that remain; the
/// first problem is kept and later reads return zeros.
class Reader {
public:
  Reader(const std::vector<char> &bytes, size_t at) : bytes_(bytes), at_(at) {}
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  size_t left() const { return bytes_.size() - at_; }
  void fail(const std::string &what) {
    if (error_.empty())
      error_ = what + " (at byte " + std::to_string(at_) + " of " +
               std::to_string(bytes_.size()) + ")";
  }
  bool raw(void *p, size_t n, const char *what) {
    if (!ok() || n > left()) {
      fail(std::string(what) + " needs " + std::to_string(n) + " bytes, but " +
           std::to_string(left()) + " remain");
      std::memset(p, 0, n);
      return false;
    }
    std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  int64_t i64(const char *what) {
    int64_t x = 0;
    raw(&x, 8, what);
    return x;
  }
  double f64(const char *what) {
    double x = 0;
    raw(&x, 8, what);
    return x;
  }
  /// A count of items of at least `itemBytes` bytes each.
  size_t count(const char *what, size_t itemBytes) {
    int64_t n = i64(what);
    if (!ok())
      return 0;
    if (n < 0 || uint64_t(n) > left() / std::max<size_t>(itemBytes, 1)) {
      fail(std::string(what) + " is " + std::to_string(n) + ", but only " +
           std::to_string(left()) + " bytes remain");
      return 0;
    }
    return size_t(n);
  }
  std::string text(const char *what) {
    std::string s(count(what, 1), '\0');
    raw(s.data(), s.size(), what);
    return s;
  }

private:
  const std::vector<char> &bytes_;
  size_t at_;
  std::string error_;
};

} // namespace

std::vector<char> partition::runtime::packRankReport(const RankReport &report) {
  Writer w('+');
  w.i64(int64_t(report.coordinates.size()));
  for (int64_t c : report.coordinates)
    w.i64(c);
  w.f64(report.setupMs);
  w.f64(report.stepMs);
  w.i64(int64_t(report.peakBytes));
  const MemoryUse &m = report.memory;
  for (int64_t bytes :
       {m.parameters, m.state, m.constants, m.inputs, m.arena, m.scratch})
    w.i64(bytes);
  w.i64(int64_t(report.outputs.size()));
  for (const auto &[name, t] : report.outputs) {
    w.text(name);
    w.i64(int64_t(t.dtype));
    w.i64(int64_t(t.shape.size()));
    for (int64_t d : t.shape)
      w.i64(d);
    w.i64(int64_t(t.data.size()));
    w.raw(t.data.data(), t.data.size());
  }
  w.i64(int64_t(report.trace.size()));
  for (const TraceEvent &e : report.trace) {
    w.text(e.name);
    w.text(e.category);
    w.text(e.origin);
    w.i64(int64_t(e.track));
    w.i64(e.instruction);
    w.i64(e.step);
    w.f64(e.startUs);
    w.f64(e.durationUs);
    w.f64(e.issuedUs);
  }
  return w.take();
}

std::vector<char> partition::runtime::packRankError(const std::string &text) {
  Writer w('!');
  w.raw(text.data(), text.size());
  return w.take();
}

StatusOr<RankMessage>
partition::runtime::unpackRankMessage(const std::vector<char> &bytes,
                                      const std::string &key, int rank) {
  auto malformed = [&](const std::string &why) {
    return PARTITION_ERROR(InvalidArgument, "store value '", key,
                           "' from rank ", rank, " is malformed: ", why);
  };
  RankMessage message;
  if (bytes.empty())
    return malformed("it is empty");
  if (bytes[0] == '!') {
    message.failed = true;
    message.errorText.assign(bytes.begin() + 1, bytes.end());
    return message;
  }
  if (bytes[0] != '+')
    return malformed("it starts with byte " +
                     std::to_string(static_cast<unsigned char>(bytes[0])) +
                     ", not '+' or '!'");
  Reader in(bytes, 1);
  RankReport &r = message.report;
  r.coordinates.resize(in.count("coordinate count", 8));
  for (int64_t &c : r.coordinates)
    c = in.i64("coordinate");
  r.setupMs = in.f64("setup time");
  r.stepMs = in.f64("step time");
  int64_t peak = in.i64("peak bytes");
  r.peakBytes = size_t(std::max<int64_t>(peak, 0));
  for (int64_t *b : {&r.memory.parameters, &r.memory.state, &r.memory.constants,
                     &r.memory.inputs, &r.memory.arena, &r.memory.scratch})
    *b = in.i64("memory figure");
  size_t outputs = in.count("output count", 32);
  for (size_t i = 0; i < outputs && in.ok(); ++i) {
    std::string name = in.text("output name length");
    int64_t dtype = in.i64("output dtype");
    if (in.ok() && (dtype < 0 || dtype > int64_t(DType::I64)))
      in.fail("output \"" + name + "\" has dtype " + std::to_string(dtype) +
              ", which is not a dtype");
    HostTensor t;
    t.dtype = DType(in.ok() ? dtype : 0);
    t.shape.resize(in.count("output rank", 8));
    uint64_t elements = 1;
    for (int64_t &d : t.shape) {
      d = in.i64("output dimension");
      if (in.ok() &&
          (d < 0 || (d > 0 && elements > (uint64_t(1) << 62) / uint64_t(d))))
        in.fail("output \"" + name + "\" has dimension " + std::to_string(d));
      elements *= uint64_t(std::max<int64_t>(d, 0));
    }
    size_t size = in.count("output byte count", 1);
    if (in.ok() && size != elements * uint64_t(dtypeSize(t.dtype)))
      in.fail("output \"" + name + "\" of shape " + formatShape(t.shape) +
              " claims " + std::to_string(size) + " bytes");
    if (!in.ok())
      break;
    t.data.resize(size);
    in.raw(t.data.data(), size, "output data");
    if (!r.outputs.emplace(name, std::move(t)).second)
      in.fail("output \"" + name + "\" comes twice");
  }
  r.trace.resize(in.count("trace event count", 3 * 8 + 6 * 8));
  for (TraceEvent &e : r.trace) {
    if (!in.ok())
      break;
    e.name = in.text("event name length");
    e.category = in.text("event category length");
    e.origin = in.text("event origin length");
    int64_t track = in.i64("event track");
    if (in.ok() && track != int64_t(TraceTrack::Compute) &&
        track != int64_t(TraceTrack::Communication))
      in.fail("trace event \"" + e.name + "\" has track " +
              std::to_string(track));
    e.track = TraceTrack(in.ok() ? track : 0);
    e.instruction = in.i64("event instruction");
    e.step = in.i64("event step");
    e.startUs = in.f64("event start");
    e.durationUs = in.f64("event duration");
    e.issuedUs = in.f64("event issue time");
  }
  if (in.ok() && in.left() != 0)
    in.fail(std::to_string(in.left()) + " bytes follow the record");
  if (!in.ok())
    return malformed(in.error());
  return message;
}

void partition::runtime::printLine(const std::string &line) {
  std::string text = line + "\n";
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(2, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    p += n;
    left -= size_t(n);
  }
}
