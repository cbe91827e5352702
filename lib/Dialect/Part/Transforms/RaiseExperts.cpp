//===- RaiseExperts.cpp - experts gathered by id raised to dispatch -------===//
//
// Hugging Face's `batched_mm` experts (transformers 5; what the dynamo and
// TorchScript exporters can trace) repeat each token over its K slots, read
// every slot's expert weights with a gather at the router's top-k expert
// ids, and take one matrix-vector product per slot:
//
//   w   = gather(W [E, P, Q], ids [T])        T = N * K slots
//   y   = batch_matmul(w, x [T, Q, 1])        -> [T, P, 1]
//
// The expert weights are then a run-time gather, which no plan can split
// over the experts. The same products over the experts' capacity buffers:
//
//   buf = expert_dispatch(x as [G, S, K, Q], ids as [G, S, K])  [E, G, C, Q]
//   y   = combine(batch_matmul(buf as [E, G * C, Q], W) as [E, G, C, P])
//
// Each slot's row goes to its expert's buffer and back; the product of a
// row with its expert's weights is the same product. Groups are the
// sequences of the batch (G = batch, S = sequence: found through the
// reshapes above the router), and C = S: the top-k ids of a token are
// distinct, so no expert gets more than S slots of a group and nothing is
// dropped. The routing weights, their softmax and renormalisation, and the
// sum over K stay as exported.
//
// After the patterns converge, fuseExpertChains joins the layers of one
// expert MLP: a dispatch of values computed slot by slot from a combine of
// the same routing (the gate/up split, SiLU, products) computes them on the
// combined buffer instead. Those ops keep a zero row zero, and every row a
// dispatch leaves unfilled is zero, so the buffer is exactly the dispatch's.
//
//===----------------------------------------------------------------------===//

#include "RaiseExperts.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "part-raise"

using namespace mlir;
using namespace partition::part;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `v` seen through any `part.reshape`s.
static Value throughReshapes(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  return v;
}

/// True when `v` is a splat integer `part.constant` equal to `value`.
static bool isIntSplat(Value v, int64_t value) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  return dense && dense.isSplat() &&
         dense.getSplatValue<APInt>().getSExtValue() == value;
}

/// True when `v` is an integer `part.constant`.
static bool isIntConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  return constant && isa<DenseIntElementsAttr>(constant.getValue());
}

/// `a` where `v` is the importer's shift of negative gather indices,
/// `a + min(max(0 - a, 0), 1) * d` (ONNX counts them from the end), else
/// `v`. For `a >= 0` (expert ids from part.top_k) the shift is 0.
static Value peelIndexShift(Value v) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return v;
  for (int side = 0; side < 2; ++side) {
    Value a = add->getOperand(side);
    if (a.getType() != v.getType())
      continue;
    auto mul = add->getOperand(1 - side).getDefiningOp<MulOp>();
    if (!mul)
      continue;
    for (int m = 0; m < 2; ++m) {
      auto min = mul->getOperand(m).getDefiningOp<MinOp>();
      if (!min || !isIntConstant(mul->getOperand(1 - m)) ||
          !isIntSplat(min.getRhs(), 1))
        continue;
      auto max = min.getLhs().getDefiningOp<MaxOp>();
      if (!max || !isIntSplat(max.getRhs(), 0))
        continue;
      auto negated = max.getLhs().getDefiningOp<SubOp>();
      if (negated && negated.getRhs() == a && isIntSplat(negated.getLhs(), 0))
        return a;
    }
  }
  return v;
}

namespace {
/// What a gather of expert weights was read with: the router's top-k, and
/// the groups (sequences) its N = G * S tokens make.
struct Routing {
  TopKOp topK;
  int64_t groups = 0, seq = 0, k = 0;
};
} // namespace

/// The batch of the router's N tokens: walking up from the router's input
/// (through reshapes, the softmax, casts, the router's matmul and
/// elementwise ops), the first value of rank >= 3 whose leading dimensions
/// hold N tokens gives the groups as its first dimension.
static std::optional<int64_t> findGroups(Value v, int64_t tokens) {
  for (int step = 0; step < 16 && v; ++step) {
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    if (shape.size() >= 3 && product(shape.drop_back()) == tokens)
      return shape.front();
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      if (matmul.getTransposeA())
        return std::nullopt;
      v = matmul.getLhs();
      continue;
    }
    if (!isa<ReshapeOp, SoftmaxOp, CastOp, NegOp, AddOp, SubOp, MulOp, DivOp,
             SigmoidOp, ExpOp, TanhOp>(op))
      return std::nullopt;
    // The operand of the result's shape (a bias or scale broadcasts).
    Value next;
    for (Value operand : op->getOperands())
      if (isa<ReshapeOp>(op) || tensorType(operand).getShape() ==
                                    tensorType(op->getResult(0)).getShape()) {
        next = operand;
        break;
      }
    v = next;
  }
  return std::nullopt;
}

