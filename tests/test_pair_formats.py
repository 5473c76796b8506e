"""lineage.training.pairs.pair_conversation: one (prompt, chosen, rejected) from every layout the DPO sources
ship, and an error naming the row and field where a row does not hold together."""

from __future__ import annotations

import pytest

from lineage.io import DataError
from lineage.pair_rows import pair_conversation

USER = {"role": "user", "content": "What is 2 plus 3?"}
SYSTEM = {"role": "system", "content": "Be brief."}
GOOD, BAD = "2 plus 3 is 5.", "It is 6."
EXPECTED = ([USER], GOOD, BAD)


def whole(*answers: str, prompt=(USER,)) -> list[list[dict]]:
    return [[*prompt, {"role": "assistant", "content": answer}] for answer in answers]


@pytest.mark.parametrize(
    "row",
    [
        {"messages": [USER], "chosen": GOOD, "rejected": BAD},  # ours
        {"messages": [USER], "chosen": {"role": "assistant", "content": GOOD}, "rejected": BAD},
        {
            "prompt": [USER],
            "chosen": [{"role": "assistant", "content": GOOD}],  # TRL, conversational
            "rejected": [{"role": "assistant", "content": BAD}],
        },  # fmt: skip
        {"prompt": USER["content"], "chosen": GOOD, "rejected": BAD},  # TRL, standard
        dict(zip(("chosen", "rejected"), whole(GOOD, BAD)), prompt=USER["content"], id="tulu-1"),  # Tulu-3 mix
        dict(zip(("chosen", "rejected"), whole(GOOD, BAD)), messages=whole(GOOD)[0], prompt=USER["content"]),  # UF
    ],
    ids=["ours", "assistant-message", "trl-conversational", "trl-standard", "tulu3", "ultrafeedback"],
)
def test_every_layout_gives_the_same_pair(row):
    assert pair_conversation(row, "f.jsonl:1") == EXPECTED


def test_a_multi_turn_conversation_keeps_its_earlier_turns():
    prompt = (SYSTEM, USER, {"role": "assistant", "content": "Sure."}, {"role": "user", "content": "And 3+4?"})
    chosen, rejected = whole("7.", "8.", prompt=prompt)
    assert pair_conversation({"chosen": chosen, "rejected": rejected}, "w") == (list(prompt), "7.", "8.")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            dict(zip(("chosen", "rejected"), [whole(GOOD)[0], whole(BAD, prompt=[SYSTEM, USER])[0]])),
            "field 'rejected': its turns before the answer differ",
        ),  # fmt: skip
        (dict(zip(("chosen", "rejected"), whole(GOOD, BAD)), messages=[SYSTEM]), "field 'messages': neither"),
        ({"chosen": whole(GOOD)[0], "rejected": BAD}, "one is a whole conversation, the other is not"),
        ({"messages": whole(GOOD)[0], "chosen": GOOD, "rejected": BAD}, "must end with a user turn"),
        (
            {"messages": [{"role": "robot", "content": "hi"}], "chosen": GOOD, "rejected": BAD},
            r"field messages\[0\]: not a \{role",
        ),  # fmt: skip
        ({"messages": [USER], "chosen": 5, "rejected": BAD}, "field 'chosen': expected the answer as text"),
        ({"chosen": GOOD, "rejected": BAD}, "no prompt"),
    ],
    ids=["other-prompt", "messages-disagree", "mixed", "prompt-ends-with-answer", "role", "answer-type", "no-prompt"],
)
def test_a_row_that_does_not_hold_together_is_named(row, message):
    with pytest.raises(DataError, match=rf"^data.jsonl:7: .*{message}"):
        pair_conversation(row, "data.jsonl:7")
