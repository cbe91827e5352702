//===- Stores.cpp - rendezvous key-value stores ---------------------------===//
//
// InProcessStore, and TcpStore: pooled client connections and, on the
// serving rank, a server with one accept thread and one thread per client
// connection. A get waits on the server (a condition variable) rather than
// polling, so a rendezvous costs one round trip per key.
//
// Wire format (integers little-endian):
//   request:  u8 op, u32 key length, key, then
//             op 1 (set): u64 value length, value
//             op 2 (get): u64 timeout in milliseconds
//             op 3 (hello): u64 protocol version; the "key" is the job's
//             token. The first request of every connection, answered with
//             code 0, or with code 2 and the connection closed.
//             op 4 (pledge): u64 heartbeat limit in milliseconds (0: none).
//             Answered with code 0; then the connection carries only
//             heartbeat bytes (kHeartbeat) from the client.
//   response: u8 code (0 ok, 1 timed out, 2 error), u64 length, bytes (the
//             value of a get, or the error message)
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Stores.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace partition::runtime;
using Clock = std::chrono::steady_clock;

//===----------------------------------------------------------------------===//
// InProcessStore
//===----------------------------------------------------------------------===//

Status InProcessStore::set(const std::string &key,
                           const std::vector<char> &value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }
  changed_.notify_all();
  return Status::ok();
}

StatusOr<std::vector<char>>
InProcessStore::get(const std::string &key, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto deadline =
      Clock::now() + std::max(timeout, std::chrono::milliseconds(0));
  if (!changed_.wait_until(lock, deadline,
                           [&] { return values_.count(key) != 0; }))
    return PARTITION_ERROR(DeadlineExceeded, "store key '", key,
                           "' was not set within ", timeout.count(), " ms");
  return values_[key];
}

//===----------------------------------------------------------------------===//
// Socket helpers
//===----------------------------------------------------------------------===//

namespace {

enum : uint8_t { kOpSet = 1, kOpGet = 2, kOpHello = 3, kOpPledge = 4 };
/// The byte a pledging client sends as its heartbeat.
constexpr char kHeartbeat = 'h';
constexpr uint64_t kProtocolVersion = 1;
enum : uint8_t { kReplyOk = 0, kReplyTimedOut = 1, kReplyError = 2 };

constexpr uint64_t kMaxKeyBytes = 64 * 1024;
/// How long a server or client waits for the rest of a message once it has
/// begun, and how much longer than a get's timeout a client waits for the
/// server's answer.
constexpr std::chrono::seconds kMessageGrace(10);
/// The longest wait a get may ask the server for.
constexpr std::chrono::hours kMaxGetTimeout(24);

std::string errnoText(int error) { return std::strerror(error); }

void closeFd(int &fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

void setNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool setNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  // Round up so that a poll never returns just before the deadline.
  return static_cast<int>(
      std::clamp<int64_t>(left.count() + 1, 0, 1000 * 1000 * 1000));
}

/// What ended a wait for a socket.
enum class WaitResult { Ready, TimedOut, Woken, Failed };

/// Waits until `fd` has `events`, the deadline passes, or `wakeFd` (if not
/// -1) becomes readable.
WaitResult waitFd(int fd, short events, Clock::time_point deadline,
                  int wakeFd) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {wakeFd, POLLIN, 0}};
    int rc = ::poll(fds, wakeFd >= 0 ? 2 : 1, remainingMs(deadline));
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc < 0)
      return WaitResult::Failed;
    if (wakeFd >= 0 && (fds[1].revents & POLLIN))
      return WaitResult::Woken;
    if (fds[0].revents)
      return WaitResult::Ready;
    if (Clock::now() >= deadline)
      return WaitResult::TimedOut;
  }
}

/// The outcome of moving a whole message over a socket.
struct IoError {
  StatusCode code = StatusCode::Ok;
  std::string message;
  explicit operator bool() const { return code != StatusCode::Ok; }
};

IoError sendAll(int fd, const void *data, size_t size,
                Clock::time_point deadline, int wakeFd = -1) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return {StatusCode::Unavailable, "send: " + errnoText(errno)};
    switch (waitFd(fd, POLLOUT, deadline, wakeFd)) {
    case WaitResult::Ready:
      break;
    case WaitResult::TimedOut:
      return {StatusCode::DeadlineExceeded, "send timed out"};
    case WaitResult::Woken:
      return {StatusCode::Aborted, "store is shutting down"};
    case WaitResult::Failed:
      return {StatusCode::Unavailable, "poll: " + errnoText(errno)};
    }
  }
  return {};
}

