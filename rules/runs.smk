"""One rule per run of the lineage, named after the run and generated from config.yaml.

So every run-level operation of Snakemake works on run names: `snakemake sftwF` builds a
checkpoint, `snakemake sftwF --forcerun sftwF` retrains it (and, for a larger target, what
descends from it), `--until`, `--omit-from` and the rule graph speak of runs. A run's rule writes results/<scale>/models/<run>
(a Hugging Face checkpoint with its lineage.json); runs given by path (the Stage-1 checkpoint at
full scale, a Base copy) get a rule that only points at it. Resumable training state lives in
state/<scale>/<run>, outside the declared output that Snakemake deletes before a rerun.
"""

# Five minutes before a training job's time limit Slurm sends SIGTERM to its processes: the
# trainer saves its state after the current step and exits 143, and the profile's `retries`
# resubmit it to resume (lineage/training/preemption.py). Ignored when run without Slurm.
TRAIN_STOP_SIGNAL = "--signal=TERM@300"


for _name in L.runs_of("base"):

    rule:
        name:
            _name
        input:
            tokenizer=rules.build_tokenizer.output,
            code=code("init_model.py"),
        output:
            model=directory(L.model_dir(_name)),
        log:
            f"{P.logs}/runs/{_name}.log",
        conda:
            "../envs/train.yaml"
        resources:
            **resources_of("data"),
        params:
            run=_name,
            family=BASE["family"],
            size=BASE["model_size"],
            dtype=BASE["dtype"],
            seed=L.recipe["seed"],
        shell:
            "python workflow/scripts/init_model.py --family {params.family} --size {params.size}"
            " --dtype {params.dtype} --tokenizer {input.tokenizer} --seed {params.seed} --run {params.run}"
            " --out {output.model} > {log} 2>&1"


for _name in L.runs_of("sft", "dpo"):
    _run = L.runs[_name]

    rule:
        name:
            _name
        input:
            init=L.model_dir(_run.parents[0]),
            data=L.data_files(_name),
            script=f"{SCRIPTS}/train_{_run.kind}.py",
            code=code(f"train_{_run.kind}.py"),
        output:
            model=directory(L.model_dir(_name)),
        log:
            f"{P.logs}/runs/{_name}.log",
        benchmark:
            f"{P.bench}/runs/{_name}.tsv"
        conda:
            # on GPUs: + the Mamba-2 kernels and the fused loss (README, "GPU clusters")
            "../envs/train-gpu.yaml" if _run.device == "cuda" else "../envs/train.yaml"
        threads: L.resources["train"].cpus
        resources:
            **train_resources(_run, slurm_extra=TRAIN_STOP_SIGNAL),
        params:
            # where the ranks run is not tracked (1 node x 2 processes trains what 2 x 1 does);
            # how many there are and how they shard is (it changes the sums' rounding)
            launch=untracked(launcher(_run)),
            world_size=_run.world_size,
            run=_name,
            data=flags("data", L.data_files(_name)),
            recipe=canonical(_run.recipe),
            lineage_extra=canonical(_run.lineage_extra),
            device=_run.device,
            sharding=_run.effective_sharding,
            accumulate=_run.accumulate,
            save_every=untracked(_run.save_every),
            state_dir=f"{P.state}/{_name}",
            metrics=f"{P.metrics}/{_name}.jsonl",
        shell:
            "{params.launch} {input.script} --run {params.run} --init {input.init:q} {params.data}"
            " --recipe {params.recipe:q} --lineage-extra {params.lineage_extra:q} --device {params.device}"
            " --sharding {params.sharding} --accumulate {params.accumulate}"
            " --save-every {params.save_every} --state-dir {params.state_dir}"
            " --metrics {params.metrics} --out {output.model} > {log} 2>&1"


for _name in L.runs_of("soup"):
    _run = L.runs[_name]

    rule:
        name:
            _name
        input:
            parents=[L.model_dir(p) for p in _run.parents],
            code=code("soup.py"),
        output:
            model=directory(L.model_dir(_name)),
        log:
            f"{P.logs}/runs/{_name}.log",
        benchmark:
            f"{P.bench}/runs/{_name}.tsv"
        conda:
            "../envs/train.yaml"
        resources:
            **resources_of("soup"),
        params:
            run=_name,
            parents=" ".join(
                f"--parent {p}={shlex.quote(L.model_dir(p))}" for p in _run.parents
            ),
            method=_run.recipe.method,
            weights=",".join(repr(w) for w in _run.recipe.weights),
            verify=untracked(L.recipe["soup_verify"]),
        shell:
            "python workflow/scripts/soup.py --run {params.run} {params.parents} --method {params.method}"
            " --weights {params.weights} --verify {params.verify} --out {output.model} > {log} 2>&1"


for _name in [
    n for n in L.runs_of("external", "base", built=False) if not L.runs[n].built
]:

    rule:
        name:
            _name
        input:
            L.model_dir(_name),
        localrule: True
