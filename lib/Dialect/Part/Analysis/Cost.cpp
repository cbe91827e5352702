//===- Cost.cpp - what a program moves, holds and computes per device -----===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/runtime/Cluster.h"

#include <initializer_list>
#include <limits>

using namespace mlir;
using namespace partition::part;

namespace {

/// Bytes of a value the verifier has checked (its byte size fits int64).
int64_t bytesOf(Type type) {
  return *getTensorBytes(cast<RankedTensorType>(type));
}

bool isCollective(Operation *op) {
  return isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, AllSliceOp,
             CollectivePermuteOp>(op);
}

int64_t elementsOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t ? t.getNumElements() : 0;
}

/// a * b * ..., saturated at INT64_MAX: the verifier bounds each tensor's
/// elements and bytes, not the FLOPs of an op (2 M N K of a matmul of two
/// 2^31 x 2^31 operands is 2^94) nor the bytes of all its operands.
int64_t saturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product))
      return std::numeric_limits<int64_t>::max();
  return product;
}
int64_t saturatingSum(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum)
             ? std::numeric_limits<int64_t>::max()
             : sum;
}

} // namespace

std::optional<CollectiveCost> partition::part::collectiveCost(Operation *op,
                                                              MeshAttr mesh) {
  if (!isCollective(op))
    return std::nullopt;
  auto axesAttr = op->getAttrOfType<ArrayAttr>("axes");
  if (!axesAttr)
    return std::nullopt;
  CollectiveCost c;
  c.kind = op->getName().stripDialect().str();
  for (Attribute a : axesAttr)
    c.axes.push_back(cast<StringAttr>(a));
  c.groupSize = mesh.getGroupSize(c.axes);
  int64_t n = c.groupSize;
  c.operandBytes = bytesOf(op->getOperand(0).getType());
  int64_t out = bytesOf(op->getResult(0).getType());
  auto ring = [&](runtime::Ring kind, int64_t bytes) {
    runtime::RingCost r = runtime::ringCost(kind, double(bytes), n);
    c.movedBytes = int64_t(r.movedBytes);
    c.steps = r.steps;
  };
  if (isa<AllReduceOp>(op))
    ring(runtime::Ring::AllReduce, c.operandBytes);
  else if (isa<AllGatherOp>(op))
    ring(runtime::Ring::AllGather, out);
  else if (isa<ReduceScatterOp, AllToAllOp>(op))
    ring(runtime::Ring::ReduceScatter, c.operandBytes);
  else if (isa<CollectivePermuteOp>(op)) {
    c.movedBytes = c.operandBytes;
    c.steps = 1;
  }
  return c;
}

ResidentBytes partition::part::residentBytes(func::FuncOp function,
                                             MeshAttr mesh) {
  ResidentBytes r;
  for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        index, PartDialect::getRoleAttrName());
    // A pipeline stage's accumulator: arena, not an input.
    if (function.getArgAttr(index, PartDialect::getSlotAttrName()))
      continue;
    if (role && role.getValue() == ArgRole::Parameter) {
      r.parameters += bytesOf(type);
      int64_t elements = type.getNumElements();
      // The model's own elements: a padded parameter counts unpadded.
      if (auto logical = function.getArgAttrOfType<DenseI64ArrayAttr>(
              index, PartDialect::getLogicalShapeAttrName())) {
        elements = 1;
        for (int64_t d : logical.asArrayRef())
          elements *= d;
      } else if (auto sharding = function.getArgAttrOfType<ShardingAttr>(
                     index, PartDialect::getShardingAttrName())) {
        elements = 1;
        for (int64_t d : sharding.getGlobalShape(type.getShape(), mesh))
          elements *= d;
      }
      r.globalParameterElements += elements;
    } else if (role && role.getValue() == ArgRole::State) {
      r.state += bytesOf(type);
    } else {
      r.inputs += bytesOf(type);
    }
  }
  function.walk([&](Operation *op) {
    if (auto index =
            op->getAttrOfType<IntegerAttr>(PartDialect::getGradientAttrName()))
      r.gradients += bytesOf(op->getOperand(index.getInt()).getType());
  });
  // Liveness in program order over the body's op results.
  if (function.isDeclaration())
    return r;
  Block &body = function.getBody().front();
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value v : op.getOperands())
      if (isa<OpResult>(v))
        lastUse[v] = &op;
  int64_t live = 0;
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      break;
    for (Value v : op.getResults())
      if (isa<RankedTensorType>(v.getType()))
        live += bytesOf(v.getType());
    r.livePeak = std::max(r.livePeak, live);
    llvm::SmallPtrSet<Value, 4> freed;
    for (Value v : op.getOperands())
      if (lastUse.lookup(v) == &op && isa<OpResult>(v) &&
          !isa<func::ReturnOp>(op) && freed.insert(v).second)
        live -= bytesOf(v.getType());
    for (Value v : op.getResults())
      if (v.use_empty() && isa<RankedTensorType>(v.getType()))
        live -= bytesOf(v.getType());
  }
  return r;
}

