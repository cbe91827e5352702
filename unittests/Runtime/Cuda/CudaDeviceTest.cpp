//===- CudaDeviceTest.cpp - CUDA device, streams, events, copies ----------===//

#include "CudaTestUtil.h"

#include <algorithm>
#include <numeric>

using namespace partition::runtime;
using namespace partition::runtime::testing;

namespace {

TEST(CudaDiscoveryTest, CountIsNeverNegative) {
  // Discovery never fails: no driver or no GPU is a count of 0.
  EXPECT_GE(cuda::cudaDeviceCount(), 0);
}

TEST(CudaDiscoveryTest, MissingOrdinalIsUnavailable) {
  int count = cuda::cudaDeviceCount();
  auto device = cuda::createCudaDevice(count);
  ASSERT_FALSE(device.isOk());
  EXPECT_EQ(device.status().code(), StatusCode::Unavailable)
      << device.status().toString();
  EXPECT_FALSE(cuda::createCudaDevice(-1).isOk());
}

using CudaDeviceTest = CudaFixture;

TEST_F(CudaDeviceTest, NameAndKind) {
  EXPECT_EQ(device_->name().rfind("cuda:0 (", 0), 0u) << device_->name();
  EXPECT_EQ(device_->name().back(), ')');
  EXPECT_FALSE(device_->isHost());
  EXPECT_NE(stream_->native(), nullptr);
}

TEST_F(CudaDeviceTest, AllocationIsCounted) {
  size_t before = device_->allocatedBytes();
  {
    auto a = device_->allocate(1 << 20);
    ASSERT_TRUE(a.isOk()) << a.status().toString();
    EXPECT_NE(a.value()->data(), nullptr);
    EXPECT_EQ(a.value()->size(), size_t(1) << 20);
    auto b = device_->allocate(4096);
    ASSERT_TRUE(b.isOk()) << b.status().toString();
    EXPECT_EQ(device_->allocatedBytes(), before + (1 << 20) + 4096);
    EXPECT_GE(device_->peakAllocatedBytes(), before + (1 << 20) + 4096);
  }
  EXPECT_EQ(device_->allocatedBytes(), before);
  EXPECT_GE(device_->peakAllocatedBytes(), before + (1 << 20) + 4096);

  auto zero = device_->allocate(0);
  ASSERT_TRUE(zero.isOk()) << zero.status().toString();
  EXPECT_EQ(zero.value()->size(), 0u);
}

TEST_F(CudaDeviceTest, HugeAllocationFailsWithAStatus) {
  auto huge = device_->allocate(size_t(1) << 50); // 1 PiB
  ASSERT_FALSE(huge.isOk());
  EXPECT_EQ(huge.status().code(), StatusCode::ResourceExhausted)
      << huge.status().toString();
  // The device is still usable.
  auto small = device_->allocate(256);
  EXPECT_TRUE(small.isOk()) << small.status().toString();
}

TEST_F(CudaDeviceTest, CopiesRoundTrip) {
  const size_t n = 1 << 16;
  std::vector<int32_t> host(n), back(n, -1);
  std::iota(host.begin(), host.end(), 7);
  auto a = device_->allocate(n * 4);
  auto b = device_->allocate(n * 4);
  ASSERT_TRUE(a.isOk() && b.isOk());
  void *da = a.value()->data(), *db = b.value()->data();
  PARTITION_ASSERT_OK(device_->copyToDevice(da, host.data(), n * 4, *stream_));
  PARTITION_ASSERT_OK(device_->copy(db, da, n * 4, *stream_));
  PARTITION_ASSERT_OK(device_->copyToHost(back.data(), db, n * 4, *stream_));
  PARTITION_ASSERT_OK(stream_->synchronize());
  EXPECT_EQ(host, back);
  // A zero-byte copy is a no-op, even with null pointers.
  PARTITION_ASSERT_OK(device_->copy(nullptr, nullptr, 0, *stream_));
}

TEST_F(CudaDeviceTest, EventsOrderStreams) {
  auto other = device_->createStream();
  ASSERT_TRUE(other.isOk()) << other.status().toString();
  auto event = device_->createEvent();
  ASSERT_TRUE(event.isOk()) << event.status().toString();

  const size_t n = 1 << 20;
  std::vector<float> host(n), back(n, 0.0f);
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i % 1000) * 0.5f;
  auto a = device_->allocate(n * 4);
  auto b = device_->allocate(n * 4);
  ASSERT_TRUE(a.isOk() && b.isOk());
  // Produce on stream_, consume on `other` after waiting on the event.
  PARTITION_ASSERT_OK(
      device_->copyToDevice(a.value()->data(), host.data(), n * 4, *stream_));
  KernelAttrs none;
  TensorRef in{a.value()->data(), DType::F32, {int64_t(n)}};
  TensorRef out{b.value()->data(), DType::F32, {int64_t(n)}};
  PARTITION_ASSERT_OK(
      device_->kernels().run(OpKind::Neg, none, {in}, {out}, *stream_));
  PARTITION_ASSERT_OK(event.value()->record(*stream_));
  PARTITION_ASSERT_OK(event.value()->waitOn(*other.value()));
  PARTITION_ASSERT_OK(device_->copyToHost(back.data(), b.value()->data(), n * 4,
                                          *other.value()));
  PARTITION_ASSERT_OK(other.value()->synchronize());
  for (size_t i = 0; i < n; i += 4099)
    ASSERT_EQ(back[i], -host[i]) << "at " << i;
  PARTITION_ASSERT_OK(event.value()->synchronize());
}

TEST_F(CudaDeviceTest, BufferOutlivesDevice) {
  auto buffer = device_->allocate(1024);
  ASSERT_TRUE(buffer.isOk());
  auto stream = device_->createStream();
  ASSERT_TRUE(stream.isOk());
  device_.reset();
  // Still valid: they share the device's state.
  PARTITION_ASSERT_OK(stream.value()->synchronize());
  EXPECT_EQ(buffer.value()->size(), 1024u);
}

} // namespace
