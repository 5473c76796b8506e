"""Data stages: battle export -> validated -> citation-stripped -> deduplicated -> holdout split
-> winner rows and preference pairs; general-mix sampling; and the data audit."""

# No battle or general-mix row may hold the chat template's control tokens: the bundle's, and the special
# tokens of a given Stage-1 checkpoint's tokenizer (lineage/screening.py). The tokens themselves are the
# param: a Stage-1 copy whose tokenizer declares the same ones reruns nothing here.
CONTROL_TOKENS = control_tokens(
    ["resources/bundle"]
    + ([L.model_dir(L.stage1)] if L.runs[L.stage1].kind == "external" else [])
)


rule read_battles:
    input:
        **by_content(export=L.export.path),
    output:
        **with_sha256(
            battles=f"{P.data}/battles.jsonl",
            quarantine=f"{P.data}/quarantine/read_battles.jsonl",
            set_aside=f"{P.data}/set_aside.jsonl",
        ),
    log:
        f"{P.logs}/read_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("read_battles.py"),
        format=L.export.format,
        our_model=L.export.our_model,
        max_fraction=L.export.max_quarantine_fraction,
        max_answer_chars=L.export.max_answer_chars,
        control_tokens=flags("control-token", CONTROL_TOKENS),
    shell:
        "python workflow/scripts/read_battles.py --export {input.export:q} --format {params.format}"
        " --our-model {params.our_model:q} --max-quarantine-fraction {params.max_fraction} {params.control_tokens}"
        " --max-answer-chars {params.max_answer_chars}"
        " --out {output.battles} --quarantine {output.quarantine} --set-aside {output.set_aside} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule clean_battles:
    input:
        **by_content(battles=rules.read_battles.output.battles),
    output:
        **with_sha256(
            battles=f"{P.data}/battles_clean.jsonl",
            quarantine=f"{P.data}/quarantine/clean_battles.jsonl",
        ),
        stats=f"{P.data}/clean_stats.json",
    log:
        f"{P.logs}/clean_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("clean_battles.py"),
    shell:
        "python workflow/scripts/clean_battles.py --in {input.battles} --out {output.battles}"
        " --stats {output.stats} --quarantine {output.quarantine} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule dedup_battles:
    input:
        **by_content(battles=rules.clean_battles.output.battles),
    output:
        **with_sha256(
            preferred=f"{P.data}/preferred.jsonl",
            quarantine=f"{P.data}/quarantine/dedup_battles.jsonl",
        ),
    log:
        f"{P.logs}/dedup_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("dedup_battles.py"),
    shell:
        "python workflow/scripts/dedup_battles.py --in {input.battles} --out {output.preferred}"
        " --quarantine {output.quarantine} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule split_holdout:
    input:
        **by_content(preferred=rules.dedup_battles.output.preferred),
    output:
        **with_sha256(train=f"{P.data}/train.jsonl", holdout=f"{P.data}/holdout.jsonl"),
    log:
        f"{P.logs}/split_holdout.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("split_holdout.py"),
        modulus=L.shared.holdout_modulus,
    shell:
        "python workflow/scripts/split_holdout.py --in {input.preferred} --modulus {params.modulus}"
        " --out-train {output.train} --out-holdout {output.holdout} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule winner_rows:
    input:
        unpack(winner_inputs),
    output:
        **with_sha256(rows=f"{P.data}/sets/{{dataset}}.jsonl"),
    log:
        f"{P.logs}/winner_rows/{{dataset}}.log",
    wildcard_constraints:
        dataset=one_of([n for n, d in L.datasets.items() if d.kind == "winners"]),
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("winner_rows.py"),
        repeat=lambda wc: L.datasets[wc.dataset].repeat,
        ties=lambda wc: (
            f"--ties {rules.clean_battles.output.battles}"
            if L.datasets[wc.dataset].ties
            else ""
        ),
        holdout_in_training=str(L.shared.holdout_in_training).lower(),
    shell:
        "python workflow/scripts/winner_rows.py --train {input.train} --holdout {input.holdout}"
        " --repeat {params.repeat} --holdout-in-training {params.holdout_in_training}"
        " {params.ties} --out {output.rows} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule battle_pairs:
    input:
        **by_content(
            preferred=rules.dedup_battles.output.preferred,
            holdout=rules.split_holdout.output.holdout,
        ),
    output:
        **with_sha256(
            pairs=f"{P.data}/pairs.jsonl",
            holdout_pairs=f"{P.data}/holdout_pairs.jsonl",
        ),
    log:
        f"{P.logs}/battle_pairs.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("battle_pairs.py"),
        holdout_in_training=str(L.shared.holdout_in_training).lower(),
    shell:
        "python workflow/scripts/battle_pairs.py --preferred {input.preferred} --holdout {input.holdout}"
        " --holdout-in-training {params.holdout_in_training}"
        " --out {output.pairs} --out-holdout {output.holdout_pairs} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule general_mix:
    input:
        **by_content(
            sources=[
                s
                for s in L.general_mix.sources
                if Path(s).suffix in (".jsonl", ".parquet")
            ],
            tokenizer=L.stage1_tokenizer,
        ),
    output:
        **with_sha256(
            rows=f"{P.data}/general_mix.jsonl",
            quarantine=f"{P.data}/quarantine/general_mix.jsonl",
        ),
        stats=f"{P.data}/general_mix_stats.json",
    log:
        f"{P.logs}/general_mix.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("sample_general_mix.py"),
        sources=flags("source", L.general_mix.sources),
        rows=L.general_mix.rows,
        max_tokens=L.general_mix.max_tokens,
        seed=L.shared.seed,
        control_tokens=flags("control-token", CONTROL_TOKENS),
    shell:
        "python workflow/scripts/sample_general_mix.py {params.sources} --rows {params.rows}"
        " --seed {params.seed} --tokenizer {input.tokenizer:q} --max-tokens {params.max_tokens} {params.control_tokens}"
        " --out {output.rows} --stats {output.stats} --quarantine {output.quarantine} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule data_audit:
    input:
        **by_content(
            export=L.export.path,
            battles=rules.read_battles.output.battles,
            preferred=rules.dedup_battles.output.preferred,
            holdout=rules.split_holdout.output.holdout,
            winners=L.card_winner_set.files[0],
            pairs=rules.battle_pairs.output.pairs,
            holdout_pairs=rules.battle_pairs.output.holdout_pairs,
            general_mix=rules.general_mix.output.rows,
            read_quarantine=rules.read_battles.output.quarantine,
            clean_quarantine=rules.clean_battles.output.quarantine,
            dedup_quarantine=rules.dedup_battles.output.quarantine,
            mix_quarantine=rules.general_mix.output.quarantine,
            set_aside=rules.read_battles.output.set_aside,
        ),
        clean_stats=rules.clean_battles.output.stats,
        card_counts="resources/card_counts.json",
    output:
        json=f"{P.data}/audit.json",
        md=report(f"{P.data}/audit.md", category="Data audit"),
        html=report(f"{P.data}/audit.html", category="Data audit"),
    log:
        f"{P.logs}/data_audit.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        code=code("data_audit.py"),
        holdout_in_training=str(L.shared.holdout_in_training).lower(),
    shell:
        "python workflow/scripts/data_audit.py --raw-export {input.export:q} --battles {input.battles}"
        " --clean-stats {input.clean_stats} --preferred {input.preferred} --holdout {input.holdout}"
        " --winners {input.winners} --pairs {input.pairs} --holdout-pairs {input.holdout_pairs}"
        " --general-mix {input.general_mix} --quarantine {input.read_quarantine}"
        " --quarantine {input.clean_quarantine} --quarantine {input.dedup_quarantine}"
        " --quarantine {input.mix_quarantine} --set-aside {input.set_aside}"
        " --holdout-in-training {params.holdout_in_training}"
        " --card-counts {input.card_counts} --out-json {output.json} --out-md {output.md}"
        " --out-html {output.html} > {log} 2>&1"


