//===- ModelGenerators.cpp - GPT, Llama, Mixtral and MLP models in part ---===//
//
// `partition-import --model gpt|llama|mixtral|mlp` builds one global
// `func.func` (@gpt, @llama, @mixtral or @mlp): no mesh and no sharding
// annotations, so that `partition-opt --part-spmd="mesh=dp:2,tp:4"` can
// partition it. Arguments carry `part.role` (`input` or `parameter`; none of
// these models has a loss, so there is no label) and `part.name`; the result
// carries `part.name`. Weight matrices are stored [in, out] (`x @ w`,
// GPT-2's Conv1D layout) except the tied GPT LM head, which reads the
// [vocab, hidden] token embedding with `transpose_b`.
//
// Names and shapes (E hidden, F ffn, V vocab, S seq, B batch, H heads, K
// kv-heads, D = E / H):
//
//   gpt    input  tokens [B, S] i32           result logits [B, S, V]
//          wte [V, E], wpe [S, E],
//          h.<i>.ln_1.{weight,bias} [E],
//          h.<i>.attn.{q,k,v,proj}.weight [E, E], ....bias [E],
//          h.<i>.ln_2.{weight,bias} [E],
//          h.<i>.mlp.fc.weight [E, F], h.<i>.mlp.fc.bias [F],
//          h.<i>.mlp.proj.weight [F, E], h.<i>.mlp.proj.bias [E],
//          ln_f.{weight,bias} [E]
//   llama  input  tokens [B, S] i32           result logits [B, S, V]
//          embed_tokens.weight [V, E],
//          layers.<i>.input_layernorm.weight [E],
//          layers.<i>.self_attn.q_proj.weight [E, H*D],
//          layers.<i>.self_attn.{k,v}_proj.weight [E, K*D],
//          layers.<i>.self_attn.o_proj.weight [H*D, E],
//          layers.<i>.post_attention_layernorm.weight [E],
//          layers.<i>.mlp.{gate,up}_proj.weight [E, F],
//          layers.<i>.mlp.down_proj.weight [F, E],
//          norm.weight [E], lm_head.weight [E, V]
//   mixtral  as llama, with each layer's mlp.* replaced by (X experts,
//          each token routed to its top-k, C slots per expert and sequence)
//          layers.<i>.block_sparse_moe.gate.weight [E, X],
//          layers.<i>.block_sparse_moe.experts.{w1,w3} [X, E, F],
//          layers.<i>.block_sparse_moe.experts.w2 [X, F, E];
//          and, unless --router-aux-loss-coef 0, result aux_loss [] (the
//          load-balancing loss, with part.loss_weight)
//   mlp    input  x [B, E] f32                result y [B, E]
//          layers.<i>.weight [in, out], layers.<i>.bias [out]: E -> F for
//          the first layer, F -> F between, F -> E for the last (E -> E
//          when there is one layer); ReLU after every layer but the last.
//
// Defaults: F = 4 E (gpt, mlp); Llama's SwiGLU size, 8 E / 3 rounded down
// and then up to a multiple of 8 (E = 64: 176; E = 4096: 10928), and K = H.
//
// Initial values, as GPT-2 and Llama are initialised: matrices and
// embeddings normal(0, 0.02) (GPT-2's residual output projections
// attn.proj and mlp.proj 0.02 / sqrt(2 L); wpe 0.01), norm scales 1, biases
// 0; the MLP, which has no normalisation to restore the scale, He-normal
// (std sqrt(2 / in)). Llama's rotary tables are no parameters (torch holds
// them as buffers): the program computes them as Hugging Face's
// LlamaRotaryEmbedding does, in f32, cos and sin of the positions times
// 10000^(-2i/D) for i < D/2, repeated for the second half (rotate-half
// layout). Each tensor's numbers come from its own
// stream, seeded by (seed, name), of a generator the C++ standard fixes
// (std::mt19937_64, turned into normal numbers by Box-Muller here rather
// than by the implementation-defined std::normal_distribution): the same
// seed gives the same weights with any standard library, and a tensor's
// values do not depend on the other tensors (a 2-layer model's layer 0
// equals a 4-layer model's, but for GPT's depth-scaled projections).
//
// The ops of block or layer i carry `part.layer = i` (part-recompute reads
// it); the embedding, final norm and head carry none.
//
// The IR is built first with no data, then the data is filled, so that a
// model too large for this machine's memory is refused before anything is
// allocated.
//
//===----------------------------------------------------------------------===//

#include "partition/Import/ModelGenerators.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <unistd.h>

using namespace mlir;
using namespace partition;
using namespace partition::import;
using part::PartDialect;

namespace {

/// How a parameter's data is filled.
struct Init {
  enum Kind { Normal, Constant } kind = Normal;
  /// Standard deviation (Normal) or value (Constant).
  double value = 0;

  static Init normal(double std) { return {Normal, std}; }
  static Init constant(double v) { return {Constant, v}; }
};

/// A parameter whose data is filled once the IR is complete.
struct PendingParameter {
  std::string name;
  SmallVector<int64_t> shape;
  Init init;
};

} // namespace

