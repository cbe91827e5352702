//===- CudaKernelTest.cpp - CUDA kernels against a host reference ---------===//
//
// The conformance suite (RuntimeKernelTests) compares every backend with the
// same reference; these tests cover what is specific to the CUDA backend:
// its index paths (broadcast, strided reductions, merged dimensions), the
// cuBLASLt GEMM paths (batched, transposed, the transposed-lhs loop), the
// attention decomposition with grouped-query heads and the causal mask (by
// index and by positions operands) and its block form (log-sum-exp out,
// lse and delta in), and the clamped-index report at the next
// synchronization.
//
// Tolerances: f32 results are compared at 1e-5 relative + 1e-5 absolute (f32
// rounding of sums of a few hundred terms); f16/bf16 results at one unit in
// the last place of the storage type (2^-10 and 2^-7 relative) plus a small
// absolute term, since the device computes in f32 and rounds once, while the
// reference rounds its inputs the same way and computes in double.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

using namespace partition::runtime;
using namespace partition::runtime::testing;
namespace plan = partition::plan;

namespace {

using Shape = std::vector<int64_t>;

std::vector<double> randomValues(size_t n, unsigned seed, double lo = -2.0,
                                 double hi = 2.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(gen);
  return v;
}

double relativeTolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 1.0 / 1024;
  case DType::BF16:
    return 1.0 / 128;
  default:
    return 1e-5;
  }
}

void expectNear(const std::vector<double> &expected,
                const std::vector<double> &actual, DType dtype,
                double absolute = 1e-5) {
  ASSERT_EQ(expected.size(), actual.size());
  double rel = relativeTolerance(dtype);
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], rel * std::fabs(expected[i]) + absolute)
        << "element " << i;
}

int64_t count(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

/// Reference row-major matmul with optional transposes, batched over `batch`.
std::vector<double> referenceMatmul(const std::vector<double> &a,
                                    const std::vector<double> &b, int64_t batch,
                                    int64_t m, int64_t n, int64_t k, bool ta,
                                    bool tb, bool batchedB) {
  std::vector<double> c(batch * m * n, 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          double x = a[p * m * k + (ta ? l * m + i : i * k + l)];
          int64_t bBase = batchedB ? p * k * n : 0;
          double y = b[bBase + (tb ? j * k + l : l * n + j)];
          sum += x * y;
        }
        c[p * m * n + i * n + j] = sum;
      }
  return c;
}

using CudaKernelTest = CudaFixture;

TEST_F(CudaKernelTest, MatmulFoldsLeadingDimensions) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    auto a = roundTo(dtype, randomValues(2 * 3 * 40, 1));
    auto b = roundTo(dtype, randomValues(40 * 24, 2));
    DeviceTensor x = upload(dtype, {2, 3, 40}, a);
    DeviceTensor w = upload(dtype, {40, 24}, b);
    DeviceTensor y = empty(dtype, {2, 3, 24});
    PARTITION_ASSERT_OK(
        run(OpKind::Matmul, matmulAttrs(false, false), {&x, &w}, {&y}));
    expectNear(roundTo(dtype, referenceMatmul(a, b, 1, 6, 24, 40, false, false,
                                              false)),
               download(y), dtype, 1e-3);
  }
}

TEST_F(CudaKernelTest, MatmulTransposes) {
  DType dtype = DType::F32;
  // transpose_b: w is [N, K].
  auto a = randomValues(5 * 7, 3), b = randomValues(9 * 7, 4);
  DeviceTensor x = upload(dtype, {5, 7}, a);
  DeviceTensor w = upload(dtype, {9, 7}, b);
  DeviceTensor y = empty(dtype, {5, 9});
  PARTITION_ASSERT_OK(
      run(OpKind::Matmul, matmulAttrs(false, true), {&x, &w}, {&y}));
  expectNear(referenceMatmul(a, b, 1, 5, 9, 7, false, true, false), download(y),
             dtype);

  // transpose_a with leading dimensions: one product per leading index.
  auto c = randomValues(3 * 7 * 5, 5), d = randomValues(7 * 4, 6);
  DeviceTensor xt = upload(dtype, {3, 7, 5}, c);
  DeviceTensor v = upload(dtype, {7, 4}, d);
  DeviceTensor z = empty(dtype, {3, 5, 4});
  PARTITION_ASSERT_OK(
      run(OpKind::Matmul, matmulAttrs(true, false), {&xt, &v}, {&z}));
  expectNear(referenceMatmul(c, d, 3, 5, 4, 7, true, false, false), download(z),
             dtype);
}

TEST_F(CudaKernelTest, BatchMatmul) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    auto a = roundTo(dtype, randomValues(2 * 3 * 16 * 8, 7));
    auto b = roundTo(dtype, randomValues(2 * 3 * 16 * 5, 8));
    DeviceTensor x = upload(dtype, {2, 3, 16, 8}, a);
    DeviceTensor w = upload(dtype, {2, 3, 16, 5}, b);
    DeviceTensor y = empty(dtype, {2, 3, 8, 5});
    // x^T w per batch: transpose_a.
    PARTITION_ASSERT_OK(
        run(OpKind::BatchMatmul, matmulAttrs(true, false), {&x, &w}, {&y}));
    expectNear(
        roundTo(dtype, referenceMatmul(a, b, 6, 8, 5, 16, true, false, true)),
        download(y), dtype, 1e-3);
  }
}

TEST_F(CudaKernelTest, MatmulWithEmptyContraction) {
  DeviceTensor x = upload(DType::F32, {3, 0}, {});
  DeviceTensor w = upload(DType::F32, {0, 4}, {});
  DeviceTensor y = upload(DType::F32, {3, 4}, std::vector<double>(12, 9.0));
  PARTITION_ASSERT_OK(
      run(OpKind::Matmul, matmulAttrs(false, false), {&x, &w}, {&y}));
  EXPECT_EQ(download(y), std::vector<double>(12, 0.0));
}

