// partition-plan --html: the ranking and the first plan as a page. A fixed
// pipeline plan of a small GPT on a cluster of 2 nodes of 4 devices, and
// the search for GPT-3 175B on 1024 A100s (test/Report/plan-report-browser.mlir
// loads both in a browser).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/small.mlir
// RUN: partition-plan %t/small.mlir --cluster %S/../Tools/partition-plan/Inputs/small-node.json --devices 8 \
// RUN:   --fix tp=4,pp=2,mbs=4,schedule=1f1b,zero=0,recompute=none,sp=0 --html %t/small.html | FileCheck %s --check-prefix=TEXT
// RUN: FileCheck %s --check-prefix=SMALL < %t/small.html
//
// TEXT: 1   4   2     1   1    4     2 1f1b
//
// SMALL: <title>partition-plan: small.mlir</title>
// SMALL: 4 layers, 217.5K parameters, global batch 8; 8 devices of small (4 2 MB devices per node
// SMALL: <div data-key="#1"><b>#1</b>tp4 pp2 dp1 mbs4 1f1b</div>
// SMALL: <div data-key="part-spmd options"><b>part-spmd options</b>mesh=&quot;pp:2,tp:4&quot; micro-batches=2 schedule=1f1b</div>
// SMALL: <g class="bar" data-label="#1 tp4 pp2 dp1 mbs4 1f1b">
// A tp group on one node: ranks 0-3 on node 0, 4-7 on node 1.
// SMALL: <svg class="mesh" data-mesh="#1" data-devices="8"
// SMALL: <g class="device" data-rank="3" data-node="0" data-coords="0,3">
// SMALL: <g class="device" data-rank="4" data-node="1" data-coords="1,0">
// SMALL: <li><code>pp</code>: 4 groups of 2: {0 4} {1 5} {2 6} {3 7}</li><li><code>tp</code>: 2 groups of 4: {0 1 2 3} {4 5 6 7}</li><li>nodes: 2 (node 0: 4, node 1: 4)</li>
// SMALL: <g class="memory-role" data-role="#1 stage 0" data-capacity="2000000">
// SMALL: <g class="memory-role" data-role="#1 stage 1" data-capacity="2000000">
// SMALL: <h3>Pipeline schedule of #1: 2 stages, 2 micro-batches, 1f1b</h3>
// SMALL: <g class="lane" data-lane="stage 0" data-spans="4">
// SMALL: <g class="lane" data-lane="stage 1" data-spans="4">
// SMALL: <table id="stages-table">
// SMALL: <td>ranks 0-3</td><td>0-1 + embedding</td>
// SMALL: <td>ranks 4-7</td><td>2-3 + head</td>
//
// RUN: partition-import --model gpt --layers 96 --hidden 12288 --heads 96 --vocab 51200 \
// RUN:   --seq 2048 --batch 1 --shapes-only -o %t/gpt3.mlir
// RUN: partition-plan %t/gpt3.mlir --cluster dgx-a100 --devices 1024 --global-batch 1536 --top 10 \
// RUN:   --explain --html %t/gpt3.html > /dev/null
// RUN: FileCheck %s --check-prefix=GPT3 < %t/gpt3.html
//
// GPT3: <title>partition-plan: gpt3.mlir</title>
// GPT3: 96 layers, 175.2B parameters, global batch 1536; 1024 devices of dgx-a100
// The explanation's lines are listed.
// GPT3: <li>why #1 beats #2
// GPT3: <svg class="bars" id="ranked-chart"
// GPT3-COUNT-10: <g class="bar" data-label="#
// GPT3: <svg class="mesh" data-mesh="#1" data-devices="1024"
// GPT3: data-rank="1023" data-node="127"
// GPT3: <h3>Pipeline schedule of #{{[0-9]}}: {{[0-9]+}} stages, {{[0-9]+}} micro-batches
// GPT3: <table id="plans-table">
// GPT3: <table id="left-out-table">
//
// Errors: a page that cannot be written.
// RUN: not partition-plan %t/small.mlir --cluster dgx-a100 --devices 8 --html %t/missing/r.html 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: partition-plan: cannot write {{.*}}missing/r.html (--html): its directory {{.*}}missing: No such file or directory
