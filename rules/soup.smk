"""Model soups: a weighted parameter average of runs that share one initialisation."""


rule soup:
    input:
        parents=lambda wc: [model_dir(p) for p in RUNS[wc.run]["parents"]],
        code=[
            "workflow/scripts/soup.py",
            "workflow/scripts/lineage/soup.py",
            "workflow/scripts/lineage/shards.py",
        ],
    output:
        model=directory(f"{MODELS}/{{run}}"),
    log:
        f"{LOGS}/soup/{{run}}.log",
    benchmark:
        f"{BENCH}/soup/{{run}}.tsv"
    wildcard_constraints:
        run=one_of(SOUP_RUNS),
    conda:
        "../envs/train.yaml"
    resources:
        **job_resources("soup"),
    params:
        parents=lambda wc: " ".join(
            f"--parent {p}={shlex.quote(model_dir(p))}"
            for p in RUNS[wc.run]["parents"]
        ),
        weights=lambda wc: ",".join(
            str(w)
            for w in RUNS[wc.run].get(
                "weights",
                [1 / len(RUNS[wc.run]["parents"])] * len(RUNS[wc.run]["parents"]),
            )
        ),
        verify=config["recipe"].get("soup_verify", "stat"),
    shell:
        "python workflow/scripts/soup.py --run {wildcards.run} {params.parents}"
        " --weights {params.weights} --verify {params.verify} --out {output.model} > {log} 2>&1"