/// 64-bit FNV-1a of a name, mixed into the seed.
static uint64_t hashName(StringRef name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

/// SplitMix64 finaliser: decorrelates nearby seeds.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Fills `out` with normal(0, std) numbers from the stream of (seed, name):
/// Box-Muller on std::mt19937_64, whose output the C++ standard fixes
/// (std::normal_distribution is implementation-defined).
static void fillNormal(MutableArrayRef<float> out, double std, uint64_t seed,
                       StringRef name) {
  std::mt19937_64 engine(mix(seed ^ hashName(name)));
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  auto uniform = [&] { // in (0, 1]
    return (static_cast<double>(engine() >> 11) + 1.0) * 0x1.0p-53;
  };
  size_t n = out.size();
  for (size_t i = 0; i < n; i += 2) {
    double r = std * std::sqrt(-2.0 * std::log(uniform()));
    double theta = kTwoPi * uniform();
    out[i] = static_cast<float>(r * std::cos(theta));
    if (i + 1 < n)
      out[i + 1] = static_cast<float>(r * std::sin(theta));
  }
}

/// The rotary table of shape [S, D]: cos or sin of s * 10000^(-2i/D), i <
/// D/2, repeated for the second half (rotate-half layout).
/// Physical memory in bytes, or 0 when unknown.
static uint64_t physicalMemory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0)
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
#endif
  return 0;
}

namespace {

/// Gives every op built while a layer is set that layer's `part.layer`.
struct LayerTagger : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (layer)
      op->setAttr(PartDialect::getLayerAttrName(), layer);
  }
  IntegerAttr layer;
};

/// Builds the function of one model: arguments are added as the body needs
/// them and their attributes are set once at the end (setting them one by
/// one would copy the growing attribute array each time).
class ModelBuilder {
public:
  ModelBuilder(MLIRContext &ctx, const ModelConfig &config, StringRef name)
      : ctx(ctx), config(config), b(&ctx), loc(UnknownLoc::get(&ctx)),
        f32(b.getF32Type()) {
    b.setListener(&tagger);
    module = ModuleOp::create(loc);
    function = func::FuncOp::create(loc, name, b.getFunctionType({}, {}));
    module->push_back(function);
    body = function.addEntryBlock();
    b.setInsertionPointToStart(body);
    roleName = b.getStringAttr(PartDialect::getRoleAttrName());
    nameName = b.getStringAttr(PartDialect::getNameAttrName());
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(shape, element ? element : f32);
  }

  /// Names the ops that follow (visible with --mlir-print-debuginfo).
  void setScope(const Twine &scope) {
    loc = NameLoc::get(b.getStringAttr(scope));
  }

  /// Puts the ops that follow in layer `index` (`part.layer`), or in none.
  void setLayer(std::optional<int64_t> index) {
    tagger.layer = index ? b.getI64IntegerAttr(*index) : IntegerAttr();
  }

  Value argument(StringRef name, RankedTensorType type, part::ArgRole role) {
    Value v = body->addArgument(type, function.getLoc());
    NamedAttribute attrs[] = {
        b.getNamedAttr(nameName, b.getStringAttr(name)),
        b.getNamedAttr(roleName, part::ArgRoleAttr::get(&ctx, role))};
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    return v;
  }

  Type i32() { return b.getI32Type(); }
  Type f32Type() { return f32; }

  Value input(StringRef name, ArrayRef<int64_t> shape, Type element) {
    return argument(name, tensor(shape, element), part::ArgRole::Input);
  }

  Value parameter(const Twine &name, ArrayRef<int64_t> shape, Init init) {
    std::string text = name.str();
    Value v = argument(text, tensor(shape), part::ArgRole::Parameter);
    parameters.push_back({std::move(text), SmallVector<int64_t>(shape), init});
    return v;
  }

  //===--- ops ------------------------------------------------------------===//

  Value matmul(Value x, Value w, bool transposeB = false) {
    auto xt = cast<RankedTensorType>(x.getType());
    auto wt = cast<RankedTensorType>(w.getType());
    SmallVector<int64_t> shape(xt.getShape());
    shape.back() = wt.getDimSize(transposeB ? 0 : 1);
    return part::MatmulOp::create(b, loc, tensor(shape), x, w,
                                  /*transpose_a=*/false, transposeB);
  }

  Value add(Value lhs, Value rhs) {
    return part::AddOp::create(b, loc, lhs.getType(), lhs, rhs);
  }

  Value mul(Value lhs, Value rhs) {
    return part::MulOp::create(b, loc, lhs.getType(), lhs, rhs);
  }

  /// x @ w (+ bias).
  Value linear(Value x, Value w, Value bias = {}) {
    Value y = matmul(x, w);
    return bias ? add(y, bias) : y;
  }

  Value layerNorm(Value x, Value scale, Value bias) {
    return part::LayerNormOp::create(b, loc, x.getType(), x, scale, bias,
                                     b.getF32FloatAttr(1e-5f));
  }

