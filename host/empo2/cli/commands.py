"""What each `empo2-host` command does (parser.py declares them, __init__.main runs them)."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

from .. import metric_keys as metric
from ..config import TrainConfig, load_config
from ..one_sentence import sentence
from ..torchrun import world_size
from .build_commands import cmd_build_policy
from .errors import EXIT_USAGE, UserError
from .progress import ensure_builtin_with_progress, progress_bar

# -- commands ---------------------------------------------------------------------------------


def cmd_train(args) -> int:
    preset = args.preset or (None if args.config else "builtin")
    config = load_config(args.config or preset, args.overrides)  # a bad config fails before torch loads
    _refuse_missing_model(config.policy.model)  # and a missing model before a run folder is made

    from ..run_folder.folder import RunFolder
    from ..training.distributed import Dist

    if args.root:
        config.root = args.root
    dist = Dist.from_env()  # one process unless started by torchrun
    config.name = dist.broadcast(
        args.name or config.name or f"{preset or Path(args.config).stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    if dist.main:
        folder = RunFolder.create(Path(config.root), config.name, config.to_dict())
        print(json.dumps({"run": str(folder.path)}), flush=True)
    dist.barrier()  # rank 0 has made the run folder
    if not dist.main:
        folder = RunFolder.open(Path(config.root) / config.name)
    return _train(config, folder, resume=False, dist=dist)


def _refuse_missing_model(model: str, named: str = "policy.model") -> None:
    """A local folder that holds no model is refused in one sentence before torch loads."""
    from ..policy.choices import model_folder_problem

    problem = model_folder_problem(model, named)
    if problem is not None:
        raise UserError(problem)


def cmd_config(args) -> int:
    config = load_config(args.config or args.preset or "builtin", args.overrides)
    # load_config checks only the name's form; train would fail at its first reset on a module
    # that cannot be imported or a gymnasium id nobody registered, so this check finds the
    # factory too (importing it, without making the environment).
    from ..envs.registry import ENVIRONMENTS, find_factory

    if config.env.name not in ENVIRONMENTS:
        find_factory(config.env.name)
    print(json.dumps(config.to_dict(), indent=2))
    return 0


def cmd_resume(args) -> int:
    from ..run_folder.folder import RunFolder

    folder = RunFolder.open(Path(args.run))
    config = load_config(folder.config(), args.overrides)  # both fail before torch loads

    from ..training.distributed import Dist

    return _train(config, folder, resume=True, dist=Dist.from_env())


def _train(config: TrainConfig, folder, resume: bool, dist=None) -> int:
    from ..run_folder.folder import RunLockedError
    from ..training.distributed import SINGLE
    from ..training.run_control import TrainerHooks
    from ..training.trainer import Trainer

    dist = dist or SINGLE
    if dist.main:
        _log_to(folder.log_path)
    if config.policy.model == "builtin":
        if dist.main:
            ensure_builtin_with_progress()
        dist.barrier()  # the others find it built
    bar = progress_bar("training", total=config.iterations, unit="it", disable=not dist.main)

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
    print(
        json.dumps(
            {
                "run": str(folder.path),
                "iteration": trainer.iteration,
                "state": folder.state()["state"],
                "eval_memory_free_success": last.get(metric.EVAL_MEMORY_FREE_SUCCESS),
            }
        )
    )
    return 0


def cmd_runs(args) -> int:
    from ..rerun.branch import rerun_iterations
    from ..run_folder.folder import RunFolder
    from ..server.runs.stored_run import STATES, branch_origin, configured_iterations, stored_state

    wanted = {s.strip() for s in args.state.split(",") if s.strip()} if args.state else None
    unknown = sorted((wanted or set()) - set(STATES))
    if unknown:
        raise UserError(f"unknown run state {unknown[0]!r}; the states are {', '.join(STATES)}")
    root = Path(args.root)
    if not root.is_dir():
        raise UserError(f"{root} is not a folder of run folders")
    for config in sorted(root.glob("*/config.json")):
        folder = RunFolder(config.parent)
        stored = folder.state()
        row = {
            "run": folder.path.name,
            "state": stored_state(folder, stored),
            "iteration": int(stored.get("iteration", 0) or 0),
            "iterations": configured_iterations(folder),
            "path": str(folder.path),
        }
        origin = branch_origin(folder)
        if origin is not None and not origin["adopted"]:
            # A branch counts on from its parent's checkpoint and inherits its configured total:
            # what it did itself is its rerun's iterations, not "iteration 6/40".
            row["branch"] = {
                "parent": origin["runId"],
                "checkpoint": origin["checkpoint"],
                "done": max(0, row["iteration"] - origin["checkpoint"]),
                "planned": rerun_iterations(folder),
            }
        if wanted is not None and row["state"] not in wanted:
            continue
        print(json.dumps(row) if args.json else run_line(row))
    return 0


def run_line(row: dict) -> str:
    """One row of `empo2-host runs`: a run's iteration of its total; a branch's own iterations."""
    branch = row.get("branch")
    if branch is not None:
        of = f"/{branch['planned']}" if branch["planned"] is not None else ""
        progress = f"branch of {branch['parent']} @ it {branch['checkpoint']}: {branch['done']}{of} iterations"
    else:
        of = f"/{row['iterations']}" if row["iterations"] is not None else ""
        progress = f"iteration {row['iteration']}{of}"
    return f"{row['run']}  {row['state']}  {progress}  {row['path']}"


def cmd_envs(args) -> int:
    from ..envs.registry import list_environments

    rows = list_environments()
    for row in rows:
        if args.json:
            print(json.dumps(row))
            continue
        tasks = ", ".join(row["tasks"]) if row["tasks"] else "-"
        print(
            f"{row['name']}  {row['source']}  tasks: {tasks}"
            + (f"  (unusable: {row['error']})" if row["error"] else "")
        )
    return 0


def cmd_eval(args) -> int:
    from ..run_folder.folder import RunFolder

    if args.trials < 1 or args.variations < 1:
        raise UserError("--trials and --variations must be at least 1")
    folder = RunFolder.open(Path(args.run)) if args.run else None  # fails before torch loads
    if folder is None:
        _refuse_missing_model(args.model, named="--model")

    from ..envs.registry import make_env, tasks_of
    from ..memory.embedding import SentenceEmbedder
    from ..policy.model import load_policy
    from ..training.evaluation import memory_trials
    from ..training.rollout import RolloutSettings
    from ..training.trainer import initial_tip_writer, resolve_model

    if folder is not None:
        config = load_config(folder.config())
        latest = folder.latest_checkpoint()
        scratch = None  # a sharded checkpoint is exported to a temporary folder first
        if latest and json.loads((latest[1] / "trainer.json").read_text()).get("has_model"):
            from ..export.plain import plain_model_folder

            model_path, scratch = plain_model_folder(latest[1])
        else:
            model_path = resolve_model(config.policy.model)
    else:
        config = load_config("builtin")
        model_path = ensure_builtin_with_progress() if args.model == "builtin" else resolve_model(args.model)
    env = make_env(config.env)
    tasks = args.tasks.split(",") if args.tasks else tasks_of(config.env, env)
    for task in tasks:
        if task not in env.tasks():
            raise UserError(f"unknown task {task!r}; known tasks: {', '.join(env.tasks())}")
    device = "cpu" if config.policy.device == "auto" else config.policy.device
    model, tokenizer = load_policy(model_path, device=device)
    model.eval()
    p = config.policy
    settings = RolloutSettings.from_config(config, env, train=False)
    pairs = [(t, v) for t in tasks for v in env.variations(t, "test")[: args.variations]]
    bar = progress_bar("evaluating", total=args.trials, unit="trial")
    result = memory_trials(
        model,
        tokenizer,
        config.env,
        pairs,
        args.trials,
        settings,
        p.max_tip_tokens,
        SentenceEmbedder(),
        args.seed,
        progress=lambda t, n, r: bar.update(1),
        writer=initial_tip_writer(config, device),
    )
    bar.close()
    print(
        json.dumps(
            {
                "model": model_path,
                "tasks": tasks,
                "episodes_per_trial": len(pairs),
                "memory_free_success": result.success[0],
                "memory_success_by_trial": result.success,
                "score_by_trial": result.score,
            }
        )
    )
    return 0


def cmd_plan(args) -> int:
    from ..training.plan import parse_memory, plan

    world = args.world if args.world is not None else world_size()
    if world < 1:
        raise UserError("--world must be at least 1")
    config = load_config(args.preset or args.config, args.overrides)
    gpu = parse_memory(args.gpu_memory) if args.gpu_memory else None
    print(json.dumps(plan(config, world, gpu), indent=2))
    return 0


def cmd_export(args) -> int:
    from ..export.plain import export_checkpoint

    out = export_checkpoint(Path(args.checkpoint), Path(args.out))
    print(json.dumps({"exported": str(out)}))
    return 0


def cmd_export_onnx(args) -> int:
    from ..export.onnx import export_onnx

    if args.source == "builtin":
        ensure_builtin_with_progress()
    print(json.dumps(export_onnx(args.source, Path(args.out) if args.out else None)))
    return 0


def cmd_bench(args) -> int:
    from ..bench.runner import ResumeError, run_bench

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
        ablation_seeds = (
            seeds_of(args.ablation_seeds, "--ablation-seeds") if args.ablation_seeds is not None else seeds[:2]
        )
    if args.eval_episodes < 1 or args.ood_trials < 0:
        raise UserError("--eval-episodes must be at least 1 and --ood-trials at least 0")
    overrides = list(args.overrides)
    if args.iterations:  # replaces the env-step budget: every run trains that many iterations
        overrides += [f"iterations={args.iterations}", "max_env_steps=0"]
    from ..bench.runner import chosen_arms

    arms = [a.strip() for a in args.arms.split(",") if a.strip()] if args.arms else None
    try:
        chosen_arms(arms)
    except ValueError as error:
        raise UserError(str(error)) from None
    try:
        run_bench(
            seeds,
            Path(args.out),
            Path(args.root) if args.root else None,
            ablation_seeds,
            preset=args.preset,
            overrides=overrides,
            eval_episodes=args.eval_episodes,
            ood_trials=args.ood_trials,
            workers=args.workers,
            bar_factory=progress_bar,
            arms=arms,
            resume=args.resume,
            primary_metric=args.primary_metric,
        )
    except ResumeError as error:
        raise UserError(str(error)) from None
    return 0


def cmd_rerun(args) -> int:
    from ..run_folder.folder import RunFolder

    folder = RunFolder.open(Path(args.run))  # fails before torch loads

    from ..rerun.runner import RerunSettings, rerun

    given = {
        k: v
        for k, v in (
            ("checkpoint", args.checkpoint),
            ("episodes", args.episodes),
            ("iterations", args.iterations),
            ("eval_episodes", args.eval_episodes),
            ("held_out", args.held_out),
            ("seed", args.seed),
        )
        if v is not None
    }
    variations = [v.strip() for v in (args.variations or "").split(",") if v.strip()]
    settings = RerunSettings(variations=variations, dry_run=args.dry_run, **given)
    if _builtin_model(folder):
        ensure_builtin_with_progress()
    result = rerun(folder, settings, hooks=_StderrProgress(), branch_name=args.name)
    print(json.dumps(result))
    return 0


def cmd_branch(args) -> int:
    from ..rerun.branch import adopt_branch, branches_of, create_branch, delete_branch
    from ..run_folder.folder import RunFolder

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
        print(
            json.dumps(
                {
                    "run": folder.run_id,
                    "branches": [{"branch": b.run_id, "path": str(b.path)} for b in branches_of(folder)],
                }
            )
        )
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
    from ..server.main import ServeError, serve_command

    try:
        return serve_command(args)
    except ServeError as err:  # printed here: the shared error path would import torch first
        print(f"empo2-host: error: {sentence(err)}", file=sys.stderr)
        return EXIT_USAGE


def cmd_serve_env(args) -> int:
    unknown = [item for item in args.overrides if not item.startswith("env.") or item.startswith("env.name=")]
    if unknown:
        raise UserError(
            f"serve-env takes the environment's settings (env.KEY=VALUE, the name apart), not {unknown[0]!r}"
        )
    if args.max_sessions < 1:
        raise UserError("--max-sessions must be at least 1")
    config = load_config(None, [f"env.name={args.env}", *args.overrides])
    try:
        from ..envs.openenv_server import serve_env
    except ImportError:
        from ..envs.openenv_client import INSTALL

        raise UserError(f"serve-env needs OpenEnv's package openenv, which is not installed ({INSTALL})") from None
    try:
        return serve_env(config.env, args.host, args.port, args.max_sessions)
    except OSError as err:  # the port is taken, the interface does not exist
        raise UserError(str(err)) from None


# -- helpers ----------------------------------------------------------------------------------


def _log_to(path: Path) -> None:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger("empo2")
    root.addHandler(handler)
    root.setLevel(logging.INFO)


# The handler of each command build_parser declares.
COMMANDS = {
    "build-policy": cmd_build_policy,
    "train": cmd_train,
    "config": cmd_config,
    "resume": cmd_resume,
    "runs": cmd_runs,
    "envs": cmd_envs,
    "eval": cmd_eval,
    "bench": cmd_bench,
    "rerun": cmd_rerun,
    "branch": cmd_branch,
    "plan": cmd_plan,
    "export": cmd_export,
    "export-onnx": cmd_export_onnx,
    "serve": cmd_serve,
    "serve-env": cmd_serve_env,
}
