"""Our scores agree with lm-evaluation-harness's own code on the same items and outputs.

- IFEval: lm-eval's `process_results` and `agg_inst_level_acc` on the same responses.
- GSM8K: lm-eval's RegexFilter + TakeFirst built from the patterns in its installed
  gsm8k.yaml, and its exact_match with the yaml's settings.
- MMLU and battle margin: lm-eval's HFLM `loglikelihood` on a pico checkpoint, given the
  contexts and continuations our runners build; also the prompt text against lm-eval's
  mmlu yaml templates.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from _eval_fixtures import make_checkpoint
from _ifeval_cases import CASES, LOOSE_ONLY, item

from lineage.checkpoints.load import load_model
from lineage.evaluation import ifeval, metrics
from lineage.evaluation.benchmarks import mmlu
from lineage.evaluation.benchmarks.mmlu import LETTERS
from lineage.evaluation.packed_scoring import packed_loglikelihood
from lineage.evaluation.prompts import ChatRenderer
from lineage.evaluation.scoring import encode_pair, encode_pairs, loglikelihood
from lineage.evaluation.tasks import RunOptions, completion_text

ifeval.registry()  # points NLTK at the installed Punkt model before lm-eval's ifeval modules load
from lm_eval.tasks.ifeval import utils as lm_ifeval  # noqa: E402

LM_EVAL_TASKS = Path(lm_ifeval.__file__).resolve().parents[1]


def _ifeval_items():
    items = [item(c[0], c[1], c[2], key=i) for i, c in enumerate(CASES + LOOSE_ONLY)]
    responses = [c[3] for c in CASES] + [c[3] for c in LOOSE_ONLY]
    items += [item(c[0], c[1], c[2], key=100 + i) for i, c in enumerate(CASES)]
    responses += [c[4] for c in CASES]
    combined = {
        "key": 999,
        "prompt": "Answer in lowercase, without commas, in at least 5 words.",
        "instruction_id_list": [
            "change_case:english_lowercase",
            "punctuation:no_comma",
            "length_constraints:number_words",
        ],
        "kwargs": [{}, {}, {"num_words": 5, "relation": "at least"}],
    }
    items += [combined, combined]
    responses += ["**the sea is wide and deep today**", "The sea, wide and deep."]
    return items, responses


def test_ifeval_matches_process_results():
    items, responses = _ifeval_items()
    ours, theirs = [], []
    for it, response in zip(items, responses):
        verdict = ifeval.check_response(it, response)
        ref = lm_ifeval.process_results(it, [response])
        assert verdict["strict"] == ref["inst_level_strict_acc"], (it["instruction_id_list"], response)
        assert verdict["loose"] == ref["inst_level_loose_acc"], (it["instruction_id_list"], response)
        ours.append(verdict)
        theirs.append(ref)
    agg = ifeval.aggregate(ours)
    n = len(theirs)
    assert agg["prompt_level_strict_acc"] == sum(r["prompt_level_strict_acc"] for r in theirs) / n
    assert agg["prompt_level_loose_acc"] == sum(r["prompt_level_loose_acc"] for r in theirs) / n
    assert agg["inst_level_strict_acc"] == lm_ifeval.agg_inst_level_acc([r["inst_level_strict_acc"] for r in theirs])
    assert agg["inst_level_loose_acc"] == lm_ifeval.agg_inst_level_acc([r["inst_level_loose_acc"] for r in theirs])
    assert 0 < agg["prompt_level_strict_acc"] < agg["prompt_level_loose_acc"] < 1


GSM8K_TEXTS = [
    "3 + 2 = 5. #### 5",
    "They remain 1000 pens.",
    "First 12, then 30, so the answer is $1,250.",
    "#### -7\nDone: -7",
    "No digits here",
    "The answer is 72.\n#### 72",
    "We get 3.5 then 4...",
    "#### 1,000\nThe answer is 1,000.",
    "",
]


def _gsm8k_yaml():
    return yaml.safe_load((LM_EVAL_TASKS / "gsm8k" / "gsm8k.yaml").read_text())


def test_gsm8k_filters_match_lm_eval_regex_filter():
    from lm_eval.filters.extraction import RegexFilter
    from lm_eval.filters.selection import TakeFirstFilter

    ours = {"strict-match": metrics.gsm8k_strict, "flexible-extract": metrics.gsm8k_flexible}
    for spec in _gsm8k_yaml()["filter_list"]:
        regex_step = spec["filter"][0]
        assert regex_step["function"] == "regex" and spec["filter"][1]["function"] == "take_first"
        kwargs = {"regex_pattern": regex_step["regex_pattern"]}
        if "group_select" in regex_step:
            kwargs["group_select"] = regex_step["group_select"]
        pattern = metrics.GSM8K_STRICT_PATTERN if spec["name"] == "strict-match" else metrics.GSM8K_FLEXIBLE_PATTERN
        assert pattern == regex_step["regex_pattern"]
        filtered = list(TakeFirstFilter().apply(RegexFilter(**kwargs).apply([[t] for t in GSM8K_TEXTS], None), None))
        assert [ours[spec["name"]](t) for t in GSM8K_TEXTS] == filtered, spec["name"]


def test_gsm8k_exact_match_matches_lm_eval_metric():
    from lm_eval.api.metrics import exact_match_hf_evaluate

    (metric,) = _gsm8k_yaml()["metric_list"]
    settings = {k: metric[k] for k in ("ignore_case", "ignore_punctuation", "regexes_to_ignore")}
    assert tuple(settings["regexes_to_ignore"]) == metrics.GSM8K_IGNORE
    gold = "so 500 + 500 = 1,000\n#### 1000"
    for text in GSM8K_TEXTS + ["$1,000.", "1000.0"]:
        for pred in (metrics.gsm8k_strict(text), metrics.gsm8k_flexible(text), text):
            expected = exact_match_hf_evaluate(predictions=[pred], references=[gold], **settings)["exact_match"]
            assert metrics.gsm8k_exact_match(pred, gold) == bool(expected), pred


def test_mmlu_prompt_matches_lm_eval_templates():
    import jinja2

    template = yaml.safe_load((LM_EVAL_TASKS / "mmlu" / "default" / "_default_template_yaml").read_text())
    subject = yaml.safe_load((LM_EVAL_TASKS / "mmlu" / "default" / "mmlu_high_school_mathematics.yaml").read_text())
    row = {
        "subject": "high_school_mathematics",
        "question": "  What is 2 + 2? ",
        "choices": ["3", "4", "5", "6"],
        "answer": 1,
    }
    description, (user,) = mmlu.messages(row)
    assert description == subject["description"] == mmlu.DESCRIPTION.format(subject="high school mathematics")
    assert user["content"] == jinja2.Template(template["doc_to_text"]).render(**row)
    assert list(LETTERS) == template["doc_to_choice"]


@pytest.fixture(scope="module")
def pico(tmp_path_factory):
    directory = make_checkpoint(tmp_path_factory.mktemp("agree") / "ckpt", seed=11)
    chat = ChatRenderer(directory)
    model = load_model(directory, dtype=torch.float32).eval()
    return chat, model


@pytest.fixture(scope="module")
def hflm(pico):
    from lm_eval.models.huggingface import HFLM

    chat, model = pico
    return HFLM(pretrained=model, tokenizer=chat.tokenizer, batch_size=3, device="cpu")


def _hflm_loglikelihood(lm, pairs):
    from lm_eval.api.instance import Instance

    requests = [Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i) for i, pair in enumerate(pairs)]
    return lm.loglikelihood(requests, disable_tqdm=True)


def test_mmlu_choice_matches_hflm(pico, hflm):
    chat, model = pico
    rows = [
        {
            "id": f"q{i}",
            "subject": "astronomy",
            "question": f"Which planet is number {i}?",
            "choices": ["Mars", "Venus", "Earth", "Saturn"],
            "answer": i % 4,
        }
        for i in range(6)
    ]
    extras, records, _ = mmlu.run(model, chat, rows, RunOptions(batch_size=4))
    assert extras["n_full_scoring"] == 0  # every item took the one-forward path
    ref = _hflm_loglikelihood(hflm, [(rec["prompt"], letter) for rec in records for letter in LETTERS])
    for i, rec in enumerate(records):
        theirs = [ll for ll, _ in ref[4 * i : 4 * i + 4]]
        assert rec["loglikelihoods"] == pytest.approx(theirs, abs=1e-4)
        assert rec["choice"] == LETTERS[max(range(4), key=lambda j: theirs[j])]


def test_battle_margin_loglikelihood_matches_hflm(pico, hflm):
    chat, model = pico
    battles = [
        ([{"role": "user", "content": f"Question {i}: what is the sea?"}], "The sea is salt water." * (i + 1), "Water.")
        for i in range(3)
    ]
    pairs = [completion_text(chat, m, answer) for m, chosen, rejected in battles for answer in (chosen, rejected)]
    ref = _hflm_loglikelihood(hflm, pairs)
    requests = [encode_pair(chat.encode, p, c)[:2] for p, c in pairs]
    assert [(c, k) for c, k, _ in encode_pairs(chat.encode_batch, pairs)] == requests
    assert requests == [tuple(map(list, hflm._encode_pair(p, c))) for p, c in pairs]
    padded = loglikelihood(model, requests, batch_size=4, pad_id=chat.pad_token_id())
    packed = packed_loglikelihood(model, requests, pack_tokens=256, pad_id=chat.pad_token_id())
    for ours in (padded, packed):
        assert [s.logprob for s in ours] == pytest.approx([ll for ll, _ in ref], abs=1e-4)
        assert [s.is_greedy for s in ours] == [g for _, g in ref]


def test_batched_encoding_moves_trailing_whitespace_as_lm_eval_does(pico, hflm):
    chat, _ = pico
    pairs = [("Answer: ", "Paris"), ("Q?\n\n", "A."), ("plain", " tail"), ("x \t", "\ny")]
    assert [(c, k) for c, k, _ in encode_pairs(chat.encode_batch, pairs)] == [
        tuple(map(list, hflm._encode_pair(c, k))) for c, k in pairs
    ]


def test_the_comparison_script_agrees_with_lm_eval_on_a_padded_vocabulary(tmp_path):
    """benchmarks/eval_vs_lm_eval.py as run on the published gpu model, here on CPU: a Nemotron-H whose head has
    more rows than its tokenizer has ids (the gpu scale pads to 131,072); the script asserts agreement itself."""
    out = tmp_path / "agreement.json"
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "eval_vs_lm_eval.py"
    args = ["--family=nemotron_h", "--size=tiny", "--vocab-size=4096", "--items=6", "--batch-size=4"]
    args += ["--max-new-tokens=4", "--warmup-items=1", f"--work={tmp_path}", f"--json={out}"]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "same scores: within 0.0001 per scored token" in done.stdout
    config = json.loads(next(tmp_path.glob("nemotron_h-tiny-*-vocab4096")).joinpath("config.json").read_text())
    assert config["vocab_size"] == 4096
    record = json.loads(out.read_text())["loglikelihood"]
    assert record["is_greedy_agree"] == 6 and record["over_tolerance_batched"] == 0
