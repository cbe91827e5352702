//===- Stores.h - rendezvous key-value stores -------------------*- C++ -*-===//
//
// Two implementations of runtime::Store: InProcessStore for ranks that are
// threads of one process, and TcpStore, a small TCP key-value store served by
// rank 0 for ranks that are processes (Gloo ships no TCP store). Both are
// backend-neutral: they carry Gloo's address exchange as well as NCCL's
// unique id.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_STORES_H
#define PARTITION_RUNTIME_STORES_H

#include "partition/runtime/Communicator.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace partition::runtime {

/// A store shared by the ranks of one process (ranks as threads): a map
/// guarded by a mutex, with a condition variable that wakes waiting gets.
/// Thread-safe.
class InProcessStore final : public Store {
public:
  /// Sets `key` to `value`, replacing any earlier value, and wakes waiters.
  Status set(const std::string &key, const std::vector<char> &value) override;
  /// The value of `key`, waiting up to `timeout` for it to be set;
  /// DeadlineExceeded when it is not.
  StatusOr<std::vector<char>> get(const std::string &key,
                                  std::chrono::milliseconds timeout) override;

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
};

/// Options of a TcpStore.
struct TcpStoreOptions {
  /// How long create() keeps retrying to reach the server (it may start
  /// after its clients). Later reconnections wait at most this long too.
  std::chrono::milliseconds connectTimeout = std::chrono::seconds(30);
  /// The job's secret: a client proves it knows the token before its first
  /// request, and the server drops every connection that does not. Every
  /// rank of a job must use the same token (empty only where the host is
  /// trusted, e.g. in tests).
  std::string token;
  /// The largest value one set may carry (clients and server).
  uint64_t maxValueBytes = 256ull * 1024 * 1024;
  /// The most key and value bytes the server holds at once; a set that
  /// would exceed it fails with ResourceExhausted (server only).
  uint64_t maxTotalBytes = 1ull << 30;
  /// The most connections of the job (those that presented the token) the
  /// server serves at once; further ones are closed after their hello, and
  /// their client retries (server only).
  int maxConnections = 512;
  /// The most connections the server holds before their hello (strangers
  /// and clients that have just connected), apart from maxConnections: when
  /// one more arrives, the oldest is closed, so that connections nobody
  /// authenticates can never keep the job's own out (server only).
  int maxPendingConnections = 64;
  /// How long a new connection has to present the token (server only).
  std::chrono::milliseconds helloTimeout = std::chrono::seconds(2);
  /// How long past a request's own wait (a get's timeout) a client waits
  /// for the server's answer before it takes the server for stopped or hung
  /// (Unavailable).
  std::chrono::milliseconds answerTimeout = std::chrono::seconds(10);
  /// A socket already bound and listening (e.g. inherited from the process
  /// that chose its port) for the server to take over instead of binding
  /// host:port; -1 for none (server only).
  int listenFd = -1;
  /// With pledge(): the longest the server may go without a heartbeat from
  /// the pledging process before it takes it for stopped or hung and breaks
  /// the pledge (0: no heartbeats; only a closed connection breaks it). The
  /// client sends one every quarter of it from a thread of its own.
  std::chrono::milliseconds heartbeatLimit = std::chrono::milliseconds(0);
};

/// A TCP key-value store. The rank that serves it (rank 0, on MASTER_ADDR and
/// MASTER_PORT) runs the server in background threads; every rank, the
/// server's included, talks to it as a client. Each connection starts with
/// the job's token (TcpStoreOptions::token); the server holds at most
/// maxTotalBytes of keys and values. A get() waits on the server
/// until the key is set or its timeout passes. Sockets use TCP_NODELAY on both
/// ends. Thread-safe: a request takes an idle connection or opens another, so
/// a get waiting in one thread never holds up a set from another.
///
/// The server lives as long as its TcpStore: keep rank 0's store until every
/// rank has finished its rendezvous (e.g. until communicators are created).
class TcpStore final : public Store {
public:
  /// Connects to the store at host:port. When `serve` is true, first starts
  /// serving on host:port (port 0 picks a free port; read it with port()).
  /// Errors: Unavailable when the server cannot be reached within
  /// options.connectTimeout (connection refused, unknown host), or when
  /// `serve` cannot bind the address, or when the server refuses the token
  /// (that error is returned at once, without retrying).
  static StatusOr<std::unique_ptr<TcpStore>>
  create(const std::string &host, int port, bool serve,
         TcpStoreOptions options = {});
  ~TcpStore() override;

  /// The port the store listens on (the one picked when created with port 0).
  int port() const { return port_; }
  /// True when this TcpStore runs the server.
  bool isServer() const { return server_ != nullptr; }

  /// Sets `key` to `value` on the server. Keys up to 64 KiB, values up to
  /// options.maxValueBytes; ResourceExhausted when the server would hold more
  /// than its maxTotalBytes.
  Status set(const std::string &key, const std::vector<char> &value) override;
  /// The value of `key`, waiting on the server up to `timeout` for it to be
  /// set: DeadlineExceeded when it is not, Unavailable when the server went
  /// away.
  StatusOr<std::vector<char>> get(const std::string &key,
                                  std::chrono::milliseconds timeout) override;

  /// The key the server sets when a pledge is broken; its value is the
  /// pledged key. Only the first broken pledge is recorded.
  static constexpr const char *kBrokenPledgeKey = "store/broken-pledge";
  /// Set with kBrokenPledgeKey (before anyone can read that): why the pledge
  /// broke, e.g. "its connection to the store closed: the process died or
  /// was killed".
  static constexpr const char *kBrokenPledgeReasonKey =
      "store/broken-pledge-reason";
  /// Pledges that this process sets `key` before it ends, so that the
  /// others learn at once when it dies instead of waiting out a timeout: a
  /// connection of its own stays open (with TCP keepalive) until this
  /// TcpStore is destroyed, and when it closes while `key` is not set (the
  /// process died, was killed, or lost its host), or, with
  /// options.heartbeatLimit, when no heartbeat arrives on it for that long
  /// (the process is stopped or hung), the server sets kBrokenPledgeKey to
  /// `key`. Errors: those of a connection.
  Status pledge(const std::string &key);

  /// The server side; defined in Stores.cpp.
  class Server;

private:
  TcpStore(std::unique_ptr<Server> server, int fd, std::string host, int port,
           TcpStoreOptions options);
  /// One request/response exchange on a pooled connection.
  StatusOr<std::vector<char>> roundTrip(const std::vector<char> &request,
                                        const std::vector<char> *payload,
                                        const std::string &what,
                                        std::chrono::milliseconds wait);

  std::unique_ptr<Server> server_;
  std::string host_;
  int port_;
  TcpStoreOptions options_;
  /// Connections to the server not in use by a request.
  std::mutex mutex_;
  std::vector<int> idle_;
  /// The connections of pledge(), open until destruction.
  std::vector<int> pledges_;
  /// Sends the heartbeats of the pledges (with options.heartbeatLimit).
  void beat();
  std::condition_variable stopBeating_;
  bool stopping_ = false;
  std::thread heartbeat_;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_STORES_H
