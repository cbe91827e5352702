//===- AttentionCudaBench.cpp - fused attention against the decomposition -===//
//
// Achieved TFLOP/s of Kernels::run(Attention) and run(AttentionGrad) on the
// CUDA backend with cuDNN's fused kernels (CudnnAttention.h) and with the
// decomposition (a second device made with PARTITION_CUDNN_ATTENTION=0), in
// the same process, on the same operands, and the largest difference of
// their outputs (relative to each output's largest magnitude). FLOPs are
// those the kernels must do: 4 B H Sq Sk D forward and 10 backward (with
// the forward's recomputation of the scores), halved under a causal mask.
// The fused figure is what the cost model's attention efficiency is
// measured from (docs/benchmarks.md).
//
//   AttentionCudaBench [--iters N] [BxHxHkvxSxD[:causal] ...]
//
// Default shapes: the per-device attention of torchtitan's Llama 3.1 8B
// (2x32x8x8192x128), of Llama 3 405B at tp 8 (1x16x1x8192x128) and of SC21's
// 1.7B GPT (16x24x24x2048x96), causal, bf16. Prints one "attention-bench:"
// line per case and exits non-zero when a case fails or the two paths
// differ by more than bf16 rounding allows.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/DType.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/cuda/CudaDevice.h"
#include "partition/runtime/cuda/CudaStatus.h"

#include "CudaTiming.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace partition::runtime;

