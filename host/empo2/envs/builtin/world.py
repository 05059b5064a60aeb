"""Procedural generation of one built-in world, deterministic from (task, variation).

A world is a house of ten rooms: the hallway (where the agent starts), the kitchen and eight rooms
drawn from a pool, every room with one closed container holding a few everyday items. The task's
item hides in one container; where depends on the placement:

- "hidden": the task kind's `hiding_room` (training, held-out and test variations alike, so what
  a policy distils about where an item hides holds on variations it never saw);
- "habit": the start room or the kitchen (the demonstration worlds the warm start imitates);
- "missing": nowhere (demonstrations of the habitual, fruitless search);
- "elsewhere": any room but the habit rooms, uniformly (demonstrations of exploration and of
  following tips: they teach reading tips without leaking where each kind really hides its item).

Every world has a decoy ("broken battery") in the container of one habit room that does not
hold the item: the partial credit next to where the warm start looks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .tasks import (
    CONTAINER_POOL,
    DECOY_WORD,
    DISTRACTOR_ITEMS,
    HABIT_ROOMS,
    ROOM_POOL,
    START_ROOM,
    TaskKind,
)

ROOMS_PER_WORLD = 10


@dataclass
class World:
    """The static layout of one variation; the episode state lives in the environment."""

    kind: TaskKind
    variation: int
    rooms: list[str]
    container_of: dict[str, str]  # room -> its container
    contents: dict[str, list[str]]  # container -> items inside at the start
    item: str
    item_room: str | None
    decoy: str
    decoy_room: str
    target: str
    target_room: str
    description: str = field(default="")

    def gold_actions(self) -> list[str]:
        """The six-step solution from the start room: to the item's room, open, take, to the
        target's room, put, use (the demonstrations' corpus and the tip probes replay it)."""
        if self.item_room is None:
            raise ValueError(f"{self.kind.name}/{self.variation} hides no item, so it has no solution")
        return [
            f"go to {self.item_room}",
            f"open {self.container_of[self.item_room]}",
            f"take {self.item}",
            f"go to {self.target_room}",
            f"put {self.item} in {self.target}",
            f"{self.kind.use_verb} {self.target}",
        ]

    def room_of_container(self, container: str) -> str:
        for room, c in self.container_of.items():
            if c == container:
                return room
        raise KeyError(container)


def world_seed(task: str, variation: int, placement: str) -> str:
    # random.Random hashes a str seed with SHA-512: stable across processes and platforms,
    # unlike hash(), which is salted per process.
    return f"empo2-builtin/{task}/{variation}/{placement}"


def generate_world(kind: TaskKind, variation: int, placement: str = "hidden") -> World:
    rng = random.Random(world_seed(kind.name, variation, placement))
    # The kind's hiding room is always present, so every "hidden" world is solvable.
    chosen = [kind.hiding_room]
    pool = [r for r in ROOM_POOL if r != kind.hiding_room]
    chosen += rng.sample(pool, ROOMS_PER_WORLD - len(HABIT_ROOMS) - 1)
    rng.shuffle(chosen)
    rooms = [START_ROOM, "kitchen"] + chosen
    containers = rng.sample(list(CONTAINER_POOL), len(rooms))
    container_of = dict(zip(rooms, containers))
    contents = {c: rng.sample(list(DISTRACTOR_ITEMS), rng.randint(0, 2)) for c in containers}

    item = rng.choice(kind.items)
    target = rng.choice(kind.targets)
    if placement == "hidden":
        item_room = kind.hiding_room
    elif placement == "habit":
        item_room = rng.choice(list(HABIT_ROOMS))
    elif placement == "missing":
        item_room = None
    elif placement == "elsewhere":
        item_room = rng.choice([r for r in rooms if r not in HABIT_ROOMS])
    else:
        raise ValueError(f"unknown placement {placement!r} for world {kind.name}/{variation}")
    if item_room is not None:
        box = contents[container_of[item_room]]
        box.insert(rng.randint(0, len(box)), item)
    decoy = f"{DECOY_WORD} {item}"
    decoy_room = rng.choice([r for r in HABIT_ROOMS if r != item_room])
    box = contents[container_of[decoy_room]]
    box.insert(rng.randint(0, len(box)), decoy)
    target_room = rng.choice([r for r in rooms if r != item_room])
    world = World(
        kind, variation, rooms, container_of, contents, item, item_room, decoy, decoy_room, target, target_room
    )
    world.description = kind.description.format(item=item, target=target, target_room=target_room)
    return world
