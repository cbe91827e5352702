// REQUIRES: chromium
// partition-run --html (trace-report.mlir) in headless Chromium: no console
// message, a compute and a communication lane per rank with spans of
// positive width, a bar per rank whose parts add up, and a screenshot that
// is not blank.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../e2e/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff \
// RUN:   --part-optimizer="kind=adamw lr=1e-3" --part-spmd="mesh=dp:2,tp:2" \
// RUN:   | partition-translate --part-to-plan -o %t/gpt4.plan
// RUN: partition-run %t/gpt4.plan --steps 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy \
// RUN:   --input labels=%t/labels.npy --html %t/trace.html > /dev/null 2>&1
// RUN: %python %S/Inputs/browser.py %t/trace.html --screenshot %t/trace.png \
// RUN:   --eval "[...document.querySelectorAll('g.lane')].map(l => l.dataset.lane).join(',')" \
// RUN:   --eval "[...document.querySelectorAll('g.lane rect.span')].every(r => r.getBoundingClientRect().width > 0)" \
// RUN:   --eval "document.querySelectorAll('#where-chart g.bar').length" \
// RUN:   | FileCheck %s
// CHECK: join(',') => "rank 0,rank 0 comm,rank 1,rank 1 comm,rank 2,rank 2 comm,rank 3,rank 3 comm"
// CHECK: width > 0) => true
// CHECK: length => 4
// CHECK: screenshot: 1280x{{[0-9]+}}, >=64 colours
// CHECK: ok: no console errors