  Value rmsNorm(Value x, Value scale) {
    return part::RmsNormOp::create(b, loc, x.getType(), x, scale,
                                   b.getF32FloatAttr(1e-5f));
  }

  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return part::ReshapeOp::create(b, loc, tensor(shape), x);
  }
  /// `x` (of any element type, as `like`) in another shape.
  Value reshape(Value x, ArrayRef<int64_t> shape, RankedTensorType like) {
    return part::ReshapeOp::create(b, loc, like.clone(shape), x);
  }

  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    auto xt = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : permutation)
      shape.push_back(xt.getDimSize(d));
    return part::TransposeOp::create(b, loc, tensor(shape), x, permutation);
  }

  /// [B, S, N*D] -> [B, N, S, D].
  Value splitHeads(Value x, int64_t heads) {
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t batch = xt.getDimSize(0), seq = xt.getDimSize(1);
    int64_t headDim = xt.getDimSize(2) / heads;
    return transpose(reshape(x, {batch, seq, heads, headDim}), {0, 2, 1, 3});
  }

  /// [B, N, S, D] -> [B, S, N*D].
  Value mergeHeads(Value x) {
    auto xt = cast<RankedTensorType>(x.getType());
    Value t = transpose(x, {0, 2, 1, 3});
    return reshape(t, {xt.getDimSize(0), xt.getDimSize(2),
                       xt.getDimSize(1) * xt.getDimSize(3)});
  }

  Value causalAttention(Value q, Value k, Value v) {
    return part::AttentionOp::create(b, loc, q.getType(), q, k, v,
                                     /*query_positions=*/Value(),
                                     /*key_positions=*/Value(),
                                     /*causal=*/true, /*scale=*/FloatAttr(),
                                     /*window=*/IntegerAttr());
  }

  /// Llama's rotary tables cos and sin [S, D], computed as Hugging Face's
  /// LlamaRotaryEmbedding computes them (f32): the positions [S, 1] times
  /// the inverse frequencies 10000^(-2i/D) [1, D] (each of the D/2 twice,
  /// rotate-half layout), then cos and sin. Constants, not parameters: no
  /// optimizer updates them.
  std::pair<Value, Value> ropeTables(int64_t seq, int64_t headDim) {
    std::vector<float> positions(size_t(seq), 0.0f);
    for (int64_t s = 0; s < seq; ++s)
      positions[size_t(s)] = float(s);
    std::vector<float> inverse(size_t(headDim), 0.0f);
    int64_t half = headDim / 2;
    for (int64_t i = 0; i < half; ++i) {
      // torch: 1.0 / (base ** (arange(0, D, 2).float() / D)), in f32.
      float exponent = float(2 * i) / float(headDim);
      float f = 1.0f / std::pow(10000.0f, exponent);
      inverse[size_t(i)] = inverse[size_t(half + i)] = f;
    }
    auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<float> values) {
      return part::ConstantOp::create(
          b, loc, DenseElementsAttr::get(tensor(shape), values));
    };
    // One statement each: the order of a call's arguments is the
    // compiler's, and the IR must not depend on it.
    Value column = constant({seq, 1}, positions);
    Value row = constant({1, headDim}, inverse);
    Value angles =
        part::MulOp::create(b, loc, tensor({seq, headDim}), column, row);
    return {unary<part::CosOp>(angles), unary<part::SinOp>(angles)};
  }

  /// Rotary position embedding of [B, N, S, D] with [S, D] tables.
  Value rotary(Value x, Value cos, Value sin) {
    return part::RotaryEmbeddingOp::create(b, loc, x.getType(), x, cos, sin);
  }

  Value gather(Value table, Value ids) {
    auto tt = cast<RankedTensorType>(table.getType());
    auto it = cast<RankedTensorType>(ids.getType());
    SmallVector<int64_t> shape(it.getShape());
    shape.push_back(tt.getDimSize(1));
    return part::GatherOp::create(b, loc, tensor(shape), table, ids,
                                  /*axis=*/0);
  }

  Value batchMatmul(Value x, Value w) {
    return part::BatchMatmulOp::create(b, loc, x, w, /*transpose_a=*/false,
                                       /*transpose_b=*/false);
  }

  Value softmaxLast(Value x) {
    auto xt = cast<RankedTensorType>(x.getType());
    return part::SoftmaxOp::create(b, loc, x.getType(), x, xt.getRank() - 1);
  }

  Value div(Value lhs, Value rhs) {
    return part::DivOp::create(b, loc, lhs, rhs);
  }

  Value sum(Value x, ArrayRef<int64_t> dims, bool keepDims) {
    return part::ReduceSumOp::create(b, loc, x, dims, keepDims);
  }

  /// One-hot rows of `indices` [...] over `n` classes: [..., n] f32.
  Value oneHot(Value indices, int64_t n) {
    auto it = cast<RankedTensorType>(indices.getType());
    SmallVector<int64_t> column(it.getShape());
    column.push_back(1);
    SmallVector<APInt> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(APInt(64, i, /*isSigned=*/true));
    auto iotaType = tensor({n}, b.getI64Type());
    Value iota = part::ConstantOp::create(
        b, loc, DenseElementsAttr::get(iotaType, values));
    Value hit = part::CompareOp::create(b, loc, part::ComparisonDirection::EQ,
                                        reshape(indices, column, it), iota);
    SmallVector<int64_t> shape(it.getShape());
    shape.push_back(n);
    return part::CastOp::create(b, loc, tensor(shape), hit);
  }

  Value scalar(double v) {
    return part::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tensor({}), float(v)));
  }

  /// The k largest of the last dimension: values and i64 indices.
  std::pair<Value, Value> topK(Value x, int64_t k) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(x.getType()).getShape());
    shape.back() = k;
    auto op = part::TopKOp::create(b, loc, tensor(shape),
                                   tensor(shape, b.getI64Type()), x);
    return {op.getValues(), op.getIndices()};
  }

  /// Tokens [G, S, H] into the buffer [experts, G, capacity, H].
  Value dispatch(Value x, Value indices, int64_t experts, int64_t capacity) {
    auto xt = cast<RankedTensorType>(x.getType());
    return part::ExpertDispatchOp::create(
        b, loc,
        tensor({experts, xt.getDimSize(0), capacity, xt.getDimSize(2)}), x,
        indices);
  }

  /// The buffer [E, G, C, H] back into the slots [G, S, K, H].
  Value combine(Value buffer, Value indices) {
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(indices.getType()).getShape());
    shape.push_back(cast<RankedTensorType>(buffer.getType()).getDimSize(3));
    return part::ExpertCombineOp::create(b, loc, tensor(shape), buffer,
                                         indices);
  }

  template <typename OpTy, typename... Args>
  Value unary(Value x, Args... args) {
    return OpTy::create(b, loc, x.getType(), x, args...);
  }

  //===--- completion -----------------------------------------------------===//

  /// Returns `results` (named `names`) and sets the function's type and
  /// argument attributes.
  /// `lossWeights`, where given, marks results as auxiliary losses
  /// (`part.loss_weight`, when not 0).
  OwningOpRef<ModuleOp> finish(ArrayRef<Value> results,
                               ArrayRef<StringRef> names,
                               ArrayRef<double> lossWeights = {}) {
    setScope("return");
    func::ReturnOp::create(b, loc, results);
    SmallVector<Type> resultTypes;
    SmallVector<DictionaryAttr> resultAttrs;
    for (auto [i, v, name] : llvm::enumerate(results, names)) {
      resultTypes.push_back(v.getType());
      NamedAttrList attrs;
      attrs.append(nameName, b.getStringAttr(name));
      if (i < lossWeights.size() && lossWeights[i] != 0)
        attrs.append(PartDialect::getLossWeightAttrName(),
                     b.getF64FloatAttr(lossWeights[i]));
      resultAttrs.push_back(attrs.getDictionary(&ctx));
    }
    function.setType(b.getFunctionType(body->getArgumentTypes(), resultTypes));
    function.setAllArgAttrs(argAttrs);
    function.setAllResultAttrs(resultAttrs);
    return std::move(module);
  }

  /// Fills `weights` in argument order; refuses a model whose data would not
  /// fit in this machine's memory.
  LogicalResult fillWeights(Weights &weights) {
    uint64_t elements = 0;
    for (const PendingParameter &p : parameters) {
      uint64_t n = 1;
      for (int64_t d : p.shape)
        n *= static_cast<uint64_t>(d); // sizes were checked for overflow
      elements += n;
    }
    // The tool holds the data twice (the tensors and the serialised file).
    // Compared in elements: elements < 2^63, but 8 bytes each might not fit.
    uint64_t memory = physicalMemory();
    if (memory && elements > memory / (2 * sizeof(float))) {
      auto billions = [](double n) {
        return llvm::formatv("{0:F1}", n / 1e9).str();
      };
      emitError(UnknownLoc::get(&ctx))
          << "the model has " << billions(elements) << " billion parameters ("
          << billions(4.0 * elements)
          << " GB of f32 data), more than this machine's " << billions(memory)
          << " GB of memory can hold twice; use --shapes-only";
      return failure();
    }
    weights.tensors.reserve(weights.tensors.size() + parameters.size());
    for (const PendingParameter &p : parameters) {
      WeightTensor t;
      t.name = p.name;
      t.dtype = runtime::DType::F32;
      t.shape.assign(p.shape.begin(), p.shape.end());
      int64_t n = 1;
      for (int64_t d : p.shape)
        n *= d;
      std::vector<float> values(static_cast<size_t>(n));
      MutableArrayRef<float> out(values);
      switch (p.init.kind) {
      case Init::Normal:
        fillNormal(out, p.init.value, config.seed, p.name);
        break;
      case Init::Constant:
        std::fill(values.begin(), values.end(),
                  static_cast<float>(p.init.value));
        break;
      }
      t.data.resize(values.size() * sizeof(float));
      std::memcpy(t.data.data(), values.data(), t.data.size());
      weights.tensors.push_back(std::move(t));
    }
    return success();
  }

