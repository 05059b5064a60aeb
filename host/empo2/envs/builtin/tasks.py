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

`charge-robot` needs two facts found in sequence: its item sits in a locked container that opens
only while the agent carries the key, and the key hides in another room (`key_room`), both fixed
for the kind. Its houses have twelve rooms, and its partial credit on the true path stays below
the decoy's, so blind search finds the decoy long before it finds both facts. It is not among
the kinds the shipped warm start was built from (`in_warm_start`).

`fuel-generator` needs three: a card in one room unlocks the container that holds the key in a
second, and the key unlocks the item's container in a third (`card_room`, `key_room`,
`hiding_room`, all fixed for the kind). Its gold path is twelve steps, so an exploring policy
without tips must guess three rooms in order within a step limit a little above that.
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
# What opens a locked container (a kind with a `key_room`): carried, it unlocks the item's box.
KEY_ITEM = "key"
# What opens the key's container, in a kind with a `card_room` too (three facts in sequence).
CARD_ITEM = "card"
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
    key_room: where the key hides, for a kind whose item sits in a locked container that opens
        only while the key is carried (two facts found in sequence); None: nothing is locked.
    card_room: where the card hides, for a kind whose key sits in a locked container too, one
        that opens only while the card is carried (three facts in sequence); needs a key_room.
    rooms: how many rooms a world of the kind has.
    take_credit, put_credit: the score for taking the item and for putting it into the target
        (the true path's partial credit; success is 100 whatever they are).
    in_warm_start: among the kinds the built-in policy's warm start is built from (its
        vocabulary; its demonstrations too unless out of distribution); a kind added after the
        shipped weights is not, so they stay the ones their recipe builds.
    """

    name: str
    description: str
    items: tuple[str, ...]
    targets: tuple[str, ...]
    use_verb: str
    hiding_room: str
    out_of_distribution: bool = False
    key_room: str | None = None
    card_room: str | None = None
    rooms: int = 10
    take_credit: float = 25.0
    put_credit: float = 25.0
    in_warm_start: bool = True


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
        # Two facts in sequence (docs/bench/r8-two-facts/): the key in the office unlocks the
        # basement's container that holds the item. Partial credit on the true path (20 at most)
        # stays below the decoy's 30, so blind search is pulled to the decoy, not towards success.
        TaskKind(
            name="charge-robot",
            description="charge the {target} in the {target_room} with a {item} and turn it on",
            items=("charger", "adapter"),
            targets=("robot", "drone", "scooter"),
            use_verb="turn on",
            hiding_room="basement",
            key_room="office",
            rooms=12,
            take_credit=10.0,
            put_credit=10.0,
            in_warm_start=False,
        ),
        # Three facts in sequence (docs/bench/r8e-three-facts/): the card in the office unlocks
        # the garage's container that holds the key, and the key the shed's that holds the item.
        # Partial credit on the true path stays below the decoy's, as for charge-robot.
        TaskKind(
            name="fuel-generator",
            description="fuel the {target} in the {target_room} with a {item} and turn it on",
            items=("canister", "cartridge"),
            targets=("generator", "boat", "mower"),
            use_verb="turn on",
            hiding_room="shed",
            key_room="garage",
            card_room="office",
            rooms=12,
            take_credit=10.0,
            put_credit=10.0,
            in_warm_start=False,
        ),
    )
}


def in_distribution_tasks() -> list[str]:
    return [k.name for k in TASK_KINDS.values() if not k.out_of_distribution]


def key_tasks() -> list[str]:
    """The in-distribution kinds whose item is locked away behind a key alone (two facts in
    sequence)."""
    return [k.name for k in TASK_KINDS.values() if k.key_room and not k.card_room and not k.out_of_distribution]


def card_tasks() -> list[str]:
    """The in-distribution kinds whose key is locked away behind a card (three facts in sequence)."""
    return [k.name for k in TASK_KINDS.values() if k.card_room and not k.out_of_distribution]


def demonstrated_tasks() -> list[str]:
    """The kinds the built-in policy's demonstrations play."""
    return [k.name for k in TASK_KINDS.values() if k.in_warm_start and not k.out_of_distribution]


def out_of_distribution_tasks() -> list[str]:
    return [k.name for k in TASK_KINDS.values() if k.out_of_distribution]
