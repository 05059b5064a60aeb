"""`empo2-host`: the training host's command line.

    empo2-host build-policy                      build (or find) the cached built-in policy
    empo2-host build-policy --model NAME         convert a packaged model (smollm2-135m-instruct)
    empo2-host train [--preset builtin] [k=v ..] train; overrides like algo.p_memory=0
    empo2-host config [--preset builtin] [k=v ..] print the resolved config (a file train --config reads)
    empo2-host resume RUN_FOLDER                 continue a run from its last checkpoint
    empo2-host eval --run RUN_FOLDER             memory-free and memory-augmented success
    empo2-host bench [--seeds 0,1,2,3,4]          EMPO² vs the paper's GRPO on the built-in worlds
    empo2-host rerun RUN [--dry-run] [..]         rerun the off-policy update on a branch (rerun/runner.py)
    empo2-host branch create|adopt|delete|list RUN  branch runs (rerun/branch.py)
    empo2-host export-onnx SOURCE [--out DIR]     a policy as ONNX for local scoring (export/onnx.py)
    empo2-host serve [--port 0] [--run-root DIR]  the JSON-RPC host for EMPO² Studio (protocol/)

A user's mistake (a bad config, a missing file or model) prints one sentence and exits with 2;
progress bars and logs go to stderr, results to stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path

from . import metric_keys as metric
from .config import BUILTIN_SIZES, ConfigError, TrainConfig, load_config, presets
from .policy.pretrained import PACKAGED_MODELS

EXIT_USAGE = 2


class UserError(Exception):
    """Something the user can fix; its message is the one sentence they see."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=os.environ.get("EMPO2_LOG_LEVEL", "WARNING"), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.handler(args) or 0
    except KeyboardInterrupt:
        print("empo2-host: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - the one place errors become sentences
        if _is_user_error(err):
            print(f"empo2-host: error: {_sentence(err)}", file=sys.stderr)
            return EXIT_USAGE
        if os.environ.get("EMPO2_DEBUG"):
            traceback.print_exc()
        print(f"empo2-host: internal error: {_sentence(err)} (set EMPO2_DEBUG=1 for details)",
              file=sys.stderr)
        return 1


# User errors raised by modules that import torch: named, not imported, so that a mistake in a
# config is reported before (and without) the seconds torch takes to load. An error of one of
# these classes can only come from its module, which is then loaded already.
_LATE_USER_ERRORS = (
    ("empo2.policy.model", "PolicyLoadError"), ("empo2.run_folder.folder", "RunFolderError"),
    ("empo2.export.plain", "ExportError"), ("empo2.training.plan", "PlanError"),
)


def _is_user_error(err: Exception) -> bool:
    if isinstance(err, (UserError, ConfigError, FileNotFoundError, NotADirectoryError, PermissionError)):
        return True
    return any(isinstance(err, getattr(sys.modules[module], name))
               for module, name in _LATE_USER_ERRORS if module in sys.modules)


def _sentence(err: Exception) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return text.rstrip(".") + "."


def _config_source(parser: argparse.ArgumentParser) -> None:
    """--preset or --config, at most one: where a command's config comes from."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--preset", help=f"a built-in preset: {', '.join(sorted(presets()))}")
    source.add_argument("--config", help="a JSON config file")


def _rerun_defaults():
    """' (N)' after a rerun flag's help: the protocol's default for it, or nothing where the
    schema cannot be read (an installed host without its source tree)."""
    try:
        from .server.protocol import param_defaults

        defaults = param_defaults("UpdateRerunParams")
    except Exception:  # noqa: BLE001 - help text only
        defaults = {}
    return lambda name: f" ({defaults[name]})" if name in defaults else ""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="empo2-host", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser("build-policy", help="build the built-in policy, or convert a packaged "
                                            "model, into the cache (once)")
    p.add_argument("--model", default="builtin", choices=("builtin", *PACKAGED_MODELS),
                   help="'builtin' (default) or a pretrained model shipped in a Python package")
    p.add_argument("--warm-start", action="store_true",
                   help="with --model NAME: also fine-tune it on the built-in worlds' "
                        "demonstrations (policy/chat_warm_start.py; slow on a CPU)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", default="default", choices=BUILTIN_SIZES,
                   help="the built-in policy's size (default: %(default)s; 'large' for the size test)")
    p.add_argument("--force", action="store_true", help="rebuild even when cached")
    p.set_defaults(handler=cmd_build_policy)

    p = sub.add_parser("train", help="train a policy with EMPO² (or GRPO with algo.p_memory=0)")
    _config_source(p)
    p.add_argument("--root", help="folder of run folders (default: the config's root)")
    p.add_argument("--name", help="run id (default: preset and time)")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    p.set_defaults(handler=cmd_train)

    p = sub.add_parser("config", help="print a preset or config file with overrides applied, as JSON")
    _config_source(p)
    p.add_argument("overrides", nargs="*", metavar="key=value")
    p.set_defaults(handler=cmd_config)

    p = sub.add_parser("resume", help="continue a run from its last checkpoint")
    p.add_argument("run", help="the run folder")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="e.g. iterations=60 to extend a finished run")
    p.set_defaults(handler=cmd_resume)

    p = sub.add_parser("eval", help="memory-free and memory-augmented success on held-out variations")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", help="a run folder (its latest checkpoint)")
    what.add_argument("--model", help="a model folder or 'builtin'")
    p.add_argument("--tasks", help="comma-separated tasks (default: the run's or the preset's)")
    p.add_argument("--trials", type=int, default=3, help="memory trials (the paper's OOD test: 10)")
    p.add_argument("--variations", type=int, default=10, help="held-out variations per task")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("bench", help="EMPO² vs the paper's GRPO on the built-in worlds (docs/bench/README.md)")
    p.add_argument("--seeds", default="0,1,2,3,4", help="seeds of the main arms (paired)")
    p.add_argument("--ablations", action="store_true", help="also run the four ablations")
    p.add_argument("--ablation-seeds", default=None,
                   help="seeds of the ablations (default: the first two --seeds)")
    p.add_argument("--preset", default="builtin-bench", help="the preset every arm starts from")
    p.add_argument("--iterations", type=int, default=None,
                   help="train this many iterations instead of the preset's env-step budget")
    p.add_argument("--eval-episodes", type=int, default=240,
                   help="memory-free evaluation episodes per run and split (protocol: 240)")
    p.add_argument("--ood-trials", type=int, default=10, help="out-of-distribution memory trials (0: skip)")
    p.add_argument("--arms", default=None,
                   help="comma-separated main arms to run (default: all; EMPO² and GRPO must be among them)")
    p.add_argument("--workers", type=int, default=None, help="runs at once (default: up to 2)")
    p.add_argument("--primary-metric", choices=["held_out_success", "train_success"],
                   default="held_out_success",
                   help="the metric the verdict rests on (default: memory-free success on held-out "
                        "variations, as the paper reports)")
    p.add_argument("--out", default="docs/bench", help="folder for results.json, results.md, the SVG")
    p.add_argument("--root", default=None, help="where the bench's run folders go")
    p.add_argument("--resume", action="store_true",
                   help="keep the runs OUT/results.json already holds under the same protocol; "
                        "train only the others (a bench cut short, or arms and seeds added)")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="applied to every arm")
    p.set_defaults(handler=cmd_bench)

    p = sub.add_parser("rerun", help="rerun the off-policy update on a new branch of a run",
                       description="Branches RUN at a checkpoint, reruns the off-policy update on "
                                   "the chosen variations with the memory as it now stands, and "
                                   "compares memory-free success before and after. On a branch "
                                   "whose rerun did not finish, continues that rerun.")
    p.add_argument("run", help="the run folder (or an unfinished branch, to continue it)")
    p.add_argument("--checkpoint", type=int, help="iteration of the checkpoint (default: latest)")
    p.add_argument("--variations", help="comma-separated task/variation keys (default: those "
                                        "whose tips people edited since the checkpoint)")
    # Unset flags take RerunSettings' defaults, which test_protocol_schema.py holds equal to the
    # protocol's; the help quotes the protocol's (read lazily: rerun.runner loads torch).
    shown = _rerun_defaults()
    p.add_argument("--episodes", type=int,
                   help=f"N: rollouts per variation and iteration{shown('episodes')}")
    p.add_argument("--iterations", type=int, help=f"K: rollout-and-update iterations{shown('iterations')}")
    p.add_argument("--eval-episodes", type=int,
                   help=f"memory-free evaluation episodes per variation{shown('evalEpisodes')}")
    p.add_argument("--held-out", type=int,
                   help=f"also evaluate this many held-out variations of each task{shown('heldOut')}")
    p.add_argument("--seed", type=int, help=f"seed of the before/after evaluation{shown('seed')}")
    p.add_argument("--name", help="the branch's folder name (default: RUN-branch-N)")
    p.add_argument("--dry-run", action="store_true",
                   help="roll out and compute the loss without a step; writes only a dry-run record")
    p.set_defaults(handler=cmd_rerun)

    p = sub.add_parser("branch", help="create, adopt, delete or list branch runs")
    p.add_argument("action", choices=("create", "adopt", "delete", "list"))
    p.add_argument("run", help="the run folder (the parent for create and list; the branch else)")
    p.add_argument("--checkpoint", type=int, help="create: iteration of the checkpoint (default: latest)")
    p.add_argument("--name", help="create: the branch's folder name")
    p.set_defaults(handler=cmd_branch)
    p = sub.add_parser("plan", help="per-rank GPU memory of a config (meta device, no weights)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--preset", help=f"a built-in preset: {', '.join(sorted(presets()))}")
    source.add_argument("--config", help="a JSON config file")
    p.add_argument("--world", type=int, default=None, help="processes (GPUs); default WORLD_SIZE or 1")
    p.add_argument("--gpu-memory", default=None, help="memory of one GPU, e.g. 80GB: say whether it fits")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="e.g. dist.strategy=fsdp2")
    p.set_defaults(handler=cmd_plan)

    p = sub.add_parser("export", help="a checkpoint (sharded or not) as a save_pretrained folder")
    p.add_argument("checkpoint", help="a run folder (its latest checkpoint) or a checkpoint folder")
    p.add_argument("--out", required=True, help="an empty or new folder")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("export-onnx", help="a policy as ONNX with its tokenizer, for scoring "
                                           "recorded episodes in the extension without a host")
    p.add_argument("source", help="a run folder (its latest checkpoint), a checkpoint folder, a "
                                  "Hugging Face causal LM folder, or 'builtin'")
    p.add_argument("--out", help="an empty or new folder (default: <run>/onnx/iter-NNNNNN for a "
                                 "run's checkpoint, <folder>-onnx next to a model folder)")
    p.set_defaults(handler=cmd_export_onnx)

    p = sub.add_parser("serve", help="serve the WebSocket JSON-RPC protocol (protocol/) to clients",
                       description="Token from the environment variable EMPO2_HOST_TOKEN; one JSON "
                                   "ready line on stdout, logs on stderr.")
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument("--run-root", action="append", metavar="DIR",
                   help="folder of run folders; repeatable (default: .empo2/runs)")
    p.add_argument("--allow-remote", action="store_true",
                   help="permit a --host other than loopback (prefer an SSH tunnel)")
    p.add_argument("--insecure-no-token", action="store_true",
                   help="serve without a token (local experiments only; refused with --allow-remote)")
    p.add_argument("--shutdown-grace", type=float, default=30.0, metavar="SECONDS",
                   help="how long a shutdown waits for the live run's iteration boundary before "
                        "leaving it to its last checkpoint (default 30)")
    p.set_defaults(handler=cmd_serve)
    return parser


# -- commands ---------------------------------------------------------------------------------


def cmd_build_policy(args) -> int:
    if args.model != "builtin":
        return _warm_start(args.model) if args.warm_start else _convert_packaged(args.model, args.force)
    if args.warm_start:
        raise UserError("--warm-start is for a packaged model (--model NAME); the built-in policy "
                        "is warm-started by its own build")
    from .policy.builtin import BuiltinRecipe, build_builtin_policy, builtin_policy_path, find_builtin_policy

    recipe = BuiltinRecipe(seed=args.seed, size=args.size)
    found = find_builtin_policy(recipe)
    if found is not None and not args.force:
        print(json.dumps({"path": str(found), "cached": True}))
        return 0
    path = builtin_policy_path(recipe)  # --force rebuilds into the cache (the shipped copy stays)
    bar = _bar("building the built-in policy", unit="batch")
    report = build_builtin_policy(recipe, path, progress=_imitation_progress(bar, recipe.epochs))
    bar.close()
    print(json.dumps({"path": str(path), "cached": False, **report}))
    return 0


def _convert_packaged(name: str, force: bool) -> int:
    from .policy.pretrained import (PACKAGED_MODELS, convert_packaged_model, find_packaged_policy,
                                    packaged_policy_path, source_file)

    found = find_packaged_policy(name)
    if found is not None and not force:
        print(json.dumps({"path": str(found), "cached": True}))
        return 0
    model = PACKAGED_MODELS[name]
    source_file(model)  # a missing or damaged package says so before anything starts
    print(f"empo2: converting {name} from the package {model.package} into the cache "
          "(once; under a minute on a laptop CPU)", file=sys.stderr, flush=True)
    path = packaged_policy_path(model)
    report = convert_packaged_model(model, path)
    print(json.dumps({"path": str(path), "cached": False, **report}))
    return 0


def _warm_start(name: str) -> int:
    from .policy.chat_warm_start import ensure_warm_start

    _convert_packaged(name, force=False)  # its own line: the converted folder
    bar = _bar(f"warm start of {name}", unit="batch")

    def update(done: int, total: int, loss: float) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
    try:
        path = ensure_warm_start(name, progress=update)
    finally:
        bar.close()
    print(json.dumps({"path": str(path), **json.loads((path / "empo2_build.json").read_text())}))
    return 0


def cmd_train(args) -> int:
    preset = args.preset or (None if args.config else "builtin")
    config = load_config(args.config or preset, args.overrides)  # a bad config fails before torch loads

    from .training.distributed import Dist
    from .run_folder.folder import RunFolder

    if args.root:
        config.root = args.root
    dist = Dist.from_env()  # one process unless started by torchrun
    config.name = dist.broadcast(args.name or config.name or f"{preset or Path(args.config).stem}-{time.strftime('%Y%m%d-%H%M%S')}")
    if dist.main:
        folder = RunFolder.create(Path(config.root), config.name, config.to_dict())
        print(json.dumps({"run": str(folder.path)}), flush=True)
    dist.barrier()  # rank 0 has made the run folder
    if not dist.main:
        folder = RunFolder.open(Path(config.root) / config.name)
    return _train(config, folder, resume=False, dist=dist)


def cmd_config(args) -> int:
    config = load_config(args.config or args.preset or "builtin", args.overrides)
    print(json.dumps(config.to_dict(), indent=2))
    return 0


def cmd_resume(args) -> int:
    from .run_folder.folder import RunFolder

    folder = RunFolder.open(Path(args.run))
    config = load_config(folder.config(), args.overrides)  # both fail before torch loads

    from .training.distributed import Dist

    return _train(config, folder, resume=True, dist=Dist.from_env())


def _ensure_builtin_with_progress() -> str:
    from .policy.builtin import BuiltinRecipe, ensure_builtin_policy, find_builtin_policy

    recipe = BuiltinRecipe()
    found = find_builtin_policy(recipe)
    if found is not None:
        return str(found)
    bar = _bar("building the built-in policy (once)", unit="batch")
    try:
        return str(ensure_builtin_policy(recipe, progress=_imitation_progress(bar, recipe.epochs)))
    finally:
        bar.close()


def _train(config: TrainConfig, folder, resume: bool, dist=None) -> int:
    from .training.distributed import SINGLE
    from .run_folder.folder import RunLockedError
    from .training.run_control import TrainerHooks
    from .training.trainer import Trainer

    dist = dist or SINGLE
    if dist.main:
        _log_to(folder.log_path)
    if config.policy.model == "builtin":
        if dist.main:
            _ensure_builtin_with_progress()
        dist.barrier()  # the others find it built
    bar = _bar("training", total=config.iterations, unit="it", disable=not dist.main)

    class ProgressHooks(TrainerHooks):
        def on_metrics(self, record: dict) -> None:
            bar.n = record[metric.ITERATION]
            shown = {"return": f"{record[metric.ROLLOUT_RETURN]:.1f}", "mode": record[metric.ROLLOUT_MODE]}
            if metric.EVAL_MEMORY_FREE_SUCCESS in record:
                shown["eval"] = f"{record[metric.EVAL_MEMORY_FREE_SUCCESS]:.2f}"
            bar.set_postfix(shown)
            bar.refresh()

    trainer = Trainer(config, folder, hooks=ProgressHooks(), dist=dist)
    try:
        trainer.run(resume=resume)
    except RunLockedError:
        raise  # the run belongs to another process: its state is not ours to change
    except BaseException:
        if dist.main:
            folder.set_state("failed", iteration=trainer.iteration)
        raise
    finally:
        bar.close()
    # A rank that exits with its process group alive lets gloo's threads be destroyed at
    # interpreter teardown, which aborts the process ("terminate called without an active
    # exception") and fails the whole torchrun job after a successful run.
    dist.barrier()
    dist.close()
    if not dist.main:
        return 0
    last = folder.metrics()[-1] if folder.metrics() else {}
    print(json.dumps({"run": str(folder.path), "iteration": trainer.iteration,
                      "state": folder.state()["state"],
                      "eval_memory_free_success": last.get(metric.EVAL_MEMORY_FREE_SUCCESS)}))
    return 0


def cmd_eval(args) -> int:
    from .run_folder.folder import RunFolder

    if args.trials < 1 or args.variations < 1:
        raise UserError("--trials and --variations must be at least 1")
    folder = RunFolder.open(Path(args.run)) if args.run else None  # fails before torch loads

    from .envs.registry import make_env
    from .memory.embedding import SentenceEmbedder
    from .policy.model import load_policy
    from .training.evaluation import memory_trials
    from .training.rollout import RolloutSettings
    from .training.trainer import initial_tip_writer, resolve_model

    if folder is not None:
        config = load_config(folder.config())
        latest = folder.latest_checkpoint()
        scratch = None  # a sharded checkpoint is exported to a temporary folder first
        if latest and json.loads((latest[1] / "trainer.json").read_text()).get("has_model"):
            from .export.plain import plain_model_folder

            model_path, scratch = plain_model_folder(latest[1])
        else:
            model_path = resolve_model(config.policy.model)
    else:
        config = load_config("builtin")
        model_path = _ensure_builtin_with_progress() if args.model == "builtin" else resolve_model(args.model)
    tasks = args.tasks.split(",") if args.tasks else config.env.tasks
    env = make_env(config.env)
    for task in tasks:
        if task not in env.tasks():
            raise UserError(f"unknown task {task!r}; known tasks: {', '.join(env.tasks())}")
    device = "cpu" if config.policy.device == "auto" else config.policy.device
    model, tokenizer = load_policy(model_path, device=device)
    model.eval()
    p = config.policy
    settings = RolloutSettings.from_config(config, env, train=False)
    pairs = [(t, v) for t in tasks for v in env.variations(t, "test")[:args.variations]]
    bar = _bar("evaluating", total=args.trials, unit="trial")
    result = memory_trials(model, tokenizer, config.env, pairs, args.trials, settings,
                           p.max_tip_tokens, SentenceEmbedder(), args.seed,
                           progress=lambda t, n, r: bar.update(1), writer=initial_tip_writer(config, device))
    bar.close()
    print(json.dumps({"model": model_path, "tasks": tasks, "episodes_per_trial": len(pairs),
                      "memory_free_success": result.success[0],
                      "memory_success_by_trial": result.success, "score_by_trial": result.score}))
    return 0


def cmd_plan(args) -> int:
    from .training.plan import parse_memory, plan

    world = args.world if args.world is not None else int(os.environ.get("WORLD_SIZE", "1"))
    if world < 1:
        raise UserError("--world must be at least 1")
    config = load_config(args.preset or args.config, args.overrides)
    gpu = parse_memory(args.gpu_memory) if args.gpu_memory else None
    print(json.dumps(plan(config, world, gpu), indent=2))
    return 0


def cmd_export(args) -> int:
    from .export.plain import export_checkpoint

    out = export_checkpoint(Path(args.checkpoint), Path(args.out))
    print(json.dumps({"exported": str(out)}))
    return 0


def cmd_export_onnx(args) -> int:
    from .export.onnx import export_onnx

    if args.source == "builtin":
        _ensure_builtin_with_progress()
    print(json.dumps(export_onnx(args.source, Path(args.out) if args.out else None)))
    return 0


def cmd_bench(args) -> int:
    from .bench.runner import ResumeError, run_bench

    def seeds_of(text: str, flag: str) -> list[int]:
        try:
            return [int(s) for s in text.split(",") if s.strip()]
        except ValueError:
            raise UserError(f"{flag} must be comma-separated integers, not {text!r}") from None

    seeds = seeds_of(args.seeds, "--seeds")
    if not seeds:
        raise UserError("--seeds must name at least one seed")
    ablation_seeds = []
    if args.ablations:
        ablation_seeds = (seeds_of(args.ablation_seeds, "--ablation-seeds")
                          if args.ablation_seeds is not None else seeds[:2])
    if args.eval_episodes < 1 or args.ood_trials < 0:
        raise UserError("--eval-episodes must be at least 1 and --ood-trials at least 0")
    overrides = list(args.overrides)
    if args.iterations:  # replaces the env-step budget: every run trains that many iterations
        overrides += [f"iterations={args.iterations}", "max_env_steps=0"]
    from .bench.runner import chosen_arms

    arms = [a.strip() for a in args.arms.split(",") if a.strip()] if args.arms else None
    try:
        chosen_arms(arms)
    except ValueError as error:
        raise UserError(str(error)) from None
    try:
        run_bench(seeds, Path(args.out), Path(args.root) if args.root else None, ablation_seeds,
                  preset=args.preset, overrides=overrides, eval_episodes=args.eval_episodes,
                  ood_trials=args.ood_trials, workers=args.workers, bar_factory=_bar, arms=arms,
                  resume=args.resume, primary_metric=args.primary_metric)
    except ResumeError as error:
        raise UserError(str(error)) from None
    return 0


def cmd_rerun(args) -> int:
    from .run_folder.folder import RunFolder

    folder = RunFolder.open(Path(args.run))  # fails before torch loads

    from .rerun.runner import RerunSettings, rerun

    given = {k: v for k, v in (("checkpoint", args.checkpoint), ("episodes", args.episodes),
                                ("iterations", args.iterations), ("eval_episodes", args.eval_episodes),
                                ("held_out", args.held_out), ("seed", args.seed))
             if v is not None}
    variations = [v.strip() for v in (args.variations or "").split(",") if v.strip()]
    settings = RerunSettings(variations=variations, dry_run=args.dry_run, **given)
    if _builtin_model(folder):
        _ensure_builtin_with_progress()
    result = rerun(folder, settings, hooks=_StderrProgress(), branch_name=args.name)
    print(json.dumps(result))
    return 0


def cmd_branch(args) -> int:
    from .rerun.branch import adopt_branch, branches_of, create_branch, delete_branch
    from .run_folder.folder import RunFolder

    folder = RunFolder.open(Path(args.run))
    if args.action == "create":
        branch = create_branch(folder, args.checkpoint, args.name)
        print(json.dumps({"branch": branch.run_id, "path": str(branch.path)}))
    elif args.action == "adopt":
        print(json.dumps({"branch": folder.run_id, "parent": adopt_branch(folder)}))
    elif args.action == "delete":
        delete_branch(folder)
        print(json.dumps({"deleted": folder.run_id}))
    else:
        print(json.dumps({"run": folder.run_id,
                          "branches": [{"branch": b.run_id, "path": str(b.path)} for b in branches_of(folder)]}))
    return 0


def _builtin_model(folder) -> bool:
    try:
        return folder.config().get("policy", {}).get("model") == "builtin"
    except (OSError, ValueError):
        return False


class _StderrProgress:
    """Rerun progress as one line per phase change on stderr (stdout is the JSON result)."""

    def __init__(self):
        self.last = None

    def on_state(self, state, iteration):
        pass

    def on_metrics(self, record):
        pass

    def on_trajectories(self, iteration, summaries):
        pass

    def on_progress(self, iteration, phase, done, total):
        if (iteration, phase) != self.last:
            self.last = (iteration, phase)
            print(f"empo2-host: rerun: iteration {iteration}: {phase}", file=sys.stderr, flush=True)


def cmd_serve(args) -> int:
    from .server.main import ServeError, serve_command

    try:
        return serve_command(args)
    except ServeError as err:  # printed here: the shared error path would import torch first
        print(f"empo2-host: error: {_sentence(err)}", file=sys.stderr)
        return EXIT_USAGE


# -- helpers ----------------------------------------------------------------------------------


def _bar(description: str, total: int | None = None, unit: str = "it", disable: bool = False):
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit=unit, file=sys.stderr, dynamic_ncols=True,
                disable=disable or os.environ.get("EMPO2_NO_PROGRESS") == "1")


def _imitation_progress(bar, epochs: int):
    """Progress of a built-in policy's build: one bar over every epoch (so tqdm's ETA is the
    whole build's), saying which epoch of how many, with the latest loss."""
    def update(done: int, total: int, epoch: int, loss: float) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.set_description(f"building the built-in policy (epoch {epoch + 1}/{epochs})", refresh=False)
        bar.update(done - bar.n)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
    return update


def _log_to(path: Path) -> None:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger("empo2")
    root.addHandler(handler)
    root.setLevel(logging.INFO)


if __name__ == "__main__":
    sys.exit(main())
