"""Copies a checkpoint directory and breaks its manifest, for error tests.

usage: edit_manifest.py SRC DST --drop NAME          (remove tensor NAME)
       edit_manifest.py SRC DST --shape NAME D0,D1   (claim another shape)
       edit_manifest.py SRC DST --set PATH JSON      (set a field: "steps",
                                                      "meshes.0.axis_sizes")
       edit_manifest.py SRC DST --version-1          (as version 1 wrote it:
                                                      no "files")
"""
import json
import os
import shutil
import sys


def main():
    src, dst, what = sys.argv[1:4]
    name = sys.argv[4] if len(sys.argv) > 4 else None
    shutil.copytree(src, dst)
    path = os.path.join(dst, "manifest.json")
    manifest = json.load(open(path))
    if what == "--drop":
        del manifest["tensors"][name]
    elif what == "--shape":
        manifest["tensors"][name]["shape"] = [int(d) for d in sys.argv[5].split(",")]
    elif what == "--set":
        *parents, last = name.split(".")
        node = manifest
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = json.loads(sys.argv[5])
    elif what == "--version-1":
        manifest["version"] = 1
        del manifest["files"]
    else:
        sys.exit(f"unknown edit {what}")
    json.dump(manifest, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