private:
  MLIRContext &ctx;
  const ModelConfig &config;
  LayerTagger tagger;
  OpBuilder b;
  Location loc;
  Type f32;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
  Block *body = nullptr;
  StringAttr roleName, nameName;
  SmallVector<DictionaryAttr> argAttrs;
  std::vector<PendingParameter> parameters;
};

//===----------------------------------------------------------------------===//
// The families
//===----------------------------------------------------------------------===//

/// The sizes after defaults.
struct Sizes {
  int64_t layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, headDim;
  /// Mixtral: experts per layer, per token, and slots per expert and
  /// sequence.
  int64_t experts = 0, topK = 0, capacity = 0;
  double auxLossCoef = 0;
};

} // namespace

static OwningOpRef<ModuleOp> buildGpt(ModelBuilder &m, const Sizes &s) {
  const int64_t B = s.batch, S = s.seq, E = s.hidden, F = s.ffn, V = s.vocab;
  const double std = 0.02;
  // GPT-2 scales the residual projections by 1 / sqrt(number of residual
  // additions) so the residual stream's variance does not grow with depth.
  const double projStd = std / std::sqrt(2.0 * s.layers);
  m.setScope("embedding");
  Value tokens = m.input("tokens", {B, S}, m.i32());
  Value wte = m.parameter("wte", {V, E}, Init::normal(std));
  Value wpe = m.parameter("wpe", {S, E}, Init::normal(0.01));
  Value x = m.add(m.gather(wte, tokens), wpe);
  for (int64_t i = 0; i < s.layers; ++i) {
    std::string p = "h." + std::to_string(i) + ".";
    // Arguments are created in the order of the calls below: C++ leaves the
    // order of evaluation of a call's arguments unspecified, so each
    // parameter is made in a statement of its own.
    auto linear = [&](Value v, StringRef n, int64_t in, int64_t out,
                      double sd) {
      Value w = m.parameter(p + n + ".weight", {in, out}, Init::normal(sd));
      Value bias = m.parameter(p + n + ".bias", {out}, Init::constant(0));
      return m.linear(v, w, bias);
    };
    auto norm = [&](StringRef n, Value v) {
      Value scale = m.parameter(p + n + ".weight", {E}, Init::constant(1));
      Value bias = m.parameter(p + n + ".bias", {E}, Init::constant(0));
      return m.layerNorm(v, scale, bias);
    };
    m.setLayer(i);
    m.setScope(p + "attn");
    Value h = norm("ln_1", x);
    Value q = m.splitHeads(linear(h, "attn.q", E, E, std), s.heads);
    Value k = m.splitHeads(linear(h, "attn.k", E, E, std), s.heads);
    Value v = m.splitHeads(linear(h, "attn.v", E, E, std), s.heads);
    Value a = m.mergeHeads(m.causalAttention(q, k, v));
    x = m.add(x, linear(a, "attn.proj", E, E, projStd));
    m.setScope(p + "mlp");
    h = norm("ln_2", x);
    h = m.unary<part::GeluOp>(linear(h, "mlp.fc", E, F, std),
                              part::GeluApproximation::Tanh);
    x = m.add(x, linear(h, "mlp.proj", F, E, projStd));
  }
  m.setLayer(std::nullopt);
  m.setScope("head");
  Value scale = m.parameter("ln_f.weight", {E}, Init::constant(1));
  Value bias = m.parameter("ln_f.bias", {E}, Init::constant(0));
  x = m.layerNorm(x, scale, bias);
  Value logits = m.matmul(x, wte, /*transposeB=*/true);
  return m.finish({logits}, {"logits"});
}

