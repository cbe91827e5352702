// partition-run --html: a run's trace as a page. The GPT of e2e/train.mlir
// trained 2 steps on dp:2,tp:2; the page counts what the Chrome trace of
// the same run holds (Inputs/check_trace_report.py), and the browser sees it
// without errors (with chromium).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../e2e/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff \
// RUN:   --part-optimizer="kind=adamw lr=1e-3" --part-spmd="mesh=dp:2,tp:2" \
// RUN:   | partition-translate --part-to-plan -o %t/gpt4.plan
// RUN: partition-run %t/gpt4.plan --steps 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy \
// RUN:   --input labels=%t/labels.npy --trace %t/trace.json --html %t/out/trace.html 2>/dev/null | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/check_trace_report.py %t/trace.json %t/out/trace.html | FileCheck %s --check-prefix=SAME
// RUN: FileCheck %s --check-prefix=PAGE < %t/out/trace.html
//
// RAN: step 2: loss
// RAN: trace report written to {{.*}}out/trace.html
// SAME: ok: {{[0-9]+}} opcodes, {{[0-9]+}} spans
// PAGE: <title>partition-run trace: gpt4.plan</title>
// PAGE: <div data-key="ranks"><b>ranks</b>4</div><div data-key="steps"><b>steps</b>2</div>
// PAGE: <g class="bar" data-label="rank 3">
// PAGE: <h3>Measured timeline of step 0 (of 2)</h3>
// PAGE: <g class="lane" data-lane="rank 0" data-spans="{{[1-9][0-9]*}}">
// PAGE: <g class="lane" data-lane="rank 0 comm" data-spans="{{[1-9][0-9]*}}">
// PAGE: <tr><td>AllReduce</td><td>collective</td>
// PAGE: <table id="ranks-table">
//
// --html alone traces too; a folder or an unwritable path is refused
// before any rank starts.
// RUN: partition-run %t/gpt4.plan --weights %t/gpt.safetensors --input tokens=%t/tokens.npy \
// RUN:   --input labels=%t/labels.npy --html %t/one.html > /dev/null 2>&1
// RUN: FileCheck %s --check-prefix=ONE < %t/one.html
// ONE: <div data-key="steps"><b>steps</b>1</div>
// ONE: <h3>Measured timeline</h3>
// RUN: not partition-run %t/gpt4.plan --weights %t/gpt.safetensors --input tokens=%t/tokens.npy \
// RUN:   --input labels=%t/labels.npy --html %t 2>&1 | FileCheck %s --check-prefix=FOLDER
// FOLDER: --html {{.*}}: is a folder; give a file name such as {{.*}}trace.html
// RUN: touch %t/file
// RUN: not partition-run %t/gpt4.plan --weights %t/gpt.safetensors --input tokens=%t/tokens.npy \
// RUN:   --input labels=%t/labels.npy --html %t/file/t.html 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: --html {{.*}}file: cannot create the folder: Not a directory
