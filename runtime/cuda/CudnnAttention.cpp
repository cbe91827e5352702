//===- CudnnAttention.cpp - attention on cuDNN's fused kernels ------------===//
//
// See CudnnAttention.h. One cuDNN handle per device (the backend's kernels
// object), graphs built once per shape and kept; cuDNN is loaded at run time
// (the frontend's dynamic loading), so a machine without it runs the
// decomposition.
//
//===----------------------------------------------------------------------===//

#include "CudnnAttention.h"

#include "CudaBackend.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#ifdef PARTITION_HAVE_CUDNN
#include <cudnn_frontend.h>
#include <dlfcn.h>
namespace fe = cudnn_frontend;

// The frontend's dynamic loading reads libcudnn's symbols from this handle,
// which its user opens (CudnnAttention::Impl::handleOf).
namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend
#endif

using namespace partition::runtime;
using namespace partition::runtime::cuda;

#ifdef PARTITION_HAVE_CUDNN

namespace {

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

/// The key a graph is kept under: the shape, the dtype and the pass.
using GraphKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t, bool, uint32_t, int64_t, int>;

GraphKey keyOf(const AttentionShape &s, int pass) {
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &s.scale, sizeof scaleBits);
  return {int(s.dtype), s.batch, s.heads, s.kvHeads, s.sq, s.sk, s.d, s.dv,
          s.causal, scaleBits, s.window, pass};
}

/// [batch, heads, rows, cols], row-major.
std::shared_ptr<fe::graph::Tensor_attributes>
tensorOf(fe::graph::Graph &g, const char *name, int64_t uid, int64_t batch,
         int64_t heads, int64_t rows, int64_t cols) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({batch, heads, rows, cols})
                      .set_stride({heads * rows * cols, rows * cols, cols, 1}));
}

/// The mask of `s` on either pass's attributes.
template <typename Attributes> void setMask(Attributes &a, const AttentionShape &s) {
  if (!s.causal)
    return;
  a.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
      .set_diagonal_band_right_bound(0);
  if (s.window > 0)
    a.set_diagonal_band_left_bound(int(s.window));
}

void setTypes(fe::graph::Graph &g, const AttentionShape &s) {
  g.set_io_data_type(s.dtype == DType::BF16 ? fe::DataType_t::BFLOAT16
                                            : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
}

/// The forward: O and, for backward, each row's statistics (f32 [B, H, Sq,
/// 1]).
std::shared_ptr<fe::graph::Graph> forwardGraph(const AttentionShape &s,
                                               bool stats) {
  auto g = std::make_shared<fe::graph::Graph>();
  setTypes(*g, s);
  auto q = tensorOf(*g, "q", kQ, s.batch, s.heads, s.sq, s.d);
  auto k = tensorOf(*g, "k", kK, s.batch, s.kvHeads, s.sk, s.d);
  auto v = tensorOf(*g, "v", kV, s.batch, s.kvHeads, s.sk, s.dv);
  fe::graph::SDPA_attributes a;
  a.set_name("attention").set_generate_stats(stats).set_attn_scale(s.scale);
  setMask(a, s);
  auto [o, rowStats] = g->sdpa(q, k, v, a);
  o->set_output(true)
      .set_uid(kO)
      .set_dim({s.batch, s.heads, s.sq, s.dv})
      .set_stride({s.heads * s.sq * s.dv, s.sq * s.dv, s.dv, 1});
  if (stats)
    rowStats->set_output(true)
        .set_uid(kStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim({s.batch, s.heads, s.sq, 1})
        .set_stride({s.heads * s.sq, s.sq, 1, 1});
  return g;
}

/// The backward, with key and value given per query head (the caller's
/// copies under grouped-query attention), so that their gradients come out
/// per query head as part.attention_grad returns them.
std::shared_ptr<fe::graph::Graph> backwardGraph(const AttentionShape &s) {
  auto g = std::make_shared<fe::graph::Graph>();
  setTypes(*g, s);
  auto q = tensorOf(*g, "q", kQ, s.batch, s.heads, s.sq, s.d);
  auto k = tensorOf(*g, "k", kK, s.batch, s.heads, s.sk, s.d);
  auto v = tensorOf(*g, "v", kV, s.batch, s.heads, s.sk, s.dv);
  auto o = tensorOf(*g, "o", kO, s.batch, s.heads, s.sq, s.dv);
  auto dout = tensorOf(*g, "do", kDO, s.batch, s.heads, s.sq, s.dv);
  auto stats = g->tensor(fe::graph::Tensor_attributes()
                             .set_name("stats")
                             .set_uid(kStats)
                             .set_dim({s.batch, s.heads, s.sq, 1})
                             .set_stride({s.heads * s.sq, s.sq, 1, 1})
                             .set_data_type(fe::DataType_t::FLOAT));
  fe::graph::SDPA_backward_attributes a;
  // Deterministic: the same gradients every run, as the decomposition's.
  a.set_name("attention_grad").set_attn_scale(s.scale)
      .set_deterministic_algorithm(true);
  setMask(a, s);
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, dout, stats, a);
  auto out = [&](auto &t, int64_t uid, int64_t rows, int64_t cols) {
    t->set_output(true)
        .set_uid(uid)
        .set_dim({s.batch, s.heads, rows, cols})
        .set_stride({s.heads * rows * cols, rows * cols, cols, 1});
  };
  out(dq, kDQ, s.sq, s.d);
  out(dk, kDK, s.sk, s.d);
  out(dv, kDV, s.sk, s.dv);
  return g;
}

} // namespace

