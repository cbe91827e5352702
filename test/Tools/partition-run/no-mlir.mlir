// The runtime does not depend on MLIR: partition-run links neither libMLIR
// nor libLLVM.
// RUN: ldd %partition_obj_root/bin/partition-run | not grep -i -E "libMLIR|libLLVM"
