#!/usr/bin/env bash
# Regenerates the op, attribute and pass reference in docs/generated/ from the
# ODS definitions. test/Docs checks that the committed copies are current.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
ninja -C "$build_dir" mlir-doc >/dev/null
cp "$build_dir/docs/Dialects/PartOps.md" docs/generated/PartOps.md
cp "$build_dir/docs/Dialects/PartAttrs.md" docs/generated/PartAttrs.md
cp "$build_dir/docs/PartPasses.md" docs/generated/PartPasses.md
echo "docs/generated/ updated"
