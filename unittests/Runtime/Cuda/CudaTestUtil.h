//===- CudaTestUtil.h - helpers of the CUDA runtime tests -------*- C++ -*-===//

#ifndef PARTITION_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H
#define PARTITION_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H

#include "partition/runtime/Communicator.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/cuda/CudaDevice.h"

#include "gtest/gtest.h"

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

/// Skips the current test when this machine has no usable GPU.
#define PARTITION_SKIP_WITHOUT_CUDA()                                          \
  do {                                                                         \
    if (::partition::runtime::cuda::cudaDeviceCount() == 0)                    \
      GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount() reports none "     \
                      "(no GPU or no driver)";                                 \
  } while (0)

/// Fails the current test with the status's text unless it is OK.
#define PARTITION_ASSERT_OK(expr)                                              \
  do {                                                                         \
    ::partition::runtime::Status _s = (expr);                                  \
    ASSERT_TRUE(_s.isOk()) << _s.toString();                                   \
  } while (0)

namespace partition::runtime::testing {

/// Values stored as `dtype`, little-endian.
inline std::vector<char> encode(DType dtype, const std::vector<double> &v) {
  std::vector<char> bytes(v.size() * dtypeSize(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    char *p = bytes.data() + i * dtypeSize(dtype);
    switch (dtype) {
    case DType::F32: {
      float f = static_cast<float>(v[i]);
      std::memcpy(p, &f, 4);
      break;
    }
    case DType::F16: {
      uint16_t h = floatToHalf(static_cast<float>(v[i]));
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = floatToBf16(static_cast<float>(v[i]));
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::I32: {
      int32_t x = static_cast<int32_t>(v[i]);
      std::memcpy(p, &x, 4);
      break;
    }
    case DType::I64: {
      int64_t x = static_cast<int64_t>(v[i]);
      std::memcpy(p, &x, 8);
      break;
    }
    }
  }
  return bytes;
}

/// The inverse of encode().
inline std::vector<double> decode(DType dtype, const std::vector<char> &b) {
  size_t n = b.size() / dtypeSize(dtype);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    const char *p = b.data() + i * dtypeSize(dtype);
    switch (dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      v[i] = f;
      break;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v[i] = halfToFloat(h);
      break;
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v[i] = bf16ToFloat(h);
      break;
    }
    case DType::I32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      v[i] = x;
      break;
    }
    case DType::I64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      v[i] = static_cast<double>(x);
      break;
    }
    }
  }
  return v;
}

/// `values` rounded through `dtype`, as the device sees them.
inline std::vector<double> roundTo(DType dtype,
                                   const std::vector<double> &values) {
  return decode(dtype, encode(dtype, values));
}

/// A tensor in device memory that owns its buffer.
struct DeviceTensor {
  std::unique_ptr<Buffer> buffer;
  TensorRef ref;
};

/// A Store in this process's memory, for tests of one process.
class MapStore final : public Store {
public:
  Status set(const std::string &key, const std::vector<char> &value) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[key] = value;
    }
    changed_.notify_all();
    return Status::ok();
  }
  StatusOr<std::vector<char>> get(const std::string &key,
                                  std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!changed_.wait_for(lock, timeout,
                           [&] { return values_.count(key) > 0; }))
      return PARTITION_ERROR(DeadlineExceeded, "store key \"", key,
                             "\" not set within ", timeout.count(), " ms");
    return values_[key];
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
};

/// A GPU, a stream on it, and helpers to move tensors in and out.
class CudaFixture : public ::testing::Test {
protected:
  void SetUp() override {
    PARTITION_SKIP_WITHOUT_CUDA();
    auto device = cuda::createCudaDevice(0);
    ASSERT_TRUE(device.isOk()) << device.status().toString();
    device_ = std::move(device).value();
    auto stream = device_->createStream();
    ASSERT_TRUE(stream.isOk()) << stream.status().toString();
    stream_ = std::move(stream).value();
  }

  /// Uploads `values` as a tensor of `dtype` and `shape`.
  DeviceTensor upload(DType dtype, std::vector<int64_t> shape,
                      const std::vector<double> &values) {
    DeviceTensor t;
    t.ref.dtype = dtype;
    t.ref.shape = std::move(shape);
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.ref.numElements());
    auto buffer = device_->allocate(static_cast<size_t>(t.ref.numBytes()));
    EXPECT_TRUE(buffer.isOk()) << buffer.status().toString();
    if (!buffer.isOk())
      return t;
    t.buffer = std::move(buffer).value();
    t.ref.data = t.buffer->data();
    std::vector<char> bytes = encode(dtype, values);
    Status status =
        device_->copyToDevice(t.ref.data, bytes.data(), bytes.size(), *stream_);
    if (status.isOk())
      status = stream_->synchronize();
    EXPECT_TRUE(status.isOk()) << status.toString();
    return t;
  }

  /// An uninitialised tensor of `dtype` and `shape`.
  DeviceTensor empty(DType dtype, std::vector<int64_t> shape) {
    DeviceTensor t;
    t.ref.dtype = dtype;
    t.ref.shape = std::move(shape);
    auto buffer = device_->allocate(static_cast<size_t>(t.ref.numBytes()));
    EXPECT_TRUE(buffer.isOk()) << buffer.status().toString();
    if (!buffer.isOk())
      return t;
    t.buffer = std::move(buffer).value();
    t.ref.data = t.buffer->data();
    return t;
  }

  /// Synchronises the stream and returns the tensor's values.
  std::vector<double> download(const DeviceTensor &t) {
    std::vector<char> bytes(static_cast<size_t>(t.ref.numBytes()));
    Status status =
        device_->copyToHost(bytes.data(), t.ref.data, bytes.size(), *stream_);
    if (status.isOk())
      status = stream_->synchronize();
    EXPECT_TRUE(status.isOk()) << status.toString();
    return decode(t.ref.dtype, bytes);
  }

  /// Runs one kernel on the stream.
  Status run(OpKind op, const KernelAttrs &attrs,
             const std::vector<const DeviceTensor *> &inputs,
             const std::vector<const DeviceTensor *> &outputs) {
    std::vector<TensorRef> in, out;
    for (const DeviceTensor *t : inputs)
      in.push_back(t->ref);
    for (const DeviceTensor *t : outputs)
      out.push_back(t->ref);
    return device_->kernels().run(op, attrs, in, out, *stream_);
  }

  std::unique_ptr<Device> device_;
  std::unique_ptr<Stream> stream_;
};

} // namespace partition::runtime::testing

#endif // PARTITION_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H
