"""The conda environments in envs/ pin the same versions as the setup command's requirements."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def pins(lines):
    found = {}
    for line in lines:
        match = re.match(r"^\s*([A-Za-z0-9_.\-\[\]]+)==([^\s;#]+)", line)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def env_pins(path):
    pip = []
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(dep, dict):
            pip += dep.get("pip", [])
    return pins(pip)


def test_every_env_pin_matches_requirements():
    required = {}
    for req in sorted(REPO.glob("requirements*.txt")):
        required.update(pins(req.read_text().splitlines()))
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs, "envs/ holds no conda environment files"
    for env in envs:
        for name, version in env_pins(env).items():
            assert name in required, f"{env.name}: {name} is not pinned in requirements*.txt"
            assert version == required[name], f"{env.name}: {name}=={version}, requirements pin {required[name]}"


def test_every_rule_env_exists():
    for smk in (REPO / "rules").glob("*.smk"):
        for env in re.findall(r'"\.\./(envs/[^"]+)"', smk.read_text()):
            assert (REPO / env).is_file(), f"{smk.name} names {env}, which does not exist"


def test_the_license_file_is_the_one_pyproject_names():
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]["text"]
    text = (REPO / "LICENSE").read_text()
    assert declared == "Apache-2.0"
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"] and "END OF TERMS AND CONDITIONS" in text


def test_the_kernel_build_is_the_one_pin_of_the_mamba_kernels_and_the_gpu_envs_run_it():
    """pip cannot build causal-conv1d / mamba-ssm against the installed torch: envs/mamba-kernels.sh does, and is their
    one pin; the GPU envs' post-deploy scripts run it, and no env or requirements file lists them (pip would fail)."""
    from test_env_imports import kernel_pins

    built = kernel_pins()
    assert set(built) == {"causal-conv1d", "mamba-ssm"}, built
    for requirements in REPO.glob("requirements*.txt"):
        assert not set(built) & set(pins(requirements.read_text().splitlines())), requirements.name
    for env in ("train-gpu", "eval-gpu"):
        assert "bash envs/mamba-kernels.sh" in (REPO / f"envs/{env}.post-deploy.sh").read_text(), env
        assert not set(built) & set(env_pins(REPO / f"envs/{env}.yaml")), env
