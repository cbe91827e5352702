"""Batches for test/e2e/train.mlir: token ids and next-token labels for the
generated GPT, inputs and targets for the generated MLP.

usage: train_data.py OUTDIR BATCH SEQ VOCAB
"""
import sys

import numpy as np

out, batch, seq, vocab = sys.argv[1], *map(int, sys.argv[2:5])
rng = np.random.default_rng(5)
tokens = rng.integers(0, vocab, size=(batch, seq + 1)).astype(np.int32)
np.save(f"{out}/tokens.npy", tokens[:, :-1])
np.save(f"{out}/labels.npy", tokens[:, 1:])
np.save(f"{out}/x.npy", rng.standard_normal((batch, 16)).astype(np.float32))
np.save(f"{out}/targets.npy", rng.standard_normal((batch, 16)).astype(np.float32))
