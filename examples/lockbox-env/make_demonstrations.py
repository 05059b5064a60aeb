"""Writes lockbox_env/demonstrations.jsonl: a scripted solver's episodes on the training
variations, which `empo2-host build-policy --model smollm2-135m-instruct --warm-start --env lockbox`
fine-tunes a chat model on.

    python examples/lockbox-env/make_demonstrations.py      # deterministic: the same file every time

The solver searches the way a model that sees only the last few steps can copy: in each room it
searches both places, then goes on to the next room in a fixed round (hall, study, kitchen,
cellar); once it finds the key it takes it, goes to the lock and unlocks and opens it. It never
knows where the key is, so what it teaches holds on the held-out variations too. After each
episode it leaves the tip a good writer would.
"""

from __future__ import annotations

import json
from pathlib import Path

from lockbox_env.env import ROOMS, TASKS, TRAIN_VARIATIONS, LockboxEnv

SEEDS = range(3)  # the starting room; held-out probes use other seeds
ROUND = list(ROOMS)
OUT = Path(__file__).resolve().parent / "lockbox_env" / "demonstrations.jsonl"


def solve(env: LockboxEnv, task: str):
    """The solver's actions, decided from the episode's state as it goes."""
    lock_room, lock = TASKS[task][1], TASKS[task][2]
    while not env.found:
        for place in ROOMS[env.room]:
            yield f"search {place}"
            if env.found:
                break
        else:
            yield f"go to {ROUND[(ROUND.index(env.room) + 1) % len(ROUND)]}"
    yield "take key"
    if env.room != lock_room:
        yield f"go to {lock_room}"
    yield f"unlock {lock}"
    yield f"open {lock}"


def tip(env: LockboxEnv) -> str:
    room, place = env.key_at
    verdict = "it worked" if env.score == 100 else "not finished"
    return f"the key was in the {place} in the {room} . {verdict} . score {int(env.score)}"


def episode(task: str, variation: int, seed: int) -> dict:
    env = LockboxEnv(max_steps=15)
    observation, info = env.reset(task, variation, seed)
    observations, actions = [observation], []
    for action in solve(env, task):
        assert action in env.valid_actions(), action
        observation, _, done, info = env.step(action)
        observations.append(observation)
        actions.append(action)
        if done:
            break
    return {
        "task": task,
        "task_description": info.task_description,
        "observations": observations,
        "actions": actions,
        "score": env.score,
        "tip": tip(env),
    }


def main() -> None:
    episodes = [episode(task, v, seed) for task in TASKS for v in TRAIN_VARIATIONS for seed in SEEDS]
    OUT.write_text("".join(json.dumps(e) + "\n" for e in episodes))
    steps = sum(len(e["actions"]) for e in episodes)
    solved = sum(e["score"] == 100 for e in episodes)
    print(f"{OUT.name}: {len(episodes)} episodes, {steps} steps, {solved} solved")


if __name__ == "__main__":
    main()