/// Llama's SwiGLU MLP: down(silu(h gate) * (h up)).
static Value swiGlu(ModelBuilder &m, const Sizes &s, const std::string &p,
                    Value h) {
  const int64_t E = s.hidden, F = s.ffn;
  auto weight = [&](StringRef n, ArrayRef<int64_t> shape) {
    return m.parameter(p + n + ".weight", shape, Init::normal(0.02));
  };
  Value gate =
      m.unary<part::SiluOp>(m.matmul(h, weight("mlp.gate_proj", {E, F})));
  Value up = m.matmul(h, weight("mlp.up_proj", {E, F}));
  return m.matmul(m.mul(gate, up), weight("mlp.down_proj", {F, E}));
}

/// What the load-balancing loss needs of every layer's router: per sequence
/// and expert, the slots routed to it and the sum of its probabilities over
/// the sequence's tokens.
struct RouterStats {
  Value slots, probabilities;
};

/// Mixtral's sparse MLP: the router's softmax over X experts, each token's
/// top K renormalised to sum to 1, the tokens dispatched to their experts'
/// buffers (a sequence is a group), one SwiGLU per expert as batched
/// matmuls over X, and the slots combined with the router's weights.
/// Appends the layer's routing to `stats` when it is to be counted.
static Value sparseMoe(ModelBuilder &m, const Sizes &s, const std::string &p,
                       Value h, std::vector<RouterStats> *stats) {
  const int64_t B = s.batch, S = s.seq, E = s.hidden, F = s.ffn;
  const int64_t X = s.experts, C = s.capacity;
  std::string q = p + "block_sparse_moe.";
  Value router =
      m.parameter(q + "gate.weight", {E, X}, Init::normal(0.02));
  Value probs = m.softmaxLast(m.matmul(h, router));
  auto [top, chosen] = m.topK(probs, s.topK);
  if (stats)
    stats->push_back({m.sum(m.oneHot(chosen, X), {1, 2}, /*keepDims=*/false),
                      m.sum(probs, {1}, /*keepDims=*/false)});
  Value weights = m.div(top, m.sum(top, {2}, /*keepDims=*/true));
  auto expert = [&](StringRef n, int64_t in, int64_t out) {
    return m.parameter(q + "experts." + n, {X, in, out}, Init::normal(0.02));
  };
  Value w1 = expert("w1", E, F);
  Value w3 = expert("w3", E, F);
  Value w2 = expert("w2", F, E);
  Value tokens = m.reshape(m.dispatch(h, chosen, X, C), {X, B * C, E});
  Value gate = m.unary<part::SiluOp>(m.batchMatmul(tokens, w1));
  Value y = m.batchMatmul(m.mul(gate, m.batchMatmul(tokens, w3)), w2);
  Value slots = m.combine(m.reshape(y, {X, B, C, E}), chosen);
  Value weighted = m.mul(slots, m.reshape(weights, {B, S, s.topK, 1}));
  return m.sum(weighted, {2}, /*keepDims=*/false);
}

