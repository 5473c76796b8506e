#!/usr/bin/env bash
# The Mamba-2 kernels (causal-conv1d, mamba-ssm) built against the torch of the Python that runs this, for this
# machine's GPU. PyPI ships both as sources only, and pip's isolated build cannot see the installed torch, which a
# conda env file cannot change: so the GPU envs run this after they are made (envs/*-gpu.post-deploy.sh), and a
# virtual environment runs it once by hand (docs/full-scale.md "GPU clusters"). Needs a CUDA toolkit whose nvcc
# matches torch's CUDA; no network past PyPI. About 5 minutes on 16 cores (causal-conv1d's one CUDA extension).
#
#   bash envs/mamba-kernels.sh            # TORCH_CUDA_ARCH_LIST defaults to this machine's GPU (e.g. 9.0)
set -euo pipefail
CAUSAL_CONV1D_PIN=causal-conv1d==1.6.1 # their one pin (tests/test_envs.py)
MAMBA_SSM_PIN=mamba-ssm==2.3.2.post1
CAUSAL_CONV1D=${CAUSAL_CONV1D_PIN#*==} MAMBA_SSM=${MAMBA_SSM_PIN#*==}
PYTHON=${PYTHON:-python}

"$PYTHON" - <<'PY'
import sys, torch
if not torch.version.cuda:
    sys.exit(f"mamba-kernels.sh: torch {torch.__version__} is a CPU build; install a CUDA build of torch first")
PY
if [[ -z ${TORCH_CUDA_ARCH_LIST:-} ]]; then # the site's GPUs only: 8.0 A100, 9.0 H100/H200, 10.0 B200
  TORCH_CUDA_ARCH_LIST=$("$PYTHON" -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability(0))')
  export TORCH_CUDA_ARCH_LIST
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The sources from PyPI's index itself: `pip download` would first build their metadata, which needs the build.
"$PYTHON" - "$work" "$CAUSAL_CONV1D_PIN" "$MAMBA_SSM_PIN" <<'PY'
import hashlib, re, sys, tarfile, urllib.request
work, *pins = sys.argv[1:]
for pin in pins:
    name, version = pin.split("==")
    index = f"https://pypi.org/simple/{name}/"
    links = re.findall(r'href="([^"]+)"', urllib.request.urlopen(index, timeout=60).read().decode())
    url, sha256 = urllib.parse.urljoin(index, next(l for l in links if f"-{version}.tar.gz" in l)).split("#sha256=")
    data = urllib.request.urlopen(url, timeout=300).read()
    if hashlib.sha256(data).hexdigest() != sha256:
        sys.exit(f"mamba-kernels.sh: {url} does not match the index's sha256")
    path = f"{work}/{url.rsplit('/', 1)[1]}"
    open(path, "wb").write(data)
    tarfile.open(path).extractall(work, filter="data")
PY

# causal-conv1d's setup.py adds a dozen -gencode targets whatever TORCH_CUDA_ARCH_LIST says: keep this site's.
"$PYTHON" - "$work/causal_conv1d-$CAUSAL_CONV1D/setup.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "    # HACK: The compiler flag -D_GLIBCXX_USE_CXX11_ABI"
keep = """    wanted = {a.replace(".", "") for a in os.environ["TORCH_CUDA_ARCH_LIST"].replace(";", " ").split()}
    pairs = [cc_flag[i : i + 2] for i in range(len(cc_flag) - 1) if cc_flag[i] == "-gencode"]
    others = [f for i, f in enumerate(cc_flag) if f != "-gencode" and (i == 0 or cc_flag[i - 1] != "-gencode")]
    cc_flag = others + [f for p in pairs if p[1].split("sm_")[-1] in wanted for f in p]
"""
if text.count(anchor) != 1:
    sys.exit(f"mamba-kernels.sh: {path} changed its layout; cut its -gencode list by hand (docs/full-scale.md)")
open(path, "w").write(text.replace(anchor, keep + anchor))
PY
# mamba-ssm 2.3.2.post1 imports its Mamba-1 extension unconditionally; Mamba-2 needs only its Triton code.
"$PYTHON" - "$work/mamba_ssm-$MAMBA_SSM/mamba_ssm/ops/selective_scan_interface.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
line = "import selective_scan_cuda\n"
if text.count(line) != 1:
    sys.exit(f"mamba-kernels.sh: {path} changed its imports; patch its selective_scan_cuda import by hand")
open(path, "w").write(text.replace(line, "try:\n    import selective_scan_cuda\nexcept ImportError:  # Mamba-1's CUDA extension, not built\n    selective_scan_cuda = None\n", 1))
PY

CAUSAL_CONV1D_FORCE_BUILD=TRUE MAX_JOBS=${MAX_JOBS:-16} \
  "$PYTHON" -m pip install --no-build-isolation --no-deps "$work/causal_conv1d-$CAUSAL_CONV1D"
MAMBA_SKIP_CUDA_BUILD=TRUE MAMBA_FORCE_BUILD=TRUE \
  "$PYTHON" -m pip install --no-build-isolation --no-deps "$work/mamba_ssm-$MAMBA_SSM"
"$PYTHON" -c "import causal_conv1d, mamba_ssm.ops.triton.ssd_combined; print('Mamba-2 kernels: both import')"
