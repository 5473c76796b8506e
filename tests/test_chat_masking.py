"""Assistant-only labels: what gets a loss and what does not, across turns and truncation."""

from __future__ import annotations

import build_tokenizer
import pytest
from _training_fixtures import REPO, chat_rows, write_jsonl
from transformers import AutoTokenizer

from lineage.chat import (
    END_OF_TURN,
    IGNORE_INDEX,
    ChatFormatError,
    assistant_spans,
    completion_logprob_inputs,
    load_bundle,
    render,
    tokenize_conversation,
    tokenize_rows,
)

BUNDLE = REPO / "resources" / "bundle"


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    root = tmp_path_factory.mktemp("tok")
    corpus = write_jsonl(root / "rows.jsonl", chat_rows(32))
    build_tokenizer.main(
        build_tokenizer.parse_args(
            ["--corpus", str(corpus), "--vocab-size", "400", "--bundle", str(BUNDLE), "--out", str(root / "out")]
        )
    )
    return AutoTokenizer.from_pretrained(root / "out")


@pytest.fixture(scope="module")
def system_prompt():
    return load_bundle(BUNDLE).system_prompt


def trained_text(tok, row):
    return tok.decode([t for t, l in zip(row.input_ids, row.labels) if l != IGNORE_INDEX], skip_special_tokens=False)


def test_prompt_and_system_get_no_loss_and_answer_plus_end_of_turn_does(tok, system_prompt):
    messages = [{"role": "user", "content": "What is 2 plus 3?"}, {"role": "assistant", "content": "2 plus 3 is 5."}]
    row, reason = tokenize_conversation(tok, messages, system_prompt=system_prompt, max_length=None)
    assert reason is None
    prompt = render(tok, [{"role": "system", "content": system_prompt}, messages[0]], add_generation_prompt=True)
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert all(label == IGNORE_INDEX for label in row.labels[:n_prompt])  # system, user and both headers
    assert all(label != IGNORE_INDEX for label in row.labels[n_prompt:-1])  # every answer token
    assert tok.convert_ids_to_tokens(row.labels[-2]) == END_OF_TURN  # end of turn is trained ...
    assert row.labels[-1] == IGNORE_INDEX and tok.decode(row.input_ids[-1:]) == "\n"  # ... the separator is not
    assert trained_text(tok, row) == "2 plus 3 is 5." + END_OF_TURN


def test_system_prompt_is_added_only_when_missing(tok, system_prompt):
    own = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
    ]
    row, _ = tokenize_conversation(tok, own, system_prompt=system_prompt, max_length=None)
    text = tok.decode(row.input_ids)
    assert "Be brief." in text and system_prompt not in text
    row, _ = tokenize_conversation(tok, own[1:], system_prompt=system_prompt, max_length=None)
    assert tok.decode(row.input_ids).startswith(f"<|im_start|>system\n{system_prompt}<|im_end|>")


def test_every_assistant_turn_of_a_multi_turn_chat_is_trained(tok):
    messages = chat_rows(1)[0]["messages"]  # system, user, assistant, user, assistant
    row, _ = tokenize_conversation(tok, messages, system_prompt=None, max_length=None)
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    assert trained_text(tok, row) == "".join(a + END_OF_TURN for a in answers)
    assert "And twice" not in trained_text(tok, row)  # the second user turn is masked


def test_truncate_keeps_a_cut_answer_and_drop_counts_it(tok):
    messages = chat_rows(1)[0]["messages"]
    full, _ = tokenize_conversation(tok, messages, system_prompt=None, max_length=None)
    first_answer_end = full.labels.index(tok.convert_tokens_to_ids(END_OF_TURN)) + 1
    cut_at = first_answer_end + 8  # inside the second user turn
    row, reason = tokenize_conversation(tok, messages, system_prompt=None, max_length=cut_at, truncation="truncate")
    assert reason is None and row.truncated and len(row.input_ids) == cut_at
    assert row.labels == full.labels[:cut_at]
    cut_in_answer = first_answer_end - 3
    row, _ = tokenize_conversation(tok, messages, system_prompt=None, max_length=cut_in_answer, truncation="truncate")
    first_answer = next(m["content"] for m in messages if m["role"] == "assistant")
    assert first_answer.startswith(trained_text(tok, row)) and len(trained_text(tok, row)) > 0
    rows, stats = tokenize_rows(tok, [messages, messages[:3]], system_prompt=None, max_length=cut_at, truncation="drop")
    assert len(rows) == 1 and stats.dropped == {"longer than max length": 1}
    rows, stats = tokenize_rows(tok, [messages], system_prompt=None, max_length=4, truncation="truncate")
    assert rows == [] and stats.dropped == {"no trained tokens left after truncation": 1}


def test_completion_labels_cover_only_the_completion(tok, system_prompt):
    prompt = [{"role": "user", "content": "What is 2 plus 3?"}]
    row, reason = completion_logprob_inputs(tok, prompt, "It is 5.", system_prompt=system_prompt)
    assert reason is None
    assert trained_text(tok, row) == "It is 5." + END_OF_TURN
    prompt_ids = tok(
        render(tok, [{"role": "system", "content": system_prompt}, *prompt], add_generation_prompt=True),
        add_special_tokens=False,
    )["input_ids"]
    assert list(row.input_ids[: len(prompt_ids)]) == prompt_ids
    with pytest.raises(ChatFormatError, match="must end with a user turn"):
        completion_logprob_inputs(tok, [*prompt, {"role": "assistant", "content": "x"}], "y", system_prompt=None)


def test_a_template_that_renders_the_last_turn_differently_is_refused(tok):
    tok = tok.__class__.from_pretrained(tok.name_or_path)
    tok.chat_template = (  # drops the end-of-turn of the final message: not prefix-stable
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
        "{% if not loop.last %}<|im_end|>\n{% endif %}{% endfor %}"
    )
    messages = chat_rows(1)[0]["messages"]
    with pytest.raises(ChatFormatError):
        assistant_spans(tok, messages)


def test_a_token_straddling_the_header_drops_the_row(tmp_path):
    corpus = write_jsonl(tmp_path / "nl.jsonl", [{"text": "a\n\n\nb\n\n\nc" * 50}])
    build_tokenizer.main(
        build_tokenizer.parse_args(
            ["--corpus", str(corpus), "--vocab-size", "300", "--bundle", str(BUNDLE), "--out", str(tmp_path / "t")]
        )
    )
    tok = AutoTokenizer.from_pretrained(tmp_path / "t")
    assert len(tok("\n\n", add_special_tokens=False)["input_ids"]) == 1
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "\n\nb"}]  # header "\n" + "\n\nb"
    row, reason = tokenize_conversation(tok, messages, system_prompt=None, max_length=None)
    assert row is None and reason == "label spans do not decode to the assistant text"


def test_repeated_conversations_are_counted_each_time_and_tokenized_alike(tok):
    long, short = chat_rows(2)[0]["messages"], chat_rows(2)[1]["messages"][:3]
    alone = {id(m): tokenize_conversation(tok, m, system_prompt=None, max_length=40) for m in (long, short)}
    rows, stats = tokenize_rows(tok, [long, short, long, short, short], system_prompt=None, max_length=40)
    kept = [m for m in (long, short, long, short, short) if alone[id(m)][0] is not None]
    assert rows == [alone[id(m)][0] for m in kept]
    assert 0 < len(kept) < 5  # one conversation kept, one dropped for length, each repeated
    assert stats.rows_in == 5 and stats.rows_kept == len(kept)
    assert sum(stats.dropped.values()) == 5 - len(kept)
    assert stats.tokens == sum(len(r.input_ids) for r in rows)
