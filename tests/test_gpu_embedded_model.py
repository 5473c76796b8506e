"""The embedded model on a GPU with the Mamba-2 kernels installed (skipped without them).

The embedded Nemotron-H is built as the workflow builds it (build_tokenizer.py, init_model.py --size
tiny), trained two steps, then evaluated on CUDA in fp32 and bf16 by eval_model.py: the kernels run its
shape (causal-conv1d needs the input projection's width to be a multiple of 8; the former 164-wide
shape stopped inside the kernel) and give the reference path's scores. Run on a GPU machine as:
python -m pytest tests/test_gpu_embedded_model.py
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from _training_fixtures import REPO, SCRIPTS, build_base, run_in_process, train_args
from transformers import AutoModelForCausalLM

from lineage.checkpoints.load import load_model
from lineage.families.nemotron_h import missing_mamba_kernels
from lineage.modeling import KernelShapeError

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or bool(missing_mamba_kernels()),
    reason="needs a CUDA GPU with mamba-ssm and causal-conv1d",
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    paths = build_base(tmp_path_factory.mktemp("embedded-gpu"))
    out = paths["base"].parent / "sft"
    run_in_process("train_sft", train_args(paths["base"], paths["sft"], out, steps=2))  # on the GPU
    return out


# transformers takes the kernels whenever they import; hidden, it runs its PyTorch reference path
REFERENCE = """
import sys
sys.modules["causal_conv1d"] = sys.modules["mamba_ssm"] = None
import torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32).eval()
ids = torch.load(sys.argv[2])
with torch.no_grad():
    torch.save(model(input_ids=ids).logits, sys.argv[3])
"""


def reference_logits(checkpoint, ids: torch.Tensor, tmp_path) -> torch.Tensor:
    torch.save(ids, tmp_path / "ids.pt")
    proc = subprocess.run(
        [sys.executable, "-c", REFERENCE, str(checkpoint), str(tmp_path / "ids.pt"), str(tmp_path / "logits.pt")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return torch.load(tmp_path / "logits.pt", weights_only=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_kernels_run_the_embedded_shape_and_match_the_reference_path(trained, dtype, tmp_path):
    ids = torch.randint(3, 300, (2, 96), generator=torch.Generator().manual_seed(0))
    model = AutoModelForCausalLM.from_pretrained(trained, dtype=dtype).cuda().eval()
    with torch.no_grad():
        fast = model(input_ids=ids.cuda()).logits.float().cpu()  # mamba-ssm and causal-conv1d
    reference = reference_logits(trained, ids, tmp_path)
    tolerance = 2e-3 if dtype == torch.float32 else 0.15
    assert (fast - reference).abs().max() < tolerance


@pytest.mark.parametrize("cache", ["dynamic", "continuous"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_eval_model_scores_the_embedded_checkpoint_on_cuda(trained, tmp_path, dtype, cache):
    out = tmp_path / "eval"
    sample = REPO / "resources" / "sample" / "eval"
    command = [sys.executable, str(SCRIPTS / "eval_model.py"), "--model", str(trained), "--run", "sft"]
    command += ["--items", f"mmlu={sample / 'mmlu.jsonl'}", "--items", f"gsm8k={sample / 'gsm8k.jsonl'}"]
    command += ["--sizes", "mmlu=8,8", "--sizes", "gsm8k=4,4", "--parts", "mmlu_A,gsm8k_A", "--max-new-tokens", "16"]
    command += ["--device", "cuda", "--dtype", dtype, "--cache", cache, "--out-dir", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for path in sorted(out.rglob("*.jsonl")) for line in path.read_text().splitlines()]
    assert len(records) >= 12, sorted(p.name for p in out.rglob("*"))


def test_a_shape_the_kernels_cannot_run_is_refused_before_it_reaches_them(trained, tmp_path):
    misfit = tmp_path / "misfit"
    model = AutoModelForCausalLM.from_pretrained(trained)
    model.config.mamba_num_heads = 4  # the former embedded shape: a 164-wide input projection
    model = AutoModelForCausalLM.from_config(model.config)
    model.save_pretrained(misfit)
    with pytest.raises(KernelShapeError, match="164 wide"):
        load_model(misfit, device="cuda")
