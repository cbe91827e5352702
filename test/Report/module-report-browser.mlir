// REQUIRES: chromium
// The reports of module-report.mlir loaded in headless Chromium
// (Inputs/browser.py): no console message, the DOM holds the devices, bars,
// lanes and rows the module has, every in-page link has its target, the
// pictures have a size, and the screenshot (written beside the pages) is not
// blank.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-opt %S/../Examples/gpt2.mlir --part-strip-sharding=remove-meshes \
// RUN:   | partition-opt --part-spmd="mesh=dp:2,tp:2" --part-report=%t/gpt2.html -o /dev/null
// RUN: %python %S/Inputs/browser.py %t/gpt2.html --screenshot %t/gpt2.png \
// RUN:   --eval "document.querySelectorAll('svg.mesh g.device').length" \
// RUN:   --eval "[...document.querySelectorAll('#collectives-table tr')].length - 1" \
// RUN:   --eval "[...document.querySelectorAll('a[href^=\"#\"]')].every(a => document.getElementById(a.getAttribute('href').slice(1)) !== null)" \
// RUN:   --eval "document.querySelectorAll('a[href^=\"#arg-\"]').length > 0" \
// RUN:   | FileCheck %s --check-prefix=GPT2
// GPT2: document.querySelectorAll('svg.mesh g.device').length => 4
// GPT2: length - 1 => 9
// GPT2: !== null) => true
// GPT2: length > 0 => true
// GPT2: screenshot: 1280x{{[0-9]+}}, >=64 colours
// GPT2: ok: no console errors
//
// RUN: partition-import %S/../Import/models/gpt-opset17.onnx --dim batch=4 --dim seq=8 \
// RUN:   --loss cross-entropy -o %t/gpt-loss.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt-loss.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" \
// RUN:   | partition-opt --part-spmd="mesh=pp:2,dp:2,tp:2 micro-batches=2 schedule=1f1b" \
// RUN:     --part-report=%t/pipeline.html -o /dev/null
// RUN: %python %S/Inputs/browser.py %t/pipeline.html --screenshot %t/pipeline.png \
// RUN:   --eval "[...document.querySelectorAll('svg.mesh g.device')].map(g => g.dataset.rank).join(',')" \
// RUN:   --eval "[...document.querySelectorAll('g.lane')].map(l => l.dataset.lane + ':' + [...l.querySelectorAll('rect.span')].map(r => r.dataset.kind).join('')).join(' ')" \
// RUN:   --eval "[...document.querySelectorAll('g.memory-role')].map(g => [...g.querySelectorAll('rect.segment')].reduce((s, r) => s + Number(r.dataset.bytes), 0) === Number(g.querySelector('text.total').dataset.bytes))" \
// RUN:   --eval "[...document.querySelectorAll('g.memory-role')].map(g => g.dataset.role)" \
// RUN:   --eval "document.querySelector('svg.timeline').getBoundingClientRect().width > 600" \
// RUN:   --eval "[...document.querySelectorAll('g.lane rect.span')].every(r => r.getBoundingClientRect().width > 0)" \
// RUN:   --eval "document.querySelector('[data-key=\"pipeline bubble\"]') !== null" \
// RUN:   | FileCheck %s --check-prefix=PIPE
// PIPE: join(',') => "0,1,2,3,4,5,6,7"
// The 1F1B order of 2 stages and 2 micro-batches.
// PIPE: join(' ') => "stage 0:FFBB stage 1:FBFB"
// The bars' segments add up to the total printed beside them.
// PIPE: dataset.bytes)) => [true, true]
// PIPE: g.dataset.role) => ["@main_stage0 (stage 0)", "@main_stage1 (stage 1)"]
// PIPE: width > 600 => true
// PIPE: width > 0) => true
// PIPE: !== null => true
// PIPE: screenshot: 1280x{{[0-9]+}}, >=64 colours
// PIPE: ok: no console errors
