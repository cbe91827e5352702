//===- PartOps.td - part ops --------------------------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_IR_PARTOPS_TD
#define PARTITION_DIALECT_PART_IR_PARTOPS_TD

include "partition/Dialect/Part/IR/PartAttrs.td"
include "partition/Dialect/Part/IR/PartInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Part_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Part_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Part_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64]>;

//===----------------------------------------------------------------------===//
// Meshes and sharding
//===----------------------------------------------------------------------===//

def Part_MeshOp : Part_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares a named device mesh";
  let description = [{
    Declares a mesh that shardings and collectives refer to by name. A module
    may hold several meshes: pipeline stages live on sub-meshes of their own.

    ```mlir
    part.mesh @mesh = <["dp"=2, "tp"=4]>
    ```

    **Constraints:**
    - the mesh attribute's constraints (distinct non-empty axis names, sizes
      of at least 1);
    - the op sits directly in a module.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Part_MeshAttr:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
}

def Part_ShardingConstraintOp : Part_Op<"sharding_constraint",
    [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pins the sharding of a value";
  let description = [{
    Returns its operand unchanged and fixes the sharding of the result:
    propagation must respect it, and the partitioner inserts whatever
    collectives are needed to produce it.

    ```mlir
    %1 = part.sharding_constraint %0 <@mesh, [{"dp"}, {}] # "}]" # [{> : tensor<8x16xf32>
    ```

    **Constraints:**
    - the sharding names a `part.mesh` in the enclosing module, uses only its
      axes, has the rank of the operand, and splits every dimension evenly.
  }];
  let arguments = (ins Part_Tensor:$input, Part_ShardingAttr:$sharding);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Model ops: constants, casts and elementwise ops
//===----------------------------------------------------------------------===//

def Part_ConstantOp : Part_Op<"constant", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition", "getPaddingRule", "rewritePadded"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %0 = part.constant dense<1.0> : tensor<4x8xf32>
    ```

    **Constraints:**
    - the value's type is the result type.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Part_CastOp : Part_Op<"cast", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "converts the element type of a tensor";
  let description = [{
    Float to float rounds to nearest even; float to integer truncates toward
    zero; integer to float rounds to nearest.

    ```mlir
    %1 = part.cast %0 : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```

    **Constraints:**
    - the operand and result have the same shape.
  }];
  let arguments = (ins Part_Tensor:$input);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Part_BinaryOp<string mnemonic, Type operandType, string formula,
                    list<string> shardingMethods = []>
    : Part_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, shardingMethods>, DeclareOpInterfaceMethods<Part_VjpOpInterface>]> {
  let summary = "elementwise " # formula # " with numpy broadcasting";
  let description = [{
    Computes `}] # formula # [{` elementwise. Shapes broadcast as in numpy:
    they are aligned at their last dimension, and a dimension of size 1 (or a
    missing leading dimension) stretches to match the other operand.

    ```mlir
    %2 = part.}] # mnemonic # [{ %0, %1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```

    **Constraints:**
    - both operands have the same element type;
    - the shapes are broadcast-compatible;
    - the result has the broadcast shape and the operands' element type.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Part_AddOp : Part_BinaryOp<"add", Part_Tensor, "lhs + rhs", ["keepsPendingSum"]>;
def Part_SubOp : Part_BinaryOp<"sub", Part_Tensor, "lhs - rhs", ["keepsPendingSum"]>;
def Part_MulOp : Part_BinaryOp<"mul", Part_Tensor, "lhs * rhs", ["keepsPendingSum"]>;
def Part_DivOp : Part_BinaryOp<"div", Part_Tensor, "lhs / rhs", ["keepsPendingSum"]>;
def Part_MaxOp : Part_BinaryOp<"max", Part_Tensor, "max(lhs, rhs)">;
def Part_MinOp : Part_BinaryOp<"min", Part_Tensor, "min(lhs, rhs)">;
def Part_PowOp : Part_BinaryOp<"pow", Part_FloatTensor, "lhs ^ rhs">;