/// Reads exactly `size` bytes. A peer that closes the connection first is an
/// Unavailable error.
IoError recvAll(int fd, void *data, size_t size, Clock::time_point deadline,
                int wakeFd = -1) {
  char *bytes = static_cast<char *>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, bytes, size, 0);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0)
      return {StatusCode::Unavailable, "connection closed by the peer"};
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return {StatusCode::Unavailable, "recv: " + errnoText(errno)};
    switch (waitFd(fd, POLLIN, deadline, wakeFd)) {
    case WaitResult::Ready:
      break;
    case WaitResult::TimedOut:
      return {StatusCode::DeadlineExceeded, "receive timed out"};
    case WaitResult::Woken:
      return {StatusCode::Aborted, "store is shutting down"};
    case WaitResult::Failed:
      return {StatusCode::Unavailable, "poll: " + errnoText(errno)};
    }
  }
  return {};
}

void putU32(std::vector<char> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void putU64(std::vector<char> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t readLE(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

IoError recvU32(int fd, uint32_t &v, Clock::time_point deadline,
                int wakeFd = -1) {
  unsigned char b[4];
  IoError err = recvAll(fd, b, 4, deadline, wakeFd);
  v = static_cast<uint32_t>(readLE(b, 4));
  return err;
}
IoError recvU64(int fd, uint64_t &v, Clock::time_point deadline,
                int wakeFd = -1) {
  unsigned char b[8];
  IoError err = recvAll(fd, b, 8, deadline, wakeFd);
  v = readLE(b, 8);
  return err;
}

/// getaddrinfo() for a TCP endpoint; host "" means any local address.
StatusOr<addrinfo *> resolve(const std::string &host, int port, bool passive) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo *result = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(),
                         &hints, &result);
  if (rc != 0)
    return PARTITION_ERROR(Unavailable, "cannot resolve '", host,
                           "': ", ::gai_strerror(rc));
  return result;
}

/// One non-blocking connect to any of host's addresses; -1 and `error` set
/// when none answered by the deadline, and `refused` when the last one was
/// refused (nothing listens there).
int connectOnce(const std::string &host, int port, Clock::time_point deadline,
                std::string &error, bool &refused) {
  refused = false;
  StatusOr<addrinfo *> addrs = resolve(host, port, false);
  if (!addrs.isOk()) {
    error = addrs.status().message();
    return -1;
  }
  int connected = -1;
  for (addrinfo *ai = *addrs; ai && connected < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                      ai->ai_protocol);
    if (fd < 0) {
      error = "socket: " + errnoText(errno);
      continue;
    }
    setNonBlocking(fd);
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      WaitResult w = waitFd(fd, POLLOUT, deadline, -1);
      int soError = 0;
      socklen_t len = sizeof(soError);
      if (w != WaitResult::Ready ||
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) != 0)
        soError = w == WaitResult::TimedOut ? ETIMEDOUT : errno;
      rc = soError == 0 ? 0 : -1;
      errno = soError;
    }
    if (rc != 0) {
      refused = errno == ECONNREFUSED;
      error = errnoText(errno);
      ::close(fd);
      continue;
    }
    // With nothing listening on a port in the ephemeral range, Linux can
    // complete a connect from that same port to itself (a TCP simultaneous
    // open): that is no server, so count it as refused.
    sockaddr_storage self{}, peer{};
    socklen_t selfLen = sizeof(self), peerLen = sizeof(peer);
    if (::getsockname(fd, reinterpret_cast<sockaddr *>(&self), &selfLen) ==
            0 &&
        ::getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peerLen) ==
            0 &&
        selfLen == peerLen && std::memcmp(&self, &peer, selfLen) == 0) {
      error = "connection refused (the socket connected to itself: nothing "
              "listens on the port)";
      refused = true;
      ::close(fd);
      continue;
    }
    setNoDelay(fd);
    connected = fd;
  }
  ::freeaddrinfo(*addrs);
  return connected;
}

