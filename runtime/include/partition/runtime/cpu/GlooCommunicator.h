//===- GlooCommunicator.h - collectives over Gloo TCP -----------*- C++ -*-===//
//
// Communicators for host memory: Gloo's TCP transport, one full mesh of
// connections per group, rendezvous through a runtime::Store. Gloo stays
// behind this header (no Gloo include reaches its users).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CPU_GLOOCOMMUNICATOR_H
#define PARTITION_RUNTIME_CPU_GLOOCOMMUNICATOR_H

#include "partition/runtime/Communicator.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace partition::runtime::cpu {

/// Options of every communicator a GlooCommunicatorFactory makes.
struct GlooOptions {
  /// Deadline of each wait of an operation (Gloo's per-operation timeout),
  /// of each rendezvous lookup while a group connects, and of connecting to
  /// each peer. A rank that waits this long fails with DeadlineExceeded and
  /// resets its connections, so its peers fail at once instead of waiting
  /// out their own timeouts.
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
  /// Address this rank's sockets bind to and advertise to its peers. The
  /// default, loopback, only reaches ranks on the same host.
  std::string hostname = "127.0.0.1";
  /// A network interface to bind instead of `hostname` (e.g. "eth0"); empty
  /// to use `hostname`.
  std::string interface;
  /// When one communicator of this factory fails, abort all of them, so that
  /// the peers of this rank in every group fail fast too.
  bool abortAllOnError = true;
};

/// Where the Gloo sockets of a rank listen when its ranks meet at
/// `masterAddr` (the store's host), chosen as PyTorch does: the interface
/// `socketIfname` (GLOO_SOCKET_IFNAME; the first of a comma-separated list)
/// when not empty, else the
/// local address from which `masterAddr` is reached (a UDP socket connected
/// to it, never sending). Returns `options` with `interface` or `hostname`
/// set. Errors: Unavailable when `masterAddr` does not resolve or no route
/// reaches it.
StatusOr<GlooOptions> chooseGlooAddress(const std::string &masterAddr,
                                        const std::string &socketIfname,
                                        GlooOptions options);

/// Makes Gloo communicators for one rank of the world. Group creation is
/// collective: every member calls create() with the same ranks and key, and
/// groups are created in the same order on every member. Creating a group
/// again with the same key is allowed (each creation rendezvouses under a
/// fresh generation of the key).
class GlooCommunicatorFactory final : public CommunicatorFactory {
public:
  /// `store` is shared by every rank of the world (an InProcessStore when the
  /// ranks are threads, a TcpStore otherwise) and must outlive create().
  GlooCommunicatorFactory(int worldRank, int worldSize,
                          std::shared_ptr<Store> store,
                          GlooOptions options = {});
  ~GlooCommunicatorFactory() override;

  /// This process's rank in the world.
  int worldRank() const override { return worldRank_; }
  /// Number of ranks in the world.
  int worldSize() const override { return worldSize_; }

  /// Connects the group `ranks` (world ranks in group order, containing
  /// worldRank()). Errors: InvalidArgument for a malformed group;
  /// DeadlineExceeded when a member does not show up within the timeout;
  /// Unavailable when connecting fails. A group of one needs no peers and no
  /// store.
  StatusOr<std::unique_ptr<Communicator>>
  create(const std::vector<int> &ranks, const std::string &key) override;

  /// Aborts every communicator this factory made that is still alive.
  void abortAll();

  /// State shared with the communicators; defined in GlooCommunicator.cpp.
  struct Shared;

private:
  int worldRank_;
  int worldSize_;
  std::shared_ptr<Store> store_;
  GlooOptions options_;
  std::shared_ptr<Shared> shared_;
};

} // namespace partition::runtime::cpu

#endif // PARTITION_RUNTIME_CPU_GLOOCOMMUNICATOR_H