/// The routing of gather indices `ids` into `experts` expert weights: the
/// indices of a part.top_k over `experts` scores, reshaped (and shifted for
/// negative values, a no-op on them).
static FailureOr<Routing> routingOf(Value ids, int64_t experts,
                                    std::string &why) {
  Value source = throughReshapes(peelIndexShift(throughReshapes(ids)));
  auto topK = source.getDefiningOp<TopKOp>();
  if (!topK || source != topK.getIndices()) {
    why = "the gather indices are not a part.top_k's indices";
    return failure();
  }
  if (tensorType(topK.getInput()).getShape().back() != experts) {
    why = "the top-k chooses among " +
          std::to_string(tensorType(topK.getInput()).getShape().back()) +
          " scores, not the " + std::to_string(experts) + " experts";
    return failure();
  }
  Routing r;
  r.topK = topK;
  ArrayRef<int64_t> shape = tensorType(source).getShape();
  r.k = shape.back();
  int64_t tokens = product(shape) / r.k;
  std::optional<int64_t> groups;
  if (shape.size() >= 3)
    groups = shape.front();
  else
    groups = findGroups(topK.getInput(), tokens);
  if (!groups) {
    why = "no value above the router holds its " + std::to_string(tokens) +
          " tokens as [batch, sequence, ...]";
    return failure();
  }
  r.groups = *groups;
  r.seq = tokens / *groups;
  return r;
}

namespace {
/// Inserts ops after the root's builder position, each with the root's
/// layer.
struct Emitter {
  PatternRewriter &b;
  Location loc;
  Attribute layer;

  Value tag(Operation *op) {
    if (layer)
      op->setAttr(PartDialect::getLayerAttrName(), layer);
    return op->getResult(0);
  }
  /// `v` reshaped (a reshape of a reshape reads the first one's input).
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    auto type = tensorType(v).clone(shape);
    if (auto inner = v.getDefiningOp<ReshapeOp>())
      v = inner.getInput();
    if (type == v.getType())
      return v;
    return tag(ReshapeOp::create(b, loc, type, v));
  }
  /// The routing's indices as [G, S, K], right after the top-k: one
  /// reshape for every product of the routing.
  Value indices(Routing r) {
    Value all = r.topK.getIndices();
    auto type = tensorType(all).clone({r.groups, r.seq, r.k});
    for (Operation *user : all.getUsers())
      if (isa<ReshapeOp>(user) && user->getResult(0).getType() == type &&
          user->getBlock() == r.topK->getBlock()) {
        if (user->getPrevNode() != r.topK)
          b.moveOpAfter(user, r.topK);
        return user->getResult(0);
      }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(r.topK);
    return reshape(all, type.getShape());
  }
};

/// The expert product found at a batch matmul: the stacked weights, the
/// per-slot vectors, and the orientation of the product.
struct ExpertProduct {
  Value weights, vectors;
  Routing routing;
  /// The weights' rows and columns in the product: [E, P, Q] (`transpose`)
  /// or [E, Q, P], P outputs from Q inputs.
  bool transposeWeights = false;
  int64_t inputs = 0, outputs = 0;
};
} // namespace

