//===- NcclCommunicatorTest.cpp - NCCL collectives on one rank ------------===//
//
// One GPU is lent to these tests, so every collective runs over a group of
// one rank: all-reduce, reduce-scatter and all-gather leave the data as it
// is, all-to-all and a self permute copy it, and a rank that is no target of
// a permute receives zeros. That still checks the NCCL calls, the stream
// ordering (no synchronization between the producing kernel, the collective
// and the consuming copy) and the argument checks.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "partition/runtime/cuda/NcclCommunicator.h"

using namespace partition::runtime;
using namespace partition::runtime::testing;

namespace {

class NcclCommunicatorTest : public CudaFixture {
protected:
  void SetUp() override {
    CudaFixture::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    cuda::NcclOptions options;
    options.timeout = std::chrono::seconds(60);
    auto factory =
        cuda::createNcclCommunicatorFactory(store_, 0, 1, *device_, options);
    ASSERT_TRUE(factory.isOk()) << factory.status().toString();
    factory_ = std::move(factory).value();
    auto comm = factory_->create(
        {0}, ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    comm_ = std::move(comm).value();
  }

  void TearDown() override {
    comm_.reset();
    factory_.reset();
  }

  /// A tensor of `n` values 1, 2, 3, ... of `dtype` written by a kernel on
  /// the stream (no synchronization before the collective that reads it).
  DeviceTensor iota(DType dtype, int64_t n) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = static_cast<double>(i + 1);
    DeviceTensor steps = upload(dtype, {n}, values);
    DeviceTensor t = empty(dtype, {n});
    EXPECT_TRUE(run(OpKind::Copy, {}, {&steps}, {&t}).isOk());
    return t;
  }

  std::vector<double> iotaValues(int64_t n) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i)
      v[i] = static_cast<double>(i + 1);
    return v;
  }

  MapStore store_;
  std::unique_ptr<CommunicatorFactory> factory_;
  std::unique_ptr<Communicator> comm_;
};

TEST_F(NcclCommunicatorTest, RankAndSize) {
  EXPECT_EQ(comm_->rank(), 0);
  EXPECT_EQ(comm_->size(), 1);
  EXPECT_EQ(factory_->worldRank(), 0);
  EXPECT_EQ(factory_->worldSize(), 1);
}

TEST_F(NcclCommunicatorTest, AllReduceEveryDTypeAndOp) {
  const int64_t n = 1000;
  for (DType dtype :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64}) {
    for (ReduceOp op :
         {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg}) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " op " +
                   std::to_string(static_cast<int>(op)));
      DeviceTensor in = iota(dtype, n);
      DeviceTensor out = empty(dtype, {n});
      PARTITION_ASSERT_OK(
          comm_->allReduce(in.ref.data, out.ref.data, n, dtype, op, *stream_));
      EXPECT_EQ(download(out), roundTo(dtype, iotaValues(n)));
      // In place.
      PARTITION_ASSERT_OK(
          comm_->allReduce(in.ref.data, in.ref.data, n, dtype, op, *stream_));
      EXPECT_EQ(download(in), roundTo(dtype, iotaValues(n)));
    }
  }
}

TEST_F(NcclCommunicatorTest, AllGatherAndReduceScatter) {
  const int64_t n = 4096;
  DeviceTensor in = iota(DType::F32, n);
  DeviceTensor gathered = empty(DType::F32, {n});
  PARTITION_ASSERT_OK(comm_->allGather(in.ref.data, gathered.ref.data, n,
                                       DType::F32, *stream_));
  EXPECT_EQ(download(gathered), iotaValues(n));
  DeviceTensor scattered = empty(DType::F32, {n});
  PARTITION_ASSERT_OK(comm_->reduceScatter(
      in.ref.data, scattered.ref.data, n, DType::F32, ReduceOp::Sum, *stream_));
  EXPECT_EQ(download(scattered), iotaValues(n));
}

TEST_F(NcclCommunicatorTest, AllToAllWithOneRankIsACopy) {
  const int64_t n = 777;
  DeviceTensor in = iota(DType::I64, n);
  DeviceTensor out = empty(DType::I64, {n});
  PARTITION_ASSERT_OK(
      comm_->allToAll(in.ref.data, out.ref.data, n, DType::I64, *stream_));
  EXPECT_EQ(download(out), iotaValues(n));
}

TEST_F(NcclCommunicatorTest, Permute) {
  const int64_t n = 300;
  DeviceTensor in = iota(DType::BF16, n);
  DeviceTensor out = empty(DType::BF16, {n});
  PARTITION_ASSERT_OK(comm_->permute(in.ref.data, out.ref.data, n, DType::BF16,
                                     {{0, 0}}, *stream_));
  EXPECT_EQ(download(out), roundTo(DType::BF16, iotaValues(n)));
  // No pair targets rank 0: it receives zeros.
  PARTITION_ASSERT_OK(
      comm_->permute(in.ref.data, out.ref.data, n, DType::BF16, {}, *stream_));
  EXPECT_EQ(download(out), std::vector<double>(n, 0.0));
  // Pairs outside the group, or a rank listed twice, are rejected.
  Status status = comm_->permute(in.ref.data, out.ref.data, n, DType::BF16,
                                 {{0, 1}}, *stream_);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  status = comm_->permute(in.ref.data, out.ref.data, n, DType::BF16,
                          {{0, 0}, {0, 0}}, *stream_);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
}