/// Switch's load-balancing loss for each sequence, as Hugging Face computes
/// it over all layers' N = layers x S routed tokens -- X sum_e (slots_e /
/// N) (probabilities_e / N) -- averaged over the sequences (DeepSeek-V3's
/// sequence-wise form): each sequence's term is its own, so a plan that
/// splits the batch or cuts it into micro-batches computes the same loss.
/// With one sequence it is Hugging Face's aux_loss. Computed after the
/// layers from each one's routing, as Hugging Face's function takes every
/// layer's router logits: the layers stay alike (the planner probes three).
static Value loadBalancingLoss(ModelBuilder &m, const Sizes &s,
                               ArrayRef<RouterStats> layers) {
  RouterStats stats = layers.front();
  for (const RouterStats &l : layers.drop_front()) {
    stats.slots = m.add(stats.slots, l.slots);
    stats.probabilities = m.add(stats.probabilities, l.probabilities);
  }
  double n = double(s.layers) * double(s.seq);
  Value product = m.mul(stats.slots, stats.probabilities);
  Value perSequence = m.sum(product, {1}, /*keepDims=*/false);
  Value total = m.sum(perSequence, {0}, /*keepDims=*/false);
  return m.mul(total,
               m.scalar(double(s.experts) / (n * n * double(s.batch))));
}

/// Llama (and, with `moe`, Mixtral: the MLP replaced by sparseMoe).
static OwningOpRef<ModuleOp> buildDecoder(ModelBuilder &m, const Sizes &s,
                                          bool moe) {
  const int64_t B = s.batch, S = s.seq, E = s.hidden, V = s.vocab;
  const int64_t H = s.heads, K = s.kvHeads, D = s.headDim;
  const double std = 0.02;
  std::vector<RouterStats> stats; // each layer's, with a load-balancing loss
  bool balance = moe && s.auxLossCoef != 0;
  m.setScope("embedding");
  Value tokens = m.input("tokens", {B, S}, m.i32());
  Value embed = m.parameter("embed_tokens.weight", {V, E}, Init::normal(std));
  auto [cos, sin] = m.ropeTables(S, D);
  Value x = m.gather(embed, tokens);
  for (int64_t i = 0; i < s.layers; ++i) {
    std::string p = "layers." + std::to_string(i) + ".";
    auto weight = [&](StringRef n, ArrayRef<int64_t> shape) {
      return m.parameter(p + n + ".weight", shape, Init::normal(std));
    };
    auto norm = [&](StringRef n, Value v) {
      return m.rmsNorm(v,
                       m.parameter(p + n + ".weight", {E}, Init::constant(1)));
    };
    m.setLayer(i);
    m.setScope(p + "self_attn");
    Value h = norm("input_layernorm", x);
    Value q =
        m.splitHeads(m.matmul(h, weight("self_attn.q_proj", {E, H * D})), H);
    Value k =
        m.splitHeads(m.matmul(h, weight("self_attn.k_proj", {E, K * D})), K);
    Value v =
        m.splitHeads(m.matmul(h, weight("self_attn.v_proj", {E, K * D})), K);
    q = m.rotary(q, cos, sin);
    k = m.rotary(k, cos, sin);
    Value a = m.mergeHeads(m.causalAttention(q, k, v));
    x = m.add(x, m.matmul(a, weight("self_attn.o_proj", {H * D, E})));
    m.setScope(p + (moe ? "block_sparse_moe" : "mlp"));
    h = norm("post_attention_layernorm", x);
    x = m.add(x, moe ? sparseMoe(m, s, p, h, balance ? &stats : nullptr)
                     : swiGlu(m, s, p, h));
  }
  m.setLayer(std::nullopt);
  m.setScope("head");
  x = m.rmsNorm(x, m.parameter("norm.weight", {E}, Init::constant(1)));
  Value logits =
      m.matmul(x, m.parameter("lm_head.weight", {E, V}, Init::normal(std)));
  if (stats.empty())
    return m.finish({logits}, {"logits"});
  m.setScope("load_balancing_loss");
  Value aux = loadBalancingLoss(m, s, stats);
  return m.finish({logits, aux}, {"logits", "aux_loss"},
                  {0.0, s.auxLossCoef});
}

