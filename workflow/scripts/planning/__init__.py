"""The models behind tools/plan.py, one a module: memory per GPU (memory.py), step time (step_time.py),
every run of the lineage at full scale (lineage.py), the jobs beside training (side_jobs.py), and the
single-H200 measurements they rest on (measured.py)."""