def Part_CompareOp : Part_Op<"compare", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>]> {
  let summary = "elementwise comparison giving i32 0 / 1, with numpy broadcasting";
  let description = [{
    `lhs <direction> rhs` elementwise, as an `i32` tensor of 0 and 1 (the
    form `part.select` takes as its condition). `direction` is one of `eq`,
    `ne`, `lt`, `le`, `gt`, `ge`. Floats compare as IEEE values: a NaN
    operand makes every direction false except `ne`. Shapes broadcast as in
    numpy. The result is piecewise constant, so it has no cotangent; the
    adjoints of `max`, `min` and `reduce_max` use it to find the elements
    that were taken.

    ```mlir
    %2 = part.compare lt, %0, %1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi32>
    ```

    **Constraints:**
    - both operands have the same element type;
    - the shapes are broadcast-compatible;
    - the result has the broadcast shape and element type `i32`.
  }];
  let arguments = (ins Part_ComparisonDirection:$direction, Part_Tensor:$lhs,
                   Part_Tensor:$rhs);
  let results = (outs StaticShapeTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Part_SelectOp : Part_Op<"select", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>]> {
  let summary = "elementwise choice between two tensors, with numpy broadcasting";
  let description = [{
    `condition != 0 ? true_value : false_value` elementwise (ONNX `Where`).
    The three shapes broadcast together as in numpy; the condition is an
    integer tensor (ONNX booleans are i32 0 / 1 in `part`).

    ```mlir
    %2 = part.select %c, %a, %b : (tensor<8x8xi32>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
    ```

    **Constraints:**
    - `true_value` and `false_value` have the same element type;
    - the three shapes are broadcast-compatible;
    - the result has the broadcast shape and the values' element type.
  }];
  let arguments = (ins Part_IndexTensor:$condition, Part_Tensor:$true_value,
                   Part_Tensor:$false_value);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
}

class Part_UnaryOp<string mnemonic, string formula, list<Trait> traits = [],
                   list<string> shardingMethods = []>
    : Part_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType,
                                     DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, shardingMethods>, DeclareOpInterfaceMethods<Part_VjpOpInterface>], traits)> {
  let summary = "elementwise " # formula;
  let description = [{
    Computes `}] # formula # [{` elementwise; f16 and bf16 are computed in f32.

    ```mlir
    %1 = part.}] # mnemonic # [{ %0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Part_FloatTensor:$input);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Part_NegOp : Part_UnaryOp<"neg", "-x", [], ["keepsPendingSum"]>;
def Part_ExpOp : Part_UnaryOp<"exp", "exp(x)">;
def Part_LogOp : Part_UnaryOp<"log", "log(x)">;
def Part_SqrtOp : Part_UnaryOp<"sqrt", "sqrt(x)">;
def Part_RsqrtOp : Part_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Part_TanhOp : Part_UnaryOp<"tanh", "tanh(x)">;
def Part_ErfOp : Part_UnaryOp<"erf", "erf(x)">;
def Part_CosOp : Part_UnaryOp<"cos", "cos(x)">;
def Part_SinOp : Part_UnaryOp<"sin", "sin(x)">;
def Part_SigmoidOp : Part_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Part_ReluOp : Part_UnaryOp<"relu", "max(x, 0)">;
def Part_SiluOp : Part_UnaryOp<"silu", "x * sigmoid(x)">;

def Part_GeluOp : Part_Op<"gelu", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "elementwise GELU, exact (erf) or tanh-approximated";
  let description = [{
    `erf`:  `0.5 * x * (1 + erf(x / sqrt(2)))` (BERT, PyTorch's default);
    `tanh`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`
    (GPT-2, `approximate="tanh"`).

    ```mlir
    %1 = part.gelu %0 tanh : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Part_FloatTensor:$input,
                   Part_GeluApproximation:$approximation);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = "$input $approximation attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Model ops: contractions
//===----------------------------------------------------------------------===//

def Part_MatmulOp : Part_Op<"matmul", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "matrix product of a tensor with a matrix (a linear layer)";
  let description = [{
    `lhs` has shape `[..., M, K]` (`[..., K, M]` with `transpose_a`), `rhs`
    has shape `[K, N]` (`[N, K]` with `transpose_b`); the result has shape
    `[..., M, N]`. Leading dimensions of `lhs` (batch, sequence) are kept
    as they are, so a linear layer on `[batch, seq, hidden]` needs no
    reshape and its batch dimension stays visible to sharding.

    ```mlir
    %2 = part.matmul %0, %1 : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
    %3 = part.matmul %0, %e transpose_b : (tensor<2x16x64xf32>, tensor<1000x64xf32>) -> tensor<2x16x1000xf32>
    ```

    **Constraints:**
    - `lhs` has rank at least 2 and `rhs` rank 2;
    - the contracting sizes agree;
    - both operands and the result have one element type.
  }];
  let arguments = (ins Part_FloatTensor:$lhs, Part_FloatTensor:$rhs,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Part_BatchMatmulOp : Part_Op<"batch_matmul", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "batched matrix product";
  let description = [{
    `lhs` has shape `[B..., M, K]` and `rhs` `[B..., K, N]` (the last two
    dimensions swapped by `transpose_a` / `transpose_b`); the result has
    shape `[B..., M, N]`.

    ```mlir
    %2 = part.batch_matmul %q, %k transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
    ```

    **Constraints:**
    - both operands have the same rank, at least 3;
    - the batch dimensions are equal;
    - the contracting sizes agree;
    - both operands and the result have one element type.
  }];
  let arguments = (ins Part_FloatTensor:$lhs, Part_FloatTensor:$rhs,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Model ops: normalisation, softmax, attention, loss
//===----------------------------------------------------------------------===//

def Part_SoftmaxOp : Part_Op<"softmax", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition", "getPaddingRule"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one dimension";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `dim`.

    ```mlir
    %1 = part.softmax %0 dim 1 : tensor<4x8xf32>
    ```

    **Constraints:**
    - `0 <= dim < rank`.
  }];
  let arguments = (ins Part_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = "$input `dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Part_LayerNormOp : Part_Op<"layer_norm",
    [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `(x - mean(x)) / sqrt(var(x) + epsilon) * scale + bias` over the last
    dimension (biased variance, as PyTorch). `bias` may be omitted.

    ```mlir
    %1 = part.layer_norm %0, %g, %b epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    ```

    **Constraints:**
    - `scale` and `bias` have shape `[D]`, where `D` is the last dimension of
      the input, and the input's element type.
  }];
  let arguments = (ins Part_FloatTensor:$input, Part_FloatTensor:$scale,
                   Optional<Part_FloatTensor>:$bias,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? (`epsilon` $epsilon^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Part_RmsNormOp : Part_Op<"rms_norm",
    [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "root-mean-square normalisation over the last dimension";
  let description = [{
    `x / sqrt(mean(x^2) + epsilon) * scale` over the last dimension (Llama).

    ```mlir
    %1 = part.rms_norm %0, %g epsilon 9.99999997E-7 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    ```

    **Constraints:**
    - `scale` has shape `[D]`, where `D` is the last dimension of the input,
      and the input's element type.
  }];
  let arguments = (ins Part_FloatTensor:$input, Part_FloatTensor:$scale,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`epsilon` $epsilon^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Part_RotaryEmbeddingOp : Part_Op<"rotary_embedding",
    [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding (rotate-half form)";
  let description = [{
    For `x` of shape `[..., S, D]` and tables `cos`, `sin` of shape `[S, D]`:
    `x * cos + rotate_half(x) * sin`, where `rotate_half(x)` is
    `concat(-x[..., D/2:], x[..., :D/2])` along the last dimension (the
    GPT-NeoX / Llama convention). The decomposition into `part.slice`,
    `part.neg`, `part.concat`, `part.mul` and `part.add` is exact.

    ```mlir
    %1 = part.rotary_embedding %q, %cos, %sin : (tensor<2x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16x8xf32>
    ```

    **Constraints:**
    - the input has rank at least 2 and an even last dimension;
    - `cos` and `sin` have shape `[S, D]`, the input's last two dimensions,
      and the input's element type.
  }];
  let arguments = (ins Part_FloatTensor:$input, Part_FloatTensor:$cos,
                   Part_FloatTensor:$sin);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Part_AttentionOp : Part_Op<"attention", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention, optionally causal or sliding-window";
  let description = [{
    `query` has shape `[B, H, Sq, D]`, `key` `[B, Hkv, Sk, D]` and `value`
    `[B, Hkv, Sk, Dv]`; the result has shape `[B, H, Sq, Dv]`. With fewer key
    and value heads than query heads (grouped-query attention), query head
    `h` uses key and value head `h / (H / Hkv)`.

    Decomposition (per head, with `s = scale`, default `1 / sqrt(D)`):
    ```
    scores = s * batch_matmul(query, key, transpose_b)    // [B, H, Sq, Sk]
    scores = scores + mask   // causal: -inf where key position > query position
                             // window w: also where query - key >= w
    probs  = softmax(scores, dim = 3)
    result = batch_matmul(probs, value)                   // [B, H, Sq, Dv]
    ```

    With `window` (sliding-window attention, Mistral's `sliding_window`,
    Gemma 3's sliding layers), query position `i` sees the keys `j` with
    `0 <= i - j < window`: the last `window` positions up to its own. Every
    query row keeps at least one key (its own position), so no row of the
    probabilities is undefined.

    With `positions(query_positions, key_positions)` (integer tensors `[Sq]`
    and `[Sk]`), the causal mask and the window compare these global
    positions rather than the row and column indices: query `i` sees key `j`
    when `key_positions[j] <= query_positions[i]` (and, with a window, when
    `query_positions[i] - key_positions[j] < window`). The keys may come in
    any order. Context parallelism gives each device the queries of its own
    chunks of the sequence and the keys of all of them, in the balanced
    order (docs/design/2026-12-07-context-parallel.md), so `Sq` may then
    differ from `Sk`, and the query positions split with the queries. A
    query that sees no key has the result 0.

    ```mlir
    %o = part.attention %q, %k, %v causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
    %w = part.attention %q, %k, %v causal window 4 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
    ```

    **Constraints:**
    - all three operands have rank 4 and one element type;
    - batch sizes agree; `key` and `value` have the same number of heads and
      the same sequence length; that number of heads is at least 1 and
      divides the query's;
    - `query` and `key` have the same head size;
    - with `causal` and no positions, the query and key sequence lengths
      are equal;
    - `window` is at least 1 and only comes with `causal`;
    - positions come with `causal`, both or neither, with shapes `[Sq]` and
      `[Sk]` and one element type.
  }];
  let arguments = (ins Part_FloatTensor:$query, Part_FloatTensor:$key,
                   Part_FloatTensor:$value,
                   Optional<Part_IndexTensor>:$query_positions,
                   Optional<Part_IndexTensor>:$key_positions,
                   UnitAttr:$causal, OptionalAttr<F32Attr>:$scale,
                   OptionalAttr<I64Attr>:$window);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`causal` $causal^)? (`window` $window^)?
    (`scale` $scale^)?
    (`positions` `(` $query_positions^ `,` $key_positions `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Part_AttentionBlockOp : Part_Op<"attention_block", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "attention with its rows' log-sum-exp (a block of ring attention)";
  let description = [{
    `part.attention` with its `positions` (always given), and also the
    log-sum-exp of each query row's scaled scores over the keys it sees,
    `lse [B, H, Sq]` in f32 (`-inf` where it sees none). Over a block of the
    keys, `result` is the softmax over that block; blocks merge exactly by
    their log-sum-exp (`m = max(l1, l2)`, `result = (r1 e^(l1 - m) + r2
    e^(l2 - m)) / (e^(l1 - m) + e^(l2 - m))`, `lse = m + log(e^(l1 - m) +
    e^(l2 - m))`): context parallelism's ring form computes attention so,
    one block of keys per step, the next block arriving meanwhile
    (docs/design/2026-12-07-context-parallel.md). Over all the keys it is
    `part.attention`, and `lse` is what `part.attention_grad` needs to
    recompute the probabilities of a block. part-context-parallel writes
    it (attention=ring) after autodiff; it has no vector-Jacobian product.

    ```mlir
    %o, %lse = part.attention_block %q, %k, %v causal positions(%qp, %kp) : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<16xi64>, tensor<16xi64>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
    ```

    **Constraints:** those of `part.attention` with positions.
  }];
  let arguments = (ins Part_FloatTensor:$query, Part_FloatTensor:$key,
                   Part_FloatTensor:$value, Part_IndexTensor:$query_positions,
                   Part_IndexTensor:$key_positions,
                   UnitAttr:$causal, OptionalAttr<F32Attr>:$scale,
                   OptionalAttr<I64Attr>:$window);
  let results = (outs Part_FloatTensor:$result, Part_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`causal` $causal^)? (`window` $window^)?
    (`scale` $scale^)?
    `positions` `(` $query_positions `,` $key_positions `)`
    attr-dict `:` functional-type(operands, results)
  }];
}

def Part_AttentionGradOp : Part_Op<"attention_grad", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition"]>, Pure, InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "the gradients of part.attention, computed in blocks of query rows";
  let description = [{
    The vector-Jacobian product of `part.attention` (same operands and
    attributes) for the result's gradient `result_grad` `[B, H, Sq, Dv]`:
    the gradients of the query `[B, H, Sq, D]`, and of the key and value
    per query head, `[B, H, Sk, D]` and `[B, H, Sk, Dv]` (with grouped-query
    attention the caller sums each group's `H / Hkv` heads into the key and
    value head they share).

    Per head, with `p = softmax(scale * q k^T + mask)` recomputed from the
    operands:
    ```
    dv = p^T do,  dp = do v^T,  ds = scale * p * (dp - rowsum(dp * p)),
    dq = ds k,    dk = ds^T q
    ```
    The kernels compute this in blocks of query rows, so that no `[Sq, Sk]`
    matrix of scores or probabilities is ever held for more than a block
    (memory-efficient attention, as FlashAttention's backward); written as
    separate ops, autodiff's expansion holds several `[B, H, Sq, Sk]`
    tensors at once.

    ```mlir
    %dq, %dk, %dv = part.attention_grad %q, %k, %v, %do causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
    ```

    With `lse(lse, delta)` (f32 `[B, H, Sq]`, with positions: ring
    attention's blocks), the probabilities are not recomputed as a softmax
    over these keys but as `p = exp(scale q k^T - lse)` from the rows'
    log-sum-exp over all the keys (`part.attention_block`'s), and the
    rows' sum is the given `delta = rowsum(result_grad * result)` of the
    whole attention: the gradients of one block of keys, which summed over
    the blocks are the whole attention's.

    **Constraints:** those of `part.attention` on `query`, `key`, `value`,
    the positions and its attributes; `lse` and `delta` come together,
    with positions, f32 `[B, H, Sq]`; `result_grad` has the shape and element type of
    `part.attention`'s result.
  }];
  let arguments = (ins Part_FloatTensor:$query, Part_FloatTensor:$key,
                   Part_FloatTensor:$value, Part_FloatTensor:$result_grad,
                   Optional<Part_IndexTensor>:$query_positions,
                   Optional<Part_IndexTensor>:$key_positions,
                   Optional<Part_FloatTensor>:$lse,
                   Optional<Part_FloatTensor>:$delta,
                   UnitAttr:$causal, OptionalAttr<F32Attr>:$scale,
                   OptionalAttr<I64Attr>:$window);
  let results = (outs Part_FloatTensor:$query_grad, Part_FloatTensor:$key_grad,
                      Part_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $result_grad (`causal` $causal^)?
    (`window` $window^)? (`scale` $scale^)?
    (`positions` `(` $query_positions^ `,` $key_positions `)`)?
    (`lse` `(` $lse^ `,` $delta `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Part_SoftmaxCrossEntropyOp : Part_Op<"softmax_cross_entropy",
    [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition", "meansOverReductionFactors", "getPaddingRule", "rewritePadded"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "softmax cross-entropy with integer class labels";
  let description = [{
    For logits `[..., C]` and labels `[...]`:
    `loss = logsumexp(logits) - logits[label]` per position, then the mean or
    sum over all positions (a scalar), or no reduction (shape of `labels`).

    ```mlir
    %l = part.softmax_cross_entropy %logits, %labels mean : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
    ```

    **Constraints:**
    - the labels' shape is the logits' shape without its last dimension.
  }];
  let arguments = (ins Part_FloatTensor:$logits, Part_IndexTensor:$labels,
                   Part_LossReduction:$reduction);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels $reduction attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Model ops: reductions
//===----------------------------------------------------------------------===//

class Part_ReduceOp<string mnemonic, string what,
                    list<string> shardingMethods = []>
    : Part_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, shardingMethods>, DeclareOpInterfaceMethods<Part_VjpOpInterface>]> {
  let summary = what # " over dimensions";
  let description = [{
    Reduces `dims` by taking the }] # what # [{. The reduced dimensions are
    dropped, or kept with size 1 under `keep_dims`.

    ```mlir
    %1 = part.}] # mnemonic # [{ %0 dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```

    **Constraints:**
    - `dims` is non-empty, each in `[0, rank)` and listed once.
  }];
  let arguments = (ins Part_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                   UnitAttr:$keep_dims);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keep_dims` $keep_dims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Part_ReduceSumOp : Part_ReduceOp<"reduce_sum", "sum", ["keepsPendingSum"]>;
def Part_ReduceMeanOp : Part_ReduceOp<"reduce_mean", "mean", ["meansOverReductionFactors"]>;
def Part_ReduceMaxOp : Part_ReduceOp<"reduce_max", "maximum", ["getPaddingRule"]>;

//===----------------------------------------------------------------------===//
// Model ops: data movement
//===----------------------------------------------------------------------===//

def Part_ReshapeOp : Part_Op<"reshape", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["keepsPendingSum"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "reinterprets a tensor's elements under another shape";
  let description = [{
    Row-major order is kept.

    ```mlir
    %1 = part.reshape %0 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
    ```

    **Constraints:**
    - the operand and result have the same element type and number of
      elements.
  }];
  let arguments = (ins Part_Tensor:$input);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Part_TransposeOp : Part_Op<"transpose", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["keepsPendingSum"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %1 = part.transpose %0 [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
    ```

    **Constraints:**
    - `permutation` is a permutation of `[0, rank)`.
  }];
  let arguments = (ins Part_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
}

def Part_BroadcastOp : Part_Op<"broadcast", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "broadcasts a tensor to a larger shape, numpy style";
  let description = [{
    Shapes are aligned at their last dimension; operand dimensions of size 1
    and missing leading dimensions stretch to the result's.

    ```mlir
    %1 = part.broadcast %0 : tensor<64xf32> -> tensor<2x16x64xf32>
    ```

    **Constraints:**
    - the result's rank is at least the operand's;
    - each operand dimension is 1 or equals the aligned result dimension;
    - the element types are equal.
  }];
  let arguments = (ins Part_Tensor:$input);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Part_SliceOp : Part_Op<"slice", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "extracts a strided block of a tensor";
  let description = [{
    Result element `i` is operand element `offsets + i * strides` (per
    dimension); the result type gives the sizes. `strides` default to 1.

    ```mlir
    %1 = part.slice %0 offsets [0, 32] : tensor<4x64xf32> -> tensor<4x32xf32>
    ```

    **Constraints:**
    - `offsets` (and `strides`, when given) have one entry per dimension;
    - offsets are non-negative and strides positive;
    - the last element read, `offset + (size - 1) * stride`, fits in int64
      and is inside the operand in every dimension;
    - the element types and ranks are equal.
  }];
  let arguments = (ins Part_Tensor:$input, DenseI64ArrayAttr:$offsets,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets (`strides` $strides^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Part_PadOp : Part_Op<"pad", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "places a tensor into zeros at offsets, with strides (the adjoint of slice)";
  let description = [{
    The result (whose type gives the full shape) is zero except that result
    element `offsets + i * strides` (per dimension) is operand element `i`:
    `offsets` is the low padding and `strides - 1` the interior padding
    between operand elements. It is the transpose of `part.slice` with the
    same attributes, which is how `part-autodiff` uses it. `strides`
    default to 1.

    ```mlir
    %1 = part.pad %0 offsets [0, 32] : tensor<4x32xf32> -> tensor<4x64xf32>
    %2 = part.pad %0 offsets [1, 0] strides [2, 1] : tensor<4x32xf32> -> tensor<9x32xf32>
    ```

    **Constraints:**
    - `offsets` (and `strides`, when given) have one entry per dimension;
    - offsets are non-negative and strides positive;
    - the last element written, `offset + (size - 1) * stride`, fits in
      int64 and is inside the result in every dimension (`size` is the
      operand's);
    - the element types and ranks are equal.
  }];
  let arguments = (ins Part_Tensor:$input, DenseI64ArrayAttr:$offsets,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets (`strides` $strides^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Part_ConcatOp : Part_Op<"concat", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    ```mlir
    %2 = part.concat %0, %1 dim 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
    ```

    **Constraints:**
    - at least one operand; all have one element type and rank;
    - `0 <= dim < rank`;
    - all other dimensions agree.
  }];
  let arguments = (ins Variadic<Part_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` functional-type($inputs, results)
  }];
}

def Part_GatherOp : Part_Op<"gather", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["partition", "getPaddingRule"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure, InferTypeOpAdaptor]> {
  let summary = "takes slices of a tensor at integer indices (embedding lookup)";
  let description = [{
    The result has shape `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`; an index outside `[0, data.shape[axis])` is an
    error at run time. With `axis = 0` this is an embedding lookup.

    ```mlir
    %1 = part.gather %table, %ids axis 0 : (tensor<1000x64xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32>
    ```

    **Constraints:**
    - `0 <= axis < rank(data)`.
  }];
  let arguments = (ins Part_Tensor:$data, Part_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)
  }];
}

def Part_ScatterAddOp : Part_Op<"scatter_add", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface, ["getPaddingRule"]>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "adds slices into zeros at integer indices (the adjoint of gather)";
  let description = [{
    The result (whose type gives the shape of the data a `part.gather` would
    read) starts as zeros, and each slice of `updates` is added at its index
    along `axis`: for data shape `D`, `result[p, indices[i], q] +=
    updates[p, i, q]` where `p` ranges over `D[:axis]`, `i` over the index
    positions and `q` over `D[axis+1:]`. Duplicate indices accumulate, so
    this is the gradient of an embedding lookup. An index outside
    `[0, D[axis])` is an error at run time. f16 and bf16 accumulate in f32;
    the order in which duplicates are added is the backend's (the CPU and
    CUDA backends add them in index order, so a run repeats bit for bit).

    ```mlir
    %1 = part.scatter_add %0, %ids axis 0 : (tensor<2x16x64xf32>, tensor<2x16xi32>) -> tensor<1000x64xf32>
    ```

    **Constraints:**
    - `0 <= axis < rank(result)`;
    - `updates` has shape `D[:axis] + indices.shape + D[axis+1:]`, where `D`
      is the result's shape, and the result's element type.
  }];
  let arguments = (ins Part_FloatTensor:$updates, Part_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $updates `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model ops: mixture-of-experts routing (docs/design/2026-12-07-experts.md)
//===----------------------------------------------------------------------===//

def Part_TopKOp : Part_Op<"top_k", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "the largest entries of the last dimension and their indices";
  let description = [{
    The `K` largest entries along the last dimension (`K` is the results'
    last dimension), in descending order, and their `i64` indices; equal
    values come in index order (ONNX TopK, `torch.topk`), and NaN ranks
    above every number. A router picks each token's experts with it. The
    values' cotangent goes back to the positions they were taken from.

    ```mlir
    %v, %i = part.top_k %0 : (tensor<2x16x8xf32>) -> (tensor<2x16x2xf32>, tensor<2x16x2xi64>)
    ```

    **Constraints:**
    - the input has rank >= 1 and a float element type; the values have
      its element type, the indices `i64`;
    - both results have the input's shape but for the last dimension, `K`,
      with `1 <= K <= N` (the input's last dimension).
  }];
  let arguments = (ins Part_FloatTensor:$input);
  let results = (outs Part_FloatTensor:$values, Part_IndexTensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Part_ExpertDispatchOp : Part_Op<"expert_dispatch", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "places each group's routed tokens in their experts' capacity buffers";
  let description = [{
    For `G` groups of `S` tokens, each routed to `K` experts (`indices`,
    `[G, S, K]`), the result `[E, G, C, H]` holds per expert and group `C`
    slots. Slot `(s, k)` of group `g` goes to expert `e = indices[g, s, k]`
    at position `p`, the number of earlier slots of the group routed to
    `e`; earlier means a lower `k`, or the same `k` and a lower `s` (every
    token's first choice before any second choice). A slot with `p >= C`
    is dropped; unfilled positions are zero. `input` is the tokens
    `[G, S, H]` (a token goes to each of its `K` experts) or one value per
    slot `[G, S, K, H]`. An index outside `[0, E)` is an error at run time.
    `part.expert_combine` is its adjoint. Capacity is per group, so a plan
    that splits the groups computes what one device does.

    ```mlir
    %b = part.expert_dispatch %x, %i : (tensor<2x16x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
    ```

    **Constraints:**
    - `indices` has rank 3; `input` has rank 3 or 4 and the shape
      `[G, S, H]` or `[G, S, K, H]` for indices `[G, S, K]`;
    - the result has rank 4, `[E, G, C, H]` with `E, C >= 1`, and the
      input's element type.
  }];
  let arguments = (ins Part_FloatTensor:$input, Part_IndexTensor:$indices);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Part_ExpertCombineOp : Part_Op<"expert_combine", [DeclareOpInterfaceMethods<Part_ShardingRuleOpInterface>, DeclareOpInterfaceMethods<Part_VjpOpInterface>, Pure]> {
  let summary = "reads each routed slot back from its expert's capacity buffer";
  let description = [{
    The adjoint of `part.expert_dispatch`: `result[g, s, k]` is the row of
    `input[e, g, p]` where `part.expert_dispatch` placed slot `(s, k)`, or
    zeros where it dropped the slot. Weighting the slots by the router's
    probabilities and summing over `k` are `part.mul` and `part.reduce_sum`.
    An index outside `[0, E)` is an error at run time.

    ```mlir
    %y = part.expert_combine %b, %i : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32>
    ```

    **Constraints:**
    - `input` has rank 4, `[E, G, C, H]`; `indices` rank 3, `[G, S, K]`;
    - the result is `[G, S, K, H]` of the input's element type.
  }];
  let arguments = (ins Part_FloatTensor:$input, Part_IndexTensor:$indices);
  let results = (outs Part_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class Part_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Part_Op<mnemonic, !listconcat([
        DeclareOpInterfaceMethods<SymbolUserOpInterface>], traits)> {
  code extraBaseClassDeclaration = [{
    /// The mesh this collective runs on; null if the symbol does not resolve.
    MeshOp getMeshOp(::mlir::SymbolTableCollection &symbolTable);
  }];
  let extraClassDeclaration = extraBaseClassDeclaration;
}

def Part_AllReduceOp : Part_CollectiveOp<"all_reduce",
    [Pure, SameOperandsAndResultType]> {
  let summary = "reduces a value over the devices of mesh axes";
  let description = [{
    Every device of each group (the devices that differ only in their
    coordinates along `axes`) receives the reduction of the group's values.
    With `avg` the sum is divided by the group size.

    ```mlir
    %1 = part.all_reduce %0 on @mesh axes ["tp"] sum : tensor<2x16x64xf32>
    ```

    **Constraints:**
    - `@mesh` names a `part.mesh`; `axes` is non-empty, and each axis exists
      and is listed once.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, Part_ReductionKind:$kind);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes $kind attr-dict `:` type($result)
  }];
}

def Part_AllGatherOp : Part_CollectiveOp<"all_gather", [Pure]> {
  let summary = "concatenates the shards of a group along one dimension";
  let description = [{
    The group's values are concatenated along `dim` in group order (the
    linear index of the device's coordinates along `axes`, first axis major).

    ```mlir
    %1 = part.all_gather %0 on @mesh axes ["tp"] dim 1 : tensor<16x16xf32> -> tensor<16x64xf32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`;
    - `0 <= dim < rank`; the element types and ranks are equal;
    - result dimension `dim` is the operand's times the group size, and all
      other dimensions are equal.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Part_ReduceScatterOp : Part_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "reduces over a group and leaves each device one shard";
  let description = [{
    The group's values are reduced, split into group-size blocks along
    `dim`, and block `i` goes to the device with group index `i`.

    ```mlir
    %1 = part.reduce_scatter %0 on @mesh axes ["dp"] dim 0 sum : tensor<64x64xf32> -> tensor<32x64xf32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`;
    - `0 <= dim < rank`; the element types and ranks are equal;
    - operand dimension `dim` is divisible by the group size and the result's
      is the quotient; all other dimensions are equal.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim, Part_ReductionKind:$kind);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim $kind attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Part_AxisIndexOp : Part_CollectiveOp<"axis_index", [Pure]> {
  let summary = "this device's index within its group along mesh axes";
  let description = [{
    A scalar: the row-major index of this device's coordinates along `axes`
    (first axis major), in `[0, group size)`. It is what makes a per-device
    program differ between devices without communication, e.g. the offset of
    a device's rows in a vocabulary-split embedding table.

    ```mlir
    %i = part.axis_index on @mesh axes ["tp"] : tensor<i32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs TensorRankOf<[I32], [0]>:$result);
  let assemblyFormat = "`on` $mesh `axes` $axes attr-dict `:` type($result)";
}

def Part_AllSliceOp : Part_CollectiveOp<"all_slice", [Pure]> {
  let summary = "keeps this device's block of a value replicated over a group";
  let description = [{
    The inverse of `part.all_gather`, without communication: the value is
    the same on every device of the group, and each keeps the block along
    `dim` given by its group index (linear index along `axes`, first axis
    major). This is how a replicated dimension becomes a split one.

    ```mlir
    %1 = part.all_slice %0 on @mesh axes ["tp"] dim 1 : tensor<16x64xf32> -> tensor<16x16xf32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`;
    - `0 <= dim < rank`; the element types and ranks are equal;
    - operand dimension `dim` is divisible by the group size and the result's
      is the quotient; all other dimensions are equal.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Part_AllToAllOp : Part_CollectiveOp<"all_to_all", [Pure]> {
  let summary = "exchanges blocks so one dimension is split instead of another";
  let description = [{
    Each device splits its value into group-size blocks along `split_dim`,
    sends block `i` to the device with group index `i`, and concatenates the
    blocks it receives along `concat_dim` in group order.

    ```mlir
    %1 = part.all_to_all %0 on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<16x4xf32> -> tensor<4x16xf32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`;
    - both dimensions are in `[0, rank)`; the element types and ranks are
      equal;
    - operand dimension `split_dim` is divisible by the group size; the
      result has it divided, `concat_dim` multiplied (both, if they are the
      same dimension), and all other dimensions equal.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$split_dim, I64Attr:$concat_dim);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `split_dim` $split_dim `concat_dim`
    $concat_dim attr-dict `:` type($input) `->` type($result)
  }];
}

def Part_CollectivePermuteOp : Part_CollectiveOp<"collective_permute",
    [Pure, SameOperandsAndResultType]> {
  let summary = "sends each device's value to another device of its group";
  let description = [{
    `pairs` lists `[source, target]` group indices (linear index along
    `axes`, first axis major). A device that is no target receives zeros.

    ```mlir
    %1 = part.collective_permute %0 on @mesh axes ["pp"] pairs [[0, 1], [1, 2], [2, 3]] : tensor<4x64xf32>
    ```

    **Constraints:**
    - the mesh and axes constraints of `part.all_reduce`;
    - every index is in `[0, group size)`;
    - no device is the source of two pairs or the target of two pairs.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, DenseI64ArrayAttr:$pairs);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `pairs` custom<SourceTargetPairs>($pairs)
    attr-dict `:` type($result)
  }];
}

def Part_SendOp : Part_Op<"send", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "sends a value to the matching device of another mesh";
  let description = [{
    Point-to-point transfer between pipeline stages: the device with linear
    id `i` of the mesh this program runs on sends its value to device `i` of
    `@to`, where the `part.recv` with the same `channel` takes it.

    ```mlir
    part.send %0 to @stage1 channel 0 : tensor<4x64xf32>
    ```

    **Constraints:**
    - `@to` names a `part.mesh`; `channel` is non-negative.
  }];
  let arguments = (ins Part_Tensor:$input, FlatSymbolRefAttr:$to,
                   I64Attr:$channel);
  let assemblyFormat = [{
    $input `to` $to `channel` $channel attr-dict `:` type($input)
  }];
}

def Part_RecvOp : Part_Op<"recv", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "receives a value from the matching device of another mesh";
  let description = [{
    The counterpart of `part.send` with the same `channel`.

    ```mlir
    %0 = part.recv from @stage0 channel 0 : tensor<4x64xf32>
    ```

    **Constraints:**
    - `@from` names a `part.mesh`; `channel` is non-negative.
  }];
  let arguments = (ins FlatSymbolRefAttr:$from, I64Attr:$channel);
  let results = (outs Part_Tensor:$result);
  let assemblyFormat = [{
    `from` $from `channel` $channel attr-dict `:` type($result)
  }];
}

#endif // PARTITION_DIALECT_PART_IR_PARTOPS_TD
