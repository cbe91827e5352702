//===- ModelFlops.cpp - the model FLOPs of one step of the global program -===//
//
// Counted before partitioning so that MFU does not depend on it: see
// PartModelFlopsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-model-flops"

namespace partition::part {
#define GEN_PASS_DEF_PARTMODELFLOPSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// Counts in 128 bits: a large model's step passes 2^63 FLOPs (405B
/// parameters on 16M tokens: 4e19), and so can one attention's products.
constexpr unsigned kCountBits = 128;

/// The product of `factors`, times 2 (a multiply and an add); none when it
/// passes 2^128.
std::optional<llvm::APInt> twice(ArrayRef<int64_t> factors) {
  llvm::APInt result(kCountBits, 2);
  for (int64_t f : factors) {
    bool overflow = false;
    result = result.umul_ov(llvm::APInt(kCountBits, uint64_t(f)), overflow);
    if (overflow)
      return std::nullopt;
  }
  return result;
}

int64_t productOf(ArrayRef<int64_t> shape) {
  int64_t p = 1;
  for (int64_t d : shape)
    p *= d; // verified: a tensor's elements fit in int64
  return p;
}

/// The products of `op` as the runtime's StepMetrics counts them: 2*M*N*K
/// of a matmul or batch matmul (times its batch), q k^T and p v of
/// attention; 0 for every other op. `failure` when it passes 2^128.
FailureOr<llvm::APInt> productFlops(Operation *op) {
  std::optional<llvm::APInt> flops = llvm::APInt(kCountBits, 0);
  auto matmul = [&](Value lhs, bool transposeA, Value result) {
    // lhs [..., M, K] (or [..., K, M]), result [..., M, N]: 2 K per result
    // element.
    auto a = cast<RankedTensorType>(lhs.getType());
    int64_t k = a.getShape()[a.getRank() - (transposeA ? 2 : 1)];
    flops = twice(
        {k, productOf(cast<RankedTensorType>(result.getType()).getShape())});
  };
  if (auto m = dyn_cast<MatmulOp>(op))
    matmul(m.getLhs(), m.getTransposeA(), m.getResult());
  else if (auto bmm = dyn_cast<BatchMatmulOp>(op))
    matmul(bmm.getLhs(), bmm.getTransposeA(), bmm.getResult());
  else if (auto attention = dyn_cast<AttentionOp>(op)) {
    // q [B, H, Sq, D], k [B, Hk, Sk, D], result [B, H, Sq, Dv]: every query
    // head takes q k^T (Sq x Sk x D) and p v (Sq x Dv x Sk); a causal mask
    // does not halve them, nor does a sliding window shrink them.
    ArrayRef<int64_t> q =
        cast<RankedTensorType>(attention.getQuery().getType()).getShape();
    int64_t sk =
        cast<RankedTensorType>(attention.getKey().getType()).getShape()[2];
    int64_t dv =
        cast<RankedTensorType>(attention.getResult().getType()).getShape()[3];
    std::optional<llvm::APInt> scores = twice({productOf(q), sk});
    std::optional<llvm::APInt> values = twice({q[0] * q[1] * q[2], sk, dv});
    bool overflow = !scores || !values;
    if (!overflow)
      flops = scores->uadd_ov(*values, overflow);
    if (overflow)
      flops = std::nullopt;
  }
  if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    // dp = do v^T and dv = p^T do (Sq x Sk x Dv each), dq = ds k and
    // dk = ds^T q (Sq x Sk x D each), per query head; its q k^T again is
    // recomputation, not model FLOPs.
    ArrayRef<int64_t> q =
        cast<RankedTensorType>(grad.getQuery().getType()).getShape();
    int64_t sk = cast<RankedTensorType>(grad.getKey().getType()).getShape()[2];
    int64_t dv =
        cast<RankedTensorType>(grad.getValue().getType()).getShape()[3];
    std::optional<llvm::APInt> scores = twice({2, productOf(q), sk});
    std::optional<llvm::APInt> values = twice({2, q[0] * q[1] * q[2], sk, dv});
    bool overflow = !scores || !values;
    if (!overflow)
      flops = scores->uadd_ov(*values, overflow);
    if (overflow)
      flops = std::nullopt;
  }
  if (!flops)
    return failure();
  return *flops;
}

struct PartModelFlopsPass
    : public partition::part::impl::PartModelFlopsPassBase<PartModelFlopsPass> {
  using PartModelFlopsPassBase::PartModelFlopsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool global = false;
    llvm::APInt total(kCountBits, 0);
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      global = true;
      WalkResult walk = function.walk([&](Operation *op) {
        // Recomputation repeats forward's products: not model FLOPs.
        if (op->hasAttr(PartDialect::getRecomputedAttrName()))
          return WalkResult::advance();
        FailureOr<llvm::APInt> flops = productFlops(op);
        bool overflow = failed(flops);
        if (!overflow)
          total = total.uadd_ov(*flops, overflow);
        // The attribute is a signed integer: 2^127 at most.
        if (overflow || total.isSignBitSet()) {
          op->emitOpError()
              << "brings the model FLOPs of one step past 2^" << kCountBits - 1;
          return WalkResult::interrupt();
        }
        LLVM_DEBUG(if (!flops->isZero()) llvm::dbgs()
                   << *flops << " FLOPs: " << *op << "\n");
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
    }
    if (!global)
      return;
    // i64 when the count fits (every model tested), i128 beyond.
    unsigned width = total.getActiveBits() < 64 ? 64 : kCountBits;
    Builder b(module.getContext());
    module->setAttr(
        PartDialect::getModelFlopsAttrName(),
        b.getIntegerAttr(b.getIntegerType(width), total.trunc(width)));
  }
};

} // namespace
