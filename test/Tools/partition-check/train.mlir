// partition-check --steps 3: the model trained both ways (a loss appended
// where the model returns none, part-autodiff, part-optimizer with the
// default SGD), the loss of each step and every weight after the last
// compared. GPT-2 on dp:2,tp:2 and BERT on tp:2 and dp:2.
//
// Tolerance: the default 1e-5 + 1e-4 * max|unpartitioned| for the losses,
// rtol 1e-3 for the weights (measured: 1e-6 on the losses, 1.2e-7 on the
// weights).
//
// RUN: partition-check %S/../../Examples/gpt2.mlir --mesh dp:2,tp:2 --steps 3 > %t.gpt2
// RUN: FileCheck %s --check-prefix=GPT2 < %t.gpt2
// RUN: partition-check %S/../../Examples/bert.mlir --mesh tp:2 --steps 3 > %t.bert
// RUN: FileCheck %s --check-prefix=BERT < %t.bert
// RUN: partition-check %S/../../Examples/bert.mlir --mesh dp:2 --steps 3 | FileCheck %s --check-prefix=BERT
//
// GPT2: on mesh dp:2,tp:2 against one device, trained 3 steps with kind=sgd lr=0.01
// GPT2: step 1: output0 partitioned [[L1:[0-9.]+]]{{[0-9]*}} vs unpartitioned [[L1]]
// GPT2: step 2: output0
// GPT2: step 3: output0
// GPT2-NOT: MISMATCH
// GPT2: weights after step 3: 36 tensors agree
// GPT2-NEXT: PASS
//
// BERT: trained 3 steps
// BERT: labels in [0, 64)
// BERT: step 3: loss
// BERT-NOT: MISMATCH
// BERT: weights after step 3: {{[0-9]+}} tensors agree
// BERT-NEXT: PASS