/// Matches `root` as one matrix-vector product per slot with the slot's
/// expert weights: one operand a gather of [E, d1, d2] weights along
/// dimension 0 at top-k expert ids, the other a vector per slot.
static FailureOr<ExpertProduct>
matchExpertProduct(BatchMatmulOp root, std::string &why, bool &candidate) {
  for (int side = 0; side < 2; ++side) {
    auto gather = root->getOperand(side).getDefiningOp<GatherOp>();
    if (!gather || gather.getAxis() != 0 ||
        tensorType(gather.getData()).getRank() != 3)
      continue;
    candidate = true;
    ArrayRef<int64_t> w = tensorType(gather.getData()).getShape();
    FailureOr<Routing> routing = routingOf(gather.getIndices(), w[0], why);
    if (failed(routing))
      return failure();
    ExpertProduct p;
    p.weights = gather.getData();
    p.vectors = root->getOperand(1 - side);
    p.routing = *routing;
    ArrayRef<int64_t> x = tensorType(p.vectors).getShape().take_back(2);
    bool ta = root.getTransposeA(), tb = root.getTransposeB();
    // Per slot: op(W_e) [P, Q] times a column [Q, 1], or a row [1, Q]
    // times op(W_e) [Q, P]. Over the buffers, rows [E, G * C, Q] times
    // W_e transposed or not.
    bool weightsLeft = side == 0;
    bool weightsTransposed = weightsLeft ? ta : tb;
    bool vectorTransposed = weightsLeft ? tb : ta;
    // The vector's free dimension (1) and its length Q.
    int64_t freeDim = (weightsLeft != vectorTransposed) ? x[1] : x[0];
    p.inputs = (weightsLeft != vectorTransposed) ? x[0] : x[1];
    if (freeDim != 1) {
      why = "the other operand is not one vector per slot";
      return failure();
    }
    p.outputs = (weightsLeft != weightsTransposed) ? w[1] : w[2];
    p.transposeWeights = weightsLeft ? !weightsTransposed : weightsTransposed;
    return p;
  }
  why = "no operand is a gather of [experts, rows, columns] weights";
  return failure();
}

namespace {
struct RaiseExpertProduct : OpRewritePattern<BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchMatmulOp root,
                                PatternRewriter &rewriter) const override {
    std::string why;
    bool candidate = false;
    FailureOr<ExpertProduct> p = matchExpertProduct(root, why, candidate);
    if (failed(p))
      return rewriter.notifyMatchFailure(root, why);
    const Routing &r = p->routing;
    int64_t experts = tensorType(p->weights).getDimSize(0);
    int64_t capacity = r.seq;
    Type element = tensorType(root).getElementType();
    rewriter.setInsertionPoint(root);
    Emitter e{rewriter, root.getLoc(),
              root->getAttr(PartDialect::getLayerAttrName())};
    Value indices = e.indices(r);
    Value slots = e.reshape(p->vectors, {r.groups, r.seq, r.k, p->inputs});
    Value buffer = e.tag(ExpertDispatchOp::create(
        rewriter, e.loc,
        RankedTensorType::get({experts, r.groups, capacity, p->inputs},
                              element),
        slots, indices));
    Value rows = e.reshape(buffer, {experts, r.groups * capacity, p->inputs});
    Value product = e.tag(
        BatchMatmulOp::create(rewriter, e.loc, rows, p->weights,
                              /*transpose_a=*/false, p->transposeWeights));
    Value out = e.reshape(product, {experts, r.groups, capacity, p->outputs});
    Value combined = e.tag(ExpertCombineOp::create(
        rewriter, e.loc,
        RankedTensorType::get({r.groups, r.seq, r.k, p->outputs}, element), out,
        indices));
    Value result = e.reshape(combined, tensorType(root).getShape());
    LLVM_DEBUG(llvm::dbgs()
               << "part-raise: expert product at " << root.getLoc() << "\n");
    if (Operation *def = result.getDefiningOp())
      for (NamedAttribute attr : root->getDiscardableAttrs())
        def->setAttr(attr.getName(), attr.getValue());
    rewriter.replaceOp(root, result);
    return success();
  }
};
} // namespace

std::string partition::part::detail::whyNotExpertProduct(BatchMatmulOp op) {
  std::string why;
  bool candidate = false;
  if (succeeded(matchExpertProduct(op, why, candidate)) || !candidate)
    return "";
  return why;
}

void partition::part::detail::populateRaiseExpertPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseExpertProduct>(patterns.getContext());
}

//===----------------------------------------------------------------------===//
// Joining the layers of an expert MLP
//===----------------------------------------------------------------------===//

/// The number of leading dimensions of `shape` that hold `slots` slots, or
/// nullopt.
static std::optional<size_t> slotPrefix(ArrayRef<int64_t> shape,
                                        int64_t slots) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    n *= shape[i];
    if (n == slots)
      return i + 1;
    if (n > slots)
      return std::nullopt;
  }
  return std::nullopt;
}

