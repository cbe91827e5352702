#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

usage: fuzz/make-seeds.py BUILD_DIR

Every seed is small (a few KiB at most) and valid, so that fuzzing starts from
inputs that reach deep into each reader:
  npy                 arrays of each dtype the runtime reads, versions 1.0 to 3.0
  safetensors         files of each dtype, with metadata, an empty tensor, F64
  checkpoint-manifest manifest.json written by partition-run for a tiny
                      training step
  plan                plans from partition-translate of small test/e2e programs,
                      a hand-written plan with a schedule of fragments (flatc),
                      and the inputs of the plan target's fixed findings
                      rebuilt from them (plan_findings)
  store               hello, set, get and pledge requests in the store's wire
                      format
  onnx-import         the importer's small test models and single-op ONNX node
                      tests (selector byte first: see OnnxImportFuzzer.cpp)
  ir-spmd             the functions of test/Dialect/Part/ops.mlir and the cases
                      of invalid.mlir and of the part-spmd tests, one per file
The tools (partition-translate, partition-run) come from BUILD_DIR/bin.
"""
import glob
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def put(target, data, name=None):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = name or hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def npy_seeds():
    rng = np.random.default_rng(0)
    for dtype in ["<f4", "<f2", "<i4", "<i8"]:
        for shape in [(), (3,), (2, 3), (0, 4)]:
            a = (rng.standard_normal(shape) * 10).astype(dtype)
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, version=(1, 0))
            put("npy", buf.getvalue(), f"{dtype[1:]}-{'x'.join(map(str, shape)) or 'scalar'}.npy")
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    for version in [(2, 0), (3, 0)]:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, a, version=version)
        put("npy", buf.getvalue(), f"f4-2x3-v{version[0]}.npy")


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype name, shape, bytes), in file order."""
    header, offset, data = {}, 0, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    f32 = np.arange(6, dtype="<f4").reshape(2, 3)
    put("safetensors", safetensors([("w", "F32", (2, 3), f32.tobytes())]), "f32.safetensors")
    put("safetensors", safetensors(
        [("a", "I64", (2,), np.array([1, 2], "<i8").tobytes()),
         ("b", "F16", (2, 2), np.ones((2, 2), "<f2").tobytes()),
         ("c", "BF16", (3,), b"\x80\x3f" * 3),
         ("d", "I32", (1, 1, 2), np.array([7, 8], "<i4").tobytes()),
         ("e", "F32", (0, 5), b"")],
        {"format": "pt", "step": "3"}), "mixed.safetensors")
    put("safetensors", safetensors(
        [("x", "F64", (2,), np.ones(2, "<f8").tobytes()),
         ("y", "F32", (), np.float32(1.5).tobytes())]), "f64-scalar.safetensors")
    put("safetensors", safetensors([]), "empty.safetensors")


def store_hello(token=b"", version=1):
    """The hello every connection starts with (the fuzz target's server has
    the empty token)."""
    return struct.pack("<BI", 3, len(token)) + token + struct.pack("<Q", version)


def store_request_pledge(key, heartbeat_ms=0):
    """A pledge; with heartbeat_ms, heartbeats (b"h") must follow."""
    return struct.pack("<BI", 4, len(key)) + key + struct.pack("<Q", heartbeat_ms)


def store_request_set(key, value):
    return struct.pack("<BI", 1, len(key)) + key + struct.pack("<Q", len(value)) + value


def store_request_get(key, timeout_ms):
    return struct.pack("<BI", 2, len(key)) + key + struct.pack("<Q", timeout_ms)


def store_seeds():
    hello = store_hello()
    put("store", hello + store_request_set(b"rank/0", b"127.0.0.1:4000"), "set")
    put("store", hello + store_request_set(b"a", b"1") + store_request_get(b"a", 10), "set-get")
    put("store", hello + store_request_get(b"missing", 5), "get-timeout")
    put("store", hello + store_request_set(b"result/3", b"\x00" * 16) + store_request_set(b"result/3", b"") +
        store_request_get(b"result/3", 0), "overwrite")
    put("store", hello + store_request_pledge(b"result/1"), "pledge")
    put("store", hello + store_request_set(b"result/1", b"+") + store_request_pledge(b"result/1"),
        "pledge-kept")
    put("store", hello + store_request_pledge(b"result/2", 20) + b"hhh", "pledge-heartbeats")
    put("store", store_request_set(b"a", b"1"), "set-without-hello")
    put("store", store_hello(b"wrong") + store_request_get(b"a", 0), "wrong-token")
    put("store", store_hello(version=2), "wrong-version")