/// Reference attention: q [B, H, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv].
/// Causal, query i at position qp (queryPositions[i], else i) sees key j at
/// kp (keyPositions[j], else j) iff kp <= qp and, with a window, qp - kp <
/// window; a row that sees no key is 0.
std::vector<double>
referenceAttention(const std::vector<double> &q, const std::vector<double> &k,
                   const std::vector<double> &v, int64_t batch, int64_t heads,
                   int64_t kvHeads, int64_t sq, int64_t sk, int64_t d,
                   int64_t dv, bool causal, double scale, int64_t window = 0,
                   const std::vector<int64_t> &queryPositions = {},
                   const std::vector<int64_t> &keyPositions = {}) {
  auto sees = [&](int64_t i, int64_t j) {
    int64_t qp = queryPositions.empty() ? i : queryPositions[i];
    int64_t kp = keyPositions.empty() ? j : keyPositions[j];
    return !causal || (kp <= qp && (window == 0 || qp - kp < window));
  };
  std::vector<double> out(batch * heads * sq * dv, 0.0);
  int64_t group = heads / kvHeads;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kh = h / group;
      for (int64_t i = 0; i < sq; ++i) {
        std::vector<double> s(sk, -INFINITY);
        double m = -INFINITY;
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          double dot = 0;
          for (int64_t t = 0; t < d; ++t)
            dot += q[((b * heads + h) * sq + i) * d + t] *
                   k[((b * kvHeads + kh) * sk + j) * d + t];
          s[j] = scale * dot;
          m = std::max(m, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < sk; ++j)
          sum += s[j] == -INFINITY ? 0.0 : std::exp(s[j] - m);
        for (int64_t j = 0; j < sk; ++j) {
          if (s[j] == -INFINITY)
            continue;
          double p = std::exp(s[j] - m) / sum;
          for (int64_t t = 0; t < dv; ++t)
            out[((b * heads + h) * sq + i) * dv + t] +=
                p * v[((b * kvHeads + kh) * sk + j) * dv + t];
        }
      }
    }
  return out;
}

TEST_F(CudaKernelTest, AttentionGroupedQueryCausal) {
  const int64_t B = 2, H = 4, Hkv = 2, S = 9, D = 8, Dv = 6;
  for (DType dtype : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    auto q = roundTo(dtype, randomValues(B * H * S * D, 11));
    auto k = roundTo(dtype, randomValues(B * Hkv * S * D, 12));
    auto v = roundTo(dtype, randomValues(B * Hkv * S * Dv, 13));
    DeviceTensor tq = upload(dtype, {B, H, S, D}, q);
    DeviceTensor tk = upload(dtype, {B, Hkv, S, D}, k);
    DeviceTensor tv = upload(dtype, {B, Hkv, S, Dv}, v);
    DeviceTensor out = empty(dtype, {B, H, S, Dv});
    float scale = 1.0f / std::sqrt(static_cast<float>(D));
    PARTITION_ASSERT_OK(run(OpKind::Attention, attentionAttrs(true, scale),
                            {&tq, &tk, &tv}, {&out}));
    // bf16: the probabilities are rounded to bf16 before the second product.
    expectNear(referenceAttention(q, k, v, B, H, Hkv, S, S, D, Dv, true, scale),
               download(out), dtype, dtype == DType::F32 ? 1e-5 : 2e-2);
  }
}

TEST_F(CudaKernelTest, AttentionCrossLengths) {
  const int64_t B = 1, H = 3, Hkv = 1, Sq = 4, Sk = 11, D = 16, Dv = 16;
  auto q = randomValues(B * H * Sq * D, 21);
  auto k = randomValues(B * Hkv * Sk * D, 22);
  auto v = randomValues(B * Hkv * Sk * Dv, 23);
  DeviceTensor tq = upload(DType::F32, {B, H, Sq, D}, q);
  DeviceTensor tk = upload(DType::F32, {B, Hkv, Sk, D}, k);
  DeviceTensor tv = upload(DType::F32, {B, Hkv, Sk, Dv}, v);
  DeviceTensor out = empty(DType::F32, {B, H, Sq, Dv});
  PARTITION_ASSERT_OK(run(OpKind::Attention, attentionAttrs(false, 0.3f),
                          {&tq, &tk, &tv}, {&out}));
  expectNear(referenceAttention(q, k, v, B, H, Hkv, Sq, Sk, D, Dv, false, 0.3),
             download(out), DType::F32);
}

