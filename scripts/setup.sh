#!/usr/bin/env bash
# Installs every Debian package partition's build and tests use. Idempotent:
# when everything is present it changes nothing and prints nothing.
#   scripts/setup.sh            # everything
#   scripts/setup.sh --runtime  # the runtime and partition-run only (no MLIR),
#                               # for -DPARTITION_ENABLE_COMPILER=OFF builds
# Headless Chromium, which the HTML report tests (test/Report) load pages in,
# is optional: installed with everything unless PARTITION_BROWSER=0, and a
# failed install only warns (those tests then say UNSUPPORTED).
set -euo pipefail

packages=(
  # toolchain and build
  g++ cmake ninja-build ccache python3
  # runtime: plan format, CPU GEMMs, CPU collectives
  libflatbuffers-dev flatbuffers-compiler libopenblas-dev libgloo-dev
  # tests: GoogleTest; numpy for end-to-end references
  libgtest-dev python3-numpy
)
if [ "${1:-}" != "--runtime" ]; then
  # MLIR/LLVM 22, for the compiler (the runtime does not use them)
  packages+=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools)
  # ONNX frontend (partition-import): libonnx and protobuf; the ONNX node
  # tests as an oracle; the onnx Python package to build bad-input models
  packages+=(libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx)
  # the virtualenv (.venv) that holds onnxruntime and transformers, below;
  # torch 1.13 for the transformers models (test/Import/transformers) and
  # the PyTorch side of bench/
  packages+=(python3-venv python3-torch)
  # the sanitizer build and the fuzz targets: clang with ASan, UBSan and
  # libFuzzer (scripts/build-sanitized.sh, scripts/fuzz.sh)
  packages+=(clang-22 libclang-rt-22-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -ne 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# onnxruntime (PyPI only), the reference the imported-model tests
# (test/Import/models) compare with: a pinned version in .venv at the repo
# root, on Debian's python3 with its site packages (numpy, onnx, torch), so
# lit runs it as %ort_python. Only onnxruntime, transformers and what pip
# pulls in for them come from PyPI.
if [ "${1:-}" != "--runtime" ]; then
  ort_version=1.31.1
  venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
  if ! "$venv/bin/python" -c "import onnxruntime, sys; sys.exit(onnxruntime.__version__ != '$ort_version')" 2>/dev/null; then
    echo "setup: installing onnxruntime $ort_version in $venv"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "onnxruntime==$ort_version"
  fi
  # transformers (PyPI), over Debian's torch 1.13 (a pairing that works):
  # the models of test/Import/transformers are built from small configs
  # with it and exported to ONNX, as users export theirs.
  hf_version=4.36.2
  if ! "$venv/bin/python" -c "import transformers, sys; sys.exit(transformers.__version__ != '$hf_version')" 2>/dev/null; then
    echo "setup: installing transformers $hf_version in $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "transformers==$hf_version"
  fi
  # Today's exporters (PyPI), in a venv of their own without Debian's site
  # packages (its torch 1.13 must not shadow them): torch 2.x, whose default
  # ONNX exporter is the dynamo-based one (it needs onnxscript), and
  # transformers 5. test/Import/transformers-current exports its models
  # there, as users export theirs today.
  current="$(cd "$(dirname "$0")/.." && pwd)/.venv-current"
  current_pins=(torch==2.15.0 transformers==5.25.0 onnxscript==0.7.2
                onnx==1.23.2 "onnxruntime==$ort_version" safetensors==0.8.0)
  if ! "$current/bin/python" -c "
import importlib.metadata as m, sys
pins = dict(p.split('==') for p in sys.argv[1:])
sys.exit(any(m.version(k) != v for k, v in pins.items()))" "${current_pins[@]}" 2>/dev/null; then
    echo "setup: installing ${current_pins[*]} in $current"
    /usr/bin/python3 -m venv "$current"
    "$current/bin/pip" install -q --disable-pip-version-check "${current_pins[@]}"
  fi
fi

# Optional: the cudnn-frontend headers (PyPI's nvidia-cudnn-frontend wheel,
# MIT), with which the CUDA backend runs attention on cuDNN's fused kernels
# (runtime/cuda/CudnnAttention.h); only the wheel's include/ is kept, in
# .deps/cudnn-frontend/ (runtime/cuda/CMakeLists.txt looks there). Where the
# toolkit has no cuDNN or PyPI cannot be reached, attention runs as its
# decomposition.
cudnn_frontend_version=1.32.0
deps="$(cd "$(dirname "$0")/.." && pwd)/.deps"
if [ -e /usr/local/cuda/include/cudnn.h ] &&
   [ "$(cat "$deps/cudnn-frontend/VERSION" 2>/dev/null)" != "$cudnn_frontend_version" ]; then
  tmp=$(mktemp -d)
  if /usr/bin/python3 -m pip download -q --disable-pip-version-check --no-deps \
       -d "$tmp" "nvidia-cudnn-frontend==$cudnn_frontend_version" 2>/dev/null &&
     rm -rf "$deps/cudnn-frontend" && mkdir -p "$deps/cudnn-frontend" &&
     /usr/bin/python3 -c "import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith('include/')])" \
       "$tmp"/nvidia_cudnn_frontend-*.whl "$deps/cudnn-frontend"; then
    echo "$cudnn_frontend_version" > "$deps/cudnn-frontend/VERSION"
    echo "setup: cudnn-frontend $cudnn_frontend_version headers in $deps/cudnn-frontend"
  else
    echo "setup: cudnn-frontend could not be fetched; CUDA attention runs as its decomposition" >&2
  fi
  rm -rf "$tmp"
fi

# Optional: headless Chromium for the browser checks of the HTML reports.
if [ "${1:-}" != "--runtime" ] && [ "${PARTITION_BROWSER:-1}" != 0 ] &&
   ! command -v chromium >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo=sudo
  echo "setup: installing chromium (optional: the HTML report tests load pages in it)"
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null 2>&1; then
    echo "setup: chromium could not be installed; the browser checks of test/Report will be skipped" >&2
  fi
fi
