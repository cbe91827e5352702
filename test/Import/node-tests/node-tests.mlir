// ONNX's own operator tests (Debian's libonnx-testdata) as an oracle for the
// importer: every node test of each supported op (supported-ops.txt) is
// imported, made a 1-device plan, run on the CPU backend and compared with
// the expected outputs that ship with it. run_node_tests.py states the
// per-dtype tolerances (f32: 1e-5 + 1e-5 * |ref|; f16: 2e-3 + 2e-3 * |ref|;
// integers exact) and why, and which tests may be skipped (dtypes `part` has
// no type for, which the importer must reject with a diagnostic; bfloat16,
// which .npy cannot carry; opsets below 13 where the op changed since); every
// skip is printed with its reason. Any FAIL fails this test.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/run_node_tests.py --work-dir %t --list %S/supported-ops.txt \
// RUN:   --tool partition-import --tool partition-opt --tool partition-translate --tool partition-run