bool partition::part::isFusible(Operation *op) {
  return isa<PartDialect>(op->getDialect()) && op->getNumRegions() == 0 &&
         !isa<MatmulOp, BatchMatmulOp, AttentionOp, AttentionBlockOp,
              AttentionGradOp, ConstantOp,
              ReshapeOp,
              AxisIndexOp, SendOp, RecvOp, ShardingConstraintOp>(op) &&
         !isCollective(op);
}

int64_t partition::part::memoryBytesOf(Operation *op, bool fuse) {
  auto fusedAway = [&](Value v) {
    if (!fuse || !v.hasOneUse())
      return false;
    Operation *def = v.getDefiningOp();
    Operation *user = *v.getUsers().begin();
    return def && isFusible(def) && isFusible(user);
  };
  int64_t bytes = 0;
  // A slice reads only the part it returns (a bucket's or a flat gather's
  // slices would otherwise each be charged the whole buffer).
  auto read = [&](Value v) {
    return isa<SliceOp>(op) ? bytesOf(op->getResult(0).getType())
                            : bytesOf(v.getType());
  };
  for (Value v : op->getOperands())
    if (isa<RankedTensorType>(v.getType()) && !fusedAway(v))
      bytes = saturatingSum(bytes, read(v));
  for (Value v : op->getResults())
    if (isa<RankedTensorType>(v.getType()) && !fusedAway(v))
      bytes = saturatingSum(bytes, bytesOf(v.getType()));
  return saturatingSum(bytes, attentionScratchBytes(op));
}

int64_t partition::part::attentionScratchBytes(Operation *op) {
  // The kernels hold a block of scores at a time in memory, not on chip:
  // per score, forward writes the f32 scores, the softmax reads them and
  // writes the probabilities (in the operands' type) that the second
  // product reads; backward writes and reads the f32 scores and the f32
  // probabilities' gradient, writes the probabilities and reads them twice
  // (p^T do, ds), and writes ds and reads it twice (ds k, ds^T q).
  bool grad = isa<AttentionGradOp>(op);
  if (!grad && !isa<AttentionOp, AttentionBlockOp>(op))
    return 0;
  auto q = cast<RankedTensorType>(op->getOperand(0).getType());
  auto k = cast<RankedTensorType>(op->getOperand(1).getType());
  int64_t elt = (q.getElementTypeBitWidth() + 7) / 8;
  int64_t scores = saturatingProduct(
      {q.getShape()[0], q.getShape()[1], q.getShape()[2], k.getShape()[2]});
  return saturatingProduct({scores, grad ? 16 + 6 * elt : 8 + 2 * elt});
}

int64_t partition::part::flopsOf(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    // [..., M, K] x [K, N] (or transposed): 2 M N K per batch element.
    auto a = cast<RankedTensorType>(matmul.getLhs().getType());
    int64_t k = matmul.getTransposeA() ? a.getShape()[a.getRank() - 2]
                                       : a.getShape().back();
    return saturatingProduct({2, k, elementsOf(matmul.getResult().getType())});
  }
  if (auto bmm = dyn_cast<BatchMatmulOp>(op)) {
    auto a = cast<RankedTensorType>(bmm.getLhs().getType());
    int64_t k = bmm.getTransposeA() ? a.getShape()[a.getRank() - 2]
                                    : a.getShape().back();
    return saturatingProduct({2, k, elementsOf(bmm.getResult().getType())});
  }
  if (isa<AttentionOp, AttentionBlockOp>(op)) {
    // scores = Q K^T: [B, H, Sq, Sk] from D; out = P V: [B, H, Sq, Dv] from Sk.
    auto q = cast<RankedTensorType>(op->getOperand(0).getType());
    auto k = cast<RankedTensorType>(op->getOperand(1).getType());
    int64_t b = q.getShape()[0], h = q.getShape()[1], sq = q.getShape()[2],
            d = q.getShape()[3], sk = k.getShape()[2];
    int64_t dv =
        cast<RankedTensorType>(op->getResult(0).getType()).getShape()[3];
    return saturatingSum(saturatingProduct({2, b, h, sq, sk, d}),
                         saturatingProduct({2, b, h, sq, sk, dv}));
  }
  if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    // Per query head: q k^T again (D), dp = do v^T and dv = p^T do (Dv
    // each), dq = ds k and dk = ds^T q (D each).
    auto q = cast<RankedTensorType>(grad.getQuery().getType());
    auto v = cast<RankedTensorType>(grad.getValue().getType());
    int64_t b = q.getShape()[0], h = q.getShape()[1], sq = q.getShape()[2],
            d = q.getShape()[3], dv = v.getShape()[3],
            sk = cast<RankedTensorType>(grad.getKey().getType()).getShape()[2];
    return saturatingSum(saturatingProduct({6, b, h, sq, sk, d}),
                         saturatingProduct({4, b, h, sq, sk, dv}));
  }
  if (isa<ConstantOp, ReshapeOp, TransposeOp, BroadcastOp, SliceOp, ConcatOp,
          PadOp, GatherOp, ExpertDispatchOp, ExpertCombineOp,
          ShardingConstraintOp, AxisIndexOp>(op) ||
      isCollective(op))
    return 0;
  int64_t elements = 0;
  for (Type t : op->getOperandTypes())
    elements = std::max(elements, elementsOf(t));
  for (Type t : op->getResultTypes())
    elements = std::max(elements, elementsOf(t));
  return elements;
}
