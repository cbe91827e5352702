// Manifests a run must not trust: counts at the edge of int64, a version 1
// manifest (no sizes and checksums, so a changed rank file would resume
// silently), and meshes that contradict themselves or the rank files. Each
// is refused before any step runs, naming the field and the numbers.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/linreg_reference.py %t adamw 1 --lr 0.01
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/2.plan 2>/dev/null
// RUN: cd %t && partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --steps 1 --weights weights.safetensors --checkpoint ck > /dev/null
//
// 2^63 - 1 steps: once counted on to "step -9223372036854775808" and wrote
// a checkpoint its own reader rejected.
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/huge --set steps 9223372036854775807
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume huge 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: partition-run: invalid argument: huge/manifest.json: manifest: "steps" is 9223372036854775807, not in [0, 9007199254740992]
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/position --set data '{"source": "s", "position": 9223372036854775807}'
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume position 2>&1 | FileCheck %s --check-prefix=POSITION
// POSITION: partition-run: invalid argument: position/manifest.json: data: "position" is 9223372036854775807, not in [0, 9007199254740992]
//
// Within the bound, but the run's steps would pass it.
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/edge --set steps 9007199254740991
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --steps 2 --resume edge 2>&1 | FileCheck %s --check-prefix=EDGE
// EDGE: partition-run: invalid argument: edge: 2 more steps after the checkpoint's 9007199254740991 steps (data position 0) would pass the most a checkpoint records (9007199254740992)
// RUN: cd %t && partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --steps 1 --resume edge | FileCheck %s --check-prefix=EDGE-OK
// EDGE-OK: resuming from checkpoint edge after step 9007199254740991
// EDGE-OK: step 9007199254740992: loss
//
// Version 1, with a rank file changed after it was written: refused (it was
// resumed, with a loss of 5.9e29), and the way to upgrade named.
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/v1 --version-1
// RUN: cp -r %t/v1 %t/v1-changed
// RUN: %python -c "p = '%t/v1-changed/rank-1.safetensors'; b = bytearray(open(p, 'rb').read()); b[-2] ^= 0x40; open(p, 'wb').write(b)"
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume v1-changed 2>&1 | FileCheck %s --check-prefix=V1
// V1: partition-run: invalid argument: v1-changed/manifest.json: manifest: version 1 records no size or checksum of the rank files, so they cannot be verified; if you trust them, record them with scripts/upgrade-checkpoint.py
// The upgrade records the files as they are; the upgraded checkpoint resumes.
// RUN: %python %partition_src_root/scripts/upgrade-checkpoint.py %t/v1 | FileCheck %s --check-prefix=UPGRADE
// UPGRADE: upgrade-checkpoint: {{.*}}v1/manifest.json is version 2, with the sizes and checksums of 2 rank files
// RUN: cd %t && partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume v1 | FileCheck %s --check-prefix=UPGRADED
// UPGRADED: resuming from checkpoint v1 after step 1
// UPGRADED-NEXT: step 2: loss
//
// Meshes: a product of axis sizes that is not the number of ranks, and a
// mesh that lacks the rank of a listed file.
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/mesh-product --set meshes.0.axis_sizes '[3]'
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume mesh-product 2>&1 | FileCheck %s --check-prefix=PRODUCT
// PRODUCT: partition-run: invalid argument: mesh-product/manifest.json: mesh 0: axis sizes [3] make 3 devices but 2 ranks are listed
// RUN: %python %S/Inputs/edit_manifest.py %t/ck %t/mesh-ranks --set meshes.0.ranks '[0, 2]'
// RUN: cd %t && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume mesh-ranks 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: partition-run: invalid argument: mesh-ranks/manifest.json: tensor "adam.m.b": a block of rank 1, which no mesh has
