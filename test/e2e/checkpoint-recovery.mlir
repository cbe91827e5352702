// Checkpoints after interruptions: leftovers of an interrupted write are
// removed (and named) once a later checkpoint is whole; a torn manifest in
// the newest step sends --resume to the previous whole step with a warning
// naming both, and the resumed run continues bit for bit; a rank file that
// changed after it was written is caught by the manifest's checksum.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/linreg_reference.py %t adamw 4 --lr 0.01
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/2.plan 2>/dev/null
// RUN: cd %t && mkdir -p straight resumed && feed="--backend cpu --input x=x.npy --input y=y.npy" && \
// RUN: partition-run 2.plan $feed --steps 4 --weights weights.safetensors --output-dir straight > straight.log && \
// RUN: mkdir -p ck/step-1 ck/step-2 && touch ck/step-1/rank-0.safetensors.tmp ck/step-2/rank-7.safetensors.tmp && \
// RUN: partition-run 2.plan $feed --steps 4 --weights weights.safetensors --checkpoint ck --checkpoint-every 2 > periodic.log
// RUN: FileCheck %s --check-prefix=CLEAN < %t/periodic.log
// CLEAN: step 2: loss
// CLEAN-NEXT: checkpoint ck/step-2: 7 tensors after step 2
// CLEAN-NEXT: checkpoint ck/step-2: removed ck/step-1, left by an interrupted checkpoint
// CLEAN-NEXT: checkpoint ck/step-2: removed ck/step-2/rank-7.safetensors.tmp, left by an interrupted checkpoint
// CLEAN-NEXT: step 3: loss
// CLEAN: checkpoint ck/step-4: 7 tensors after step 4
// CLEAN-NOT: removed
// RUN: not test -e %t/ck/step-1
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/ck/step-4/manifest.json
// MANIFEST: "files": {
// MANIFEST-NEXT: "rank-0.safetensors": {"bytes": {{[0-9]+}}, "fnv1a64": "{{[0-9a-f]+}}"},
// MANIFEST-NEXT: "rank-1.safetensors": {"bytes": {{[0-9]+}}, "fnv1a64": "{{[0-9a-f]+}}"}
//
// RUN: %python -c "p = '%t/ck/step-4/manifest.json'; t = open(p).read(); open(p, 'w').write(t[:len(t) // 2])"
// RUN: cd %t && partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --steps 2 --resume ck --output-dir resumed > resumed.log 2> resumed.err
// RUN: FileCheck %s --check-prefix=FALLBACK < %t/resumed.err
// FALLBACK: partition-run: warning: checkpoint ck/step-4 is not usable (ck/step-4/manifest.json: not valid JSON: {{.*}}); using ck/step-2 instead
// RUN: FileCheck %s --check-prefix=RESUMED < %t/resumed.log
// RESUMED: resuming from checkpoint ck/step-2 after step 2
// RESUMED-NEXT: step 3: loss
// RESUMED-NEXT: step 4: loss
// RESUMED: trained 2 steps (steps 3 to 4); 8 outputs ({{[0-9]+}} bytes) written to resumed
// RUN: cd %t && grep -E "^step (1|2):" periodic.log > split.log && cat resumed.log >> split.log
// RUN: %python %S/Inputs/losses_agree.py 0 0 %t/straight.log %t/split.log
// RUN: %python %S/Inputs/compare_dirs.py 0 0 %t/straight %t/resumed
//
// A changed byte in a rank file: the checksum names the file and both sums.
// RUN: cp -r %t/ck/step-2 %t/changed
// RUN: %python -c "p = '%t/changed/rank-0.safetensors'; b = bytearray(open(p, 'rb').read()); b[-1] ^= 1; open(p, 'wb').write(b)"
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume changed 2>&1 | FileCheck %s --check-prefix=CHANGED
// CHANGED: partition-run: ranks 0-1: invalid argument: changed/rank-0.safetensors: checksum {{[0-9a-f]+}}, but the manifest records {{[0-9a-f]+}} (the file is corrupted or was replaced)
