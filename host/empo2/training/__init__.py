"""Training: the EMPO² loop and everything one iteration needs.

`trainer` (the loop, top to bottom), `rollout` (episodes with and without tips), `update` (the
hybrid on-/off-policy update), `evaluation` (memory-free success, memory trials),
`learning_signals` (the figures that say why a run learns), `checkpoint` (what a resume needs),
`stored_episode` (what the run folder stores of an episode), `run_control` (pause, stop and callbacks,
free of torch), `distributed` and `sharding` (data parallel, FSDP2), `plan` (will a config fit
these GPUs).

Nothing is imported here: the server imports `run_control` without loading torch.
"""
