"""Evaluation of lineage checkpoints: the card's benchmarks, scored the way lm-evaluation-harness scores them.

Modules are small and independent so each can be tested alone:
`items` (loading and disjoint seeded parts), `prompts` (chat rendering), `scoring`
(batched log-likelihood), `generation` (batched greedy decoding), `metrics` (scores),
`ifeval` (lm-eval's instruction checkers, with `nltk_setup` pointing NLTK at the offline
Punkt model), `tasks` (one runner per benchmark) and `table` (the card's table).
"""
