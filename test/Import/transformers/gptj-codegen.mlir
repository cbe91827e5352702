// GPT-J (GPTJForCausalLM) and CodeGen (CodeGenForCausalLM) as Hugging Face
// transformers 4.36.2 builds them (export_transformers.py, small configs,
// seeded weights): interleaved rotary embeddings on 4 of each head's 8
// dimensions, whose sin/cos rows GPT-J picks by position with
// GatherElements and repeats with Tile (repeat_interleave), and whose table
// CodeGen expands to a shape computed by Where(Equal(shape, -1), 1, shape)
// over a Split of a Shape. With batch and sequence bound all of that is
// shape and position arithmetic on constants and folds while importing:
// the sin/cos tables reach the program as constants. Each model is
// imported with batch 2 and sequence 8 and run on 1 rank and dp:2,tp:2,
// without and with an attention_mask, and its logits are compared with the
// model's own in torch (f32), within the tolerance of the other
// transformers models (5e-5 absolute plus 5e-5 relative).
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: for a in gptj codegen; do for v in plain mask; do \
// RUN:   d=%t/$a-$v; flags=; inputs="--input input_ids=$d/input_ids.npy"; \
// RUN:   if [ $v = mask ]; then flags=--mask; inputs="$inputs --input attention_mask=$d/attention_mask.npy"; fi; \
// RUN:   %ort_python %S/export_transformers.py $a $d $flags && \
// RUN:   partition-import $d/$a.onnx --dim batch=2 --dim seq=8 -o $d/m.mlir --weights $d/w.safetensors || exit 1; \
// RUN:   for m in dp:1 dp:2,tp:2; do \
// RUN:     partition-opt $d/m.mlir --part-spmd="mesh=$m" -o $d/$m.mlir && \
// RUN:     partition-translate --part-to-plan $d/$m.mlir -o $d/$m.plan && mkdir -p $d/out-$m && \
// RUN:     partition-run $d/$m.plan --backend cpu --weights $d/w.safetensors $inputs --output-dir $d/out-$m > /dev/null && \
// RUN:     %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 $d/logits.npy $d/out-$m/logits.npy || exit 1; \
// RUN:   done; \
// RUN: done; done
//
// The rotary tables are constants of [1, S, 1, 4] (sin or cos of the 2
// frequencies, each repeated twice by repeat_interleave; GPT-J's as two
// halves of [1, S, 1, 2] concatenated); the only gather left is the token
// embedding. part-raise rebuilds CodeGen's attention (scores scaled, then
// the causal mask a Where with finfo.min), not GPT-J's (the mask applied
// before the scaling) nor either with an attention_mask; neither model's
// interleaved rotary embedding (rotate_every_two: a stack and a flatten)
// is raised.
// RUN: FileCheck %s --check-prefixes=CHECK,GPTJ < %t/gptj-plain/m.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,CODEGEN < %t/codegen-plain/m.mlir
// CHECK: part.gather
// CHECK: part.constant {part.layer = 0 : i64} dense<{{.*}}> : tensor<1x8x1x{{[24]}}xf32>
// CHECK-NOT: part.gather
// GPTJ: part.select
// GPTJ: part.div
// GPTJ: part.softmax
// CODEGEN: part.attention {{.*}} causal {part.layer = 0 : i64} : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// CODEGEN: part.attention {{.*}} causal {part.layer = 1 : i64}
//
// Tensor parallelism splits the heads and the MLP as Megatron does: two
// all-reduces over "tp" per layer plus one for the vocabulary-parallel
// embedding lookup (2 layers: 5).
// RUN: for a in gptj codegen; do \
// RUN:   grep -c 'part.all_reduce .*axes \["tp"\]' "%t/$a-plain/dp:2,tp:2.mlir" | FileCheck %s --check-prefix=FIVE || exit 1; \
// RUN: done
// FIVE: {{^5$}}
// RUN: FileCheck %s --check-prefix=TP2 < "%t/codegen-plain/dp:2,tp:2.mlir"
// TP2: part.attention {{.*}} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
