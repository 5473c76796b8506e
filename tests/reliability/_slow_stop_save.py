"""train_sft.py whose save at a stop request takes SLOW_SAVE_S seconds longer: a full-scale rank's state (~47 GB)
takes minutes to write, longer than torch elastic's default 30 s between forwarding a stop and killing a rank."""

import os
import sys
import time

import train_sft

from lineage.errors import run_cli
from lineage.training import loop

_save_state = loop.save_state


def slow_save_state(*args, **kwargs):
    time.sleep(float(os.environ["SLOW_SAVE_S"]))
    return _save_state(*args, **kwargs)


loop.save_state = slow_save_state
sys.exit(run_cli(lambda: train_sft.main(*train_sft.parse_args())))