/// Whether two tokens are equal, in time that does not depend on where they
/// differ.
bool sameToken(const std::string &a, const std::string &b) {
  if (a.size() != b.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

/// A request: op byte, key length and key, and the op's argument (the
/// token and protocol version of a hello, a set's value size, a get's
/// timeout, 0 for a pledge).
std::vector<char> makeRequest(uint8_t op, const std::string &key,
                              uint64_t arg) {
  std::vector<char> request(1, static_cast<char>(op));
  putU32(request, static_cast<uint32_t>(key.size()));
  request.insert(request.end(), key.begin(), key.end());
  putU64(request, arg);
  return request;
}

/// Sends `request` and reads a short reply (at most 4 KiB: an
/// acknowledgement or an error's text) into `code` and `text`.
IoError exchangeShort(int fd, const std::vector<char> &request,
                      Clock::time_point deadline, uint8_t &code,
                      std::string &text) {
  code = kReplyError;
  uint64_t size = 0;
  IoError err = sendAll(fd, request.data(), request.size(), deadline);
  if (!err)
    err = recvAll(fd, &code, 1, deadline);
  if (!err)
    err = recvU64(fd, size, deadline);
  if (!err && size > 4096)
    err = {StatusCode::Internal, "oversized answer"};
  text.assign(err ? 0 : size, '\0');
  if (!err)
    err = recvAll(fd, text.data(), text.size(), deadline);
  return err;
}

/// What became of a hello: accepted, refused, no answer in time (Silent),
/// or the connection failed.
enum class Greeting { Accepted, Refused, Silent, Failed };

/// Sends the hello with `token` on a fresh connection and reads the answer;
/// `error` says why it was refused or failed.
Greeting greet(int fd, const std::string &token, Clock::time_point deadline,
               std::string &error) {
  uint8_t code;
  std::string text;
  IoError err = exchangeShort(
      fd, makeRequest(kOpHello, token, kProtocolVersion), deadline, code, text);
  if (err) {
    error = err.message;
    return err.code == StatusCode::DeadlineExceeded ? Greeting::Silent
                                                    : Greeting::Failed;
  }
  if (code != kReplyOk) {
    error = text;
    return Greeting::Refused;
  }
  return Greeting::Accepted;
}

/// Connects to host:port and presents `token`, retrying with a growing pause
/// (the server may start after its clients) until the deadline. A refused
/// token is not retried; nor is a refused connection once the server has
/// been reached (`reached`): then it has gone away. A server once reached
/// that accepts the connection (its kernel does, even while the process is
/// stopped) but does not answer the hello within `answerTimeout` is stopped
/// or hung, as when it does not answer a request.
StatusOr<int>
connectWithRetry(const std::string &host, int port, const std::string &token,
                 Clock::time_point deadline, bool reached = false,
                 std::chrono::milliseconds answerTimeout = kMessageGrace) {
  auto start = Clock::now();
  auto pause = std::chrono::milliseconds(10);
  std::string error;
  int attempts = 0;
  for (;;) {
    ++attempts;
    bool refused = false;
    int fd = connectOnce(host, port, deadline, error, refused);
    if (refused && reached)
      return PARTITION_ERROR(Unavailable, "the store at ", host, ":", port,
                             " has gone away: ", error);
    if (fd >= 0) {
      auto wait = reached ? answerTimeout : kMessageGrace;
      Greeting g =
          greet(fd, token, std::min(deadline, Clock::now() + wait), error);
      if (g == Greeting::Accepted)
        return fd;
      ::close(fd);
      if (g == Greeting::Refused)
        return PARTITION_ERROR(Unavailable, "the store at ", host, ":", port,
                               " refused this process: ", error);
      if (g == Greeting::Silent && reached)
        return PARTITION_ERROR(
            Unavailable, "the store did not answer within ",
            std::chrono::duration_cast<std::chrono::milliseconds>(wait).count(),
            " ms: the process that serves it is stopped or hung");
    }
    auto now = Clock::now();
    if (now >= deadline)
      break;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      Clock::now() - start);
  return PARTITION_ERROR(Unavailable, "cannot reach the store at ", host, ":",
                         port, " (", attempts, " attempts in ", waited.count(),
                         " ms): ", error);
}

} // namespace

//===----------------------------------------------------------------------===//
// TcpStore::Server
//===----------------------------------------------------------------------===//

/// Serves the map: an accept thread and a thread per connection. Shutdown
/// writes to a pipe that every thread polls, and wakes waiting gets.
/// Connections that have not presented the token yet have a budget of their
/// own (options.maxPendingConnections, the oldest evicted for a new one)
/// and options.helloTimeout from their accept; only those that did count
/// against options.maxConnections.
class TcpStore::Server {
public:
  static StatusOr<std::unique_ptr<Server>>
  start(const std::string &host, int port, const TcpStoreOptions &options);
  ~Server();
  int port() const { return port_; }

private:
  /// A connection being served, in the order they were accepted.
  struct Connection {
    int fd = -1;
    /// Presented the token (counted in authenticated_, else in pending_).
    bool authenticated = false;
    /// Closed by the server to make room (no longer counted).
    bool evicted = false;
    /// When the hello must have arrived (from the accept).
    Clock::time_point helloDeadline;
    std::thread thread;
  };
  using ConnectionList = std::list<Connection>;

  Server() = default;
  void acceptLoop();
  /// Admits a new connection: makes room among the connections before their
  /// hello by closing the oldest, and starts its thread. Under mutex_.
  void admit(int fd);
  /// Joins the threads of the connections that have ended.
  void reapFinished();
  void serve(ConnectionList::iterator connection);
  /// Whether the connection may carry requests of the job: it presented
  /// the token and there is room among maxConnections. Under mutex_.
  bool authenticate(Connection &connection);
  /// Handles one request whose op byte has arrived; false ends the
  /// connection. `authenticated` is set by a hello with the right token.
  bool handleRequest(int fd, uint8_t op, Connection &connection);
  bool reply(int fd, uint8_t code, const char *data, size_t size);
  bool replyError(int fd, const std::string &message) {
    return reply(fd, kReplyError, message.data(), message.size());
  }
  /// Reads and drops `size` bytes (a value the server refuses).
  bool discard(int fd, uint64_t size, Clock::time_point deadline);
  /// Holds a pledge connection (op kOpPledge) until it closes, its
  /// heartbeats stop for `heartbeatLimit` (when not zero) or the server
  /// stops; either before `key` is set breaks the pledge.
  void holdPledge(int fd, const std::string &key,
                  std::chrono::milliseconds heartbeatLimit);
  /// Records the first broken pledge and why. Under mutex_.
  void breakPledge(const std::string &key, const std::string &reason);

  TcpStoreOptions options_;
  int listenFd_ = -1;
  int wakePipe_[2] = {-1, -1};
  int port_ = 0;
  std::thread acceptThread_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::map<std::string, std::vector<char>> values_;
  /// Key and value bytes held in values_, and bytes of sets in flight.
  uint64_t heldBytes_ = 0, reservedBytes_ = 0;
  /// Connections being served, and those whose thread has ended (to join).
  ConnectionList connections_, finished_;
  /// Connections counted against maxConnections and maxPendingConnections.
  int authenticated_ = 0, pending_ = 0;
};

StatusOr<std::unique_ptr<TcpStore::Server>>
TcpStore::Server::start(const std::string &host, int port,
                        const TcpStoreOptions &options) {
  if (port < 0 || port > 65535)
    return PARTITION_ERROR(InvalidArgument, "store port ", port,
                           " is outside 0..65535");
  std::unique_ptr<Server> server(new Server());
  server->options_ = options;
  server->listenFd_ = options.listenFd;
  std::string lastError = "no address";
  addrinfo *addrs = nullptr;
  if (server->listenFd_ < 0) {
    PARTITION_ASSIGN_OR_RETURN(addrs, resolve(host, port, true));
  } else if (!setNonBlocking(server->listenFd_) ||
             ::fcntl(server->listenFd_, F_SETFD, FD_CLOEXEC) != 0) {
    return PARTITION_ERROR(InvalidArgument, "the store's listening socket ",
                           options.listenFd,
                           " is not usable: ", errnoText(errno));
  }
  for (addrinfo *ai = addrs; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                      ai->ai_protocol);
    if (fd < 0) {
      lastError = "socket: " + errnoText(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::listen(fd, 1024) != 0) {
      lastError = errnoText(errno);
      ::close(fd);
      continue;
    }
    server->listenFd_ = fd;
    break;
  }
  if (addrs)
    ::freeaddrinfo(addrs);
  if (server->listenFd_ < 0)
    return PARTITION_ERROR(Unavailable, "cannot serve the store on ", host, ":",
                           port, ": ", lastError);

  sockaddr_storage bound;
  socklen_t boundLen = sizeof(bound);
  if (::getsockname(server->listenFd_, reinterpret_cast<sockaddr *>(&bound),
                    &boundLen) != 0)
    return PARTITION_ERROR(Internal, "getsockname: ", errnoText(errno));
  server->port_ =
      bound.ss_family == AF_INET6
          ? ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port)
          : ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);

  if (::pipe2(server->wakePipe_, O_CLOEXEC) != 0)
    return PARTITION_ERROR(Internal, "pipe: ", errnoText(errno));
  server->acceptThread_ = std::thread([s = server.get()] { s->acceptLoop(); });
  return server;
}

