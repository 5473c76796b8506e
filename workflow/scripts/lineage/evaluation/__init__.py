"""Evaluation of lineage checkpoints: the card's benchmarks, scored the way lm-evaluation-harness scores them.

`benchmarks` (one module per benchmark, each declaring a `benchmark.Benchmark`: schema, checks,
prompts, runner, table rows, model-index entry, sample items), `items` (loading and disjoint
seeded parts), `prompts` (the checkpoint's chat rendering), `tasks` (what the runners share),
`scoring` and `packed_scoring` (log-likelihood), `generation` and `graph_decoding` (greedy
decoding), `metrics` (lm-eval's filters and scores), `ifeval` (lm-eval's instruction checkers, with
`nltk_setup` pointing NLTK at the offline Punkt model), `stats`, `table` (the card's table) and
`card` (the published model card). Imports the core and `training` (its head and packing
kernels score log-likelihoods); never `workflow`.
"""
