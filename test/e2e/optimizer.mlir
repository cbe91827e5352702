// One training step from a gradient function (part-optimizer), run for 5
// steps by partition-run on 1, 2 and 4 data-parallel CPU ranks: parameters
// and optimizer state live on the devices, each step's new values are
// written back in place (part.updates), state starts at zero. Per-step
// losses and final parameters must match a float64 numpy implementation of
// PyTorch's AdamW and SGD (momentum, weight decay, global-norm clipping,
// linear warm-up) and Megatron's cosine decay (2 warm-up steps, then down
// to min-lr at step 4, then constant: all three phases within 5 steps).
//
// Tolerance 1e-5 + 1e-5 |ref|: the f32 loss and gradients of this 8 x 4
// regression carry relative errors of a few 1e-7; AdamW divides the first
// moment by the root of the second, about +-1 per element in these first
// steps, so an update of lr = 1e-2 carries at most ~1e-8 of error per step,
// and five steps stay far below the bound. A wrong bias correction, decay or
// clipping moves the weights by 1e-3 or more.
//
// RUN: rm -rf %t && mkdir -p %t/adamw %t/sgd %t/cosine
// RUN: %python %S/Inputs/linreg_reference.py %t/adamw adamw 5 --lr 0.01
// RUN: %python %S/Inputs/linreg_reference.py %t/sgd sgd 5 --lr 0.05 --momentum 0.9 --weight-decay 0.1 --clip 0.5 --warmup 3
// RUN: %python %S/Inputs/linreg_reference.py %t/cosine adamw 5 --lr 0.05 --warmup 2 --cosine 4 --min-lr 0.005
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" > %t/adamw/step.mlir
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.05 warmup=2 schedule=cosine decay-steps=4 min-lr=0.005" > %t/cosine/step.mlir
// RUN: FileCheck %s --check-prefix=COSINE < %t/cosine/step.mlir
// RUN: FileCheck %s --check-prefix=ADAMW < %t/adamw/step.mlir
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=sgd lr=0.05 momentum=0.9 weight-decay=0.1 clip=0.5 warmup=3" > %t/sgd/step.mlir
// RUN: FileCheck %s --check-prefix=SGD < %t/sgd/step.mlir
// RUN: for k in adamw sgd cosine; do for m in 1 2 4; do \
// RUN:   partition-opt %t/$k/step.mlir --part-spmd="mesh=dp:$m" | partition-translate --part-to-plan -o %t/$k/$m.plan 2>/dev/null && \
// RUN:   mkdir -p %t/$k/out$m && \
// RUN:   partition-run %t/$k/$m.plan --backend cpu --steps 5 --weights %t/$k/weights.safetensors --input x=%t/$k/x.npy --input y=%t/$k/y.npy --output-dir %t/$k/out$m > %t/$k/$m.log || exit 1; \
// RUN: done; \
// RUN: %python %S/Inputs/losses_agree.py 1e-5 1e-5 %t/$k/losses.txt %t/$k/1.log %t/$k/2.log %t/$k/4.log || exit 1; \
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/$k/w.npy %t/$k/out1/new.w.npy %t/$k/out2/new.w.npy %t/$k/out4/new.w.npy || exit 1; \
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/$k/b.npy %t/$k/out1/new.b.npy %t/$k/out2/new.b.npy %t/$k/out4/new.b.npy || exit 1; \
// RUN: done
// RUN: FileCheck %s --check-prefix=LOG < %t/adamw/2.log
//
// ADAMW-LABEL: func.func @linreg(
// ADAMW-SAME: {part.name = "optimizer.step", part.role = #part.role<state>}
// ADAMW-SAME: {part.name = "adam.m.w", part.role = #part.role<state>, part.state_of = 2 : i64}
// ADAMW-SAME: {part.name = "adam.v.w", part.role = #part.role<state>, part.state_of = 2 : i64}
// ADAMW-SAME: -> (tensor<f32> {part.name = "loss"}, tensor<4x3xf32> {part.name = "new.w", part.updates = 2 : i64}, tensor<4x3xf32> {part.name = "new.adam.m.w", part.updates = 5 : i64}
// ADAMW-NOT: grad_of
// ADAMW: part.pow
// ADAMW: part.sqrt
// SGD-LABEL: func.func @linreg(
// SGD-SAME: {part.name = "momentum.w", part.role = #part.role<state>, part.state_of = 2 : i64}
// SGD-NOT: adam
// The global norm for clipping: one sqrt of the summed squares.
// SGD: part.reduce_sum
// SGD: part.reduce_sum
// SGD: part.sqrt
// COSINE: part.max
// COSINE: part.cos
//
// LOG: step 1: loss 1.5316{{[0-9]+$}}
// LOG: step 5: loss
// LOG: rank 1: setup