TcpStore::Server::~Server() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (wakePipe_[1] >= 0) {
    char byte = 1;
    while (::write(wakePipe_[1], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  if (acceptThread_.joinable())
    acceptThread_.join();
  // The accept thread has stopped, so connections_ no longer grows; each
  // thread moves its own entry to finished_ as it ends.
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (connections_.empty())
      break;
    std::thread &t = connections_.front().thread;
    lock.unlock();
    t.join();
  }
  reapFinished();
  closeFd(listenFd_);
  closeFd(wakePipe_[0]);
  closeFd(wakePipe_[1]);
}

void TcpStore::Server::acceptLoop() {
  for (;;) {
    reapFinished();
    WaitResult w = waitFd(listenFd_, POLLIN,
                          Clock::now() + std::chrono::hours(24), wakePipe_[0]);
    if (w == WaitResult::Woken || w == WaitResult::Failed)
      return;
    if (w != WaitResult::Ready)
      continue;
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue; // e.g. the client gave up, or EMFILE: try again.
    setNoDelay(fd);
    setNonBlocking(fd);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    admit(fd);
  }
}

void TcpStore::Server::admit(int fd) {
  // A connection counts against the small budget of pending ones until its
  // hello, and the oldest of those that has sent nothing makes room for a
  // new one: a stranger who opens connections without the token only ever
  // evicts his own, and holds no more than maxPendingConnections threads
  // and sockets. A client's hello arrives with its connection, but on a
  // loaded machine its thread may not have read it yet while a flood
  // admits the budget's worth of newer connections: one whose bytes wait
  // to be read is skipped (its thread answers or refuses it within
  // helloTimeout), unless every pending connection has sent something.
  if (pending_ >= std::max(options_.maxPendingConnections, 1)) {
    Connection *victim = nullptr;
    for (Connection &c : connections_) {
      if (c.authenticated || c.evicted)
        continue;
      if (!victim)
        victim = &c; // the oldest, should every one have sent something
      char byte;
      if (::recv(c.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) {
        victim = &c;
        break;
      }
    }
    if (victim) {
      victim->evicted = true;
      --pending_;
      // The connection's thread sees the end of its stream and closes the
      // socket; it leaves connections_ (under mutex_) before that, so the
      // descriptor cannot be another's yet.
      ::shutdown(victim->fd, SHUT_RDWR);
    }
  }
  ++pending_;
  connections_.emplace_back();
  auto it = std::prev(connections_.end());
  it->fd = fd;
  it->helloDeadline = Clock::now() + options_.helloTimeout;
  it->thread = std::thread([this, it] { serve(it); });
}

void TcpStore::Server::reapFinished() {
  ConnectionList ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ended.splice(ended.end(), finished_);
  }
  for (Connection &c : ended)
    if (c.thread.joinable())
      c.thread.join();
}

bool TcpStore::Server::authenticate(Connection &connection) {
  if (connection.evicted || authenticated_ >= options_.maxConnections)
    return false;
  connection.authenticated = true;
  --pending_;
  ++authenticated_;
  return true;
}

void TcpStore::Server::serve(ConnectionList::iterator connection) {
  int fd = connection->fd;
  // A new connection has helloTimeout to present the token (measured from
  // its accept, so that dripping bytes does not extend it); then idle
  // connections wait for the next request until shutdown, and a started
  // request must arrive within kMessageGrace.
  for (;;) {
    uint8_t op;
    if (recvAll(fd, &op, 1,
                connection->authenticated
                    ? Clock::now() + std::chrono::hours(24 * 365)
                    : connection->helloDeadline,
                wakePipe_[0]))
      break;
    if (!handleRequest(fd, op, *connection))
      break;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (connection->authenticated)
    --authenticated_;
  else if (!connection->evicted)
    --pending_;
  connection->fd = -1;
  ::close(fd);
  finished_.splice(finished_.end(), connections_, connection);
}

bool TcpStore::Server::discard(int fd, uint64_t size,
                               Clock::time_point deadline) {
  char buffer[64 * 1024];
  while (size > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizeof(buffer)));
    if (recvAll(fd, buffer, n, deadline, wakePipe_[0]))
      return false;
    size -= n;
  }
  return true;
}

