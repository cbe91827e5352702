#!/usr/bin/env bash
# Installs every Debian package partition's build and tests use. Idempotent:
# when everything is present it changes nothing and prints nothing.
#   scripts/setup.sh            # everything
#   scripts/setup.sh --runtime  # the runtime and partition-run only (no MLIR),
#                               # for -DPARTITION_ENABLE_COMPILER=OFF builds
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
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
