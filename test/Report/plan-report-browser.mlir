// REQUIRES: chromium
// partition-plan's pages (plan-report.mlir) in headless Chromium: no console
// message; the ranked bars in order, the devices over their nodes, memory against
// the device, and a schedule whose lanes never run two steps at once; the
// screenshots beside the pages are not blank.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/small.mlir
// RUN: partition-plan %t/small.mlir --cluster %S/../Tools/partition-plan/Inputs/small-node.json --devices 8 \
// RUN:   --fix tp=4,pp=2,mbs=4,schedule=1f1b,zero=0,recompute=none,sp=0 --html %t/small.html > /dev/null
// RUN: %python %S/Inputs/browser.py %t/small.html --screenshot %t/small.png \
// RUN:   --eval "[...document.querySelectorAll('g.lane')].map(l => l.dataset.lane + ':' + [...l.querySelectorAll('rect.span')].map(r => r.dataset.kind).join('')).join(' ')" \
// RUN:   --eval "[...document.querySelectorAll('svg.mesh g.device')].map(g => g.dataset.node).join('')" \
// RUN:   | FileCheck %s --check-prefix=SMALL
// SMALL: join(' ') => "stage 0:FFBB stage 1:FBFB"
// SMALL: join('') => "00001111"
// SMALL: ok: no console errors
//
// RUN: partition-import --model gpt --layers 96 --hidden 12288 --heads 96 --vocab 51200 \
// RUN:   --seq 2048 --batch 1 --shapes-only -o %t/gpt3.mlir
// RUN: partition-plan %t/gpt3.mlir --cluster dgx-a100 --devices 1024 --global-batch 1536 --top 5 \
// RUN:   --explain --html %t/gpt3.html > /dev/null
// RUN: %python %S/Inputs/browser.py %t/gpt3.html --screenshot %t/gpt3.png \
// RUN:   --eval "document.querySelectorAll('#ranked-chart g.bar').length" \
// RUN:   --eval "new Set([...document.querySelectorAll('svg.mesh g.device')].map(g => g.dataset.node)).size" \
// RUN:   --eval "[...document.querySelectorAll('svg.mesh g.device')].length" \
// RUN:   --eval "[...document.querySelectorAll('g.lane')].every(l => { const s = [...l.querySelectorAll('rect.span')].map(r => [Number(r.dataset.start), Number(r.dataset.duration)]).sort((a, b) => a[0] - b[0]); return s.length > 0 && s.every((x, i) => i === 0 || s[i - 1][0] + s[i - 1][1] <= x[0] + 1e-9 * (1 + x[0])); })" \
// RUN:   --eval "[...document.querySelectorAll('g.memory-role')].every(g => Number(g.querySelector('text.total').dataset.bytes) <= Number(g.dataset.capacity))" \
// RUN:   --eval "[...document.querySelectorAll('#ranked-chart g.bar')].map(g => [...g.querySelectorAll('rect.segment')].reduce((w, r) => w + r.getBoundingClientRect().width, 0)).every((w, i, a) => w > 0 && (i === 0 || a[i - 1] <= w + 0.01))" \
// RUN:   | FileCheck %s --check-prefix=GPT3
// GPT3: length => 5
// 1024 A100s, 8 per node.
// GPT3: size => 128
// GPT3: length => 1024
// GPT3: + x[0])); }) => true
// GPT3: dataset.capacity)) => true
// Ranked fastest first: each bar at least as long as the one above.
// GPT3: w + 0.01)) => true
// GPT3: screenshot: 1280x{{[0-9]+}}, >=64 colours
// GPT3: ok: no console errors
