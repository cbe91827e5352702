"""Copies a checkpoint directory and breaks its manifest, for error tests.

usage: edit_manifest.py SRC DST --drop NAME          (remove tensor NAME)
       edit_manifest.py SRC DST --shape NAME D0,D1   (claim another shape)
"""
import json
import os
import shutil
import sys


def main():
    src, dst, what, name = sys.argv[1:5]
    shutil.copytree(src, dst)
    path = os.path.join(dst, "manifest.json")
    manifest = json.load(open(path))
    if what == "--drop":
        del manifest["tensors"][name]
    elif what == "--shape":
        manifest["tensors"][name]["shape"] = [int(d) for d in sys.argv[5].split(",")]
    else:
        sys.exit(f"unknown edit {what}")
    json.dump(manifest, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
