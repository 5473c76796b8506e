"""The data stages: the battle export read and screened, cleaned, deduplicated, split, and turned
into training rows; the general mix; the verifier's pairs; quarantine records and the data audit.

battles (the row schema and its checks), arena (the public Arena export as native rows),
export (reading an export, every line accounted for), screen (control tokens and empty text),
citations, dedup, preferences (winner rows, pairs, the holdout), general_mix, verifier,
quarantine, audit and audit_report. Imports the core, and `evaluation` (the verifier judges
samples with the benchmarks' prompts and checkers); never `workflow`.
"""
