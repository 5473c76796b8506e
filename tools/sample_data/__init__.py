"""The makers of the embedded scale's sample files (tools/make_sample_data.py runs them), one module
per file written, with what they share in common.py and their word banks in text_banks.json."""
