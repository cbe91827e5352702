// Every size error of partition-import --model: one case per diagnostic,
// reported without a crash and leaving no output file behind.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: not partition-import --model transformer -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: error: unknown model family "transformer"; known families: gpt, llama, mixtral, mlp
// RUN: not ls %t/out.mlir
//
// RUN: not partition-import --model gpt --hidden 100 --heads 12 -o %t/out.mlir --weights %t/out.safetensors 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: --hidden 100 is not divisible by --heads 12
// RUN: not ls %t/out.mlir %t/out.safetensors
//
// RUN: not partition-import --model llama --heads 8 --kv-heads 3 2>&1 | FileCheck %s --check-prefix=KVHEADS
// KVHEADS: error: --heads 8 is not divisible by --kv-heads 3
// RUN: not partition-import --model llama --heads 4 --kv-heads 8 2>&1 | FileCheck %s --check-prefix=KVMORE
// KVMORE: error: --heads 4 is not divisible by --kv-heads 8
// RUN: not partition-import --model llama --hidden 36 --heads 4 2>&1 | FileCheck %s --check-prefix=ROPE
// ROPE: error: the head size 9 (--hidden 36 / --heads 4) must be even for rotary embeddings
// RUN: not partition-import --model gpt --kv-heads 2 2>&1 | FileCheck %s --check-prefix=KVGPT
// KVGPT: error: --kv-heads applies to --model llama and mixtral only
// RUN: not partition-import --model llama --kv-heads -1 2>&1 | FileCheck %s --check-prefix=KVNEG
// KVNEG: error: --kv-heads must be positive (or 0 for --heads), got -1
// RUN: not partition-import --model mixtral --experts 0 2>&1 | FileCheck %s --check-prefix=EXPERTS
// EXPERTS: error: --experts must be in [1, 4096], got 0
// RUN: not partition-import --model mixtral --experts 4 --top-k 5 2>&1 | FileCheck %s --check-prefix=TOPK
// TOPK: error: --top-k must be in [1, --experts 4], got 5
// RUN: not partition-import --model mixtral --capacity-factor -1 2>&1 | FileCheck %s --check-prefix=CAPACITY
// CAPACITY: error: --capacity-factor must be 0 (drop nothing) or positive, got -1
// RUN: not partition-import --model mixtral --capacity-factor nan 2>&1 | FileCheck %s --check-prefix=CAPACITY-NAN
// CAPACITY-NAN: error: --capacity-factor must be 0 (drop nothing) or positive, got nan
// RUN: not partition-import --model mixtral --layers 100000 --experts 4096 --hidden 1073741824 --heads 1 --shapes-only 2>&1 | FileCheck %s --check-prefix=EXPERTS-HUGE
// EXPERTS-HUGE: error: the sizes are too large
//
// RUN: not partition-import --model gpt --layers 0 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: error: --layers must be positive, got 0
// RUN: not partition-import --model mlp --hidden -8 2>&1 | FileCheck %s --check-prefix=HIDDEN
// HIDDEN: error: --hidden must be positive, got -8
// RUN: not partition-import --model gpt --heads 0 2>&1 | FileCheck %s --check-prefix=ZEROHEADS
// ZEROHEADS: error: --heads must be positive, got 0
// RUN: not partition-import --model llama --vocab 0 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: error: --vocab must be positive, got 0
// RUN: not partition-import --model gpt --seq -1 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: error: --seq must be positive, got -1
// RUN: not partition-import --model mlp --batch 0 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: --batch must be positive, got 0
// RUN: not partition-import --model gpt --ffn -3 2>&1 | FileCheck %s --check-prefix=FFN
// FFN: error: --ffn must be positive (or 0 for the default), got -3
//
// The MLP has no heads, vocabulary or sequence: those flags do not matter.
// RUN: partition-import --model mlp --heads 0 --vocab 0 --seq 0 --shapes-only -o /dev/null
// (written in place: /dev/null stays a character device)
// RUN: test -c /dev/null
//
// Sizes whose tensors would overflow 64-bit element counts:
// RUN: not partition-import --model gpt --hidden 4611686018427387904 --heads 1 --shapes-only 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not partition-import --model mlp --layers 9223372036854775807 --shapes-only 2>&1 | FileCheck %s --check-prefix=LAYERS-HUGE
// LAYERS-HUGE: error: --layers 9223372036854775807 is more than 100000 layers
// RUN: not partition-import --model gpt --layers 1000000 --hidden 4 --heads 1 --vocab 4 --seq 4 --shapes-only 2>&1 | FileCheck %s --check-prefix=LAYERS-MANY
// LAYERS-MANY: error: --layers 1000000 is more than 100000 layers
// HUGE: error: the sizes are too large: some tensor or the parameter count would have more than 2^63 elements
//
// A model whose data cannot fit in memory (a 20-trillion-parameter GPT) is
// refused before anything is allocated; with --shapes-only it builds.
// RUN: not partition-import --model gpt --layers 96 --hidden 131072 --heads 128 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: error: the model has {{[0-9.]+}} billion parameters ({{[0-9.]+}} GB of f32 data), more than this machine's {{[0-9.]+}} GB of memory can hold twice; use --shapes-only
// RUN: not ls %t/out.mlir
