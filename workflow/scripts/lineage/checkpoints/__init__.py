"""Checkpoint directories: the one home for reading, writing, verifying, laying out and finishing them.

Floors, lowest first (each imports only those below it):
  format       the safetensors format and the directory's names; the one shard plan, file order, index
  read         the index, shard headers, tensors' bytes through memory maps; shapes and parameter counts
  write        safetensors files and size-bounded shard streams from one process
  directory    lineage.json, companion files, `finish_checkpoint` (every writer ends with it), save_checkpoint
  verify       sha256 checks against lineage.json, whole or while streaming
  load         verified models through transformers; the meta model and tied names every writer needs
  layouts      a checkpoint's tensors in a model's terms (the Hub's names or transformers')
  published    a model type's published layout, for the bundle
  distributed  the ranks of a job: each reads and writes its own rows; replicas for evaluation (torch)
Nothing below `load` imports torch.
"""
