"""What no training row may hold, wherever it was read: the checks of the data stages' content screen
(lineage/data/screen.py) that the trainers also run on the rows they read themselves.

- A chat template's control tokens (`<|im_start|>`, `<|im_end|>`, ...) inside a prompt or an
  answer would become real turn delimiters once the row is rendered for training: the token
  list comes from the bundle (the markers its chat template writes and the special tokens its
  serving_config.json declares) and from the tokenizer files of a checkpoint when one is given,
  never from a list in this code.
- A turn of only whitespace and invisible characters (zero-width spaces, joiners, BOMs, other
  format characters) is empty, however long it is.
- A conversation whose user turns are all empty gives the model nothing to answer.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from lineage.chat import CHAT_TEMPLATE_FILE
from lineage.io import LineError

# Marker shapes that chat templates write: <|name|>, and <name> spellings of the tokenizer's own tokens.
_TEMPLATE_MARKER = re.compile(r"<\|[^<>|\s]{1,64}\|>")
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me"})
CHAT_ROLES = ("system", "user", "assistant")


def is_empty_text(text: str | None) -> bool:
    """True for None and for text made only of whitespace and invisible characters."""
    return text is None or all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in text)


def control_tokens(directories: Iterable[str | Path]) -> tuple[str, ...]:
    """The control tokens of a bundle or checkpoint directory: its template's markers and its special tokens."""
    found: set[str] = set()
    for directory in map(Path, directories):
        template = directory / CHAT_TEMPLATE_FILE
        if template.is_file():
            found.update(_TEMPLATE_MARKER.findall(template.read_text(encoding="utf-8")))
        serving = directory / "serving_config.json"
        if serving.is_file():
            found.update(json.loads(serving.read_text(encoding="utf-8")).get("special_tokens") or ())
        config = directory / "tokenizer_config.json"
        if config.is_file():
            settings = json.loads(config.read_text(encoding="utf-8"))
            found.update(
                entry["content"]
                for entry in (settings.get("added_tokens_decoder") or {}).values()
                if entry.get("special") and entry.get("content")
            )
            found.update(value for key, value in settings.items() if key.endswith("_token") and isinstance(value, str))
            found.update(token for token in settings.get("extra_special_tokens") or () if isinstance(token, str))
    # Tokens must look like markup; a special token spelled as plain text (rare) would flag prose.
    return tuple(sorted(token for token in found if len(token) >= 3 and token[0] == "<" and token[-1] == ">"))


def find_control_token(text: str | None, tokens: tuple[str, ...]) -> str | None:
    """The first of `tokens` inside `text`, or None."""
    if not text or "<" not in text:
        return None
    return next((token for token in tokens if token in text), None)


def screen_chat(messages: list[dict], tokens: tuple[str, ...], empty_answers: bool = False) -> None:
    """Raise LineError naming the turn of a chat row (the general mix's) that must not train: a control token
    in any turn, no user turn with text, or (unless `empty_answers`) an empty answer."""
    for index, turn in enumerate(messages):
        token = find_control_token(turn["content"], tokens)
        if token:
            raise LineError(
                f"messages[{index}].content",
                f"holds the chat template's control token {token!r}, which would split the row into fake turns",
            )
    if all(is_empty_text(turn["content"]) for turn in messages if turn["role"] == "user"):
        raise LineError("messages", "every user turn is empty or invisible: there is no prompt to answer")
    for index, turn in enumerate(messages):
        if not empty_answers and turn["role"] == "assistant" and is_empty_text(turn["content"]):
            raise LineError(f"messages[{index}].content", "an empty or invisible answer: nothing to learn from")


def turns_problem(value, field: str = "messages") -> str | None:
    """What keeps `value` from being chat turns ("<field>[i]: ..."), or None: a non-empty list of {role, content}."""
    if not isinstance(value, list) or not value:
        return f"{field}: not a list of turns"
    for index, turn in enumerate(value):
        if not isinstance(turn, dict) or turn.get("role") not in CHAT_ROLES or not isinstance(turn.get("content"), str):
            return f"{field}[{index}]: not a {{role: system|user|assistant, content: text}} turn"
    return None


def chat_refusal(messages, tokens: tuple[str, ...], empty_answers: bool = False) -> str | None:
    """Why a conversation read by a trainer must not train ("<field>: <reason>"), or None: not chat turns
    (turns_problem), or what screen_chat refuses."""
    problem = turns_problem(messages)
    if problem:
        return problem
    try:
        screen_chat(messages, tokens, empty_answers)
    except LineError as err:
        return f"{err.field}: {err.reason}"
    return None
