"""The published model as a Hub-ready repository: its checkpoint without workflow files, config.json
naming its architecture, the system prompt as trained, and a model card from the lineage and the
eval table (workflow/scripts/publish.py)."""


rule publish:
    input:
        **by_content(model=L.model_dir(L.published)),
        table=f"{P.out}/eval_table.md",
        results=L.eval_parts(L.published),
    output:
        # the repository's fixed files, not directory(): the folder holds exactly a Hub repository
        # (publish.py writes it whole, atomically; lineage.json lists every file's checksum)
        L.published_files,
    log:
        f"{P.logs}/publish.log",
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        code=code("publish.py"),
        meta=canonical(L.card_meta(config["publish"])),
        results=lambda wc, input: flags("result", input.results),
        out=lambda wc, output: os.path.dirname(output[0]),
    shell:
        "python workflow/scripts/publish.py --model {input.model:q} --meta {params.meta:q}"
        " --eval-table {input.table} {params.results} --out {params.out:q} > {log} 2>&1"
