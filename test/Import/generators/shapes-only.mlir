// --shapes-only builds the same IR with no weight data, fast enough for the
// largest models: GPT-3 175B (96 layers, hidden 12288, 96 heads, vocabulary
// 50257, sequence 2048) builds and prints without allocating its 700 GB.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 96 --hidden 12288 --heads 96 --vocab 50257 --seq 2048 --batch 1 --shapes-only -o %t/gpt3.mlir
// RUN: FileCheck %s --check-prefix=GPT3 < %t/gpt3.mlir
// GPT3: func.func @gpt(%{{.*}}: tensor<1x2048xi32> {part.name = "tokens"{{.*}}: tensor<50257x12288xf32> {part.name = "wte"
// GPT3-SAME: tensor<12288x49152xf32> {part.name = "h.95.mlp.fc.weight"
// GPT3-SAME: -> (tensor<1x2048x50257xf32> {part.name = "logits"})
// GPT3-COUNT-96: part.attention {{.*}} causal {{.*}}: (tensor<1x96x2048x128xf32>,
// GPT3-NOT: part.attention
//
// --shapes-only writes no weights: asking for them is an error that leaves
// no file behind.
// RUN: not partition-import --model gpt --shapes-only -o %t/a.mlir --weights %t/a.safetensors 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// NOWEIGHTS: --shapes-only builds no weight data; drop --weights
// RUN: not ls %t/a.mlir %t/a.safetensors
//
// The IR does not depend on the weights or the seed.
// RUN: partition-import --model llama --shapes-only -o %t/shapes.mlir
// RUN: partition-import --model llama --seed 5 -o %t/seeded.mlir --weights %t/5.safetensors
// RUN: diff %t/shapes.mlir %t/seeded.mlir
//
// The weights are a function of the seed: the same seed gives the same
// bytes, another seed others.
// RUN: partition-import --model llama --seed 5 -o %t/again.mlir --weights %t/5again.safetensors
// RUN: partition-import --model llama --seed 6 -o %t/six.mlir --weights %t/6.safetensors
// RUN: cmp %t/5.safetensors %t/5again.safetensors
// RUN: not cmp -s %t/5.safetensors %t/6.safetensors
