"""The methods the bench compares, as config overrides on one preset (docs/bench/README.md).

Each arm is a list of `key=value` overrides, so an arm is also a command line:
`empo2-host train --preset builtin algo.p_memory=0 algo.intrinsic=off algo.low_prob_mask=off` is
the paper's GRPO, and the `builtin-grpo` preset is exactly the `builtin` preset with that arm
(a test holds them equal).
"""

from __future__ import annotations

# The paper's GRPO baseline: no memory rollouts (p = 0), no intrinsic reward, no low-probability
# mask; with p = 0 nothing reads tips, so none are written (memory.write_tips=auto).
PAPER_GRPO = ["algo.p_memory=0", "algo.intrinsic=off", "algo.low_prob_mask=off"]

ARMS: dict[str, list[str]] = {
    "EMPO²": [],
    "GRPO": PAPER_GRPO,
    # GRPO with EMPO²'s novelty reward: what the intrinsic reward alone buys.
    "GRPO + novelty": ["algo.p_memory=0", "algo.intrinsic=paper", "algo.low_prob_mask=off"],
    # The reference code's shipped defaults: masking off, intrinsic reward left out.
    "EMPO² (reference defaults)": ["algo.low_prob_mask=off", "algo.intrinsic=off"],
    # EMPO² with the frozen warm start writing the tips (docs/algorithm.md, item 17): a small
    # policy's own reflection drifts as RL moves the weights it shares with acting.
    "EMPO² (frozen tip writer)": ["memory.tip_writer=initial"],
    # EMPO² with truthful tips stated from each episode's facts (docs/algorithm.md, item 18): the
    # algorithm apart from the miniature policy's reflection, which a 7B model does and it cannot.
    "EMPO² (scripted tip writer)": ["memory.tip_writer=scripted"],
    # EMPO² showing at most as many tips as the built-in warm start's demonstrations did (one
    # success tip and up to three failure tips): ten (the paper's top_k) is a block it never saw.
    "EMPO² (3 tips)": ["memory.top_k=3"],
    # The training regime (docs/bench/r1-regime/): updates at lr 2e-4 with no anchor may erode
    # the warm start's tip reading. A KL anchor to the warm start, or a quarter of the lr.
    "EMPO² (KL 0.05)": ["algo.kl_beta=0.05"],
    "EMPO² (lr 5e-5)": ["algo.lr=5e-5"],
    # The memory key (docs/bench/r2-memory-key/): one entry per episode keyed by its final
    # conversation, as the final reference code stores tips, instead of one per step.
    "EMPO² (per-episode key)": ["memory.key=episode"],
    # The update budget (docs/bench/r3-update-budget/): the reference takes one optimizer step
    # per mini-batch of 16 prompts' rows, B·T/16 steps an iteration with its B = 16 tasks of T
    # steps; one prompt's rows per step keeps that B/N = 1 at the bench's one task an iteration
    # (about T steps instead of the fixed 2).
    "EMPO² (1-prompt mini-batches)": ["algo.minibatch_prompts=1"],
    # The paper's GRPO at the same update budget: what more gradient steps buy without memory.
    "GRPO (1-prompt mini-batches)": PAPER_GRPO + ["algo.minibatch_prompts=1"],
    # The paper's GRPO at the default lr whatever lr the command line gives every arm: a bench
    # that runs every arm at r1's lr 5e-5 compares EMPO² with GRPO at its lr (the paper's equal
    # hyperparameters) and with this one, the setting every earlier bench gave GRPO.
    "GRPO (lr 2e-4)": PAPER_GRPO + ["algo.lr=2e-4"],
}

# What `empo2-host bench` runs when --arms names none: the arms of the benches of record. The
# others run when named.
DEFAULT_ARMS = (
    "EMPO²",
    "GRPO",
    "GRPO + novelty",
    "EMPO² (reference defaults)",
    "EMPO² (frozen tip writer)",
    "EMPO² (scripted tip writer)",
    "EMPO² (3 tips)",
)

# The paper's four ablations (§6); the bench may run them on fewer seeds.
ABLATIONS: dict[str, list[str]] = {
    "EMPO² no off-policy (q=0)": ["algo.q_off_policy=0"],
    "EMPO² no on-policy-with-tips (q=1)": ["algo.q_off_policy=1"],
    "EMPO² no masking": ["algo.low_prob_mask=off"],
    "EMPO² no intrinsic reward": ["algo.intrinsic=off"],
}