void TcpStore::Server::holdPledge(int fd, const std::string &key,
                                  std::chrono::milliseconds heartbeatLimit) {
  // Keepalive probes end the connection when the client's host is gone
  // without closing it (about 20 s of silence).
  int on = 1, idle = 5, interval = 5, count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  bool beats = heartbeatLimit.count() > 0;
  auto lastBeat = Clock::now();
  std::string reason =
      "its connection to the store closed: the process died or was killed";
  for (;;) {
    auto deadline = beats ? lastBeat + heartbeatLimit
                          : Clock::now() + std::chrono::hours(24);
    WaitResult w = waitFd(fd, POLLIN, deadline, wakePipe_[0]);
    if (w == WaitResult::Woken)
      return; // The server stops: nobody is left to tell.
    if (w == WaitResult::TimedOut && !beats)
      continue;
    if (w == WaitResult::TimedOut) {
      reason = "it sent no heartbeat for " +
               std::to_string(heartbeatLimit.count()) +
               " ms: the process is stopped or hung";
      break;
    }
    if (w == WaitResult::Ready) {
      char bytes[64];
      ssize_t n = ::recv(fd, bytes, sizeof(bytes), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        continue;
      // Anything but heartbeats ends the pledge: a close, an error, or
      // bytes the protocol does not allow here.
      if (beats && n > 0 && std::all_of(bytes, bytes + n, [](char b) {
            return b == kHeartbeat;
          })) {
        lastBeat = Clock::now();
        continue;
      }
    }
    break;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || values_.count(key))
      return;
    breakPledge(key, reason);
  }
  changed_.notify_all();
}