// Causal attention with positions operands: a rank's chunk of queries of
// context parallelism's balanced order (cp 2: chunks 1 and 2 of 4) against
// every key in that order, grouped-query heads, with and without a window,
// i64 and i32 positions; bf16 operands and D = 16 would suit cuDNN, which
// must leave the call to the decomposition (its masks are index ranges).
// Then queries before every key: rows of zeros, not NaN.
TEST_F(CudaKernelTest, AttentionWithPositions) {
  const int64_t B = 2, H = 4, Hkv = 2, chunk = 8, D = 16, Dv = 16;
  std::vector<int64_t> keys; // chunks 0, 3, 1, 2
  for (int64_t c : {0, 3, 1, 2})
    for (int64_t i = 0; i < chunk; ++i)
      keys.push_back(c * chunk + i);
  std::vector<int64_t> queries(keys.begin() + 2 * chunk, keys.end());
  const int64_t Sq = queries.size(), Sk = keys.size();
  auto asDoubles = [](const std::vector<int64_t> &p) {
    return std::vector<double>(p.begin(), p.end());
  };
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (DType positionType : {DType::I64, DType::I32}) {
      for (int64_t window : {0, 5}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " positions " +
                     dtypeName(positionType) + " window " +
                     std::to_string(window));
        auto q = roundTo(dtype, randomValues(B * H * Sq * D, 41));
        auto k = roundTo(dtype, randomValues(B * Hkv * Sk * D, 42));
        auto v = roundTo(dtype, randomValues(B * Hkv * Sk * Dv, 43));
        DeviceTensor tq = upload(dtype, {B, H, Sq, D}, q);
        DeviceTensor tk = upload(dtype, {B, Hkv, Sk, D}, k);
        DeviceTensor tv = upload(dtype, {B, Hkv, Sk, Dv}, v);
        DeviceTensor qp = upload(positionType, {Sq}, asDoubles(queries));
        DeviceTensor kp = upload(positionType, {Sk}, asDoubles(keys));
        DeviceTensor out = empty(dtype, {B, H, Sq, Dv});
        float scale = 1.0f / std::sqrt(static_cast<float>(D));
        PARTITION_ASSERT_OK(run(OpKind::Attention,
                                attentionAttrs(true, scale, window),
                                {&tq, &tk, &tv, &qp, &kp}, {&out}));
        expectNear(referenceAttention(q, k, v, B, H, Hkv, Sq, Sk, D, Dv, true,
                                      scale, window, queries, keys),
                   download(out), dtype, dtype == DType::F32 ? 1e-5 : 2e-2);
      }
    }
  }
  // Queries 0-3 precede every key (8-15, descending): zeros in their rows.
  std::vector<int64_t> early = {0, 1, 2, 3, 12, 13, 14, 15};
  std::vector<int64_t> late = {15, 14, 13, 12, 11, 10, 9, 8};
  auto q = randomValues(H * 8 * D, 44), k = randomValues(Hkv * 8 * D, 45),
       v = randomValues(Hkv * 8 * Dv, 46);
  DeviceTensor tq = upload(DType::F32, {1, H, 8, D}, q);
  DeviceTensor tk = upload(DType::F32, {1, Hkv, 8, D}, k);
  DeviceTensor tv = upload(DType::F32, {1, Hkv, 8, Dv}, v);
  DeviceTensor qp = upload(DType::I64, {8}, asDoubles(early));
  DeviceTensor kp = upload(DType::I64, {8}, asDoubles(late));
  DeviceTensor out = empty(DType::F32, {1, H, 8, Dv});
  PARTITION_ASSERT_OK(run(OpKind::Attention, attentionAttrs(true, 0.25f),
                          {&tq, &tk, &tv, &qp, &kp}, {&out}));
  std::vector<double> actual = download(out);
  expectNear(referenceAttention(q, k, v, 1, H, Hkv, 8, 8, D, Dv, true, 0.25, 0,
                                early, late),
             actual, DType::F32);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < 4 * Dv; ++i)
      ASSERT_EQ(actual[h * 8 * Dv + i], 0.0)
          << "head " << h << " element " << i;
}

/// Causal attention's key mask by positions: query i sees key j iff
/// keys[j] <= queries[i] and, with a window, queries[i] - keys[j] < window.
bool seesByPositions(const std::vector<int64_t> &queries,
                     const std::vector<int64_t> &keys, int64_t window,
                     int64_t i, int64_t j) {
  return keys[j] <= queries[i] &&
         (window == 0 || queries[i] - keys[j] < window);
}

/// Attention's block form, host side: the scaled scores of query row i of
/// head h against kv head kh's keys, -inf for the keys it does not see.
std::vector<double>
scoreRow(const std::vector<double> &q, const std::vector<double> &k, int64_t bh,
         int64_t bkv, int64_t i, int64_t sq, int64_t sk, int64_t d,
         double scale, const std::function<bool(int64_t, int64_t)> &sees) {
  std::vector<double> s(sk, -INFINITY);
  for (int64_t j = 0; j < sk; ++j) {
    if (!sees(i, j))
      continue;
    double dot = 0;
    for (int64_t t = 0; t < d; ++t)
      dot += q[(bh * sq + i) * d + t] * k[(bkv * sk + j) * d + t];
    s[j] = scale * dot;
  }
  return s;
}

/// Each row's log-sum-exp over the keys it sees, [B, H, Sq]: -inf for a row
/// that sees none.
std::vector<double>
referenceLse(const std::vector<double> &q, const std::vector<double> &k,
             int64_t batch, int64_t heads, int64_t kvHeads, int64_t sq,
             int64_t sk, int64_t d, double scale,
             const std::function<bool(int64_t, int64_t)> &sees) {
  std::vector<double> lse(batch * heads * sq, -INFINITY);
  for (int64_t bh = 0; bh < batch * heads; ++bh) {
    int64_t bkv = (bh / heads) * kvHeads + (bh % heads) / (heads / kvHeads);
    for (int64_t i = 0; i < sq; ++i) {
      std::vector<double> s =
          scoreRow(q, k, bh, bkv, i, sq, sk, d, scale, sees);
      double m = *std::max_element(s.begin(), s.end()), sum = 0;
      if (m == -INFINITY)
        continue;
      for (double x : s)
        sum += std::exp(x - m);
      lse[bh * sq + i] = m + std::log(sum);
    }
  }
  return lse;
}

/// AttentionGrad's block form, host side: p = exp(s - lse) for the keys a
/// row sees, ds = scale p (dp - delta), dv = p^T dy, dq = ds k and dk =
/// ds^T q ({dq, dk, dv}, the latter two per query head).
std::vector<std::vector<double>>
referenceBlockGrad(const std::vector<double> &q, const std::vector<double> &k,
                   const std::vector<double> &v, const std::vector<double> &dy,
                   const std::vector<double> &lse,
                   const std::vector<double> &delta, int64_t batch,
                   int64_t heads, int64_t kvHeads, int64_t sq, int64_t sk,
                   int64_t d, int64_t dv, double scale,
                   const std::function<bool(int64_t, int64_t)> &sees) {
  std::vector<std::vector<double>> grads = {
      std::vector<double>(batch * heads * sq * d, 0.0),
      std::vector<double>(batch * heads * sk * d, 0.0),
      std::vector<double>(batch * heads * sk * dv, 0.0)};
  for (int64_t bh = 0; bh < batch * heads; ++bh) {
    int64_t bkv = (bh / heads) * kvHeads + (bh % heads) / (heads / kvHeads);
    for (int64_t i = 0; i < sq; ++i) {
      double l = lse[bh * sq + i];
      if (l == -INFINITY)
        continue;
      std::vector<double> s =
          scoreRow(q, k, bh, bkv, i, sq, sk, d, scale, sees);
      for (int64_t j = 0; j < sk; ++j) {
        if (s[j] == -INFINITY)
          continue;
        double p = std::exp(s[j] - l), dp = 0;
        for (int64_t t = 0; t < dv; ++t) {
          double g = dy[(bh * sq + i) * dv + t];
          dp += g * v[(bkv * sk + j) * dv + t];
          grads[2][(bh * sk + j) * dv + t] += p * g;
        }
        double ds = scale * p * (dp - delta[bh * sq + i]);
        for (int64_t t = 0; t < d; ++t) {
          grads[0][(bh * sq + i) * d + t] += ds * k[(bkv * sk + j) * d + t];
          grads[1][(bh * sk + j) * d + t] += ds * q[(bh * sq + i) * d + t];
        }
      }
    }
  }
  return grads;
}

