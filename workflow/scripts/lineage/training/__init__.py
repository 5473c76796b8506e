"""The training loop shared by train_sft.py and train_dpo.py, one concern per module.

dist (process group from the launcher's environment), mesh (the device meshes of lineage/parallel_dims.py's
degrees), fsdp (sharded model from a checkpoint),
compiling (torch.compile of a block, kernel-backed mixers eager), moe_dispatch (a MoE layer's
token copies to their experts and back by gathers), expert_parallel (experts split over ranks), data (batch geometry and a
data order that is a pure function of the step), losses (summed token and sequence terms),
optim (AdamW, schedules, clipping), state (resumable state outside the declared output),
metrics (step lines, MFU, metrics.jsonl), recipe (every value that shapes the weights,
documented), cli (the shared command line), loop (the step itself), output (verify the parent,
write the child).
"""