static OwningOpRef<ModuleOp> buildLlama(ModelBuilder &m, const Sizes &s) {
  return buildDecoder(m, s, /*moe=*/false);
}

static OwningOpRef<ModuleOp> buildMixtral(ModelBuilder &m, const Sizes &s) {
  return buildDecoder(m, s, /*moe=*/true);
}

static OwningOpRef<ModuleOp> buildMlp(ModelBuilder &m, const Sizes &s) {
  const int64_t E = s.hidden, F = s.ffn;
  m.setScope("input");
  Value x = m.input("x", {s.batch, E}, m.f32Type());
  for (int64_t i = 0; i < s.layers; ++i) {
    int64_t in = i == 0 ? E : F;
    int64_t out = i + 1 == s.layers ? E : F;
    std::string p = "layers." + std::to_string(i) + ".";
    m.setLayer(i);
    m.setScope("layers." + std::to_string(i));
    // He initialisation keeps the activations' scale through the ReLUs.
    Value w =
        m.parameter(p + "weight", {in, out}, Init::normal(std::sqrt(2.0 / in)));
    Value bias = m.parameter(p + "bias", {out}, Init::constant(0));
    x = m.linear(x, w, bias);
    if (i + 1 < s.layers)
      x = m.unary<part::ReluOp>(x);
  }
  m.setLayer(std::nullopt);
  return m.finish({x}, {"y"});
}

/// Checks the sizes and fills in the defaults; reports the first problem.
/// Mixtral's routing sizes: experts, experts per token and the capacity
/// per expert and sequence: seq when every slot must fit (a token's top-k
/// experts are distinct, so no expert gets more than one slot of a token),
/// and never more.
static LogicalResult checkExperts(Location loc, const ModelConfig &c,
                                  Sizes &s) {
  if (c.experts < 1 || c.experts > 4096) {
    emitError(loc) << "--experts must be in [1, 4096], got " << c.experts;
    return failure();
  }
  if (c.topK < 1 || c.topK > c.experts) {
    emitError(loc) << "--top-k must be in [1, --experts " << c.experts
                   << "], got " << c.topK;
    return failure();
  }
  if (!(c.capacityFactor >= 0) || c.capacityFactor > 1e6) {
    emitError(loc) << "--capacity-factor must be 0 (drop nothing) or "
                      "positive, got "
                   << c.capacityFactor;
    return failure();
  }
  int64_t widest = 4 * std::max(c.hidden, c.ffn);
  std::optional<int64_t> expertWeights = llvm::checkedMul<int64_t>(
      3 * c.experts, c.layers);
  for (int64_t f : {widest, widest})
    if (expertWeights)
      expertWeights = llvm::checkedMul<int64_t>(*expertWeights, f);
  if (!expertWeights) {
    emitError(loc) << "the sizes are too large: the experts' weights would "
                      "have more than 2^63 elements";
    return failure();
  }
  if (!std::isfinite(c.routerAuxLossCoef) || c.routerAuxLossCoef < 0) {
    emitError(loc) << "--router-aux-loss-coef must be 0 (none) or positive, "
                      "got "
                   << c.routerAuxLossCoef;
    return failure();
  }
  s.experts = c.experts;
  s.topK = c.topK;
  s.auxLossCoef = c.routerAuxLossCoef;
  int64_t slots = c.seq * c.topK;
  double wanted = std::min(
      double(c.seq),
      std::ceil(double(slots) / double(c.experts) * c.capacityFactor));
  s.capacity = c.capacityFactor == 0
                   ? c.seq
                   : std::clamp<int64_t>(int64_t(wanted), 1, c.seq);
  return success();
}

