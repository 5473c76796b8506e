"""What only the rule files (and the workflow's own tools) import: the lineage typed from
config.yaml (runs), import closures and code digests (codedeps), artifact digests (digests) and
cluster requests (cluster). May import every other layer; none of them imports this package.
"""