void TcpStore::Server::breakPledge(const std::string &key,
                                   const std::string &reason) {
  if (values_.count(kBrokenPledgeKey))
    return;
  // The reason first: whoever sees the broken pledge can read it.
  for (auto [name, value] :
       {std::pair<std::string, std::string>(kBrokenPledgeReasonKey, reason),
        std::pair<std::string, std::string>(kBrokenPledgeKey, key)}) {
    auto it = values_.find(name);
    if (it != values_.end())
      heldBytes_ -= it->first.size() + it->second.size();
    heldBytes_ += name.size() + value.size();
    values_[name] = std::vector<char>(value.begin(), value.end());
  }
}

bool TcpStore::Server::reply(int fd, uint8_t code, const char *data,
                             size_t size) {
  std::vector<char> header(1, static_cast<char>(code));
  putU64(header, size);
  auto deadline = Clock::now() + kMessageGrace;
  return !sendAll(fd, header.data(), header.size(), deadline, wakePipe_[0]) &&
         !sendAll(fd, data, size, deadline, wakePipe_[0]);
}

bool TcpStore::Server::handleRequest(int fd, uint8_t op,
                                     Connection &connection) {
  bool authenticated = connection.authenticated;
  auto deadline =
      authenticated ? Clock::now() + kMessageGrace : connection.helloDeadline;
  uint32_t keySize;
  if (recvU32(fd, keySize, deadline, wakePipe_[0]))
    return false;
  if ((op != kOpSet && op != kOpGet && op != kOpHello && op != kOpPledge) ||
      keySize > kMaxKeyBytes) {
    replyError(fd, "malformed store request (op " + std::to_string(op) +
                       ", key of " + std::to_string(keySize) + " bytes)");
    return false; // The stream cannot be trusted any more.
  }
  if (!authenticated && op != kOpHello) {
    replyError(fd, "the connection did not present the job's token");
    return false;
  }
  std::string key(keySize, '\0');
  uint64_t arg;
  if (recvAll(fd, key.data(), keySize, deadline, wakePipe_[0]) ||
      recvU64(fd, arg, deadline, wakePipe_[0]))
    return false;

  if (op == kOpHello) {
    if (arg != kProtocolVersion) {
      replyError(fd, "store protocol version " + std::to_string(arg) +
                         " is not the server's " +
                         std::to_string(kProtocolVersion));
      return false;
    }
    if (!sameToken(key, options_.token)) {
      replyError(fd, "wrong store token (every rank of a job needs the "
                     "same PARTITION_STORE_TOKEN)");
      return false;
    }
    {
      // Evicted, or the job's own connections are at their bound: close it
      // (the client retries).
      std::lock_guard<std::mutex> lock(mutex_);
      if (!authenticate(connection))
        return false;
    }
    return reply(fd, kReplyOk, nullptr, 0);
  }

  if (op == kOpPledge) {
    if (!reply(fd, kReplyOk, nullptr, 0))
      return false;
    // Clamped as the timeout of a get is.
    holdPledge(fd, key,
               std::chrono::milliseconds(std::min<uint64_t>(
                   arg, std::chrono::milliseconds(kMaxGetTimeout).count())));
    return false; // A pledge connection carries nothing else.
  }

  if (op == kOpSet) {
    if (arg > options_.maxValueBytes) {
      replyError(fd, "store value of " + std::to_string(arg) +
                         " bytes for key '" + key + "' exceeds the limit of " +
                         std::to_string(options_.maxValueBytes) + " bytes");
      return false; // Not worth reading: drop the connection.
    }
    // Reserve the bytes before reading them, so that concurrent sets cannot
    // overrun the bound together.
    uint64_t size = arg + keySize;
    std::string refusal;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      uint64_t total = heldBytes_ + reservedBytes_ + size;
      if (total > options_.maxTotalBytes)
        refusal = "store value of " + std::to_string(arg) + " bytes for key '" +
                  key + "' would bring the store to " + std::to_string(total) +
                  " bytes, over its limit of " +
                  std::to_string(options_.maxTotalBytes);
      else
        reservedBytes_ += size;
    }
    if (!refusal.empty())
      return discard(fd, arg, Clock::now() + kMessageGrace) &&
             replyError(fd, refusal);
    // The buffer grows as the bytes arrive, so that announcing a large value
    // without sending it costs the server nothing.
    std::vector<char> value;
    bool received = true;
    auto valueDeadline = Clock::now() + kMessageGrace;
    while (received && value.size() < arg) {
      size_t chunk = static_cast<size_t>(
          std::min<uint64_t>(arg - value.size(), 1 << 20));
      size_t at = value.size();
      value.resize(at + chunk);
      received = !recvAll(fd, value.data() + at, chunk, valueDeadline,
                          wakePipe_[0]);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reservedBytes_ -= size;
      if (received) {
        auto it = values_.find(key);
        if (it != values_.end())
          heldBytes_ -= it->first.size() + it->second.size();
        heldBytes_ += size;
        values_[key] = std::move(value);
      }
    }
    if (!received)
      return false;
    changed_.notify_all();
    return reply(fd, kReplyOk, nullptr, 0);
  }

  // Clamped as an unsigned count: a wait of 2^63 ms or more would become a
  // negative duration, and overflow when added to the clock.
  auto timeout = std::chrono::milliseconds(std::min<uint64_t>(
      arg, std::chrono::milliseconds(kMaxGetTimeout).count()));
  std::vector<char> value;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_until(lock, Clock::now() + timeout,
                        [&] { return stopping_ || values_.count(key) != 0; });
    // A key set just before shutdown is still answered: whoever set it
    // (e.g. rank 0's "done") may then stop serving at once.
    bool found = values_.count(key) != 0;
    if (stopping_ && !found)
      return false;
    if (!found) {
      lock.unlock();
      return reply(fd, kReplyTimedOut, nullptr, 0);
    }
    value = values_[key];
  }
  return reply(fd, kReplyOk, value.data(), value.size());
}