/// The keys [begin, end) of a [B, Hkv, S, D] tensor's values.
std::vector<double> keySlice(const std::vector<double> &t, int64_t outer,
                             int64_t s, int64_t d, int64_t begin, int64_t end) {
  std::vector<double> slice;
  for (int64_t o = 0; o < outer; ++o)
    slice.insert(slice.end(), t.begin() + (o * s + begin) * d,
                 t.begin() + (o * s + end) * d);
  return slice;
}

// Attention's block form (ring attention) on the device's own kernels:
// rank 1's queries of context parallelism's balanced order (cp 2: chunks 1
// and 2 of 4) against each rank's block of keys (chunks 0 and 3, then 1 and
// 2), grouped-query heads, with and without a window. Forward: the result
// and each row's log-sum-exp (-inf, exactly, for a row that sees no key of
// the block: with a window of 5, queries 12-23 see none of chunks 0 and
// 3). Then
// AttentionGrad's block form per block, given the whole attention's lse and
// delta, against the host's block gradients (f32 only: the conformance
// suite bounds the 16-bit types).
TEST_F(CudaKernelTest, AttentionBlockForm) {
  const int64_t B = 2, H = 4, Hkv = 2, chunk = 8, D = 16, Dv = 16;
  std::vector<int64_t> keys; // chunks 0, 3, 1, 2
  for (int64_t c : {0, 3, 1, 2})
    for (int64_t i = 0; i < chunk; ++i)
      keys.push_back(c * chunk + i);
  std::vector<int64_t> queries(keys.begin() + 2 * chunk, keys.end());
  const int64_t Sq = queries.size(), Sk = keys.size(), Sb = Sk / 2;
  auto asDoubles = [](const std::vector<int64_t> &p) {
    return std::vector<double>(p.begin(), p.end());
  };
  float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (int64_t window : {0, 5}) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " window " +
                   std::to_string(window));
      KernelAttrs attrs = attentionAttrs(true, scale, window);
      auto q = roundTo(dtype, randomValues(B * H * Sq * D, 51));
      auto k = roundTo(dtype, randomValues(B * Hkv * Sk * D, 52));
      auto v = roundTo(dtype, randomValues(B * Hkv * Sk * Dv, 53));
      auto dy = roundTo(dtype, randomValues(B * H * Sq * Dv, 54));
      auto all = [&](int64_t i, int64_t j) {
        return seesByPositions(queries, keys, window, i, j);
      };
      std::vector<double> lse =
          referenceLse(q, k, B, H, Hkv, Sq, Sk, D, scale, all);
      std::vector<double> out =
          referenceAttention(q, k, v, B, H, Hkv, Sq, Sk, D, Dv, true, scale,
                             window, queries, keys);
      std::vector<double> delta(B * H * Sq, 0.0);
      for (int64_t r = 0; r < B * H * Sq; ++r)
        for (int64_t t = 0; t < Dv; ++t)
          delta[r] += dy[r * Dv + t] * out[r * Dv + t];
      DeviceTensor tq = upload(dtype, {B, H, Sq, D}, q);
      DeviceTensor tdy = upload(dtype, {B, H, Sq, Dv}, dy);
      DeviceTensor qp = upload(DType::I64, {Sq}, asDoubles(queries));
      DeviceTensor tlse = upload(DType::F32, {B, H, Sq}, lse);
      DeviceTensor tdelta = upload(DType::F32, {B, H, Sq}, delta);
      for (int64_t begin : {int64_t(0), Sb}) {
        SCOPED_TRACE("keys " + std::to_string(begin) + ".." +
                     std::to_string(begin + Sb));
        std::vector<int64_t> blockKeys(keys.begin() + begin,
                                       keys.begin() + begin + Sb);
        auto kb = keySlice(k, B * Hkv, Sk, D, begin, begin + Sb);
        auto vb = keySlice(v, B * Hkv, Sk, Dv, begin, begin + Sb);
        auto sees = [&](int64_t i, int64_t j) {
          return seesByPositions(queries, blockKeys, window, i, j);
        };
        DeviceTensor tk = upload(dtype, {B, Hkv, Sb, D}, kb);
        DeviceTensor tv = upload(dtype, {B, Hkv, Sb, Dv}, vb);
        DeviceTensor kp = upload(DType::I64, {Sb}, asDoubles(blockKeys));
        DeviceTensor tout = empty(dtype, {B, H, Sq, Dv});
        DeviceTensor tblockLse = empty(DType::F32, {B, H, Sq});
        PARTITION_ASSERT_OK(run(OpKind::Attention, attrs,
                                {&tq, &tk, &tv, &qp, &kp},
                                {&tout, &tblockLse}));
        expectNear(referenceAttention(q, kb, vb, B, H, Hkv, Sq, Sb, D, Dv, true,
                                      scale, window, queries, blockKeys),
                   download(tout), dtype, dtype == DType::F32 ? 1e-5 : 2e-2);
        std::vector<double> blockLse =
            referenceLse(q, kb, B, H, Hkv, Sq, Sb, D, scale, sees);
        std::vector<double> actualLse = download(tblockLse);
        int64_t unseen = 0;
        for (size_t r = 0; r < blockLse.size(); ++r) {
          if (blockLse[r] == -INFINITY) {
            ++unseen;
            ASSERT_EQ(actualLse[r], -INFINITY) << "row " << r;
          } else {
            ASSERT_NEAR(actualLse[r], blockLse[r],
                        1e-5 * std::fabs(blockLse[r]) + 1e-5)
                << "row " << r;
          }
        }
        if (window && begin == 0) {
          EXPECT_GT(unseen, 0) << "no row without keys in the block";
        }
        if (dtype != DType::F32)
          continue;
        DeviceTensor dq = empty(dtype, {B, H, Sq, D});
        DeviceTensor dk = empty(dtype, {B, H, Sb, D});
        DeviceTensor dv = empty(dtype, {B, H, Sb, Dv});
        PARTITION_ASSERT_OK(run(OpKind::AttentionGrad, attrs,
                                {&tq, &tk, &tv, &tdy, &qp, &kp, &tlse, &tdelta},
                                {&dq, &dk, &dv}));
        std::vector<std::vector<double>> expected = referenceBlockGrad(
            q, kb, vb, dy, lse, delta, B, H, Hkv, Sq, Sb, D, Dv, scale, sees);
        const DeviceTensor *grads[3] = {&dq, &dk, &dv};
        for (int g = 0; g < 3; ++g) {
          SCOPED_TRACE("gradient " + std::to_string(g));
          expectNear(expected[g], download(*grads[g]), dtype, 1e-4);
        }
      }
    }
  }
}

