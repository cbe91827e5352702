// The workspace a plan needs grows with the micro-batch by what has the
// batch in its shape, not by the weight gradients: those contract the
// tokens away (a 2-d matmul over its rows, the embedding's scatter-add)
// and are as large at any batch. A GPT with wide layers and few tokens
// (hidden 512, sequence 4: a layer's fc weight gradient is 4 MB, its
// activations 32 KB per sequence) at micro-batch 1 and 8 on one device of
// a large cluster: the workspace may not grow 8-fold (it did when every
// value computed from the batch counted as batch-sized), and it grows.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 2 --hidden 512 --heads 4 --vocab 64 --seq 4 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 1 --global-batch 8 --fix mbs=1,recompute=none --top 1 --json %t/mbs1.json > /dev/null
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 1 --global-batch 8 --fix mbs=8,recompute=none --top 1 --json %t/mbs8.json > /dev/null
// RUN: %python -c "import json,sys; w=[json.load(open(f))['plans'][0]['memory_bytes']['workspace'] for f in sys.argv[1:]]; print('workspace ratio %%.2f' %% (w[1] / w[0])); sys.exit(0 if w[0] < w[1] < 2 * w[0] else 1)" %t/mbs1.json %t/mbs8.json | FileCheck %s
// CHECK: workspace ratio