/// Opens libcudnn once per process: by its soname (the binaries' run path
/// holds the toolkit's libraries), else where the build found it.
static bool loadLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char *name : {"libcudnn.so.9", "libcudnn.so",
                             PARTITION_CUDNN_LIBRARY})
      if (!fe::cudnn_dlhandle && *name)
        fe::cudnn_dlhandle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  });
  return fe::cudnn_dlhandle != nullptr;
}

struct CudnnAttention::Impl {
  cudaMemPool_t pool;
  bool disabled = false;
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;
  /// Built graphs; null where cuDNN declined the shape.
  std::map<GraphKey, std::shared_ptr<fe::graph::Graph>> graphs;

  /// The handle, made on first use; null where cuDNN cannot be loaded.
  cudnnHandle_t handleOf() {
    if (handle || disabled)
      return handle;
    disabled = !loadLibrary();
    if (disabled)
      return nullptr;
    try {
      if (fe::detail::create_handle(&handle) != CUDNN_STATUS_SUCCESS)
        handle = nullptr;
    } catch (const std::exception &) { // no libcudnn to load
      handle = nullptr;
    }
    disabled = handle == nullptr;
    return handle;
  }

  /// The graph for `key`, built on first use; null where cuDNN has no plan.
  fe::graph::Graph *graphOf(const GraphKey &key,
                            const std::function<std::shared_ptr<
                                fe::graph::Graph>()> &make) {
    auto [it, fresh] = graphs.try_emplace(key);
    if (!fresh)
      return it->second.get();
    cudnnHandle_t h = handleOf();
    if (!h)
      return nullptr;
    try {
      std::shared_ptr<fe::graph::Graph> g = make();
      if (g->build(h, {fe::HeurMode_t::A}).is_good())
        it->second = std::move(g);
    } catch (const std::exception &) { // a shape the frontend rejects
    }
    return it->second.get();
  }

  /// Runs `g` on `stream` with its workspace from the pool.
  Status execute(fe::graph::Graph &g,
                 std::unordered_map<int64_t, void *> &pointers,
                 cudaStream_t stream) {
    if (fe::detail::set_stream(handle, stream) != CUDNN_STATUS_SUCCESS)
      return Status(StatusCode::Internal, "cuDNN: cannot set the stream");
    int64_t bytes = 0;
    if (!g.get_workspace_size(bytes).is_good())
      return Status(StatusCode::Internal,
                    "cuDNN: no workspace size for attention");
    Scratch workspace(stream);
    if (bytes > 0)
      PARTITION_RETURN_IF_ERROR(workspace.allocate(size_t(bytes), pool));
    try {
      fe::error_t e = g.execute(handle, pointers, workspace.data());
      if (!e.is_good())
        return Status(StatusCode::Internal,
                      "cuDNN attention: " + e.get_message());
    } catch (const std::exception &e) {
      return Status(StatusCode::Internal,
                    std::string("cuDNN attention: ") + e.what());
    }
    return Status::ok();
  }
};

CudnnAttention::CudnnAttention(cudaMemPool_t pool)
    : impl_(std::make_unique<Impl>()) {
  impl_->pool = pool;
  const char *flag = std::getenv("PARTITION_CUDNN_ATTENTION");
  impl_->disabled = flag && std::strcmp(flag, "0") == 0;
}

CudnnAttention::~CudnnAttention() {
  if (impl_->handle)
    (void)fe::detail::destroy_handle(impl_->handle);
}

bool CudnnAttention::built() { return true; }

/// Whether cuDNN's fused kernels are meant for `s` and these operands at
/// all (what they take beyond this, the graph's build decides): 16-bit
/// types, head sizes it has kernels for, and pointers aligned to 16 bytes
/// (its vector loads; a plan's arena may place a tensor at any element).
static bool fusable(const AttentionShape &s,
                    std::initializer_list<const void *> pointers) {
  for (const void *p : pointers)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      return false;
  return (s.dtype == DType::BF16 || s.dtype == DType::F16) && s.d % 8 == 0 &&
         s.dv % 8 == 0 && s.d <= 128 && s.dv <= 128 && s.sq > 0 && s.sk > 0 &&
         s.kvHeads > 0 && s.heads % s.kvHeads == 0;
}