//===----------------------------------------------------------------------===//
// TcpStore (client)
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<TcpStore>> TcpStore::create(const std::string &host,
                                                     int port, bool serve,
                                                     TcpStoreOptions options) {
  if (port < 0 || port > 65535 || (!serve && port == 0))
    return PARTITION_ERROR(InvalidArgument, "store port ", port,
                           " is invalid (0 picks a free port only when "
                           "serving)");
  std::unique_ptr<Server> server;
  if (serve) {
    PARTITION_ASSIGN_OR_RETURN(server, Server::start(host, port, options));
    port = server->port();
  }
  PARTITION_ASSIGN_OR_RETURN(
      int fd, connectWithRetry(host, port, options.token,
                               Clock::now() + options.connectTimeout));
  return std::unique_ptr<TcpStore>(
      new TcpStore(std::move(server), fd, host, port, options));
}

TcpStore::TcpStore(std::unique_ptr<Server> server, int fd, std::string host,
                   int port, TcpStoreOptions options)
    : server_(std::move(server)), host_(std::move(host)), port_(port),
      options_(options), idle_{fd} {}

TcpStore::~TcpStore() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stopBeating_.notify_all();
  if (heartbeat_.joinable())
    heartbeat_.join();
  for (int &fd : idle_)
    closeFd(fd);
  for (int &fd : pledges_)
    closeFd(fd);
  server_.reset();
}