TEST_F(CudaKernelTest, BinaryBroadcastAndIntegers) {
  auto a = randomValues(3 * 5, 31), b = randomValues(4, 32);
  DeviceTensor x = upload(DType::F32, {3, 1, 5}, a);
  DeviceTensor y = upload(DType::F32, {4, 1}, b);
  DeviceTensor z = empty(DType::F32, {3, 4, 5});
  PARTITION_ASSERT_OK(run(OpKind::Sub, {}, {&x, &y}, {&z}));
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 5; ++l)
        expected.push_back(static_cast<float>(a[i * 5 + l]) -
                           static_cast<float>(b[j]));
  expectNear(expected, download(z), DType::F32, 0.0);

  DeviceTensor p = upload(DType::I32, {4}, {7, -7, 9, 5});
  DeviceTensor q = upload(DType::I32, {4}, {2, 2, 4, -3});
  DeviceTensor r = empty(DType::I32, {4});
  PARTITION_ASSERT_OK(run(OpKind::Div, {}, {&p, &q}, {&r}));
  EXPECT_EQ(download(r), (std::vector<double>{3, -3, 2, -1}));

  DeviceTensor big = upload(DType::I64, {2, 2}, {1e12, -5, 3, 4});
  DeviceTensor row = upload(DType::I64, {2}, {2e12, 0});
  DeviceTensor mx = empty(DType::I64, {2, 2});
  PARTITION_ASSERT_OK(run(OpKind::Max, {}, {&big, &row}, {&mx}));
  EXPECT_EQ(download(mx), (std::vector<double>{2e12, 0, 2e12, 4}));
}

// Select with all three operands broadcast (the index path with three
// strides), an i64 condition and 8-byte values, and bf16 values.
TEST_F(CudaKernelTest, SelectBroadcastsAllOperands) {
  DeviceTensor c = upload(DType::I32, {3, 1, 1}, {1, 0, -2});
  auto a = randomValues(4 * 5, 33), b = randomValues(4, 34);
  DeviceTensor x = upload(DType::F32, {1, 4, 5}, a);
  DeviceTensor y = upload(DType::F32, {4, 1}, b);
  DeviceTensor z = empty(DType::F32, {3, 4, 5});
  PARTITION_ASSERT_OK(run(OpKind::Select, {}, {&c, &x, &y}, {&z}));
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 5; ++l)
        expected.push_back(static_cast<float>(i == 1 ? b[j] : a[j * 5 + l]));
  expectNear(expected, download(z), DType::F32, 0.0);

  DeviceTensor c64 = upload(DType::I64, {4}, {0, 1, 0, 1});
  DeviceTensor big = upload(DType::I64, {2, 4}, {1e12, 2, 3, 4, 5, 6, 7, 8});
  DeviceTensor scalar = upload(DType::I64, {}, {-1});
  DeviceTensor out = empty(DType::I64, {2, 4});
  PARTITION_ASSERT_OK(run(OpKind::Select, {}, {&c64, &big, &scalar}, {&out}));
  EXPECT_EQ(download(out), (std::vector<double>{-1, 2, -1, 4, -1, 6, -1, 8}));

  DeviceTensor h = upload(DType::BF16, {2}, {1.5, -2.5});
  DeviceTensor g = upload(DType::BF16, {2}, {0.25, 8});
  DeviceTensor hc = upload(DType::I32, {2}, {0, 3});
  DeviceTensor ho = empty(DType::BF16, {2});
  PARTITION_ASSERT_OK(run(OpKind::Select, {}, {&hc, &h, &g}, {&ho}));
  EXPECT_EQ(download(ho), (std::vector<double>{0.25, -2.5}));
}

