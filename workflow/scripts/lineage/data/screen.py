"""The content screen of the data stages: rows that parse but carry no signal, or a wrong one, are
quarantined with a reason.

- What no training row may hold (lineage.screening): the chat template's control tokens in any turn or
  answer, and a prompt whose user turns are all empty or invisible.
- A decisive vote between two identical answers states no preference.
"""

from __future__ import annotations

from lineage.io import LineError
from lineage.screening import find_control_token, is_empty_text


def screen_battle(row: dict, tokens: tuple[str, ...]) -> None:
    """Raise LineError naming the field of a validated battle that carries no or a wrong signal."""
    for index, turn in enumerate(row["messages"]):
        token = find_control_token(turn["content"], tokens)
        if token:
            raise LineError(
                f"messages[{index}].content",
                f"holds the chat template's control token {token!r}, which would split the row into fake turns",
            )
    for side in ("own", "other"):
        token = find_control_token(row[side]["answer"], tokens)
        if token:
            raise LineError(
                f"{side}.answer",
                f"holds the chat template's control token {token!r}, which would end the answer early in training",
            )
    users = [turn for turn in row["messages"] if turn["role"] == "user"]
    if all(is_empty_text(turn["content"]) for turn in users):
        raise LineError("messages", "every user turn is empty or invisible: there is no prompt to answer")
    screen_preference(row)


def screen_preference(row: dict) -> None:
    """Raise LineError when a decisive vote is between two answers that are the same text
    (whitespace aside): run on the raw answers and again on the cleaned ones."""
    own, other = row["own"]["answer"], row["other"]["answer"]
    if (
        row["vote"] in ("own_better", "other_better")
        and own is not None
        and other is not None
        and " ".join(own.split()) == " ".join(other.split())
    ):
        loser = "other" if row["vote"] == "own_better" else "own"
        raise LineError(f"{loser}.answer", "is the same text as the preferred answer: the vote states no preference")