TEST_F(NcclCommunicatorTest, PointToPointChecksThePeer) {
  DeviceTensor t = iota(DType::F32, 16);
  Status status = comm_->send(t.ref.data, 16, DType::F32, 1, 0, *stream_);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  status = comm_->recv(t.ref.data, 16, DType::F32, -1, 0, *stream_);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  // Nothing to move is no operation at all.
  PARTITION_ASSERT_OK(comm_->send(t.ref.data, 0, DType::F32, 0, 0, *stream_));
  PARTITION_ASSERT_OK(stream_->synchronize());
}

TEST_F(NcclCommunicatorTest, CollectivesFollowTheStreamOrder) {
  // Kernel -> all-reduce -> kernel -> all-gather -> copy, synchronizing only
  // at the end: the collectives must see the kernels' results and the last
  // copy the collectives'.
  const int64_t n = 1 << 20;
  DeviceTensor a = empty(DType::F32, {n});
  DeviceTensor b = empty(DType::F32, {n});
  DeviceTensor c = empty(DType::F32, {n});
  PARTITION_ASSERT_OK(run(OpKind::Fill, fillAttrs(3.0f), {}, {&a}));
  PARTITION_ASSERT_OK(comm_->allReduce(a.ref.data, b.ref.data, n, DType::F32,
                                       ReduceOp::Sum, *stream_));
  PARTITION_ASSERT_OK(run(OpKind::Add, {}, {&b, &b}, {&c}));
  PARTITION_ASSERT_OK(
      comm_->allGather(c.ref.data, a.ref.data, n, DType::F32, *stream_));
  std::vector<double> values = download(a);
  EXPECT_EQ(values.front(), 6.0);
  EXPECT_EQ(values[n / 2], 6.0);
  EXPECT_EQ(values.back(), 6.0);
}

TEST_F(NcclCommunicatorTest, AbortStopsLaterCalls) {
  DeviceTensor t = iota(DType::F32, 64);
  comm_->abort();
  comm_->abort(); // more than once is fine
  Status status = comm_->allReduce(t.ref.data, t.ref.data, 64, DType::F32,
                                   ReduceOp::Sum, *stream_);
  EXPECT_EQ(status.code(), StatusCode::Aborted) << status.toString();
  // A caller's abort is no device error.
  PARTITION_ASSERT_OK(stream_->synchronize());
}

TEST_F(NcclCommunicatorTest, FactoryChecksTheGroup) {
  auto notMember = factory_->create({}, "empty");
  EXPECT_EQ(notMember.status().code(), StatusCode::InvalidArgument)
      << notMember.status().toString();
  auto outside = factory_->create({0, 1}, "outside");
  EXPECT_EQ(outside.status().code(), StatusCode::InvalidArgument)
      << outside.status().toString();
  // A second communicator on the same device works alongside the first.
  auto second = factory_->create({0}, "second");
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  DeviceTensor t = iota(DType::I32, 10);
  PARTITION_ASSERT_OK(second.value()->allReduce(
      t.ref.data, t.ref.data, 10, DType::I32, ReduceOp::Sum, *stream_));
  EXPECT_EQ(download(t), iotaValues(10));
}

TEST(NcclFactoryTest, NeedsACudaDevice) {
  // Any non-CUDA Device is refused; a stub stands in for the CPU device.
  class NoKernels final : public Kernels {
  public:
    Status run(OpKind, const KernelAttrs &, const std::vector<TensorRef> &,
               const std::vector<TensorRef> &, Stream &) override {
      return PARTITION_ERROR(Unimplemented, "stub");
    }
  };
  class HostDevice final : public Device {
  public:
    std::string name() const override { return "stub"; }
    bool isHost() const override { return true; }
    StatusOr<std::unique_ptr<Buffer>> allocate(size_t) override {
      return PARTITION_ERROR(Unimplemented, "stub");
    }
    StatusOr<std::unique_ptr<Stream>> createStream() override {
      return PARTITION_ERROR(Unimplemented, "stub");
    }
    StatusOr<std::unique_ptr<Event>> createEvent() override {
      return PARTITION_ERROR(Unimplemented, "stub");
    }
    Status copyToDevice(void *, const void *, size_t, Stream &) override {
      return Status::ok();
    }
    Status copyToHost(void *, const void *, size_t, Stream &) override {
      return Status::ok();
    }
    Status copy(void *, const void *, size_t, Stream &) override {
      return Status::ok();
    }
    size_t allocatedBytes() const override { return 0; }
    size_t peakAllocatedBytes() const override { return 0; }
    Kernels &kernels() override { return kernels_; }

  private:
    NoKernels kernels_;
  } host;
  MapStore store;
  auto factory = cuda::createNcclCommunicatorFactory(store, 0, 1, host);
  EXPECT_EQ(factory.status().code(), StatusCode::InvalidArgument)
      << factory.status().toString();
}

} // namespace