namespace {

struct Case {
  int64_t b, h, hkv, s, d;
  bool causal;
};

/// One device with its stream and the case's buffers.
struct Run {
  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;
  std::vector<std::unique_ptr<Buffer>> in, out; // q k v do | o dq dk dv
};

bool failed(const Status &status, const char *what) {
  if (status.isOk())
    return false;
  std::fprintf(stderr, "attention-bench: %s: %s\n", what,
               status.toString().c_str());
  return true;
}

float bf16ToFloat(uint16_t x) {
  uint32_t bits = uint32_t(x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::vector<uint16_t> randomBf16(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> v(count);
  for (uint16_t &x : v) {
    float f = dist(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    x = uint16_t(bits >> 16);
  }
  return v;
}

/// The operands' and results' shapes: q k v do, then o dq dk dv.
std::vector<std::vector<int64_t>> shapesOf(const Case &c) {
  return {{c.b, c.h, c.s, c.d},   {c.b, c.hkv, c.s, c.d},
          {c.b, c.hkv, c.s, c.d}, {c.b, c.h, c.s, c.d},
          {c.b, c.h, c.s, c.d},   {c.b, c.h, c.s, c.d},
          {c.b, c.h, c.s, c.d},   {c.b, c.h, c.s, c.d}};
}

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A device (fused or not, as the environment says when it is made) with
/// the case's operands filled alike.
StatusOr<Run> makeRun(const Case &c) {
  Run r;
  PARTITION_ASSIGN_OR_RETURN(r.device, cuda::createCudaDevice(0));
  PARTITION_ASSIGN_OR_RETURN(r.stream, r.device->createStream());
  std::vector<std::vector<int64_t>> shapes = shapesOf(c);
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t n = elements(shapes[i]);
    PARTITION_ASSIGN_OR_RETURN(auto buffer, r.device->allocate(n * 2));
    if (i < 4) {
      std::vector<uint16_t> host = randomBf16(n, unsigned(i + 1));
      PARTITION_RETURN_IF_ERROR(r.device->copyToDevice(
          buffer->data(), host.data(), host.size() * 2, *r.stream));
    }
    (i < 4 ? r.in : r.out).push_back(std::move(buffer));
  }
  PARTITION_RETURN_IF_ERROR(r.stream->synchronize());
  return r;
}

struct Timing {
  double forward = 0, backward = 0; // seconds per call
};

StatusOr<Timing> timeRun(Run &r, const Case &c, int iters) {
  std::vector<std::vector<int64_t>> shapes = shapesOf(c);
  auto ref = [&](Buffer &b, size_t i) {
    return TensorRef{b.data(), DType::BF16, shapes[i]};
  };
  KernelAttrs attrs =
      attentionAttrs(c.causal, float(1 / std::sqrt(double(c.d))), 0);
  std::vector<TensorRef> qkv = {ref(*r.in[0], 0), ref(*r.in[1], 1),
                                ref(*r.in[2], 2)};
  std::vector<TensorRef> grads = {ref(*r.out[1], 5), ref(*r.out[2], 6),
                                  ref(*r.out[3], 7)};
  std::vector<TensorRef> gradIn = qkv;
  gradIn.push_back(ref(*r.in[3], 3));
  Timing t;
  PARTITION_ASSIGN_OR_RETURN(t.forward, partition::bench::timeLaunches(
      static_cast<cudaStream_t>(r.stream->native()), 2, iters, [&] {
    return r.device->kernels().run(OpKind::Attention, attrs, qkv,
                                   {ref(*r.out[0], 4)}, *r.stream);
  }));
  PARTITION_ASSIGN_OR_RETURN(t.backward, partition::bench::timeLaunches(
      static_cast<cudaStream_t>(r.stream->native()), 2, iters, [&] {
    return r.device->kernels().run(OpKind::AttentionGrad, attrs, gradIn,
                                   grads, *r.stream);
  }));
  PARTITION_RETURN_IF_ERROR(r.stream->synchronize());
  return t;
}

/// The largest difference of the two runs' results, relative to each
/// result's largest magnitude.
StatusOr<double> difference(Run &a, Run &b, const Case &c) {
  std::vector<std::vector<int64_t>> shapes = shapesOf(c);
  double worst = 0;
  for (size_t i = 0; i < a.out.size(); ++i) {
    int64_t n = elements(shapes[4 + i]);
    std::vector<uint16_t> x(n), y(n);
    PARTITION_RETURN_IF_ERROR(
        a.device->copyToHost(x.data(), a.out[i]->data(), n * 2, *a.stream));
    PARTITION_RETURN_IF_ERROR(
        b.device->copyToHost(y.data(), b.out[i]->data(), n * 2, *b.stream));
    PARTITION_RETURN_IF_ERROR(a.stream->synchronize());
    PARTITION_RETURN_IF_ERROR(b.stream->synchronize());
    double largest = 0, diff = 0;
    for (int64_t j = 0; j < n; ++j) {
      largest = std::max(largest, double(std::fabs(bf16ToFloat(y[j]))));
      diff = std::max(diff, double(std::fabs(bf16ToFloat(x[j]) -
                                              bf16ToFloat(y[j]))));
    }
    worst = std::max(worst, largest > 0 ? diff / largest : diff);
  }
  return worst;
}

bool parseCase(const std::string &text, Case &c) {
  long long b, h, hkv, s, d;
  char rest[16] = "";
  int n = std::sscanf(text.c_str(), "%lldx%lldx%lldx%lldx%lld%15s", &b, &h,
                      &hkv, &s, &d, rest);
  if (n < 5 || b <= 0 || h <= 0 || hkv <= 0 || h % hkv || s <= 0 || d <= 0)
    return false;
  c = {b, h, hkv, s, d, std::strcmp(rest, ":causal") == 0};
  return n == 5 || c.causal;
}

} // namespace

int main(int argc, char **argv) {
  int iters = 10;
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    Case c;
    if (arg == "--iters" && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (parseCase(arg, c)) {
      cases.push_back(c);
    } else {
      std::fprintf(stderr, "usage: %s [--iters N] [BxHxHkvxSxD[:causal] ...]\n",
                   argv[0]);
      return 2;
    }
  }
  if (cases.empty())
    cases = {{2, 32, 8, 8192, 128, true},
             {1, 16, 1, 8192, 128, true},
             {16, 24, 24, 2048, 96, true}};
  if (cuda::cudaDeviceCount() == 0) {
    std::fprintf(stderr, "attention-bench: no CUDA device\n");
    return 1;
  }
  int bad = 0;
  for (const Case &c : cases) {
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lldx%lldx%lld%s",
                  (long long)c.b, (long long)c.h, (long long)c.hkv,
                  (long long)c.s, (long long)c.d, c.causal ? " causal" : "");
    setenv("PARTITION_CUDNN_ATTENTION", "1", 1);
    StatusOr<Run> fused = makeRun(c);
    setenv("PARTITION_CUDNN_ATTENTION", "0", 1);
    StatusOr<Run> plain = makeRun(c);
    if (failed(fused.status(), name) || failed(plain.status(), name)) {
      ++bad;
      continue;
    }
    StatusOr<Timing> f = timeRun(*fused, c, iters);
    StatusOr<Timing> p = timeRun(*plain, c, iters);
    if (failed(f.status(), name) || failed(p.status(), name)) {
      ++bad;
      continue;
    }
    StatusOr<double> diff = difference(*fused, *plain, c);
    if (failed(diff.status(), name)) {
      ++bad;
      continue;
    }
    double flops = 4.0 * c.b * c.h * c.s * c.s * c.d * (c.causal ? 0.5 : 1);
    // bf16 results: 8 bits; the paths round the probabilities differently.
    bool agree = *diff <= 3e-2;
    std::printf("attention-bench: %-26s forward fused %6.1f TFLOP/s, "
                "decomposed %6.1f | backward fused %6.1f, decomposed %6.1f | "
                "max diff %.1e%s\n",
                name, flops / f->forward / 1e12, flops / p->forward / 1e12,
                2.5 * flops / f->backward / 1e12,
                2.5 * flops / p->backward / 1e12, *diff,
                agree ? "" : " (MISMATCH)");
    if (!agree)
      ++bad;
  }
  return bad == 0 ? 0 : 1;
}