# Token lengths of every trained set that no model samples (the verifier rounds' pairs are
# planned from their reference files), for tools/plan.py: `snakemake token_stats`.
TOKEN_STAT_SETS = {
    name: L.datasets[name]
    for run in L.runs_of("sft", "dpo")
    for name in L.runs[run].data
    if L.datasets[name].kind != "verifier_pairs"
}


rule token_stats:
    """The planner's row lengths: each training set tokenized as its trainer does."""
    input:
        **by_content(
            sets=[f for d in TOKEN_STAT_SETS.values() for f in d.files],
            tokenizer=L.stage1_tokenizer,
        ),
        bundle=[
            "resources/bundle/chat_template.jinja",
            "resources/bundle/system_prompt.txt",
        ],
    output:
        f"{P.data}/token_stats.json",
    log:
        f"{P.logs}/token_stats.log",
    conda:
        "../envs/train.yaml"  # the DPO pair tokenizer lives with the trainer (torch)
    resources:
        **resources_of("data"),
    params:
        code=code("token_stats.py"),
        sets=" ".join(
            f"--{'pairs' if d.kind in ('pairs', 'preference_mix') else 'sft'} {name}={shlex.quote(f)}"
            for name, d in TOKEN_STAT_SETS.items()
            for f in d.files
        ),
        max_length=L.runs[L.runs_of("sft", "dpo")[0]].recipe.max_length,
        truncation=L.runs[L.runs_of("sft", "dpo")[0]].recipe.truncation,
    shell:
        "python workflow/scripts/token_stats.py --tokenizer {input.tokenizer:q} --bundle resources/bundle"
        " --max-length {params.max_length} --truncation {params.truncation} {params.sets}"
        " --out {output} > {log} 2>&1"
