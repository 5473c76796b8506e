"""Shared code of the lineage workflow, in layers.

The core, the modules here: files written atomically and read with file:line errors (io),
safetensors shards (shards), checkpoints and their lineage.json (checkpoint), the chat bundle
(chat), model shapes (modeling), a training job's mesh degrees and their rules (parallel_dims), canonical values
(canonical: the recipe a checkpoint records and the meaning the workflow tracks are the same text), errors and the
command-line frame (errors, cli).

Layers beside it, each a package: `data` (the data stages, their quarantine and audit),
`training`, `soup`, `evaluation`, and `workflow` (what only the rule files import: the typed
lineage, import closures, artifact digests, cluster requests). The core imports no layer, and
no layer imports `workflow` (tests/test_layout.py holds both).

The package sits beside the workflow scripts so that `python workflow/scripts/x.py`,
`accelerate launch workflow/scripts/x.py` and Snakemake all import it without installation.
"""
