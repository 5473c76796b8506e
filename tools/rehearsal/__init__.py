"""Rehearsing one rank of a training job on one device (tools/rehearse.py): the fake world and its collectives'
rules (world.py), the rank's shard of the model (rank.py), rows of the planner's lengths (rows.py), and what is
read at each step and reported (watch.py)."""