Status CudnnAttention::forward(const AttentionShape &s, const void *q,
                               const void *k, const void *v, void *out,
                               cudaStream_t stream, bool *taken) {
  *taken = false;
  if (!fusable(s, {q, k, v, out}))
    return Status::ok();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  fe::graph::Graph *g = impl_->graphOf(
      keyOf(s, 0), [&] { return forwardGraph(s, /*stats=*/false); });
  if (!g)
    return Status::ok();
  std::unordered_map<int64_t, void *> pointers = {
      {kQ, const_cast<void *>(q)},
      {kK, const_cast<void *>(k)},
      {kV, const_cast<void *>(v)},
      {kO, out}};
  *taken = true;
  return impl_->execute(*g, pointers, stream);
}

/// `x` [B, Hkv, S, D] repeated into [B, Hkv * group, S, D] at `to`.
static Status repeatHeads(const void *x, void *to, int64_t batch,
                          int64_t kvHeads, int64_t group, int64_t headBytes,
                          cudaStream_t stream) {
  for (int64_t p = 0; p < batch * kvHeads; ++p)
    for (int64_t g = 0; g < group; ++g)
      PARTITION_CUDA_CHECK(cudaMemcpyAsync(
          static_cast<char *>(to) + (p * group + g) * headBytes,
          static_cast<const char *>(x) + p * headBytes, size_t(headBytes),
          cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

Status CudnnAttention::backward(const AttentionShape &s, const void *q,
                                const void *k, const void *v,
                                const void *dout, void *dq, void *dk,
                                void *dv, cudaStream_t stream, bool *taken) {
  *taken = false;
  if (!fusable(s, {q, k, v, dout, dq, dk, dv}))
    return Status::ok();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  fe::graph::Graph *fg = impl_->graphOf(
      keyOf(s, 1), [&] { return forwardGraph(s, /*stats=*/true); });
  fe::graph::Graph *bg =
      fg ? impl_->graphOf(keyOf(s, 2), [&] { return backwardGraph(s); })
         : nullptr;
  if (!bg)
    return Status::ok();
  *taken = true;
  // Scratch: the output, the row statistics and (grouped-query heads) the
  // key and value per query head, each 256-byte aligned.
  const int64_t elt = dtypeSize(s.dtype), group = s.heads / s.kvHeads;
  auto aligned = [](int64_t bytes) { return (bytes + 255) / 256 * 256; };
  const int64_t outBytes = aligned(s.batch * s.heads * s.sq * s.dv * elt);
  const int64_t statsBytes = aligned(s.batch * s.heads * s.sq * 4);
  const int64_t kBytes =
      group > 1 ? aligned(s.batch * s.heads * s.sk * s.d * elt) : 0;
  const int64_t vBytes =
      group > 1 ? aligned(s.batch * s.heads * s.sk * s.dv * elt) : 0;
  Scratch scratch(stream);
  PARTITION_RETURN_IF_ERROR(scratch.allocate(
      size_t(outBytes + statsBytes + kBytes + vBytes), impl_->pool));
  char *o = static_cast<char *>(scratch.data());
  void *stats = o + outBytes;
  std::unordered_map<int64_t, void *> pointers = {
      {kQ, const_cast<void *>(q)},
      {kK, const_cast<void *>(k)},
      {kV, const_cast<void *>(v)},
      {kO, o},
      {kStats, stats}};
  PARTITION_RETURN_IF_ERROR(impl_->execute(*fg, pointers, stream));
  if (group > 1) { // key and value per query head
    void *kx = o + outBytes + statsBytes, *vx = o + outBytes + statsBytes + kBytes;
    PARTITION_RETURN_IF_ERROR(repeatHeads(k, kx, s.batch, s.kvHeads, group,
                                          s.sk * s.d * elt, stream));
    PARTITION_RETURN_IF_ERROR(repeatHeads(v, vx, s.batch, s.kvHeads, group,
                                          s.sk * s.dv * elt, stream));
    pointers[kK] = kx;
    pointers[kV] = vx;
  }
  pointers[kDO] = const_cast<void *>(dout);
  pointers[kDQ] = dq;
  pointers[kDK] = dk;
  pointers[kDV] = dv;
  return impl_->execute(*bg, pointers, stream);
}

#else // no cuDNN in this build: every call declined

struct CudnnAttention::Impl {};

CudnnAttention::CudnnAttention(cudaMemPool_t) {}
CudnnAttention::~CudnnAttention() = default;
bool CudnnAttention::built() { return false; }

Status CudnnAttention::forward(const AttentionShape &, const void *,
                               const void *, const void *, void *,
                               cudaStream_t, bool *taken) {
  *taken = false;
  return Status::ok();
}

Status CudnnAttention::backward(const AttentionShape &, const void *,
                                const void *, const void *, const void *,
                                void *, void *, void *, cudaStream_t,
                                bool *taken) {
  *taken = false;
  return Status::ok();
}

#endif