def onnx_seeds():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "test/Import/onnx/Inputs/make_models.py"), tmp],
                       check=True)
        for path in sorted(glob.glob(os.path.join(tmp, "*.onnx"))):
            data = open(path, "rb").read()
            if len(data) <= 16384:
                put("onnx-import", b"\x01" + data, os.path.basename(path))
    node_dir = "/usr/share/libonnx-testdata/data/node"
    for test in ["test_add_bcast", "test_matmul_3d", "test_gemm_default_matrix_bias",
                 "test_layer_normalization_2d_axis0", "test_softmax_axis_0_expanded",
                 "test_reduce_mean_default_axes_keepdims_example", "test_reshape_reduced_dims",
                 "test_transpose_default", "test_unsqueeze_axis_0", "test_concat_1d_axis_0",
                 "test_slice", "test_split_equal_parts_1d", "test_gather_0",
                 "test_expand_dim_changed", "test_cast_FLOAT_TO_FLOAT16", "test_where_example",
                 "test_constantofshape_float_ones", "test_range_float_type_positive_delta",
                 "test_trilu_lower", "test_equal", "test_shape", "test_erf", "test_pow",
                 "test_squeeze", "test_identity", "test_sigmoid", "test_tanh"]:
        path = os.path.join(node_dir, test, "model.onnx")
        if os.path.exists(path):
            put("onnx-import", b"\x00" + open(path, "rb").read(), test + ".onnx")


def mlir_cases(path):
    text = open(path).read()
    for case in text.split("// -----"):
        lines = [l for l in case.splitlines() if not l.lstrip().startswith("//")]
        body = "\n".join(lines).strip()
        if body and len(body) <= 4096:
            yield body + "\n"


def ops_chunks(path):
    """One module per function of a file that is not split: its meshes and
    that function."""
    lines = [l for l in open(path).read().splitlines() if not l.lstrip().startswith("//")]
    meshes = [l for l in lines if l.startswith("part.mesh")]
    chunk = None
    for line in lines:
        if line.startswith("func.func"):
            chunk = [line]
        elif chunk is not None:
            chunk.append(line)
            if line == "}":
                yield "\n".join(meshes + chunk) + "\n"
                chunk = None


def ir_seeds():
    for i, case in enumerate(ops_chunks(os.path.join(ROOT, "test/Dialect/Part/ops.mlir"))):
        put("ir-spmd", case, f"ops-{i}.mlir")
    for rel in ["test/Dialect/Part/invalid.mlir", "test/Dialect/Part/Transforms/part-spmd-invalid.mlir",
                "test/Dialect/Part/Transforms/part-partition.mlir",
                "test/Dialect/Part/Transforms/part-propagate-shardings.mlir"]:
        for i, case in enumerate(mlir_cases(os.path.join(ROOT, rel))):
            put("ir-spmd", case, f"{os.path.basename(rel)[:-5]}-{i}.mlir")


