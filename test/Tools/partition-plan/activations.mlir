// What a plan keeps for backward under sequence parallelism, against plain
// tensor parallelism, at tp 8 (a GPT of hidden 1024, sequence 512): as
// Megatron keeps it, the shard of each gathered matmul input (gathered
// again for the weight gradient) and the bf16 value an f32 norm input was
// widened from (part-remake-in-backward). Megatron's per-layer count is
// 34 s b h / t with sequence parallelism against s b h (10 + 24 / t)
// without, a third at t = 8; with the head's logits this model's whole
// step comes to 0.44 (it was 0.57 when the gathered inputs and f32 copies
// were kept).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 1024 --heads 16 --vocab 4096 --seq 512 --batch 1 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 8 --global-batch 1 --fix tp=8,pp=1,dp=1,mbs=1,zero=0,recompute=none,sp=0 --top 1 --json %t/tp.json > /dev/null
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 8 --global-batch 1 --fix tp=8,pp=1,dp=1,mbs=1,zero=0,recompute=none,sp=1,tp-overlap=0 --top 1 --json %t/sp.json > /dev/null
// RUN: %python -c "import json, sys; a = [json.load(open(f))['plans'][0]['memory_bytes']['activations'] for f in sys.argv[1:]]; r = a[1] / a[0]; print('sequence-parallel / tensor-parallel activations %%.2f' %% r); sys.exit(0 if r <= 0.45 else 1)" %t/tp.json %t/sp.json | FileCheck %s
// CHECK: sequence-parallel / tensor-parallel activations
