#!/usr/bin/env bash
# Sets up, builds and runs partition's main job. Today: verify a two-layer GPT-2
# written in the part dialect and annotated for a 2 x 4 (dp x tp) mesh, print
# it, and show how it is split across the 8 devices.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
build_dir=${BUILD_DIR:-build}
opt="$build_dir/bin/partition-opt"
model=test/Examples/gpt2.mlir

echo "== $model: verified and printed by partition-opt"
"$opt" "$model"
echo
echo "== how its values are split over the mesh (--part-sharding-report)"
"$opt" "$model" --part-sharding-report -o /dev/null
