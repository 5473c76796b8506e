"""Shared code of the lineage workflow, in layers.

The core, the modules here: files written atomically and read with file:line errors (io), the chat bundle
(chat), model shapes (modeling) and the model families they come from (the `families` package: one module
a family, and the registry the trainer, the decoders and the planner read), a training job's mesh degrees and
their rules (parallel_dims), canonical values (canonical: the recipe a checkpoint records and the meaning the
workflow tracks are the same text), errors and the command-line frame (errors, cli).

Layers beside it, each a package: `checkpoints` (every checkpoint read and write), `data` (the data
stages, their quarantine and audit), `training`, `soup`, `evaluation`, and `workflow` (what only the rule files import: the typed
lineage, import closures, artifact digests, cluster requests). The core imports no layer, and
no layer imports `workflow` (tests/test_layout.py holds both).

The package sits beside the workflow scripts so that `python workflow/scripts/x.py`,
`accelerate launch workflow/scripts/x.py` and Snakemake all import it without installation.
"""
