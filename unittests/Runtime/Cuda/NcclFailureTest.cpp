//===- NcclFailureTest.cpp - NCCL deadlines and aborts --------------------===//
//
// Failure paths that can be made deterministic with one GPU: a peer that
// never publishes the group's unique id, a peer that never joins the NCCL
// communicator, and an operation that cannot complete (a send to this rank
// that no receive matches). Each must end in an error within a bound, never a
// hang, and leave the communicator aborted. A binary of its own, so that an
// aborted NCCL kernel cannot affect the other CUDA tests.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "partition/runtime/cuda/NcclCommunicator.h"

using namespace partition::runtime;
using namespace partition::runtime::testing;
using Clock = std::chrono::steady_clock;

namespace {

class NcclFailureTest : public CudaFixture {
protected:
  cuda::NcclOptions shortDeadlines() {
    cuda::NcclOptions options;
    options.timeout = std::chrono::seconds(2);
    options.rendezvousTimeout = std::chrono::milliseconds(300);
    return options;
  }

  static double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  MapStore store_;
};

TEST_F(NcclFailureTest, MissingUniqueIdTimesOut) {
  // World rank 1 of 2 waits for rank 0's unique id, which never comes.
  auto factory = cuda::createNcclCommunicatorFactory(store_, 1, 2, *device_,
                                                     shortDeadlines());
  ASSERT_TRUE(factory.isOk()) << factory.status().toString();
  Clock::time_point start = Clock::now();
  auto comm = factory.value()->create({0, 1}, "never-published");
  ASSERT_FALSE(comm.isOk());
  EXPECT_EQ(comm.status().code(), StatusCode::DeadlineExceeded)
      << comm.status().toString();
  EXPECT_LT(secondsSince(start), 10.0);
}

TEST_F(NcclFailureTest, MissingPeerAbortsInitialisation) {
  // World rank 0 of 2 publishes the id and starts a two-rank communicator;
  // rank 1 never joins. The non-blocking initialisation is polled with a
  // deadline and then aborted.
  auto factory = cuda::createNcclCommunicatorFactory(store_, 0, 2, *device_,
                                                     shortDeadlines());
  ASSERT_TRUE(factory.isOk()) << factory.status().toString();
  Clock::time_point start = Clock::now();
  auto comm = factory.value()->create({0, 1}, "lonely");
  ASSERT_FALSE(comm.isOk());
  // A deadline, or an error NCCL's own bootstrap reports first.
  EXPECT_NE(comm.status().code(), StatusCode::Ok);
  EXPECT_LT(secondsSince(start), 60.0) << comm.status().toString();
  // The device is unaffected.
  DeviceTensor t = upload(DType::F32, {4}, {1, 2, 3, 4});
  EXPECT_EQ(download(t), (std::vector<double>{1, 2, 3, 4}));
}

TEST_F(NcclFailureTest, StuckOperationIsAbortedAtTheDeadline) {
  auto factory = cuda::createNcclCommunicatorFactory(store_, 0, 1, *device_,
                                                     shortDeadlines());
  ASSERT_TRUE(factory.isOk()) << factory.status().toString();
  auto comm = factory.value()->create({0}, "stuck");
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  DeviceTensor t = upload(DType::F32, {256}, std::vector<double>(256, 1.0));

  // A send to this very rank with no matching receive can never complete.
  // NCCL either refuses it at once or leaves it waiting; the watchdog then
  // aborts the communicator at the deadline and the device reports it.
  Clock::time_point start = Clock::now();
  Status status =
      comm.value()->send(t.ref.data, 256, DType::F32, 0, 0, *stream_);
  if (status.isOk())
    status = stream_->synchronize();
  EXPECT_FALSE(status.isOk());
  EXPECT_LT(secondsSince(start), 60.0) << status.toString();

  // The communicator is aborted for good.
  Status later = comm.value()->allReduce(t.ref.data, t.ref.data, 256,
                                         DType::F32, ReduceOp::Sum, *stream_);
  EXPECT_EQ(later.code(), StatusCode::Aborted) << later.toString();
}

} // namespace
