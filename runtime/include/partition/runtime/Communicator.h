//===- Communicator.h - collectives over a group of ranks -------*- C++ -*-===//
//
// A Communicator connects the ranks of one group (the ranks that differ only
// along some mesh axes). Buffers are device pointers of the communicator's
// device; operations are ordered on the given stream (on the CPU they finish
// before the call returns). Every wait has a deadline; on error or timeout
// the call aborts the communicator and returns an error, so a failing rank
// makes its peers fail instead of hanging.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_COMMUNICATOR_H
#define PARTITION_RUNTIME_COMMUNICATOR_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace partition::runtime {

class Stream;

enum class ReduceOp { Sum, Max, Min, Avg };

/// Collectives over one group. Ranks are group ranks, 0..size()-1.
class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// recv[i] = op over ranks of send[i], `count` elements. send may equal recv.
  virtual Status allReduce(const void *send, void *recv, int64_t count,
                           DType dtype, ReduceOp op, Stream &stream) = 0;
  /// recv = concatenation of every rank's `count` elements, in rank order.
  virtual Status allGather(const void *send, void *recv, int64_t count,
                           DType dtype, Stream &stream) = 0;
  /// send holds size() blocks of `count` elements; rank r receives the
  /// reduction over ranks of block r.
  virtual Status reduceScatter(const void *send, void *recv, int64_t count,
                               DType dtype, ReduceOp op, Stream &stream) = 0;
  /// send holds size() blocks of `count` elements; block i goes to rank i,
  /// and recv block j comes from rank j.
  virtual Status allToAll(const void *send, void *recv, int64_t count,
                          DType dtype, Stream &stream) = 0;
  /// For each (source, target) pair, source's `send` arrives in target's
  /// `recv`; a rank that is no target gets zeros.
  virtual Status permute(const void *send, void *recv, int64_t count,
                         DType dtype,
                         const std::vector<std::pair<int, int>> &pairs,
                         Stream &stream) = 0;
  /// Point to point, matched by (peer, tag).
  virtual Status send(const void *data, int64_t count, DType dtype, int peer,
                      int64_t tag, Stream &stream) = 0;
  virtual Status recv(void *data, int64_t count, DType dtype, int peer,
                      int64_t tag, Stream &stream) = 0;
  /// Stops every pending and future operation with an error. Safe to call
  /// from any thread, more than once.
  virtual void abort() = 0;
};

/// Key-value store used for rendezvous (Gloo's address exchange, NCCL's
/// unique id). get() waits until the key exists or the timeout passes.
class Store {
public:
  virtual ~Store() = default;
  virtual Status set(const std::string &key,
                     const std::vector<char> &value) = 0;
  virtual StatusOr<std::vector<char>>
  get(const std::string &key, std::chrono::milliseconds timeout) = 0;
};

/// Makes communicators for this process's rank of the world.
class CommunicatorFactory {
public:
  virtual ~CommunicatorFactory() = default;
  virtual int worldRank() const = 0;
  virtual int worldSize() const = 0;
  /// A communicator over `ranks` (world ranks, in group order; must contain
  /// worldRank()). Every member calls it with the same ranks and `key`.
  virtual StatusOr<std::unique_ptr<Communicator>>
  create(const std::vector<int> &ranks, const std::string &key) = 0;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_COMMUNICATOR_H