/// True when `v`, a value over expert buffers of `rows` rows (E x G x C)
/// in its leading dimensions, is zero in every row a dispatch left
/// unfilled: a dispatch, a product of such rows with weights, and
/// slot-wise ops that keep zero rows zero, through reshapes that keep the
/// rows.
static bool isZeroPadded(Value v, int64_t rows) {
  for (int step = 0; step < 32; ++step) {
    std::optional<size_t> prefix = slotPrefix(tensorType(v).getShape(), rows);
    Operation *op = v.getDefiningOp();
    if (!prefix || !op)
      return false;
    if (isa<ExpertDispatchOp>(op))
      return true;
    if (auto product = dyn_cast<BatchMatmulOp>(op)) {
      // Rows [E, G * C] times each expert's weights.
      if (product.getTransposeA() || tensorType(v).getRank() != 3 ||
          *prefix != 2)
        return false;
      v = product.getLhs();
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      ArrayRef<int64_t> in = tensorType(slice.getInput()).getShape();
      if (in.take_front(*prefix) !=
          tensorType(v).getShape().take_front(*prefix))
        return false;
      v = slice.getInput();
    } else if (isa<ReshapeOp, SiluOp, GeluOp, ReluOp, TanhOp, NegOp>(op)) {
      v = op->getOperand(0);
    } else if (isa<MulOp>(op)) {
      return op->getOperand(0).getType() == v.getType() &&
             op->getOperand(1).getType() == v.getType() &&
             (isZeroPadded(op->getOperand(0), rows) ||
              isZeroPadded(op->getOperand(1), rows));
    } else {
      return false;
    }
  }
  return false;
}

namespace {
/// Rebuilds slot-wise computations on the expert buffers of one routing.
class BufferRebuilder {
public:
  BufferRebuilder(OpBuilder &b, ExpertDispatchOp dispatch)
      : b(b), source(throughReshapes(dispatch.getIndices())),
        buffer(tensorType(dispatch)),
        slots(product(tensorType(dispatch.getIndices()).getShape())) {}

  /// `v` (slots first, then features) computed on the buffers: [E, G, C]
  /// followed by `v`'s feature dimensions.
  FailureOr<Value> rebuild(Value v) {
    auto it = done.find(v);
    if (it != done.end())
      return it->second;
    FailureOr<Value> result = rebuildOnce(v);
    if (succeeded(result))
      done[v] = *result;
    return result;
  }

private:
  FailureOr<Value> rebuildOnce(Value v);

  /// The buffer type of a slot-major type.
  std::optional<RankedTensorType> bufferType(RankedTensorType type) {
    std::optional<size_t> prefix = slotPrefix(type.getShape(), slots);
    if (!prefix)
      return std::nullopt;
    SmallVector<int64_t> shape(buffer.getShape().take_front(3));
    llvm::append_range(shape, type.getShape().drop_front(*prefix));
    return type.clone(shape);
  }

  Value tagged(Operation *op, Operation *like) {
    if (Attribute layer = like->getAttr(PartDialect::getLayerAttrName()))
      op->setAttr(PartDialect::getLayerAttrName(), layer);
    return op->getResult(0);
  }

  OpBuilder &b;
  Value source;
  RankedTensorType buffer;
  int64_t slots;
  llvm::DenseMap<Value, Value> done;
};
} // namespace

FailureOr<Value> BufferRebuilder::rebuildOnce(Value v) {
  auto type = tensorType(v);
  std::optional<RankedTensorType> target = bufferType(type);
  Operation *op = v.getDefiningOp();
  if (!target || !op)
    return failure();
  Location loc = op->getLoc();
  if (auto combine = dyn_cast<ExpertCombineOp>(op)) {
    Value input = combine.getInput();
    if (throughReshapes(combine.getIndices()) != source ||
        tensorType(input).getShape().take_front(3) !=
            buffer.getShape().take_front(3) ||
        !isZeroPadded(input, product(buffer.getShape().take_front(3))))
      return failure();
    return input;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    FailureOr<Value> input = rebuild(reshape.getInput());
    if (failed(input))
      return failure();
    Value from = *input;
    if (auto inner = from.getDefiningOp<ReshapeOp>())
      from = inner.getInput();
    if (from.getType() == *target)
      return from;
    return tagged(ReshapeOp::create(b, loc, *target, from), op);
  }
  if (isa<SiluOp, GeluOp, ReluOp, TanhOp, NegOp>(op)) {
    FailureOr<Value> input = rebuild(op->getOperand(0));
    if (failed(input))
      return failure();
    Operation *copy = b.clone(*op);
    copy->setOperand(0, *input);
    copy->getResult(0).setType(*target);
    return copy->getResult(0);
  }
  if (auto mul = dyn_cast<MulOp>(op)) {
    if (mul.getLhs().getType() != type || mul.getRhs().getType() != type)
      return failure();
    FailureOr<Value> lhs = rebuild(mul.getLhs());
    FailureOr<Value> rhs = failed(lhs) ? lhs : rebuild(mul.getRhs());
    if (failed(rhs))
      return failure();
    return tagged(MulOp::create(b, loc, *target, *lhs, *rhs), op);
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Features only: every slot dimension whole.
    std::optional<size_t> prefix = slotPrefix(type.getShape(), slots);
    ArrayRef<int64_t> in = tensorType(slice.getInput()).getShape();
    if (in.take_front(*prefix) != type.getShape().take_front(*prefix))
      return failure();
    SmallVector<int64_t> offsets = {0, 0, 0}, strides = {1, 1, 1};
    ArrayRef<int64_t> given = slice.getOffsets();
    std::optional<ArrayRef<int64_t>> steps = slice.getStrides();
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t stride = steps ? (*steps)[d] : 1;
      if (d < *prefix && (given[d] != 0 || stride != 1))
        return failure();
      if (d >= *prefix) {
        offsets.push_back(given[d]);
        strides.push_back(stride);
      }
    }
    FailureOr<Value> input = rebuild(slice.getInput());
    if (failed(input) || tensorType(*input).getRank() != target->getRank())
      return failure();
    DenseI64ArrayAttr stepAttr;
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
      stepAttr = b.getDenseI64ArrayAttr(strides);
    return tagged(SliceOp::create(b, loc, *target, *input, offsets, stepAttr),
                  op);
  }
  return failure();
}