TEST_F(CudaKernelTest, UnaryFunctions) {
  auto a = randomValues(257, 41, -4.0, 4.0);
  DeviceTensor x = upload(DType::F32, {257}, a);
  DeviceTensor y = empty(DType::F32, {257});
  struct Case {
    OpKind op;
    KernelAttrs attrs;
    double (*f)(double);
  } cases[] = {
      {OpKind::Gelu, geluAttrs(plan::GeluApproximation::Erf),
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {OpKind::Gelu, geluAttrs(plan::GeluApproximation::Tanh),
       [](double v) {
         return 0.5 * v *
                (1 +
                 std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       }},
      {OpKind::Silu, {}, [](double v) { return v / (1 + std::exp(-v)); }},
      {OpKind::Sigmoid, {}, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {OpKind::Relu, {}, [](double v) { return v > 0 ? v : 0.0; }},
      {OpKind::Tanh, {}, [](double v) { return std::tanh(v); }},
      {OpKind::Erf, {}, [](double v) { return std::erf(v); }},
      {OpKind::Cos, {}, [](double v) { return std::cos(v); }},
      {OpKind::Sin, {}, [](double v) { return std::sin(v); }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(opKindName(c.op));
    PARTITION_ASSERT_OK(run(c.op, c.attrs, {&x}, {&y}));
    std::vector<double> expected;
    for (double v : a)
      expected.push_back(c.f(static_cast<float>(v)));
    expectNear(expected, download(y), DType::F32, 1e-6);
  }
}

TEST_F(CudaKernelTest, CastRoundsAndTruncates) {
  DeviceTensor x = upload(DType::F32, {5}, {-2.7, -0.5, 0.5, 2.9, 1e10});
  DeviceTensor i = empty(DType::I32, {5});
  PARTITION_ASSERT_OK(run(OpKind::Cast, {}, {&x}, {&i}));
  EXPECT_EQ(download(i), (std::vector<double>{-2, 0, 0, 2, 2147483647}));

  std::vector<double> wide = {1, 257, -3, 16777217};
  DeviceTensor l = upload(DType::I64, {4}, wide);
  DeviceTensor b = empty(DType::BF16, {4});
  PARTITION_ASSERT_OK(run(OpKind::Cast, {}, {&l}, {&b}));
  EXPECT_EQ(download(b), roundTo(DType::BF16, roundTo(DType::F32, wide)));

  auto values = randomValues(64, 51, -1000, 1000);
  DeviceTensor f = upload(DType::F32, {64}, values);
  DeviceTensor h = empty(DType::F16, {64});
  PARTITION_ASSERT_OK(run(OpKind::Cast, {}, {&f}, {&h}));
  EXPECT_EQ(download(h), roundTo(DType::F16, values)); // bit-exact rounding
}

TEST_F(CudaKernelTest, SoftmaxAlongEveryDimension) {
  Shape shape = {3, 4, 5};
  auto a = randomValues(count(shape), 61);
  DeviceTensor x = upload(DType::F32, shape, a);
  DeviceTensor y = empty(DType::F32, shape);
  for (int64_t dim = 0; dim < 3; ++dim) {
    SCOPED_TRACE(dim);
    PARTITION_ASSERT_OK(run(OpKind::Softmax, softmaxAttrs(dim), {&x}, {&y}));
    Shape strides = {20, 5, 1};
    std::vector<double> expected(a.size());
    for (int64_t i = 0; i < count(shape); ++i) {
      int64_t base = i - ((i / strides[dim]) % shape[dim]) * strides[dim];
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < shape[dim]; ++j)
        m = std::max(m, a[base + j * strides[dim]]);
      for (int64_t j = 0; j < shape[dim]; ++j)
        sum += std::exp(a[base + j * strides[dim]] - m);
      expected[i] = std::exp(a[i] - m) / sum;
    }
    expectNear(expected, download(y), DType::F32, 1e-6);
  }
}

TEST_F(CudaKernelTest, LayerNormAndRmsNorm) {
  const int64_t rows = 6, cols = 700;
  auto a = randomValues(rows * cols, 71, -3, 5);
  auto g = randomValues(cols, 72), bias = randomValues(cols, 73);
  DeviceTensor x = upload(DType::F32, {2, 3, cols}, a);
  DeviceTensor tg = upload(DType::F32, {cols}, g);
  DeviceTensor tb = upload(DType::F32, {cols}, bias);
  DeviceTensor y = empty(DType::F32, {2, 3, cols});
  PARTITION_ASSERT_OK(
      run(OpKind::LayerNorm, normAttrs(1e-5f, true), {&x, &tg, &tb}, {&y}));
  std::vector<double> expected(a.size()), expectedRms(a.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0, ms = 0;
    for (int64_t c = 0; c < cols; ++c) {
      mean += a[r * cols + c];
      ms += a[r * cols + c] * a[r * cols + c];
    }
    mean /= cols;
    ms /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (a[r * cols + c] - mean) * (a[r * cols + c] - mean);
    var /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      expected[r * cols + c] =
          (a[r * cols + c] - mean) / std::sqrt(var + 1e-5) * g[c] + bias[c];
      expectedRms[r * cols + c] = a[r * cols + c] / std::sqrt(ms + 1e-6) * g[c];
    }
  }
  expectNear(expected, download(y), DType::F32, 1e-5);
  PARTITION_ASSERT_OK(
      run(OpKind::RmsNorm, normAttrs(1e-6f, false), {&x, &tg}, {&y}));
  expectNear(expectedRms, download(y), DType::F32, 1e-5);
}

TEST_F(CudaKernelTest, RotaryEmbeddingRotatesHalves) {
  const int64_t B = 2, S = 3, D = 4;
  auto a = randomValues(B * S * D, 81);
  auto c = randomValues(S * D, 82), s = randomValues(S * D, 83);
  DeviceTensor x = upload(DType::F32, {B, S, D}, a);
  DeviceTensor tc = upload(DType::F32, {S, D}, c);
  DeviceTensor ts = upload(DType::F32, {S, D}, s);
  DeviceTensor y = empty(DType::F32, {B, S, D});
  PARTITION_ASSERT_OK(run(OpKind::RotaryEmbedding, {}, {&x, &tc, &ts}, {&y}));
  std::vector<double> expected(a.size());
  for (int64_t i = 0; i < B * S * D; ++i) {
    int64_t d = i % D, pos = (i / D) % S;
    double rotated = d < D / 2 ? -a[i + D / 2] : a[i - D / 2];
    expected[i] = a[i] * c[pos * D + d] + rotated * s[pos * D + d];
  }
  expectNear(expected, download(y), DType::F32);
}

TEST_F(CudaKernelTest, SoftmaxCrossEntropyReductions) {
  const int64_t N = 6, C = 37;
  auto logits = randomValues(N * C, 91, -5, 5);
  std::vector<double> labels = {0, 36, 5, 17, 17, 2};
  DeviceTensor x = upload(DType::F32, {2, 3, C}, logits);
  DeviceTensor l = upload(DType::I64, {2, 3}, labels);
  std::vector<double> losses(N);
  for (int64_t r = 0; r < N; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < C; ++c)
      m = std::max(m, logits[r * C + c]);
    for (int64_t c = 0; c < C; ++c)
      sum += std::exp(logits[r * C + c] - m);
    losses[r] = m + std::log(sum) - logits[r * C + int64_t(labels[r])];
  }
  DeviceTensor none = empty(DType::F32, {2, 3});
  PARTITION_ASSERT_OK(run(OpKind::SoftmaxCrossEntropy,
                          crossEntropyAttrs(plan::LossReduction::None),
                          {&x, &l}, {&none}));
  expectNear(losses, download(none), DType::F32);
  double total = 0;
  for (double v : losses)
    total += v;
  DeviceTensor scalar = empty(DType::F32, {});
  PARTITION_ASSERT_OK(run(OpKind::SoftmaxCrossEntropy,
                          crossEntropyAttrs(plan::LossReduction::Sum), {&x, &l},
                          {&scalar}));
  expectNear({total}, download(scalar), DType::F32);
  PARTITION_ASSERT_OK(run(OpKind::SoftmaxCrossEntropy,
                          crossEntropyAttrs(plan::LossReduction::Mean),
                          {&x, &l}, {&scalar}));
  expectNear({total / N}, download(scalar), DType::F32);
}

TEST_F(CudaKernelTest, ReductionsOverAnyDimensions) {
  Shape shape = {3, 4, 5, 2};
  auto a = randomValues(count(shape), 101);
  DeviceTensor x = upload(DType::F32, shape, a);
  auto reference = [&](const std::vector<bool> &reduced, int kind) {
    // kind 0 sum, 1 mean, 2 max; result in row-major order of kept dims.
    std::map<std::vector<int64_t>, std::vector<double>> groups;
    for (int64_t i = 0; i < count(shape); ++i) {
      std::vector<int64_t> key;
      int64_t rest = i;
      std::vector<int64_t> coord(4);
      for (int d = 3; d >= 0; --d) {
        coord[d] = rest % shape[d];
        rest /= shape[d];
      }
      for (int d = 0; d < 4; ++d)
        if (!reduced[d])
          key.push_back(coord[d]);
      groups[key].push_back(a[i]);
    }
    std::vector<double> out;
    for (auto &[key, values] : groups) {
      double v = kind == 2 ? -INFINITY : 0.0;
      for (double x : values)
        v = kind == 2 ? std::max(v, x) : v + x;
      out.push_back(kind == 1 ? v / values.size() : v);
    }
    return out;
  };
  struct Case {
    OpKind op;
    int kind;
    std::vector<int64_t> dims;
    Shape result;
  } cases[] = {
      {OpKind::ReduceSum, 0, {0, 2}, {4, 2}},     // strided: two groups
      {OpKind::ReduceMean, 1, {1}, {3, 1, 5, 2}}, // middle, keep_dims
      {OpKind::ReduceMax, 2, {3}, {3, 4, 5}},     // rows
      {OpKind::ReduceSum, 0, {0, 1, 2, 3}, {}},   // everything
      {OpKind::ReduceMax, 2, {0, 3}, {4, 5}},     // strided
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(opKindName(c.op));
    std::vector<bool> reduced(4, false);
    for (int64_t d : c.dims)
      reduced[d] = true;
    DeviceTensor y = empty(DType::F32, c.result);
    PARTITION_ASSERT_OK(run(c.op, reduceAttrs(c.dims), {&x}, {&y}));
    expectNear(reference(reduced, c.kind), download(y), DType::F32);
  }
}

TEST_F(CudaKernelTest, DataMovement) {
  std::vector<double> a(24);
  for (int i = 0; i < 24; ++i)
    a[i] = i;
  for (DType dtype : {DType::F32, DType::BF16, DType::I64}) {
    SCOPED_TRACE(dtypeName(dtype));
    DeviceTensor x = upload(dtype, {2, 3, 4}, a);

    DeviceTensor t = empty(dtype, {4, 2, 3});
    PARTITION_ASSERT_OK(
        run(OpKind::Transpose, transposeAttrs({2, 0, 1}), {&x}, {&t}));
    std::vector<double> expected;
    for (int l = 0; l < 4; ++l)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
          expected.push_back(a[i * 12 + j * 4 + l]);
    EXPECT_EQ(download(t), expected);

    DeviceTensor s = empty(dtype, {2, 2, 2});
    // offsets [0, 1, 1], strides [1, 1, 2]
    PARTITION_ASSERT_OK(
        run(OpKind::Slice, sliceAttrs({0, 1, 1}, {1, 1, 2}), {&x}, {&s}));
    expected.clear();
    for (int i = 0; i < 2; ++i)
      for (int j = 1; j < 3; ++j)
        for (int l = 1; l < 4; l += 2)
          expected.push_back(a[i * 12 + j * 4 + l]);
    EXPECT_EQ(download(s), expected);

    DeviceTensor row = upload(dtype, {3, 1}, {5, 6, 7});
    DeviceTensor b = empty(dtype, {2, 3, 4});
    PARTITION_ASSERT_OK(run(OpKind::Broadcast, {}, {&row}, {&b}));
    expected.clear();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 4; ++l)
          expected.push_back(5 + j);
    EXPECT_EQ(download(b), expected);

    DeviceTensor other =
        upload(dtype, {2, 1, 4}, {100, 101, 102, 103, 104, 105, 106, 107});
    DeviceTensor c = empty(dtype, {2, 4, 4});
    PARTITION_ASSERT_OK(run(OpKind::Concat, axisAttrs(1), {&x, &other}, {&c}));
    expected.clear();
    for (int i = 0; i < 2; ++i) {
      for (int l = 0; l < 12; ++l)
        expected.push_back(a[i * 12 + l]);
      for (int l = 0; l < 4; ++l)
        expected.push_back(100 + i * 4 + l);
    }
    EXPECT_EQ(download(c), expected);

    DeviceTensor ids = upload(DType::I32, {2, 2}, {2, 0, 1, 2});
    DeviceTensor g = empty(dtype, {2, 2, 2, 4});
    PARTITION_ASSERT_OK(run(OpKind::Gather, axisAttrs(1), {&x, &ids}, {&g}));
    expected.clear();
    for (int i = 0; i < 2; ++i)
      for (int id : {2, 0, 1, 2})
        for (int l = 0; l < 4; ++l)
          expected.push_back(a[i * 12 + id * 4 + l]);
    EXPECT_EQ(download(g), expected);

    DeviceTensor copy = empty(dtype, {24});
    PARTITION_ASSERT_OK(run(OpKind::Copy, {}, {&x}, {&copy}));
    EXPECT_EQ(download(copy), a);
  }
}

