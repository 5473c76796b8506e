"""One rule per run of the lineage, named after the run and generated from config.yaml.

So every run-level operation of Snakemake works on run names: `snakemake sftwF` builds a
checkpoint, `snakemake sftwF --forcerun sftwF` retrains it (and, for a larger target, what
descends from it), `--until`, `--omit-from` and the rule graph speak of runs. A run's rule writes results/<scale>/models/<run>
(a Hugging Face checkpoint with its lineage.json); runs given by path (the Stage-1 checkpoint at
full scale, a Base copy) get a rule that only points at it. Resumable training state lives in
state/<scale>/<run>, outside the declared output that Snakemake deletes before a rerun.
"""

# Five minutes before a training job's time limit Slurm sends SIGTERM to its processes: the
# trainer saves its state after the current step and exits 143, the launcher waiting for it
# (lineage/workflow/cluster.py STOP_GRACE_S), and the profile's `retries` resubmit it to resume
# (lineage/training/preemption.py). Ignored when run without Slurm.


for _name in L.runs_of("base"):

    rule:
        name:
            _name
        input:
            **by_content(tokenizer=rules.build_tokenizer.output.tokenizer),
        output:
            **with_sha256(model=directory(L.model_dir(_name))),
        log:
            f"{P.logs}/runs/{_name}.log",
        conda:
            "../envs/train.yaml"
        resources:
            **resources_of("data"),
        params:
            code=code("init_model.py"),
            run=_name,
            family=L.base.family,
            size=L.base.model_size,
            vocab=f" --vocab-size {L.base.vocab_size}" if L.base.vocab_size else "",
            dtype=L.base.dtype,
            seed=L.shared.seed,
        shell:
            "python workflow/scripts/init_model.py --family {params.family} --size {params.size}{params.vocab}"
            " --dtype {params.dtype} --tokenizer {input.tokenizer} --seed {params.seed} --run {params.run}"
            " --out {output.model} > {log} 2>&1"
            " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


# A DPO run's reference (its parent) scores the run's pairs (and its validation pairs) once, in a job
# of its own: the trainer loads no second model, and beta, lr or the step count change only the
# training job. What changes the scores is tracked: the parent, the pairs, max_length, truncation, the dtype. Runs
# that differ only in what the scores do not depend on (the card's lr doses) share one job.
for _name in [n for n in L.runs_of("dpo") if L.reference_of(n) == n]:
    _run = L.runs[_name]

    rule:
        name:
            f"{_name}_reference"
        input:
            **by_content(
                init=L.model_dir(_run.parents[0]), data=L.reference_data_files(_name)
            ),
        output:
            **with_sha256(reference=L.reference_file(_name)),
        log:
            f"{P.logs}/reference_logprobs/{_name}.log",
        benchmark:
            f"{P.bench}/reference_logprobs/{_name}.tsv"
        conda:
            "../envs/train-gpu.yaml" if _run.device == "cuda" else "../envs/train.yaml"
        threads: L.resources["train"].cpus
        resources:
            # the run's own node(s): each rank scores a share of the pairs
            **train_resources(_run, slurm_extra=""),
        params:
            code=code("reference_logprobs.py"),
            launch=untracked(launcher(_run)),
            world_size=_run.world_size,
            data=flags("data", L.reference_data_files(_name)),
            max_length=_run.recipe.max_length,
            truncation=_run.recipe.truncation,
            dtype="bfloat16" if _run.recipe.precision == "bf16" else "float32",
            device=_run.device,
            # how the scores are batched changes them by float rounding only: not tracked
            pack_tokens=untracked(L.eval.scoring_pack_tokens(_run.recipe.max_length)),
            batch_size=untracked(L.eval.batch_size),
        shell:
            "{params.launch} workflow/scripts/reference_logprobs.py --init {input.init:q} {params.data}"
            " --max-length {params.max_length} --truncation {params.truncation} --dtype {params.dtype}"
            " --device {params.device} --pack-tokens {params.pack_tokens} --batch-size {params.batch_size}"
            " --out {output.reference:q} > {log} 2>&1"
            " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


for _name in L.runs_of("sft", "dpo"):
    _run = L.runs[_name]

    rule:
        name:
            _name
        input:
            **by_content(
                init=L.model_dir(_run.parents[0]),
                data=L.data_files(_name),
                reference=[L.reference_file(_name)] if _run.kind == "dpo" else [],
                # always there for a run that validates (SFT on winner rows, DPO on battle pairs), whatever
                # validate_every says: a changed input list would rerun it. The split already feeds its rows.
                validation=L.validation_files(_name),
            ),
        output:
            **with_sha256(model=directory(L.model_dir(_name))),
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
            code=code(f"train_{_run.kind}.py"),
            script=f"{SCRIPTS}/train_{_run.kind}.py",
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
            # splitting the experts regroups their gradient sums (float rounding): tracked like the world size
            expert_parallel=_run.expert_parallel,
            save_every=untracked(_run.save_every),
            save_every_minutes=untracked(_run.save_every_minutes),
            # reporting never changes the weights (tests/test_tracking.py): not tracked
            validation=untracked(flags("validation", L.validation_files(_name))),
            validate_every=untracked(
                _run.validate_every if L.validation_files(_name) else 0
            ),
            report_to=untracked(",".join(_run.report_to) or "none"),
            tracking=untracked(
                f"--tracking-dir {P.logs}/tracking --tracking-project ember-lineage-{L.scale}"
            ),
            state_dir=f"{P.state}/{_name}",
            metrics=f"{P.metrics}/{_name}.jsonl",
            reference=flags(
                "reference-logprobs",
                [L.reference_file(_name)] if _run.kind == "dpo" else [],
            ),
        shell:
            "{params.launch} {params.script} --run {params.run} --init {input.init:q} {params.data} {params.reference}"
            " --recipe {params.recipe:q} --lineage-extra {params.lineage_extra:q} --device {params.device}"
            " --sharding {params.sharding} --accumulate {params.accumulate} --expert-parallel {params.expert_parallel}"
            " --save-every {params.save_every} --save-every-minutes {params.save_every_minutes}"
            " --state-dir {params.state_dir} {params.validation} --validate-every {params.validate_every}"
            " --report-to {params.report_to} {params.tracking}"
            " --metrics {params.metrics} --out {output.model} > {log} 2>&1"
            " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


for _name in L.runs_of("soup"):
    _run = L.runs[_name]

    rule:
        name:
            _name
        input:
            **by_content(parents=[L.model_dir(p) for p in _run.parents]),
        output:
            **with_sha256(model=directory(L.model_dir(_name))),
        log:
            f"{P.logs}/runs/{_name}.log",
        benchmark:
            f"{P.bench}/runs/{_name}.tsv"
        conda:
            "../envs/train.yaml"
        resources:
            **resources_of("soup"),
        params:
            code=code("soup.py"),
            run=_name,
            parents=" ".join(
                f"--parent {p}={shlex.quote(L.model_dir(p))}" for p in _run.parents
            ),
            method=_run.recipe.method,
            weights=",".join(repr(w) for w in _run.recipe.weights),
            verify=untracked(L.shared.soup_verify),
        shell:
            "python workflow/scripts/soup.py --run {params.run} {params.parents} --method {params.method}"
            " --weights {params.weights} --verify {params.verify} --out {output.model} > {log} 2>&1"
            " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


for _name in [
    n for n in L.runs_of("external", "base", built=False) if not L.runs[n].built
]:

    rule:
        name:
            _name
        input:
            **by_content(model=L.model_dir(_name)),
        localrule: True
