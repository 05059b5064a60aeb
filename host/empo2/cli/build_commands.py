"""`empo2-host build-policy`: the built-in policy's build, a packaged model's conversion, and
the warm starts of a packaged or local model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import UserError
from .progress import batch_progress, imitation_progress, progress_bar


def cmd_build_policy(args) -> int:
    from ..policy.pretrained import PACKAGED_MODELS

    if args.two_facts and (args.model != "builtin" or args.warm_start):
        raise UserError("--two-facts is for the built-in policy's own build (no --model, no --warm-start)")
    if args.three_facts and (args.model != "builtin" or args.warm_start):
        raise UserError("--three-facts is for the built-in policy's own build (no --model, no --warm-start)")
    if args.three_fact_followers is not None and not args.three_facts:
        raise UserError(
            "--three-fact-followers is for --three-facts: it counts that build's tip-following demonstrations"
        )
    if args.two_fact_explorers is not None and not args.two_facts:
        raise UserError("--two-fact-explorers is for --two-facts: it counts that build's exploring demonstrations")
    if args.env is not None and not args.warm_start:
        raise UserError(
            "--env is for --warm-start: it names the environment whose demonstrations the model is fine-tuned on"
        )
    if args.model != "builtin":
        if args.env is not None:
            return _env_warm_start(args.model, args.env, args.seed)
        if args.model not in PACKAGED_MODELS:
            raise UserError(
                f"--model {args.model!r} is not 'builtin' nor a packaged model "
                f"({', '.join(PACKAGED_MODELS)}); a local model folder is for --warm-start --env"
            )
        return _warm_start(args.model) if args.warm_start else _convert_packaged(args.model, args.force)
    if args.warm_start:
        raise UserError(
            "--warm-start is for a packaged model (--model NAME); the built-in policy is warm-started by its own build"
        )
    from ..policy.builtin import build_builtin_policy, builtin_policy_path, find_builtin_policy, recipe_for

    recipe = recipe_for(
        args.size,
        seed=args.seed,
        lr=args.lr,
        two_facts=args.two_facts,
        two_fact_explorers=args.two_fact_explorers,
        three_facts=args.three_facts,
        three_fact_followers=args.three_fact_followers,
    )
    found = find_builtin_policy(recipe)
    if found is not None and not args.force:
        print(json.dumps({"path": str(found), "cached": True}))
        return 0
    path = builtin_policy_path(recipe)  # --force rebuilds into the cache (the shipped copy stays)
    bar = progress_bar("building the built-in policy", unit="batch")
    report = build_builtin_policy(recipe, path, progress=imitation_progress(bar, recipe.epochs))
    bar.close()
    print(json.dumps({"path": str(path), "cached": False, **report}))
    return 0


def _convert_packaged(name: str, force: bool) -> int:
    from ..policy.pretrained import (
        PACKAGED_MODELS,
        convert_packaged_model,
        find_packaged_policy,
        packaged_policy_path,
        source_file,
    )

    found = find_packaged_policy(name)
    if found is not None and not force:
        print(json.dumps({"path": str(found), "cached": True}))
        return 0
    model = PACKAGED_MODELS[name]
    source_file(model)  # a missing or damaged package says so before anything starts
    print(
        f"empo2: converting {name} from the package {model.package} into the cache "
        "(once; under a minute on a laptop CPU)",
        file=sys.stderr,
        flush=True,
    )
    path = packaged_policy_path(model)
    report = convert_packaged_model(model, path)
    print(json.dumps({"path": str(path), "cached": False, **report}))
    return 0


def _warm_start(name: str) -> int:
    from ..policy.chat_warm_start import ensure_warm_start
    from ..policy.saved_folder import prompt_shape_overrides

    _convert_packaged(name, force=False)  # its own line: the converted folder
    bar = progress_bar(f"warm start of {name}", unit="batch")
    try:
        path = ensure_warm_start(name, progress=batch_progress(bar))
    finally:
        bar.close()
    print(json.dumps({"path": str(path), **json.loads((path / "empo2_build.json").read_text())}))
    # Its prompts are cut where its demonstrations were: say how to train it alike.
    print(f"train it with: policy.model={path} {' '.join(prompt_shape_overrides(path))}", file=sys.stderr)
    return 0


def _env_warm_start(model: str, env: str, seed: int) -> int:
    from ..policy.env_warm_start import ensure_env_warm_start, env_warm_start_recipe
    from ..policy.pretrained import PACKAGED_MODELS
    from ..policy.saved_folder import BUILD_REPORT, prompt_shape_overrides

    recipe, path = env_warm_start_recipe(model, env, seed)  # a bad name or file: before any model loads
    if model in PACKAGED_MODELS:
        _convert_packaged(model, force=False)  # its own line: the converted folder
    bar = progress_bar(f"warm start of {Path(model).name} on {env}", unit="batch")
    try:
        path = ensure_env_warm_start(recipe, path, progress=batch_progress(bar))
    finally:
        bar.close()
    print(json.dumps({"path": str(path), **json.loads((path / BUILD_REPORT).read_text())}))
    print(
        f"train it with: env.name={env} policy.model={path} {' '.join(prompt_shape_overrides(path))}", file=sys.stderr
    )
    return 0