// The adjoints autodiff needs: Pad (a strided write over zeros), ScatterAdd
// (the f32 result accumulated in place; bf16 through f32 scratch, rounded
// once) with duplicate indices, and Compare writing i32 0 / 1 with NaN.
TEST_F(CudaKernelTest, PadScatterAddCompare) {
  DeviceTensor x = upload(DType::F32, {2, 2}, {1, 2, 3, 4});
  DeviceTensor padded = empty(DType::F32, {3, 5});
  PARTITION_ASSERT_OK(
      run(OpKind::Pad, sliceAttrs({1, 0}, {1, 3}), {&x}, {&padded}));
  EXPECT_EQ(download(padded),
            (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 3, 0, 0, 4, 0}));

  DeviceTensor updates =
      upload(DType::BF16, {4, 2}, {1, 2, 0.5, 0.25, 3, 4, 8, 16});
  DeviceTensor ids = upload(DType::I64, {4}, {2, 0, 2, 2});
  DeviceTensor sums = empty(DType::BF16, {3, 2});
  PARTITION_ASSERT_OK(
      run(OpKind::ScatterAdd, axisAttrs(0), {&updates, &ids}, {&sums}));
  EXPECT_EQ(download(sums), (std::vector<double>{0.5, 0.25, 0, 0, 12, 22}));
  DeviceTensor f = upload(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  DeviceTensor cols = upload(DType::I32, {3}, {1, 1, 0});
  DeviceTensor fsums = empty(DType::F32, {2, 2});
  PARTITION_ASSERT_OK(
      run(OpKind::ScatterAdd, axisAttrs(1), {&f, &cols}, {&fsums}));
  EXPECT_EQ(download(fsums), (std::vector<double>{3, 3, 6, 9}));

  DeviceTensor a = upload(DType::F32, {2, 2}, {1, std::nan(""), 3, -1});
  DeviceTensor b = upload(DType::F32, {2}, {1, 2});
  DeviceTensor eq = empty(DType::I32, {2, 2});
  DeviceTensor ne = empty(DType::I32, {2, 2});
  PARTITION_ASSERT_OK(run(OpKind::Compare,
                          compareAttrs(plan::CompareDirection::Eq), {&a, &b},
                          {&eq}));
  PARTITION_ASSERT_OK(run(OpKind::Compare,
                          compareAttrs(plan::CompareDirection::Ne), {&a, &b},
                          {&ne}));
  EXPECT_EQ(download(eq), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(download(ne), (std::vector<double>{0, 1, 1, 1}));
}

TEST_F(CudaKernelTest, FillConvertsTheValue) {
  DeviceTensor i = empty(DType::I32, {5});
  PARTITION_ASSERT_OK(run(OpKind::Fill, fillAttrs(-3.7f), {}, {&i}));
  EXPECT_EQ(download(i), std::vector<double>(5, -3.0));
  DeviceTensor h = empty(DType::BF16, {3, 3});
  PARTITION_ASSERT_OK(run(OpKind::Fill, fillAttrs(0.1f), {}, {&h}));
  EXPECT_EQ(download(h), roundTo(DType::BF16, std::vector<double>(9, 0.1f)));
  DeviceTensor z = empty(DType::F32, {4});
  PARTITION_ASSERT_OK(run(OpKind::Fill, fillAttrs(0.0f), {}, {&z}));
  EXPECT_EQ(download(z), std::vector<double>(4, 0.0));
}

TEST_F(CudaKernelTest, BadIndicesAreReportedAtSynchronize) {
  DeviceTensor table = upload(DType::F32, {3, 2}, {0, 1, 2, 3, 4, 5});
  DeviceTensor ids = upload(DType::I64, {3}, {1, 0, 7});
  DeviceTensor out = empty(DType::F32, {3, 2});
  // run() does not wait for the device, so it cannot know yet.
  PARTITION_ASSERT_OK(
      run(OpKind::Gather, axisAttrs(0), {&table, &ids}, {&out}));
  Status status = stream_->synchronize();
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_NE(status.message().find("index 7 at position 2"), std::string::npos)
      << status.toString();
  // Reported once; the clamped row was read, never memory outside the table.
  PARTITION_ASSERT_OK(stream_->synchronize());
  EXPECT_EQ(download(out), (std::vector<double>{2, 3, 0, 1, 4, 5}));

  DeviceTensor logits = upload(DType::F32, {2, 3}, {0, 0, 0, 0, 0, 0});
  DeviceTensor labels = upload(DType::I32, {2}, {0, -1});
  DeviceTensor loss = empty(DType::F32, {});
  PARTITION_ASSERT_OK(run(OpKind::SoftmaxCrossEntropy,
                          crossEntropyAttrs(plan::LossReduction::Mean),
                          {&logits, &labels}, {&loss}));
  status = stream_->synchronize();
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_NE(status.message().find("label -1 at position 1"), std::string::npos)
      << status.toString();

  DeviceTensor num = upload(DType::I64, {2, 2}, {5, 6, 7, 8});
  DeviceTensor den = upload(DType::I64, {2}, {3, 0});
  DeviceTensor quotient = empty(DType::I64, {2, 2});
  PARTITION_ASSERT_OK(run(OpKind::Div, {}, {&num, &den}, {&quotient}));
  status = stream_->synchronize();
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_NE(status.message().find("position 1"), std::string::npos)
      << status.toString();
  EXPECT_EQ(download(quotient), (std::vector<double>{1, 0, 2, 0}));
}

TEST_F(CudaKernelTest, RejectsBadShapesBeforeLaunching) {
  DeviceTensor x = upload(DType::F32, {2, 3}, std::vector<double>(6, 1.0));
  DeviceTensor w = upload(DType::F32, {4, 5}, std::vector<double>(20, 1.0));
  DeviceTensor y = empty(DType::F32, {2, 5});
  Status status =
      run(OpKind::Matmul, matmulAttrs(false, false), {&x, &w}, {&y});
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
}

} // namespace
