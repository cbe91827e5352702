// The HTML report of partitioned modules (part-html-report, appended by
// partition-opt --part-report): GPT-2 (test/Examples) on dp:2,tp:2, and the
// demo's 8-rank training plan -- the imported GPT trained with AdamW as a
// 1F1B pipeline of 2 stages of dp 2 x tp 2. The page as text; the same
// pages in a browser: module-report-browser.mlir.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-opt %S/../Examples/gpt2.mlir --part-strip-sharding=remove-meshes \
// RUN:   | partition-opt --part-spmd="mesh=dp:2,tp:2" --part-report=%t/gpt2.html --part-explain -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s --check-prefix=GPT2 < %t/gpt2.html
//
// The report counts what part-explain counts.
// EXPLAIN: func @gpt2 on @mesh: 9 collectives
// EXPLAIN: all_reduce  "dp"  1
// EXPLAIN: all_reduce  "tp"  8
//
// GPT2: <title>partition report: @gpt2</title>
// GPT2: <div data-key="devices"><b>devices</b>4</div>
// GPT2: <div data-key="collectives"><b>collectives</b>9</div>
// GPT2: <svg class="mesh" data-mesh="@mesh" data-devices="4"
// GPT2: <g class="device" data-rank="0" data-node="0" data-coords="0,0">
// GPT2: <g class="device" data-rank="3" data-node="0" data-coords="1,1">
// GPT2: <li><code>dp</code>: 2 groups of 2: {0 2} {1 3}</li><li><code>tp</code>: 2 groups of 2: {0 1} {2 3}</li>
// GPT2: <g class="memory-role" data-role="@gpt2" data-capacity="85520809984">
// Slowest first: the 8 tp all-reduces, then the one over dp (the loss).
// GPT2: <tr><td>@gpt2</td><td>all_reduce</td><td>&quot;tp&quot;</td><td class="num">8</td>
// GPT2-NEXT: <tr><td>@gpt2</td><td>all_reduce</td><td>&quot;dp&quot;</td><td class="num">1</td>
// Each collective's origin links to the annotated argument behind it.
// GPT2: <td class="num" id="collective-2">2</td><td>@gpt2</td><td>all_reduce</td><td>&quot;tp&quot;</td><td class="num">2</td><td class="num">16.0 KiB</td>
// GPT2-SAME: <td>operand 0 of part.add at &lt;stdin&gt;:22, sharded by annotation on <a href="#arg-gpt2-0">argument 0 of @gpt2</a>; annotation on <a href="#arg-gpt2-6">argument 6 of @gpt2</a>; annotation on <a href="#arg-gpt2-12">argument 12 of @gpt2</a></td><td>&lt;stdin&gt;:22</td>
// GPT2: <td id="arg-gpt2-6">%arg6</td><td>parameter</td><td></td><td>[64, 64]</td><td>#part.sharding&lt;@mesh, [{}, {&quot;tp&quot;}]&gt;</td><td>[64, 32]</td><td class="num">8.0 KiB</td>
//
// RUN: partition-import %S/../Import/models/gpt-opset17.onnx --dim batch=4 --dim seq=8 \
// RUN:   --loss cross-entropy -o %t/gpt-loss.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt-loss.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" -o %t/gpt-step.mlir
// RUN: partition-opt %t/gpt-step.mlir --part-spmd="mesh=pp:2,dp:2,tp:2 micro-batches=2 schedule=1f1b" \
// RUN:   --part-report=%t/pipeline.html --part-report-cluster=dgx-a100 -o /dev/null
// RUN: FileCheck %s --check-prefix=PIPE < %t/pipeline.html
//
// PIPE: <title>partition report: @main_stage0, @main_stage1</title>
// PIPE: predicted on dgx-a100
// PIPE: <div data-key="devices"><b>devices</b>8</div>
// PIPE: <div data-key="pipeline bubble">
// PIPE: <svg class="mesh" data-mesh="@mesh_pp0" data-devices="4"
// PIPE: data-rank="3"
// PIPE: <svg class="mesh" data-mesh="@mesh_pp1" data-devices="4"
// PIPE: data-rank="4"
// PIPE: data-rank="7"
// PIPE: <g class="memory-role" data-role="@main_stage0 (stage 0)"
// PIPE: <g class="memory-role" data-role="@main_stage1 (stage 1)"
// PIPE: <h3>Pipeline schedule: 2 stages, 2 micro-batches</h3>
// PIPE: <g class="lane" data-lane="stage 0" data-spans="4">
// PIPE-SAME: data-kind="F"
// PIPE-SAME: data-kind="F"
// PIPE-SAME: data-kind="B"
// PIPE-SAME: data-kind="B"
// PIPE-SAME: idle
// PIPE: <g class="lane" data-lane="stage 1" data-spans="4">
// PIPE-SAME: data-kind="F"
// PIPE-SAME: data-kind="B"
// PIPE-SAME: data-kind="F"
// PIPE-SAME: data-kind="B"
// PIPE: <td>send</td><td>to mesh_pp1</td>
// PIPE: <td>send</td><td>to mesh_pp0</td>
// Arguments by layer: layer 0's parameters, then its Adam moments.
// PIPE: <tr><td>0</td><td>@main_stage0</td><td id="arg-main_stage0-3">%arg3</td><td>parameter</td><td>h.0.ln_1.weight</td>
// PIPE: <tr><td>0</td><td>@main_stage0</td><td id="arg-main_stage0-{{[0-9]+}}">%arg{{[0-9]+}}</td><td>state</td><td>adam.m.h.0.ln_1.weight</td>
//
// Errors: a module without per-device programs, a page that cannot be
// written, an unknown cluster.
// RUN: not partition-opt %S/../Examples/gpt2.mlir --part-strip-sharding --part-report=%t/none.html -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOSPMD
// NOSPMD: error: part-html-report: the module has no per-device program (part.spmd): run part-spmd (or part-partition) before the report
// RUN: not partition-opt %t/gpt-step.mlir --part-spmd="mesh=dp:2" --part-report=%t/missing/r.html -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WRITE
// WRITE: partition-opt: cannot write {{.*}}missing/r.html (--part-report): its directory {{.*}}missing: No such file or directory
// RUN: not partition-opt %t/gpt-step.mlir --part-spmd="mesh=dp:2" --part-report=%t/r.html --part-report-cluster=nosuch -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CLUSTER
// CLUSTER: error: part-html-report: {{.*}}nosuch