static FailureOr<Sizes> checkSizes(MLIRContext &ctx, const ModelConfig &c) {
  Location loc = UnknownLoc::get(&ctx);
  bool transformer = c.family != "mlp";
  bool llamaLike = c.family == "llama" || c.family == "mixtral";
  struct Named {
    const char *flag;
    int64_t value;
    bool used;
  } positive[] = {
      {"--layers", c.layers, true},      {"--hidden", c.hidden, true},
      {"--heads", c.heads, transformer}, {"--vocab", c.vocab, transformer},
      {"--seq", c.seq, transformer},     {"--batch", c.batch, true}};
  for (const Named &n : positive)
    if (n.used && n.value < 1) {
      emitError(loc) << n.flag << " must be positive, got " << n.value;
      return failure();
    }
  // Each layer is about 30 ops and 5 KB of IR text: beyond this the tool
  // would run for minutes and fill memory with a model no one trains.
  constexpr int64_t kMaxLayers = 100000;
  if (c.layers > kMaxLayers) {
    emitError(loc) << "--layers " << c.layers << " is more than " << kMaxLayers
                   << " layers";
    return failure();
  }
  if (c.ffn < 0) {
    emitError(loc) << "--ffn must be positive (or 0 for the default), got "
                   << c.ffn;
    return failure();
  }
  if (c.kvHeads < 0) {
    emitError(loc) << "--kv-heads must be positive (or 0 for --heads), got "
                   << c.kvHeads;
    return failure();
  }
  if (c.kvHeads && !llamaLike) {
    emitError(loc) << "--kv-heads applies to --model llama and mixtral only";
    return failure();
  }

  Sizes s;
  s.layers = c.layers;
  s.hidden = c.hidden;
  s.heads = c.heads;
  s.kvHeads = c.kvHeads ? c.kvHeads : c.heads;
  s.vocab = c.vocab;
  s.seq = c.seq;
  s.batch = c.batch;
  s.headDim = 1;
  // Every tensor's element count, and the parameter count, must fit in 64
  // bits: bound them by products of the largest size.
  auto product = [](std::initializer_list<int64_t> factors) {
    std::optional<int64_t> p = 1;
    for (int64_t f : factors)
      if (p)
        p = llvm::checkedMul<int64_t>(*p, f);
    return p;
  };
  int64_t largest = std::max(
      {c.hidden, c.ffn, transformer ? c.vocab : 1, transformer ? c.seq : 1});
  // The default FFN sizes are at most 4 * hidden; (layers + 2) * 16 <=
  // layers * 48 weight matrices of at most (4 * largest)^2 elements bound
  // the parameter count.
  if (largest > INT64_MAX / 4 ||
      !product({4 * largest, 4 * largest, c.layers, 48}) ||
      !product({c.batch, transformer ? c.seq : 1, 4 * largest})) {
    emitError(loc) << "the sizes are too large: some tensor or the parameter "
                      "count would have more than 2^63 elements";
    return failure();
  }
  if (llamaLike)
    s.ffn = c.ffn ? c.ffn : (2 * c.hidden + 2 * c.hidden / 3 + 7) / 8 * 8;
  else
    s.ffn = c.ffn ? c.ffn : 4 * c.hidden;

  if (transformer) {
    if (c.hidden % c.heads) {
      emitError(loc) << "--hidden " << c.hidden
                     << " is not divisible by --heads " << c.heads;
      return failure();
    }
    s.headDim = c.hidden / c.heads;
  }
  if (llamaLike) {
    if (s.heads % s.kvHeads) {
      emitError(loc) << "--heads " << s.heads
                     << " is not divisible by --kv-heads " << s.kvHeads;
      return failure();
    }
    if (s.headDim % 2) {
      emitError(loc) << "the head size " << s.headDim << " (--hidden "
                     << c.hidden << " / --heads " << c.heads
                     << ") must be even for rotary embeddings";
      return failure();
    }
  }
  if (c.family == "mixtral" && failed(checkExperts(loc, c, s)))
    return failure();
  return s;
}

OwningOpRef<ModuleOp>
partition::import::generateModel(MLIRContext &context,
                                 const ModelConfig &config, Weights &weights) {
  using Generator = OwningOpRef<ModuleOp> (*)(ModelBuilder &, const Sizes &);
  static const std::pair<StringRef, Generator> families[] = {
      {"gpt", buildGpt},
      {"llama", buildLlama},
      {"mixtral", buildMixtral},
      {"mlp", buildMlp}};
  Generator generate = nullptr;
  for (auto [name, g] : families)
    if (config.family == name)
      generate = g;
  if (!generate) {
    emitError(UnknownLoc::get(&context))
        << "unknown model family \"" << config.family
        << "\"; known families: gpt, llama, mixtral, mlp";
    return nullptr;
  }
  FailureOr<Sizes> sizes = checkSizes(context, config);
  if (failed(sizes))
    return nullptr;
  context.getOrLoadDialect<part::PartDialect>();
  context.getOrLoadDialect<func::FuncDialect>();

  ModelBuilder builder(context, config, config.family);
  OwningOpRef<ModuleOp> module = generate(builder, *sizes);
  if (!config.shapesOnly && failed(builder.fillWeights(weights)))
    return nullptr;
  return module;
}
