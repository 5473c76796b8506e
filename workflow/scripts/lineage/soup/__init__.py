"""Model soups: a weighted combination of checkpoints that share one initialization.

checks (what must agree before a weight is read), methods (pure functions over array slices:
linear today) and stream (the bounded-memory safetensors path that feeds a method and writes
the soup atomically).
"""
