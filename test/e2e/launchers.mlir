// Ranks started by hand with the variables of each launcher partition-run
// recognises (torchrun, Slurm, Open MPI), meeting at this host's address on
// its default route (127.0.0.1 where there is none). Gloo must listen on
// that address too, not on loopback, or ranks on other hosts could not reach
// it: rank 3 starts a second late, so the others sit listening in Gloo's
// rendezvous long enough to be seen.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-2x2.mlir -o %t/4.plan
// RUN: for launcher in torchrun slurm openmpi; do \
// RUN:   echo "launcher $launcher"; \
// RUN:   %python %S/Inputs/launch_by_hand.py $launcher 4 --addr host --listen --delay-rank 3=1 -- \
// RUN:     partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 2 --timeout 20 || exit 1; \
// RUN: done 2>&1 | FileCheck %s
//
// CHECK-LABEL: launcher torchrun
// CHECK: trained 2 steps (steps 1 to 2)
// CHECK: listen addresses: MASTER_ADDR{{$}}
// CHECK-COUNT-4: exit 0
// CHECK-LABEL: launcher slurm
// CHECK: trained 2 steps (steps 1 to 2)
// CHECK: listen addresses: MASTER_ADDR{{$}}
// CHECK-COUNT-4: exit 0
// CHECK-LABEL: launcher openmpi
// CHECK: trained 2 steps (steps 1 to 2)
// CHECK: listen addresses: MASTER_ADDR{{$}}
// CHECK-COUNT-4: exit 0

// Rank 0 serves the store: when it dies, the others stop at once with an
// error that names it, instead of waiting out --timeout.
//
// RUN: %python %S/Inputs/launch_by_hand.py torchrun 4 --kill-rank 0=1.5 -- \
// RUN:   partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 1000000 --timeout 20 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEAD0
//
// DEAD0-COUNT-3: partition-run: rank {{[1-3]}}: rank 0 has failed: its store at {{.*}} went away
// DEAD0: the others exited within {{[0-2]}} s of rank 0
// DEAD0: rank 0: exit -9
// DEAD0-COUNT-3: exit 1

// Another rank that dies breaks its pledge to hand over its result: rank
// 0's store tells every rank at once, and each stops naming it, long before
// --timeout (20 s) would end the collective it waits in. As a launcher
// would see it with each of the three launchers' variables.
//
// RUN: for launcher in torchrun slurm openmpi; do \
// RUN:   echo "launcher $launcher"; \
// RUN:   %python %S/Inputs/launch_by_hand.py $launcher 4 --kill-rank 2=1.5 -- \
// RUN:     partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 1000000 --timeout 20 || exit 1; \
// RUN: done 2>&1 | FileCheck %s --check-prefix=DEAD2
//
// DEAD2-LABEL: launcher torchrun
// DEAD2-COUNT-3: partition-run: rank {{[013]}}: stopping: rank 2 has failed: it ended without handing over its result (its connection to the store closed: the process died or was killed)
// DEAD2: the others exited within {{[0-2]}} s of rank 2
// DEAD2: rank 0: exit 1
// DEAD2: rank 1: exit 1
// DEAD2: rank 2: exit -9
// DEAD2: rank 3: exit 1
// DEAD2-LABEL: launcher slurm
// DEAD2-COUNT-3: stopping: rank 2 has failed
// DEAD2: the others exited within {{[0-2]}} s of rank 2
// DEAD2-LABEL: launcher openmpi
// DEAD2-COUNT-3: stopping: rank 2 has failed
// DEAD2: the others exited within {{[0-2]}} s of rank 2

// The variables are checked, and named when wrong.
//
// RUN: %python %S/Inputs/launch_by_hand.py slurm 4 --port abc -- \
// RUN:   partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PORT
// PORT: MASTER_PORT="abc" is not a port (an integer in 1..65535)
// PORT-COUNT-4: exit 1
//
// RUN: %python %S/Inputs/launch_by_hand.py openmpi 4 --no-token -- \
// RUN:   partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOKEN
// TOKEN: PARTITION_STORE_TOKEN is not set: under a launcher every rank needs the same secret token
// TOKEN-COUNT-4: exit 1
//
// RUN: env -u MASTER_ADDR -u MASTER_PORT RANK=1 WORLD_SIZE=4 not partition-run %t/4.plan 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MASTER
// MASTER: RANK is set (torchrun), so MASTER_ADDR and MASTER_PORT must name where rank 0 serves the store (missing: MASTER_ADDR and MASTER_PORT)
//
// RUN: env MASTER_ADDR=127.0.0.1 MASTER_PORT=1 SLURM_PROCID=4 SLURM_NTASKS=4 not partition-run %t/4.plan 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK
// RANK: SLURM_PROCID="4" is not a rank of SLURM_NTASKS=4 (an integer in 0..3)
