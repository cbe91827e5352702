# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "PARTITION"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "Unit", "CMakeLists.txt", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.partition_obj_root, "test")

# FileCheck variables do not leak across CHECK-LABEL blocks.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

if config.partition_have_cuda:
    config.available_features.add("cuda-toolkit")

config.substitutions.append(("%partition_src_root", config.partition_src_root))
config.substitutions.append(("%partition_obj_root", config.partition_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["partition-opt", "partition-translate", "partition-run", "partition-import", "partition-plan",
     "partition-check"],
    [config.partition_tools_dir],
)

# A sanitizer build (PARTITION_SANITIZERS) runs the same suite; the few
# tests that only multiply configurations of paths other tests already run
# there say `UNSUPPORTED: sanitized`.
if config.partition_sanitizers:
    config.available_features.add("sanitized")

# The fuzz targets (sanitizer builds with PARTITION_BUILD_FUZZERS): test/Fuzz
# runs each finding's input through its target once.
if config.partition_fuzzers:
    config.available_features.add("fuzzers")
    llvm_config.add_tool_substitutions(
        [t + "-fuzzer" for t in ["onnx-import", "ir-spmd", "plan", "safetensors",
                                 "npy", "checkpoint-manifest", "store", "cluster",
                                 "plan-fix"]],
        [os.path.join(config.partition_obj_root, "fuzz")],
    )

import subprocess
import sys

config.substitutions.append(("%python", sys.executable))

# onnxruntime's interpreter (the .venv that scripts/setup.sh makes): the
# reference of the imported-model tests in test/Import/models.
ort_python = os.path.join(config.partition_src_root, ".venv", "bin", "python")
if not os.path.exists(ort_python):
    lit_config.warning(f"{ort_python} is missing (run scripts/setup.sh): "
                       "the tests in test/Import/models will fail")
config.substitutions.append(("%ort_python", ort_python))

# transformers and torch in that interpreter (scripts/setup.sh installs
# them): the models of test/Import/transformers are built and exported there.
if os.path.exists(ort_python) and subprocess.run(
        [ort_python, "-c", "import importlib.util as u, sys; "
         "sys.exit(not (u.find_spec('transformers') and u.find_spec('torch')))"],
        capture_output=True).returncode == 0:
    config.available_features.add("transformers")
else:
    lit_config.warning("transformers or torch is missing in .venv (run "
                       "scripts/setup.sh): test/Import/transformers is skipped")

# Today's exporters (the .venv-current that scripts/setup.sh makes): torch
# 2.x with its dynamo-based ONNX exporter, onnxscript, transformers 5 and
# onnxruntime. The models of test/Import/transformers-current are built and
# exported there, as users export theirs today.
current_python = os.path.join(config.partition_src_root, ".venv-current",
                              "bin", "python")
config.substitutions.append(("%current_python", current_python))
if os.path.exists(current_python) and subprocess.run(
        [current_python, "-c", "import importlib.util as u, sys; sys.exit(not "
         "all(u.find_spec(m) for m in ('torch', 'transformers', "
         "'onnxscript', 'onnxruntime')))"],
        capture_output=True).returncode == 0:
    config.available_features.add("current-transformers")
else:
    lit_config.warning("torch 2.x, transformers 5 or onnxscript is missing in "
                       ".venv-current (run scripts/setup.sh): "
                       "test/Import/transformers-current is skipped")

# Headless Chromium (scripts/setup.sh installs it unless PARTITION_BROWSER=0): the HTML
# reports of test/Report are loaded in it. Without it those tests are
# reported UNSUPPORTED and the pages are still checked as text.
import shutil
if shutil.which("chromium") or shutil.which("chromium-browser"):
    config.available_features.add("chromium")
else:
    lit_config.note("chromium is not installed (scripts/setup.sh installs it): "
                    "the browser checks of test/Report are skipped")
