"""What `empo2-host` accepts: its commands and their arguments (commands.py does them).

Nothing here loads torch: `--help` and a mistyped argument answer at once.
"""

from __future__ import annotations

import argparse

from ..config import BUILTIN_SIZES, presets
from ..policy.pretrained import PACKAGED_MODELS


def _config_source(parser: argparse.ArgumentParser) -> None:
    """--preset or --config, at most one: where a command's config comes from."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--preset", help=f"a built-in preset: {', '.join(sorted(presets()))}")
    source.add_argument("--config", help="a JSON config file")


def positive_float(text: str) -> float:
    """A number above zero, or argparse's one-line refusal saying so."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number above zero, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number of zero or more, or argparse's one-line refusal saying so."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of zero or more, got {text!r}")
    return value


def _rerun_defaults():
    """' (N)' after a rerun flag's help: the protocol's default for it, or nothing where the
    schema cannot be read (an installed host without its source tree)."""
    try:
        from .server.protocol import param_defaults

        defaults = param_defaults("UpdateRerunParams")
    except Exception:  # noqa: BLE001 - help text only
        defaults = {}
    return lambda name: f" ({defaults[name]})" if name in defaults else ""


class OneSentenceParser(argparse.ArgumentParser):
    """argparse with its refusals in one line (no usage block above them): bad input gets one
    sentence and exit status 2; `--help` still shows the usage. Subcommands inherit the class."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(description: str) -> argparse.ArgumentParser:
    """Every command and its arguments; `args.command` names the command chosen."""
    parser = OneSentenceParser(prog="empo2-host", description=description)
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser(
        "build-policy", help="build the built-in policy, or convert a packaged model, into the cache (once)"
    )
    p.add_argument(
        "--model",
        default="builtin",
        metavar="MODEL",
        help=f"'builtin' (default), a pretrained model shipped in a Python package "
        f"({', '.join(PACKAGED_MODELS)}), or with --warm-start --env a local "
        "Hugging Face model folder",
    )
    p.add_argument(
        "--warm-start",
        action="store_true",
        help="with --model NAME: also fine-tune it on the built-in worlds' "
        "demonstrations (policy/chat_warm_start.py; slow on a CPU), or with --env "
        "on that environment's own",
    )
    p.add_argument(
        "--env",
        metavar="NAME",
        help="with --warm-start: the environment (an env.name) whose demonstrations "
        "the model is fine-tuned on (docs/environments.md)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--size",
        default="default",
        choices=BUILTIN_SIZES,
        help="the built-in policy's size (default: %(default)s; 'large' for the size test)",
    )
    p.add_argument(
        "--lr",
        type=positive_float,
        metavar="RATE",
        help="the built-in policy's peak imitation learning rate (default: the "
        "recipe's); another rate is another recipe, cached beside it",
    )
    p.add_argument(
        "--two-facts",
        action="store_true",
        help="the built-in policy built with demonstrations of the two-fact kind too "
        "(charge-robot: a key unlocks the item's container); another recipe, cached beside it",
    )
    p.add_argument(
        "--two-fact-explorers",
        type=non_negative_int,
        metavar="N",
        help="with --two-facts: how many of its demonstrations explore the kind without tips "
        "(default 60); another count is another recipe, cached beside it",
    )
    p.add_argument(
        "--three-facts",
        action="store_true",
        help="the built-in policy built with demonstrations of the three-fact kind too "
        "(fuel-generator: a card unlocks the key's container, the key the item's); another recipe, cached beside it",
    )
    p.add_argument(
        "--three-fact-followers",
        type=non_negative_int,
        metavar="N",
        help="with --three-facts: how many of its demonstrations follow a success tip "
        "(default 250); another count is another recipe, cached beside it",
    )
    p.add_argument("--force", action="store_true", help="rebuild even when cached")

    p = sub.add_parser("train", help="train a policy with EMPO² (or GRPO with algo.p_memory=0)")
    _config_source(p)
    p.add_argument("--root", help="folder of run folders (default: the config's root)")
    p.add_argument("--name", help="run id (default: preset and time)")
    p.add_argument("overrides", nargs="*", metavar="key=value")

    p = sub.add_parser("config", help="print a preset or config file with overrides applied, as JSON")
    _config_source(p)
    p.add_argument("overrides", nargs="*", metavar="key=value")

    p = sub.add_parser("resume", help="continue a run from its last checkpoint")
    p.add_argument("run", help="the run folder")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="e.g. iterations=60 to extend a finished run")

    p = sub.add_parser("runs", help="the run folders under a root, with their state and iteration")
    p.add_argument("--root", default=".empo2/runs", help="folder of run folders (default: %(default)s)")
    p.add_argument("--state", help="only runs in these states, comma-separated (e.g. interrupted)")
    p.add_argument("--json", action="store_true", help="one JSON object per run instead of a table")

    p = sub.add_parser(
        "envs", help="the environments env.name can name here: built in and installed (entry points), with their tasks"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per environment instead of a table")

    p = sub.add_parser("eval", help="memory-free and memory-augmented success on held-out variations")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", help="a run folder (its latest checkpoint)")
    what.add_argument("--model", help="a model folder or 'builtin'")
    p.add_argument("--tasks", help="comma-separated tasks (default: the run's or the preset's)")
    p.add_argument("--trials", type=int, default=3, help="memory trials (the paper's OOD test: 10)")
    p.add_argument("--variations", type=int, default=10, help="held-out variations per task")
    p.add_argument("--seed", type=int, default=0)

    p = sub.add_parser("bench", help="EMPO² vs the paper's GRPO on the built-in worlds (docs/bench/README.md)")
    p.add_argument("--seeds", default="0,1,2,3,4", help="seeds of the main arms (paired)")
    p.add_argument("--ablations", action="store_true", help="also run the four ablations")
    p.add_argument("--ablation-seeds", default=None, help="seeds of the ablations (default: the first two --seeds)")
    p.add_argument("--preset", default="builtin-bench", help="the preset every arm starts from")
    p.add_argument(
        "--iterations",
        type=int,
        default=None,
        help="train this many iterations instead of the preset's env-step budget",
    )
    p.add_argument(
        "--eval-episodes",
        type=int,
        default=240,
        help="memory-free evaluation episodes per run and split (protocol: 240)",
    )
    p.add_argument("--ood-trials", type=int, default=10, help="out-of-distribution memory trials (0: skip)")
    p.add_argument(
        "--arms",
        default=None,
        help="comma-separated main arms to run (default: all; EMPO² and GRPO must be among them)",
    )
    p.add_argument("--workers", type=int, default=None, help="runs at once (default: up to 2)")
    p.add_argument(
        "--primary-metric",
        choices=["held_out_success", "train_success"],
        default="held_out_success",
        help="the metric the verdict rests on (default: memory-free success on held-out "
        "variations, as the paper reports)",
    )
    p.add_argument("--out", default="docs/bench", help="folder for results.json, results.md, the SVG")
    p.add_argument("--root", default=None, help="where the bench's run folders go")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs OUT/results.json already holds under the same protocol; "
        "train only the others (a bench cut short, or arms and seeds added)",
    )
    p.add_argument("overrides", nargs="*", metavar="key=value", help="applied to every arm")

    p = sub.add_parser(
        "rerun",
        help="rerun the off-policy update on a new branch of a run",
        description="Branches RUN at a checkpoint, reruns the off-policy update on "
        "the chosen variations with the memory as it now stands, and "
        "compares memory-free success before and after. On a branch "
        "whose rerun did not finish, continues that rerun.",
    )
    p.add_argument("run", help="the run folder (or an unfinished branch, to continue it)")
    p.add_argument("--checkpoint", type=int, help="iteration of the checkpoint (default: latest)")
    p.add_argument(
        "--variations",
        help="comma-separated task/variation keys (default: those whose tips people edited since the checkpoint)",
    )
    # Unset flags take RerunSettings' defaults, which test_protocol_schema.py holds equal to the
    # protocol's; the help quotes the protocol's (read lazily: rerun.runner loads torch).
    shown = _rerun_defaults()
    p.add_argument("--episodes", type=int, help=f"N: rollouts per variation and iteration{shown('episodes')}")
    p.add_argument("--iterations", type=int, help=f"K: rollout-and-update iterations{shown('iterations')}")
    p.add_argument(
        "--eval-episodes", type=int, help=f"memory-free evaluation episodes per variation{shown('evalEpisodes')}"
    )
    p.add_argument(
        "--held-out", type=int, help=f"also evaluate this many held-out variations of each task{shown('heldOut')}"
    )
    p.add_argument("--seed", type=int, help=f"seed of the before/after evaluation{shown('seed')}")
    p.add_argument("--name", help="the branch's folder name (default: RUN-branch-N)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="roll out and compute the loss without a step; writes only a dry-run record",
    )

    p = sub.add_parser("branch", help="create, adopt, delete or list branch runs")
    p.add_argument("action", choices=("create", "adopt", "delete", "list"))
    p.add_argument("run", help="the run folder (the parent for create and list; the branch else)")
    p.add_argument("--checkpoint", type=int, help="create: iteration of the checkpoint (default: latest)")
    p.add_argument("--name", help="create: the branch's folder name")

    p = sub.add_parser("plan", help="per-rank GPU memory of a config (meta device, no weights)")
    _config_source(p)
    p.add_argument("--world", type=int, default=None, help="processes (GPUs); default WORLD_SIZE or 1")
    p.add_argument("--gpu-memory", default=None, help="memory of one GPU, e.g. 80GB: say whether it fits")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="e.g. dist.strategy=fsdp2")

    p = sub.add_parser("export", help="a checkpoint (sharded or not) as a save_pretrained folder")
    p.add_argument("checkpoint", help="a run folder (its latest checkpoint) or a checkpoint folder")
    p.add_argument("--out", required=True, help="an empty or new folder")

    p = sub.add_parser(
        "export-onnx",
        help="a policy as ONNX with its tokenizer, for scoring recorded episodes in the extension without a host",
    )
    p.add_argument(
        "source",
        help="a run folder (its latest checkpoint), a checkpoint folder, a Hugging Face causal LM folder, or 'builtin'",
    )
    p.add_argument(
        "--out",
        help="an empty or new folder (default: <run>/onnx/iter-NNNNNN for a "
        "run's checkpoint, <folder>-onnx next to a model folder)",
    )

    p = sub.add_parser(
        "serve",
        help="serve the WebSocket JSON-RPC protocol (protocol/) to clients",
        description="Token from the environment variable EMPO2_HOST_TOKEN; one JSON "
        "ready line on stdout, logs on stderr.",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument(
        "--run-root", action="append", metavar="DIR", help="folder of run folders; repeatable (default: .empo2/runs)"
    )
    p.add_argument(
        "--allow-remote", action="store_true", help="permit a --host other than loopback (prefer an SSH tunnel)"
    )
    p.add_argument(
        "--insecure-no-token",
        action="store_true",
        help="serve without a token (local experiments only; refused with --allow-remote)",
    )
    p.add_argument(
        "--shutdown-grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long a shutdown waits for the live run's iteration boundary before "
        "leaving it to its last checkpoint (default 30)",
    )

    p = sub.add_parser(
        "serve-env",
        help="serve an environment as an OpenEnv server (for TRL, ART, SkyRL, or env.name=openenv:<url>)",
        description="Prints the server's URL on stdout; one WebSocket session per "
        "episode's client (docs/environments.md).",
    )
    p.add_argument("env", help="an env.name: builtin, an installed entry point, module:factory, ...")
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="env.KEY=VALUE",
        help="the environment's settings, e.g. env.max_steps=30 env.kwargs='{...}'",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument(
        "--max-sessions",
        type=int,
        default=64,
        metavar="N",
        help="the most sessions (episodes' clients) open at once (default 64)",
    )
    return parser