/// The tokens [G, S, H] when a dispatch's per-slot values are each token
/// repeated over its K slots: seen through reshapes, a broadcast that
/// stretches one dimension from 1 to K, with the N tokens before it and the
/// H features after it (torch's repeat_interleave as the dynamo exporter
/// writes it, [N, 1, H] to [N, K, H]; the TorchScript exporter's Tile,
/// [N, 1, 1, H] to [N, K, 1, H]).
static Value repeatedTokens(OpBuilder &b, ExpertDispatchOp dispatch) {
  auto repeat =
      throughReshapes(dispatch.getInput()).getDefiningOp<BroadcastOp>();
  if (!repeat)
    return {};
  ArrayRef<int64_t> slots = tensorType(dispatch.getInput()).getShape();
  ArrayRef<int64_t> from = tensorType(repeat.getInput()).getShape();
  ArrayRef<int64_t> to = tensorType(repeat).getShape();
  int64_t tokens = slots[0] * slots[1], k = slots[2], features = slots[3];
  if (from.size() != to.size())
    return {};
  SmallVector<size_t> stretched;
  for (size_t d = 0; d < to.size(); ++d)
    if (from[d] != to[d])
      stretched.push_back(d);
  if (stretched.size() != 1)
    return {};
  size_t d = stretched.front();
  if (from[d] != 1 || to[d] != k || product(to.take_front(d)) != tokens ||
      product(to.drop_front(d + 1)) != features)
    return {};
  b.setInsertionPoint(dispatch);
  Value token = throughReshapes(repeat.getInput());
  auto type = tensorType(token).clone({slots[0], slots[1], features});
  if (token.getType() == type)
    return token;
  auto reshape = ReshapeOp::create(b, dispatch.getLoc(), type, token);
  if (Attribute layer = dispatch->getAttr(PartDialect::getLayerAttrName()))
    reshape->setAttr(PartDialect::getLayerAttrName(), layer);
  return reshape;
}

void partition::part::detail::fuseExpertChains(ModuleOp module) {
  SmallVector<ExpertDispatchOp> dispatches;
  module.walk([&](ExpertDispatchOp op) { dispatches.push_back(op); });
  OpBuilder b(module.getContext());
  bool changed = false;
  for (ExpertDispatchOp dispatch : dispatches) {
    if (tensorType(dispatch.getInput()).getRank() != 4)
      continue;
    b.setInsertionPoint(dispatch);
    BufferRebuilder rebuilder(b, dispatch);
    FailureOr<Value> fused = rebuilder.rebuild(dispatch.getInput());
    if (succeeded(fused) && fused->getType() == dispatch.getType()) {
      dispatch.getResult().replaceAllUsesWith(*fused);
      changed = true;
      continue;
    }
    if (Value tokens = repeatedTokens(b, dispatch)) {
      dispatch.getInputMutable().assign(tokens);
      changed = true;
    }
  }
  if (!changed)
    return;
  // What the joined chains left unused.
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<PartDialect>(op->getDialect()))
      ops.push_back(op);
  });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}
