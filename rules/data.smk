"""Data stages: battle export -> validated -> citation-stripped -> deduplicated -> holdout split
-> winner rows and preference pairs; general-mix sampling; and the data audit."""


rule read_battles:
    input:
        export=SCALE_CFG["export"]["path"],
        code="workflow/scripts/read_battles.py",
    output:
        battles=f"{DATA}/battles.jsonl",
        quarantine=f"{DATA}/quarantine/read_battles.jsonl",
    log:
        f"{LOGS}/read_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        format=SCALE_CFG["export"]["format"],
        our_model=SCALE_CFG["export"].get("our_model", ""),
    shell:
        "python {input.code} --export {input.export:q} --format {params.format}"
        " --our-model {params.our_model:q} --out {output.battles} --quarantine {output.quarantine}"
        " > {log} 2>&1"


rule clean_battles:
    input:
        battles=rules.read_battles.output.battles,
        code="workflow/scripts/clean_battles.py",
    output:
        battles=f"{DATA}/battles_clean.jsonl",
        stats=f"{DATA}/clean_stats.json",
    log:
        f"{LOGS}/clean_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    shell:
        "python {input.code} --in {input.battles} --out {output.battles} --stats {output.stats} > {log} 2>&1"


rule dedup_battles:
    input:
        battles=rules.clean_battles.output.battles,
        code="workflow/scripts/dedup_battles.py",
    output:
        preferred=f"{DATA}/preferred.jsonl",
        quarantine=f"{DATA}/quarantine/dedup_battles.jsonl",
    log:
        f"{LOGS}/dedup_battles.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    shell:
        "python {input.code} --in {input.battles} --out {output.preferred}"
        " --quarantine {output.quarantine} > {log} 2>&1"


rule split_holdout:
    input:
        preferred=rules.dedup_battles.output.preferred,
        code="workflow/scripts/split_holdout.py",
    output:
        train=f"{DATA}/train.jsonl",
        holdout=f"{DATA}/holdout.jsonl",
    log:
        f"{LOGS}/split_holdout.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        modulus=RECIPE["holdout_modulus"],
    shell:
        "python {input.code} --in {input.preferred} --modulus {params.modulus}"
        " --out-train {output.train} --out-holdout {output.holdout} > {log} 2>&1"


rule winner_rows:
    input:
        train=rules.split_holdout.output.train,
        holdout=rules.split_holdout.output.holdout,
        battles=rules.clean_battles.output.battles,
        code="workflow/scripts/winner_rows.py",
    output:
        f"{DATA}/sets/{{dataset}}.jsonl",
    log:
        f"{LOGS}/winner_rows/{{dataset}}.log",
    wildcard_constraints:
        dataset=one_of([n for n, d in DATASETS.items() if d["kind"] == "winners"]),
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        repeat=lambda wc: DATASETS[wc.dataset].get("repeat", 1),
        holdout_in_training=str(RECIPE["holdout_in_training"]).lower(),
        ties=lambda wc, input: (
            f"--ties {input.battles}" if DATASETS[wc.dataset].get("ties") else ""
        ),
    shell:
        "python {input.code} --train {input.train} --holdout {input.holdout} --repeat {params.repeat}"
        " --holdout-in-training {params.holdout_in_training} {params.ties} --out {output} > {log} 2>&1"


rule battle_pairs:
    input:
        preferred=rules.dedup_battles.output.preferred,
        holdout=rules.split_holdout.output.holdout,
        code="workflow/scripts/battle_pairs.py",
    output:
        pairs=f"{DATA}/pairs.jsonl",
        holdout_pairs=f"{DATA}/holdout_pairs.jsonl",
    log:
        f"{LOGS}/battle_pairs.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        holdout_in_training=str(RECIPE["holdout_in_training"]).lower(),
    shell:
        "python {input.code} --preferred {input.preferred} --holdout {input.holdout}"
        " --holdout-in-training {params.holdout_in_training}"
        " --out {output.pairs} --out-holdout {output.holdout_pairs} > {log} 2>&1"


rule general_mix:
    input:
        sources=[
            s
            for s in SCALE_CFG["general_mix"]["sources"]
            if Path(s).suffix == ".jsonl"
        ],
        tokenizer=stage1_tokenizer(),
        code="workflow/scripts/sample_general_mix.py",
    output:
        rows=f"{DATA}/general_mix.jsonl",
        stats=f"{DATA}/general_mix_stats.json",
    log:
        f"{LOGS}/general_mix.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        sources=" ".join(
            f"--source {shlex.quote(s)}" for s in SCALE_CFG["general_mix"]["sources"]
        ),
        rows=SCALE_CFG["general_mix"]["rows"],
        max_tokens=SCALE_CFG["general_mix"]["max_tokens"],
        seed=RECIPE["seed"],
    shell:
        "python {input.code} {params.sources} --rows {params.rows} --seed {params.seed}"
        " --tokenizer {input.tokenizer:q} --max-tokens {params.max_tokens}"
        " --out {output.rows} --stats {output.stats} > {log} 2>&1"


rule data_audit:
    input:
        export=SCALE_CFG["export"]["path"],
        battles=rules.read_battles.output.battles,
        clean_stats=rules.clean_battles.output.stats,
        preferred=rules.dedup_battles.output.preferred,
        holdout=rules.split_holdout.output.holdout,
        winners=dataset_paths(card_winner_set())[0],
        pairs=rules.battle_pairs.output.pairs,
        holdout_pairs=rules.battle_pairs.output.holdout_pairs,
        general_mix=rules.general_mix.output.rows,
        quarantine=[
            rules.read_battles.output.quarantine,
            rules.dedup_battles.output.quarantine,
        ],
        card_counts="resources/card_counts.json",
        code="workflow/scripts/data_audit.py",
    output:
        json=f"{DATA}/audit.json",
        md=report(f"{DATA}/audit.md", category="Data audit"),
        html=report(f"{DATA}/audit.html", category="Data audit"),
    log:
        f"{LOGS}/data_audit.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        holdout_in_training=str(RECIPE["holdout_in_training"]).lower(),
        quarantine=lambda wc, input: " ".join(
            f"--quarantine {q}" for q in input.quarantine
        ),
    shell:
        "python {input.code} --raw-export {input.export:q} --battles {input.battles}"
        " --clean-stats {input.clean_stats} --preferred {input.preferred} --holdout {input.holdout}"
        " --winners {input.winners} --pairs {input.pairs} --holdout-pairs {input.holdout_pairs}"
        " --general-mix {input.general_mix} {params.quarantine}"
        " --holdout-in-training {params.holdout_in_training} --card-counts {input.card_counts}"
        " --out-json {output.json} --out-md {output.md} --out-html {output.html} > {log} 2>&1"
