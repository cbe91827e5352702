//===- RaiseExperts.h - part-raise's mixture-of-experts rewrite -*- C++ -*-===//
//
// The experts of a mixture of experts as exporters write them (the expert
// weights gathered at each token's top-k expert ids, one matrix-vector
// product per token and slot) raised to part.expert_dispatch, batched
// matmuls over the experts and part.expert_combine. Private to part-raise.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_RAISEEXPERTS_H
#define PARTITION_DIALECT_PART_TRANSFORMS_RAISEEXPERTS_H

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace partition::part::detail {

/// Adds the pattern that rewrites a `part.batch_matmul` of gathered expert
/// weights and per-slot vectors into dispatch, a batched matmul over the
/// experts with the weights whole, and combine.
void populateRaiseExpertPatterns(mlir::RewritePatternSet &patterns);

/// Why `op`, a product with a gather of [E, rows, columns] weights along
/// dimension 0, is not raised ("" when it is not such a product or is
/// raised): for part-raise's `report`.
std::string whyNotExpertProduct(BatchMatmulOp op);

/// After the patterns converge: a dispatch of per-slot values computed from
/// a combine of the same routing by slot-wise ops that keep zero rows zero
/// (slices of the features, SiLU, products) computes those ops on the
/// combined buffer instead, so the experts' layers run between one dispatch
/// and one combine; and a dispatch of each token repeated over its K slots
/// dispatches the tokens.
void fuseExpertChains(mlir::ModuleOp module);

} // namespace partition::part::detail

#endif // PARTITION_DIALECT_PART_TRANSFORMS_RAISEEXPERTS_H
