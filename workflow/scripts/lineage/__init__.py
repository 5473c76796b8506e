"""Shared code of the lineage workflow: data stages, training, soups, evaluation and checkpoints.

The package sits beside the workflow scripts so that `python workflow/scripts/x.py`,
`accelerate launch workflow/scripts/x.py` and Snakemake all import it without installation.
"""
