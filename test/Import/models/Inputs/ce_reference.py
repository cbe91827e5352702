"""Labels and the float64 mean cross-entropy of reference logits.

usage: ce_reference.py LOGITS.npy OUTDIR   (writes labels.npy, loss.npy)
"""
import sys

import numpy as np

logits = np.load(sys.argv[1]).astype(np.float64)
rng = np.random.default_rng(7)
labels = rng.integers(0, logits.shape[-1], size=logits.shape[:-1]).astype(np.int32)
shifted = logits - logits.max(axis=-1, keepdims=True)
logz = np.log(np.exp(shifted).sum(axis=-1))
picked = np.take_along_axis(shifted, labels[..., None].astype(np.int64), axis=-1)[..., 0]
np.save(f"{sys.argv[2]}/labels.npy", labels)
np.save(f"{sys.argv[2]}/loss.npy", np.array((logz - picked).mean()))