StatusOr<std::vector<char>>
TcpStore::roundTrip(const std::vector<char> &request,
                    const std::vector<char> *payload, const std::string &what,
                    std::chrono::milliseconds wait) {
  auto start = Clock::now();
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      fd = idle_.back();
      idle_.pop_back();
    }
  }
  if (fd < 0) {
    auto connectWindow = std::min<std::chrono::milliseconds>(
        options_.connectTimeout,
        std::max<std::chrono::milliseconds>(wait, kMessageGrace));
    PARTITION_ASSIGN_OR_RETURN(
        fd, connectWithRetry(host_, port_, options_.token,
                             start + connectWindow, /*reached=*/true,
                             options_.answerTimeout));
  }

  IoError err =
      sendAll(fd, request.data(), request.size(), start + kMessageGrace);
  if (!err && payload)
    err = sendAll(fd, payload->data(), payload->size(),
                  Clock::now() + kMessageGrace);
  // The server answers a get when its key is set or its timeout passes;
  // one that says nothing for answerTimeout longer is stopped or hung.
  auto answerDeadline = Clock::now() + wait + options_.answerTimeout;
  uint8_t code = kReplyError;
  uint64_t size = 0;
  if (!err) {
    err = recvAll(fd, &code, 1, answerDeadline);
    if (err.code == StatusCode::DeadlineExceeded)
      err = {StatusCode::Unavailable,
             "the store did not answer within " +
                 std::to_string((wait + options_.answerTimeout).count()) +
                 " ms: the process that serves it is stopped or hung"};
  }
  auto deadline = Clock::now() + kMessageGrace;
  if (!err)
    err = recvU64(fd, size, deadline);
  std::vector<char> reply;
  if (!err && size > options_.maxValueBytes)
    err = {StatusCode::Internal, "oversized reply"};
  if (!err) {
    reply.resize(size);
    err = recvAll(fd, reply.data(), size, Clock::now() + kMessageGrace);
  }
  if (err) {
    // The stream is out of step (or gone): never reuse this connection.
    closeFd(fd);
    return Status(
        err.code,
        detail::concat(what, " at ", host_, ":", port_, ": ", err.message),
        __FILE__, __LINE__);
  }
  if (code == kReplyOk || code == kReplyTimedOut) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(fd);
  } else {
    closeFd(fd); // The server may have closed its end after an error.
  }
  if (code == kReplyTimedOut)
    return PARTITION_ERROR(DeadlineExceeded, what, " timed out after ",
                           wait.count(), " ms: the key was not set");
  if (code != kReplyOk)
    return PARTITION_ERROR(ResourceExhausted, what, " failed on the server: ",
                           std::string(reply.begin(), reply.end()));
  return reply;
}

Status TcpStore::pledge(const std::string &key) {
  if (key.size() > kMaxKeyBytes)
    return PARTITION_ERROR(InvalidArgument, "store key of ", key.size(),
                           " bytes is over the limit of ", kMaxKeyBytes);
  PARTITION_ASSIGN_OR_RETURN(
      int fd, connectWithRetry(host_, port_, options_.token,
                               Clock::now() + options_.connectTimeout,
                               /*reached=*/true, options_.answerTimeout));
  uint8_t code;
  std::string text;
  auto limit = std::max(options_.heartbeatLimit, std::chrono::milliseconds(0));
  IoError err = exchangeShort(
      fd, makeRequest(kOpPledge, key, static_cast<uint64_t>(limit.count())),
      Clock::now() + kMessageGrace, code, text);
  if (!err && code != kReplyOk)
    err = {StatusCode::Unavailable, "the server refused the pledge: " + text};
  if (err) {
    closeFd(fd);
    return Status(err.code,
                  detail::concat("pledge of '", key, "' at ", host_, ":",
                                 port_, ": ", err.message),
                  __FILE__, __LINE__);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  pledges_.push_back(fd);
  if (limit.count() > 0 && !heartbeat_.joinable())
    heartbeat_ = std::thread([this] { beat(); });
  return Status::ok();
}

void TcpStore::beat() {
  auto period =
      std::max(options_.heartbeatLimit / 4, std::chrono::milliseconds(1));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopBeating_.wait_for(lock, period, [&] { return stopping_; }))
    for (int fd : pledges_)
      // A full socket buffer (the server is stopped) or a closed one (it
      // is gone) is the watchers' concern, not the heartbeat's.
      (void)!::send(fd, &kHeartbeat, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

Status TcpStore::set(const std::string &key, const std::vector<char> &value) {
  if (key.size() > kMaxKeyBytes || value.size() > options_.maxValueBytes)
    return PARTITION_ERROR(InvalidArgument, "store key of ", key.size(),
                           " bytes or value of ", value.size(),
                           " bytes is over the limit (", kMaxKeyBytes, ", ",
                           options_.maxValueBytes, ")");
  StatusOr<std::vector<char>> reply =
      roundTrip(makeRequest(kOpSet, key, value.size()), &value,
                "store set of '" + key + "'",
                std::chrono::milliseconds(0));
  return reply.isOk() ? Status::ok() : reply.status();
}

StatusOr<std::vector<char>> TcpStore::get(const std::string &key,
                                          std::chrono::milliseconds timeout) {
  if (key.size() > kMaxKeyBytes)
    return PARTITION_ERROR(InvalidArgument, "store key of ", key.size(),
                           " bytes is over the limit of ", kMaxKeyBytes);
  timeout = std::clamp<std::chrono::milliseconds>(
      timeout, std::chrono::milliseconds(0), kMaxGetTimeout);
  return roundTrip(
      makeRequest(kOpGet, key, static_cast<uint64_t>(timeout.count())),
      nullptr, "store get of '" + key + "'", timeout);
}
