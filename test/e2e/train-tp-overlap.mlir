// Tensor-parallel collectives in chunks (part-spmd tp-comm-overlap=N,
// part-collective-matmul): the generated GPT and Llama (GQA) train 3 steps
// equal to one device on tensor-parallel meshes with and without sequence
// parallelism, with data parallelism, ZeRO and a pipeline, the chunks
// dividing the local sequence (8 tokens: 4 per device under sequence
// parallelism on tp:2) in 2 and 4; on tp:4 Llama's 2 kv heads are copied
// over a replica axis, and the collectives over both axes are chunked.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir
// RUN: partition-import --model llama --layers 2 --hidden 32 --heads 4 --kv-heads 2 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/llama.mlir
// RUN: for model in gpt llama; do \
// RUN:   for cfg in "tp:2|tp-comm-overlap=2" "tp:2|tp-comm-overlap=4 sequence-parallel=true" "dp:2,tp:2|tp-comm-overlap=2 sequence-parallel=true zero=1" "dp:2,tp:2|tp-comm-overlap=4 zero=3" "pp:2,tp:2|tp-comm-overlap=2 sequence-parallel=true micro-batches=2" "tp:4|tp-comm-overlap=2 sequence-parallel=true"; do \
// RUN:     mesh=${cfg%%|*}; opts=${cfg#*|}; \
// RUN:     partition-check %t/$model.mlir --mesh $mesh --steps 3 --spmd-options="$opts" > %t/check.log 2>&1 || { cat %t/check.log; exit 1; }; \
// RUN:     grep -q "^PASS" %t/check.log || { cat %t/check.log; exit 1; }; \
// RUN:   done; \
// RUN: done
//
// The chunks are there: on tp:2 with sequence parallelism and 2 chunks,
// each gather of a layer's normalised input becomes two gathers of half
// the local rows (GPT: 2 layers x 2 inputs, q/k/v's and the MLP's, in
// forward), each matmul -> reduce_scatter two of the rows.
// RUN: partition-opt %t/gpt.mlir --part-spmd="mesh=tp:2 sequence-parallel=true tp-comm-overlap=2" -o %t/fwd.mlir
// RUN: FileCheck %s < %t/fwd.mlir
// CHECK: part.all_gather {{.*}} dim 1 {{.*}} : tensor<4x2x32xf32> -> tensor<4x4x32xf32>
// CHECK-NEXT: part.slice
// CHECK-NEXT: part.all_gather {{.*}} dim 1 {{.*}} : tensor<4x2x32xf32> -> tensor<4x4x32xf32>
// CHECK: part.reduce_scatter {{.*}} dim 1 sum {{.*}} : tensor<4x4x32xf32> -> tensor<4x2x32xf32>
// CHECK: part.reduce_scatter {{.*}} dim 1 sum {{.*}} : tensor<4x4x32xf32> -> tensor<4x2x32xf32>
// CHECK: part.concat
