"""The task kinds of the built-in worlds.

Every kind has the shape of ScienceWorld's power-component: find an item hidden in a closed
container somewhere in a house of ten rooms, bring it to a target and use it. What makes
exploration the bottleneck is *where* the item hides: each kind always hides it in one room of its
own (`hiding_room`, a rule a tip can state and that holds on unseen variations too), while the
warm-start demonstrations mostly find things in the start room or the kitchen (`HABIT_ROOMS`).
A policy that imitated them keeps searching where it always did, like the paper's agent that
keeps focusing on a bulb that is not in the room. A decoy in a habit room (`decoy_word` + the
item, e.g. "broken battery") earns partial credit and cannot complete the task: the local optimum
that GRPO settles into, as the paper's GRPO settles at 15 points on power-component.

Splits: variations 0–4 train, 100–119 are held out for testing, 10_000+ are the demonstration
worlds the warm start is built from (never trained or evaluated on). `repair-radio` is held out
entirely: no demonstration or training episode ever shows it (the out-of-distribution task).
"""

from __future__ import annotations

from dataclasses import dataclass

START_ROOM = "hallway"
HABIT_ROOMS = ("hallway", "kitchen")
ROOM_POOL = (
    "lounge",
    "bedroom",
    "bathroom",
    "office",
    "attic",
    "basement",
    "workshop",
    "garage",
    "shed",
    "greenhouse",
    "garden",
    "pantry",
)
# The word that makes an item its decoy ("broken battery"): it fits, earns partial credit and
# never works.
DECOY_WORD = "broken"
CONTAINER_POOL = (
    "drawer",
    "cabinet",
    "cupboard",
    "box",
    "crate",
    "chest",
    "basket",
    "locker",
    "sack",
    "trunk",
    "bin",
    "case",
)
DISTRACTOR_ITEMS = ("rag", "cup", "spoon", "book", "sock", "candle", "brush", "rope", "coin", "map")

TRAIN_VARIATIONS = tuple(range(0, 5))
TEST_VARIATIONS = tuple(range(100, 120))
DEMO_VARIATION_BASE = 10_000


@dataclass(frozen=True)
class TaskKind:
    """One family of tasks.

    name: the task name the trainer and the CLI use.
    description: the goal shown to the agent; {item}, {target} and {target_room} are filled in.
    items: the items the goal may ask for (one per variation).
    targets: the things the item is used on (one per variation).
    use_verb: the final action, applied to the target ("turn on", "water").
    hiding_room: where the item always hides (in training, held-out and test worlds alike);
        never a habit room.
    out_of_distribution: held out from demonstrations and training entirely.
    """

    name: str
    description: str
    items: tuple[str, ...]
    targets: tuple[str, ...]
    use_verb: str
    hiding_room: str
    out_of_distribution: bool = False


TASK_KINDS: dict[str, TaskKind] = {
    k.name: k
    for k in (
        TaskKind(
            name="power-device",
            description="power the {target} in the {target_room} with a {item} and turn it on",
            items=("battery", "cell"),
            targets=("lamp", "fan", "heater", "clock"),
            use_verb="turn on",
            hiding_room="workshop",
        ),
        TaskKind(
            name="grow-plant",
            description="plant the {item} in the {target} in the {target_room} and water it",
            items=("seed", "bulb", "sprout"),
            targets=("pot", "planter", "tray"),
            use_verb="water",
            hiding_room="greenhouse",
        ),
        TaskKind(
            name="heat-food",
            description="cook the {item} in the {target} in the {target_room}",
            items=("egg", "potato", "pie", "soup"),
            targets=("oven", "stove", "microwave"),
            use_verb="turn on",
            hiding_room="pantry",
        ),
        TaskKind(
            name="repair-radio",
            description="fix the {target} in the {target_room} with a {item} and turn it on",
            items=("fuse", "valve"),
            targets=("radio", "television", "speaker"),
            use_verb="turn on",
            hiding_room="attic",
            out_of_distribution=True,
        ),
    )
}


def in_distribution_tasks() -> list[str]:
    return [k.name for k in TASK_KINDS.values() if not k.out_of_distribution]


def out_of_distribution_tasks() -> list[str]:
    return [k.name for k in TASK_KINDS.values() if k.out_of_distribution]
