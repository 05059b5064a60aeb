"""Procedural generation of one built-in world, deterministic from (task, variation).

A world is a house of ten rooms (a kind may ask for more): the hallway (where the agent starts),
the kitchen and the rest drawn from a pool, every room with one closed container holding a few
everyday items. The task's
item hides in one container; where depends on the placement:

- "hidden": the task kind's `hiding_room` (training, held-out and test variations alike, so what
  a policy distils about where an item hides holds on variations it never saw);
- "habit": the start room or the kitchen (the demonstration worlds the warm start imitates);
- "missing": nowhere (demonstrations of the habitual, fruitless search);
- "elsewhere": any room but the habit rooms, uniformly (demonstrations of exploration and of
  following tips: they teach reading tips without leaking where each kind really hides its item).

Every world has a decoy ("broken battery") in the container of one habit room that does not
hold the item: the partial credit next to where the warm start looks.

A kind with a key room locks the item's container; the key lies in the key room's container when
the placement is "hidden", else in a random room that is neither a habit room nor the item's. A
kind with a card room locks the key's container as well, and the card lies in the card room's
container ("hidden") or in a random room that holds neither the item nor the key.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .tasks import (
    CARD_ITEM,
    CONTAINER_POOL,
    DECOY_WORD,
    DISTRACTOR_ITEMS,
    HABIT_ROOMS,
    KEY_ITEM,
    ROOM_POOL,
    START_ROOM,
    TaskKind,
)


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
    key_room: str | None = None  # where the key hides, when the item's container is locked
    card_room: str | None = None  # where the card hides, when the key's container is locked too

    def gold_actions(self) -> list[str]:
        """The six-step solution from the start room: to the item's room, open, take, to the
        target's room, put, use (the demonstrations' corpus and the tip probes replay it); nine
        steps where a key must be fetched first, twelve where a card must be fetched before it."""
        if self.item_room is None:
            raise ValueError(f"{self.kind.name}/{self.variation} hides no item, so it has no solution")
        fetch = []
        for room, opener in ((self.card_room, CARD_ITEM), (self.key_room, KEY_ITEM)):
            if room is not None:
                fetch += [f"go to {room}", f"open {self.container_of[room]}", f"take {opener}"]
        return fetch + [
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
    # The kind's hiding room (and key and card rooms) is always present, so every "hidden" world
    # is solvable.
    fixed = [kind.hiding_room] + [r for r in (kind.key_room, kind.card_room) if r]
    chosen = list(fixed)
    pool = [r for r in ROOM_POOL if r not in fixed]
    chosen += rng.sample(pool, kind.rooms - len(HABIT_ROOMS) - len(fixed))
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
    # Drawn last, so the worlds of kinds without a key are what they were before keys existed.
    key_room = None
    if kind.key_room is not None and item_room is not None:
        key_room = (
            kind.key_room
            if placement == "hidden"
            else rng.choice([r for r in rooms if r not in HABIT_ROOMS and r != item_room])
        )
        box = contents[container_of[key_room]]
        box.insert(rng.randint(0, len(box)), KEY_ITEM)
    # Drawn after the key, so the two-fact kind's worlds are what they were before cards existed.
    card_room = None
    if kind.card_room is not None and key_room is not None:
        card_room = (
            kind.card_room
            if placement == "hidden"
            else rng.choice([r for r in rooms if r not in HABIT_ROOMS and r not in (item_room, key_room)])
        )
        box = contents[container_of[card_room]]
        box.insert(rng.randint(0, len(box)), CARD_ITEM)
    world = World(
        kind, variation, rooms, container_of, contents, item, item_room, decoy, decoy_room, target, target_room
    )
    world.key_room = key_room
    world.card_room = card_room
    world.description = kind.description.format(item=item, target=target, target_room=target_room)
    return world
