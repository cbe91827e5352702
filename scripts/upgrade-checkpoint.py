#!/usr/bin/env python3
"""Upgrades a version 1 checkpoint manifest to version 2.

Usage: scripts/upgrade-checkpoint.py DIR

A version 1 manifest.json records no size or checksum of the rank files, so
partition-run cannot tell a rank file that changed after it was written from
the one it wrote, and refuses to resume from it. This script records the
size and FNV-1a (64 bits) of every rank file the manifest's blocks name, as
they are now, and rewrites DIR/manifest.json as version 2 (through a
temporary file and a rename). Run it only on a checkpoint whose rank files
you trust: from then on partition-run checks them against these sums.
(FNV-1a runs in pure Python here, about 10 MB/s: a large checkpoint takes a
while, once.)
"""

import json
import os
import sys

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def fnv1a64(path):
    h = FNV_OFFSET
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return h
            for byte in chunk:
                h = ((h ^ byte) * FNV_PRIME) & MASK


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: upgrade-checkpoint.py DIR")
    directory = sys.argv[1]
    path = os.path.join(directory, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    if manifest.get("format") != "partition-checkpoint":
        sys.exit(f"upgrade-checkpoint: {path} is not a partition checkpoint manifest")
    if manifest.get("version") != 1:
        sys.exit(f"upgrade-checkpoint: {path} is version {manifest.get('version')}, not 1")
    names = sorted({block["file"] for tensor in manifest["tensors"].values()
                    for block in tensor["blocks"]})
    files = {}
    for name in names:
        if os.path.basename(name) != name or name in ("", ".", ".."):
            sys.exit(f"upgrade-checkpoint: {path}: block file {name!r} is not a plain file name")
        file = os.path.join(directory, name)
        files[name] = {"bytes": os.path.getsize(file), "fnv1a64": "%016x" % fnv1a64(file)}
    manifest["version"] = 2
    manifest["files"] = files
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"upgrade-checkpoint: {path} is version 2, with the sizes and checksums of "
          f"{len(files)} rank file{'' if len(files) == 1 else 's'}")


if __name__ == "__main__":
    main()