def plan_field(buf, table, field):
    """Position of field number `field` of the table at `table` in the
    FlatBuffer `buf` (a plan without its size prefix), or None if absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    size = struct.unpack_from("<H", buf, vtable)[0]
    if 4 + 2 * field >= size:
        return None
    offset = struct.unpack_from("<H", buf, vtable + 4 + 2 * field)[0]
    return table + offset if offset else None


def plan_deref(buf, at):
    """The object a uoffset at `at` points to."""
    return at + struct.unpack_from("<I", buf, at)[0]


def plan_value_table(buf, program, value):
    """Position of Program[program].values[value] in `buf`."""
    root = plan_deref(buf, 0)
    programs = plan_deref(buf, plan_field(buf, root, 3))   # Plan.programs
    prog = plan_deref(buf, programs + 4 + 4 * program)
    values = plan_deref(buf, plan_field(buf, prog, 2))     # Program.values
    assert value < struct.unpack_from("<I", buf, values)[0], "no such value"
    return plan_deref(buf, values + 4 + 4 * value)


def with_shape(plan, program, value, dims, misalign):
    """`plan` (size prefix + FlatBuffer, no checksum) with the shape of one
    value replaced by `dims`, a [long] vector appended at the end of the
    buffer whose elements start at an address 0 mod 8 (4 mod 8 if
    `misalign`; the loader's buffer starts 8-byte aligned at the prefix)."""
    buf = bytearray(plan[4:])
    table = plan_value_table(buf, program, value)
    field = plan_field(buf, table, 1)                      # Value.shape
    # Elements at prefix + len(buf) + 4 (the length) must be 0 or 4 mod 8.
    pad = (-(4 + len(buf) + 4) + (4 if misalign else 0)) % 8
    buf += b"\0" * pad
    vector = len(buf)
    buf += struct.pack("<I", len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
    struct.pack_into("<I", buf, field, vector - field)
    return struct.pack("<I", len(buf)) + bytes(buf)


def with_misaligned_offset(plan, program):
    """`plan` (size prefix + FlatBuffer, no checksum) with the arena offset of
    the first f32 value of `program` at a non-zero offset (a stored field)
    moved 4 bytes on, still inside the arena: (the plan, the value, its new
    offset)."""
    buf = bytearray(plan[4:])
    root = plan_deref(buf, 0)
    programs = plan_deref(buf, plan_field(buf, root, 3))   # Plan.programs
    prog = plan_deref(buf, programs + 4 + 4 * program)
    arena_at = plan_field(buf, prog, 3)                    # Program.arena_bytes
    arena = struct.unpack_from("<Q", buf, arena_at)[0] if arena_at else 0
    values = plan_deref(buf, plan_field(buf, prog, 2))     # Program.values
    for value in range(struct.unpack_from("<I", buf, values)[0]):
        table = plan_value_table(buf, program, value)
        dtype, storage, offset = (plan_field(buf, table, f) for f in (0, 2, 3))
        if dtype and buf[dtype] != 0 or storage and buf[storage] != 0 or not offset:
            continue                                       # not f32, not arena
        shape = plan_deref(buf, plan_field(buf, table, 1))
        count = 1
        for d in range(struct.unpack_from("<I", buf, shape)[0]):
            count *= struct.unpack_from("<q", buf, shape + 4 + 8 * d)[0]
        moved = struct.unpack_from("<Q", buf, offset)[0] + 4
        if moved + 4 * count <= arena:
            struct.pack_into("<Q", buf, offset, moved)
            return plan[:4] + bytes(buf), value, moved
    raise AssertionError("no f32 arena value to move")


def plan_findings(cos_sin, linreg_dp1):
    """The inputs of the plan target's findings, rebuilt on plans of the
    current format (the loader rejects plans of another format version
    before the checks they exercise); linreg_dp1 is lowered one kernel per
    op (--part-fuse-elementwise=false), as the findings' plans were:
      misaligned-shape.plan         value 6 of program 0 has a shape whose
                                    elements are at an address 4 mod 8
      value-elements-overflow.plan  value 47 has the shape [4, 3,
                                    73014442932, 320, 2^33]: its first four
                                    dimensions multiply to 280375460858880
                                    (under 2^50), the fifth is under 2^40,
                                    and the product overflows int64"""
    put("plan", with_shape(cos_sin, 0, 6, [2, 2], misalign=True), "misaligned-shape.plan")
    put("plan", with_shape(linreg_dp1, 0, 47, [4, 3, 73014442932, 320, 1 << 33],
                           misalign=False), "value-elements-overflow.plan")
    # An f32 value at an arena offset 4 mod 64 (the loader accepted it, and
    # the CPU kernels made misaligned loads).
    misaligned, value, offset = with_misaligned_offset(linreg_dp1, 0)
    print(f"make-seeds: misaligned-arena-offset.plan moves value {value} to offset {offset}")
    put("plan", misaligned, "misaligned-arena-offset.plan")


# GPT-2's fused c_attn projection in a model small enough to seed with:
# part-split-fused-projections views its [32, 96] weight as [32, 3, 32]
# (Binding.stored_shape), and the training step adds AdamW state with the
# same stored shapes.
C_ATTN_MODEL = """\
func.func @c_attn(%x: tensor<16x32xf32> {part.name = "x"},
                  %w: tensor<32x96xf32> {part.name = "c_attn.weight", part.role = #part.role<parameter>},
                  %b: tensor<96xf32> {part.name = "c_attn.bias", part.role = #part.role<parameter>})
    -> tensor<2x8x32xf32> {
  %0 = part.matmul %x, %w {part.layer = 0 : i64} : (tensor<16x32xf32>, tensor<32x96xf32>) -> tensor<16x96xf32>
  %1 = part.add %0, %b {part.layer = 0 : i64} : (tensor<16x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
  %2 = part.reshape %1 {part.layer = 0 : i64} : tensor<16x96xf32> -> tensor<2x8x96xf32>
  %q = part.slice %2 offsets [0, 0, 0] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %v = part.slice %2 offsets [0, 0, 64] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %k = part.slice %2 offsets [0, 0, 32] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %qk = part.mul %q, %k : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %y = part.add %qk, %v : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}
"""


# The same with the weight as torch stores a Linear's, [out, in] = [96, 32],
# which the program views transposed (part.stored_permutation, plan format
# 10), and part-split-fused-projections then views as [32, 3, 32].
C_ATTN_PERMUTED_MODEL = C_ATTN_MODEL.replace(
    '"c_attn.weight", part.role = #part.role<parameter>}',
    '"c_attn.weight", part.role = #part.role<parameter>, '
    'part.stored_permutation = array<i64: 1, 0>, '
    'part.stored_shape = array<i64: 96, 32>}')


def stored_shape_seeds(sh, tmp):
    """Plans of the current format with stored_shape views: on dp:1 (rank 0
    needs no communicator, so the target loads its parameters through the
    stored shapes), replicated on dp:2,tp:2 (4 ranks), and sharded over dp
    by ZeRO-3 on dp:2, whose AdamW updates are Fused kernels computed in
    place into the parameters and state (outputs with stored shapes that
    update them)."""
    assert C_ATTN_PERMUTED_MODEL != C_ATTN_MODEL
    for model, text in [("c-attn", C_ATTN_MODEL),
                        ("c-attn-permuted", C_ATTN_PERMUTED_MODEL)]:
        with open(os.path.join(tmp, f"{model}.mlir"), "w") as f:
            f.write(text)
        sh(f"partition-opt {model}.mlir --part-split-fused-projections --part-append-loss=kind=mse | "
           f"partition-opt --part-autodiff --part-optimizer='kind=adamw lr=0.01' > {model}-step.mlir")
        meshes = [("dp1", "mesh=dp:1"), ("dp2-tp2", "mesh=dp:2,tp:2"),
                  ("zero3", "mesh=dp:2 zero=3")]
        if model == "c-attn-permuted":
            meshes = meshes[:2]
        for suffix, spmd in meshes:
            name = model.replace("c-attn", "c-attn-stored") + "-" + suffix
            sh(f"partition-opt {model}-step.mlir --part-spmd='{spmd}' | "
               f"partition-translate --part-to-plan -o {name}.plan 2>/dev/null")
            put("plan", open(os.path.join(tmp, f"{name}.plan"), "rb").read()[:-8], f"{name}.plan")


def tool_seeds(build):
    bin_dir = os.path.abspath(os.path.join(build, "bin"))
    tool = lambda name: os.path.join(bin_dir, name)
    if not os.path.exists(tool("partition-translate")):
        print(f"make-seeds: no {tool('partition-translate')}; plan and manifest seeds skipped",
              file=sys.stderr)
        return
    inputs = os.path.join(ROOT, "test", "e2e", "Inputs")
    with tempfile.TemporaryDirectory() as tmp:
        sh = lambda cmd: subprocess.run(cmd, shell=True, check=True, cwd=tmp,
                                        env=dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"]))
        # A linear regression trained with AdamW on 1 and 2 ranks (collectives,
        # optimizer state, its updates in Fused kernels), and part.cos /
        # part.sin on one rank (f16 values).
        sh(f"{sys.executable} {inputs}/linreg_reference.py . adamw 1 --lr 0.01 > /dev/null")
        for mesh in ["dp:1", "dp:2"]:
            sh(f"partition-opt {inputs}/linreg-grad.mlir --part-optimizer='kind=adamw lr=0.01' | "
               f"partition-opt --part-spmd=mesh={mesh} | "
               f"partition-translate --part-to-plan -o linreg-{mesh}.plan 2>/dev/null")
            # The plan target appends the checksum itself: seeds are the
            # FlatBuffer alone (a plan file without its last 8 bytes).
            put("plan", open(os.path.join(tmp, f"linreg-{mesh}.plan"), "rb").read()[:-8],
                f"linreg-adamw-{mesh.replace(':', '')}.plan")
        # The findings below name values of the plan with one kernel per op.
        sh(f"partition-opt {inputs}/linreg-grad.mlir --part-optimizer='kind=adamw lr=0.01' | "
           f"partition-opt --part-spmd=mesh=dp:1 | "
           f"partition-translate --part-to-plan --part-fuse-elementwise=false "
           f"-o linreg-unfused.plan 2>/dev/null")
        sh(f"sed 's/\"x\"=2/\"x\"=1/' {inputs}/cos-sin-global.mlir | "
           "partition-opt --part-propagate-shardings --part-partition | "
           "partition-translate --part-to-plan -o cos-sin.plan 2>/dev/null")
        put("plan", open(os.path.join(tmp, "cos-sin.plan"), "rb").read()[:-8], "cos-sin.plan")
        stored_shape_seeds(sh, tmp)
        # A grouped-query attention layer's training step: Attention and
        # AttentionGrad kernels (key and value gradients per query head).
        sh("partition-import --model llama --layers 1 --hidden 16 --heads 2 "
           "--kv-heads 1 --ffn 32 --vocab 16 --seq 4 --batch 1 -o attn.mlir && "
           "partition-opt attn.mlir --part-append-loss --part-autodiff "
           "--part-optimizer='kind=sgd lr=0.01' | partition-opt --part-spmd=mesh=dp:1 | "
           "partition-translate --part-to-plan -o attn.plan 2>/dev/null")
        put("plan", open(os.path.join(tmp, "attn.plan"), "rb").read()[:-8], "gqa-attention-grad.plan")
        # A mixture-of-experts layer's training step: TopK, ExpertDispatch
        # and ExpertCombine (a capacity that drops slots).
        sh("partition-import --model mixtral --layers 1 --hidden 16 --heads 2 "
           "--ffn 16 --vocab 16 --seq 4 --batch 2 --experts 4 --top-k 2 "
           "--capacity-factor 1 -o moe.mlir && "
           "partition-opt moe.mlir --part-append-loss --part-autodiff "
           "--part-optimizer='kind=sgd lr=0.01' | partition-opt --part-spmd=mesh=dp:2 | "
           "partition-translate --part-to-plan -o moe.plan 2>/dev/null")
        put("plan", open(os.path.join(tmp, "moe.plan"), "rb").read()[:-8], "moe-routing-dp2.plan")
        # A plan of format 12 written by hand: fragments run by a schedule
        # table per micro-batch, stash slots, micro-batched inputs.
        sh(f"flatc -b --size-prefixed {ROOT}/runtime/plan/plan.fbs "
           f"{ROOT}/test/Tools/partition-run/Inputs/schedule-plan.json")
        put("plan", open(os.path.join(tmp, "schedule-plan.plan"), "rb").read(),
            "schedule-fragments.plan")
        plan_findings(open(os.path.join(tmp, "cos-sin.plan"), "rb").read()[:-8],
                      open(os.path.join(tmp, "linreg-unfused.plan"), "rb").read()[:-8])
        # One training step with a checkpoint: its manifest and shard files.
        sh("partition-run linreg-dp:2.plan --backend cpu --input x=x.npy --input y=y.npy "
           "--steps 1 --weights weights.safetensors --checkpoint ckpt > /dev/null")
        put("checkpoint-manifest", open(os.path.join(tmp, "ckpt", "manifest.json"), "rb").read(),
            "linreg-dp2.json")
        put("safetensors", open(os.path.join(tmp, "ckpt", "rank-0.safetensors"), "rb").read(),
            "checkpoint-rank-0.safetensors")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    npy_seeds()
    safetensors_seeds()
    store_seeds()
    onnx_seeds()
    ir_seeds()
    tool_seeds(build)


if __name__ == "__main__":
    main()
