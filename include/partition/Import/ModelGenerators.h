//===- ModelGenerators.h - GPT, Llama and MLP models built in part -*- C++ -*-===//
//
// `partition-import --model gpt|llama|mlp` builds these model families
// directly in the `part` dialect: the same structure the ONNX importer
// produces for the exported models, with random weights from a seed or with
// no weight data at all (shapes only), so that graphs of hundreds of layers
// and 100B+ parameters can be built and partitioned in seconds.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_IMPORT_MODELGENERATORS_H
#define PARTITION_IMPORT_MODELGENERATORS_H

#include "partition/Import/Weights.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace partition::import {

/// What to generate. Zero for `ffn` and `kvHeads` means the family's default
/// (GPT and MLP: 4 * hidden; Llama: the SwiGLU size rounded up to a multiple
/// of 8, and kvHeads = heads).
struct ModelConfig {
  /// "gpt", "llama", "mixtral" or "mlp".
  std::string family;
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t kvHeads = 0;
  int64_t ffn = 0;
  int64_t vocab = 128;
  int64_t seq = 16;
  int64_t batch = 2;
  /// Mixtral: experts per layer, experts per token, and the capacity factor
  /// (slots per expert and sequence: ceil(seq * topK / experts * factor);
  /// 0: every slot fits, nothing is dropped).
  int64_t experts = 4;
  int64_t topK = 2;
  double capacityFactor = 0;
  /// Mixtral: the weight of the load-balancing loss (Switch's, as Hugging
  /// Face computes it over all layers), returned as `aux_loss` with
  /// `part.loss_weight`; 0: none.
  double routerAuxLossCoef = 0.001;
  /// Seed of the random weights.
  uint64_t seed = 0;
  /// No weight data: `weights` is left empty.
  bool shapesOnly = false;
};

/// Builds the model in a new module. Returns null after reporting a clear
/// error (unknown family, sizes that are not positive or do not divide, e.g.
/// hidden by heads) through the context's diagnostic engine. Unless
/// `config.shapesOnly`, fills `weights` with one tensor per parameter, named
/// as the parameter's `part.name`.
mlir::OwningOpRef<mlir::ModuleOp> generateModel(mlir::MLIRContext &context,
                                                const ModelConfig &config,
                                                Weights &weights);

} // namespace partition::import

#endif // PARTITION_IMPORT_MODELGENERATORS_H
