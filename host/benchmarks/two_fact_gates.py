"""The gates a world of facts found in sequence must pass before any RL is run on it: the two-fact
kind (docs/bench/r8-two-facts/) and the three-fact kind (`--preset builtin-three-facts`,
docs/bench/r8e-three-facts/).

    .venv/bin/python host/benchmarks/two_fact_gates.py [--policy FOLDER] [--preset builtin-two-facts]
        [--blind-episodes 2000] [--guided-repeats 8] [--chunk 200] [--json OUT] [KEY=VALUE ...]

A world is a trap for GRPO's blind search only when the warm start almost never succeeds
without tips, and it can show memory's worth only when the same warm start succeeds once the
right tips are in its prompt. Two measurements of the preset's task kinds, no weight update:

- blind: memory-free episodes at the training temperature (paper: 1.0) over every training and
  held-out variation in turn; the successes counted. Gate: at most 1 in 2,000.
- guided: memory-mode episodes with a scripted memory of the right tips, stored as training
  stores them: per variation, the gold path's success tip (where the card and the key were, for
  a kind that has them, where the item was, score 100) with its steps' states and actions, and a
  habitual search's failure tip (score 0). Gate: success at least 50%, and at most 25% of the
  actions invalid as written (before the environment's correction).

Episodes are played in chunks of `--chunk`, each from its own generator seed (chunk k: seed k),
so the figures do not depend on how many fit in memory at once. Prints both measurements and
whether each gate holds; `--json` also writes them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from empo2.bench.provenance import cpu_model, weights_sha256  # noqa: E402
from empo2.config import ConfigError, load_config  # noqa: E402
from empo2.envs.builtin.tasks import HABIT_ROOMS  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from empo2.memory.embedding import SentenceEmbedder  # noqa: E402
from empo2.memory.store import MemoryStore  # noqa: E402
from empo2.policy.demos import render_tip  # noqa: E402
from empo2.policy.model import load_policy  # noqa: E402
from empo2.training.rollout import Episode, RolloutSettings, roll_out  # noqa: E402
from empo2.training.trainer import resolve_model  # noqa: E402
from probe_tips import ActionCounts, _play, _ValidityCount  # noqa: E402

BLIND_BAR = 1 / 2000  # successes per episode, at most
GUIDED_SUCCESS_BAR = 0.50  # at least
GUIDED_INVALID_BAR = 0.25  # at most


def right_tips(config, pairs, embedder) -> MemoryStore:
    """Per variation, the success tip of its gold path and the failure tip of a habitual search,
    each with its steps' memory keys and actions, as training stores an episode's tip."""
    env = make_env(config.env)
    memory = MemoryStore.open(None, embedder)
    for task, variation in pairs:
        env.reset(task, variation)
        w = env.world
        key = f"{task}/{variation}"
        found = (w.container_of[w.item_room], w.item_room)
        key_found = (w.container_of[w.key_room], w.key_room) if w.key_room else None
        card_found = (w.container_of[w.card_room], w.card_room) if w.card_room else None
        tip = render_tip(w.item, 100, found, [], w.target, key_in=key_found, card_in=card_found)
        memory.add_episode_tip(key, tip, _play(env, task, variation, w.gold_actions(), config.policy), 100.0, {})
        habit: list[str] = []
        for room in HABIT_ROOMS:
            habit += [f"go to {room}", f"open {w.container_of[room]}"]
        searched = [(w.container_of[r], r) for r in HABIT_ROOMS]
        memory.add_episode_tip(
            key,
            render_tip(w.item, 0, None, searched, w.target),
            _play(env, task, variation, habit, config.policy),
            0.0,
            {},
        )
    return memory


def play_many(config, model, tokenizer, settings, pairs, episodes: int, chunk: int, memory) -> dict:
    """`episodes` episodes over `pairs` in turn, memory mode with `memory` (None: no tips)."""
    counts = ActionCounts()
    successes = played = steps = 0
    for k, start in enumerate(range(0, episodes, chunk)):
        n = min(chunk, episodes - start)
        batch = [Episode(f"e{start + i}", *pairs[(start + i) % len(pairs)], start + i, "memory") for i in range(n)]
        envs = [_ValidityCount(make_env(config.env), counts) for _ in batch]
        roll_out(envs, batch, model, tokenizer, settings, torch.Generator().manual_seed(k), memory)
        successes += sum(e.success for e in batch)
        played += n
        steps += sum(len(e.steps) for e in batch)
        print(f"  {played}/{episodes} episodes, {successes} successes", flush=True)
    return {
        "episodes": played,
        "successes": successes,
        "success_rate": successes / played,
        "actions": counts.actions,
        "invalid_share": 1 - counts.valid_share(),
        "mean_steps": steps / played,
        "invalid_written": counts.invalid_line(6),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=None, help="model folder (default: the built-in policy)")
    parser.add_argument("--preset", default="builtin-two-facts", help="the preset whose worlds are gated")
    parser.add_argument("--blind-episodes", type=int, default=2000)
    parser.add_argument("--guided-repeats", type=int, default=8, help="guided episodes per variation")
    parser.add_argument("--chunk", type=int, default=200, help="episodes played at once")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides")
    args = parser.parse_args()
    try:
        config = load_config(args.preset, args.overrides)
    except ConfigError as error:  # one sentence, no traceback
        parser.error(str(error))
    if args.blind_episodes < 1 or args.guided_repeats < 1 or args.chunk < 1:
        parser.error("--blind-episodes, --guided-repeats and --chunk must be at least 1")
    policy = args.policy or resolve_model("builtin")
    model, tokenizer = load_policy(policy)
    model.eval()
    env = make_env(config.env)
    pairs = [(t, v) for t in config.env.tasks for v in env.variations(t, "all")]
    settings = RolloutSettings.from_config(config, env, train=True)
    print(
        f"preset {args.preset}, tasks {config.env.tasks}, step limit {config.env.max_steps}, "
        f"{len(pairs)} variations, temperature {settings.temperature}"
    )
    print(f"blind: {args.blind_episodes} memory-free episodes")
    blind = play_many(config, model, tokenizer, settings, pairs, args.blind_episodes, args.chunk, None)
    print(f"guided: {args.guided_repeats} episodes per variation with the right tips")
    memory = right_tips(config, pairs, SentenceEmbedder())
    guided = play_many(config, model, tokenizer, settings, pairs, args.guided_repeats * len(pairs), args.chunk, memory)
    gates = {
        "blind": blind["success_rate"] <= BLIND_BAR,
        "guided_success": guided["success_rate"] >= GUIDED_SUCCESS_BAR,
        "guided_invalid": guided["invalid_share"] <= GUIDED_INVALID_BAR,
    }
    for name, figures in (("blind", blind), ("guided", guided)):
        print(
            f"{name:7s} success {figures['successes']}/{figures['episodes']} "
            f"({100 * figures['success_rate']:.2f}%), invalid as written {100 * figures['invalid_share']:.1f}% "
            f"of {figures['actions']} actions, {figures['mean_steps']:.1f} steps an episode"
        )
        print(f"{'':7s} invalid as written, most often: {figures['invalid_written']}")
    print(
        f"gates: blind ≤ 1 in 2,000 {'holds' if gates['blind'] else 'FAILS'}; "
        f"guided success ≥ 50% {'holds' if gates['guided_success'] else 'FAILS'}; "
        f"guided invalid ≤ 25% {'holds' if gates['guided_invalid'] else 'FAILS'}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "preset": args.preset,
                    "overrides": args.overrides,
                    "policy": Path(policy).name,  # its folder's name; the sha256 says which weights
                    "policy_sha256": weights_sha256(policy),
                    "cpu": cpu_model(),
                    "blind": blind,
                    "guided": guided,
                    "gates": gates,
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
