"""What-if reruns: `branch` (a copy of a run at one of its checkpoints, the parent never touched)
and `runner` (the off-policy update rerun on a branch, or dry-run, compared before and after).

Nothing is imported here: the server reads branches (`branch`, no torch) at start-up and loads
`runner`, which loads the trainer, only when a client asks for a rerun.
"""
