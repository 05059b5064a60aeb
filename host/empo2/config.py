"""The training configuration: one dataclass per concern, a docstring on every field.

A run's config comes from a preset (empo2/presets/*.json) or a JSON file, then `key=value`
overrides with dotted keys (`algo.p_memory=0`). Everything a user can get wrong — an unknown key,
a value of the wrong type, an out-of-range probability — is a `ConfigError` with one sentence
that names the key; the CLI prints it and exits non-zero.

Defaults are the paper's (docs/paper.md §2–5) where the paper gives one and the setting applies to the
built-in default; where the small CPU default must differ (batch, lr, tokens per action), the
preset says so and the paper's value is in the field's docstring.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


class ConfigError(ValueError):
    """A user's configuration mistake, described in one sentence."""


@dataclass
class EnvConfig:
    name: str = "builtin"
    """The environment: 'builtin' (the built-in worlds), 'scienceworld', 'textworld', a name an
    installed package declares in the 'empo2.environments' entry-point group,
    'package.module:factory', or 'gymnasium:<id>' (docs/environments.md)."""
    kwargs: dict = field(default_factory=dict)
    """Keyword arguments of the factory of an environment found by name (not the built-in ones)."""
    tasks: list[str] = field(default_factory=lambda: ["power-device", "grow-plant", "heat-food"])
    """Task kinds trained on; each training batch draws from them. Empty: every task of the
    environment. A config that names another environment than 'builtin' without setting them
    (or an override of env.name without env.tasks) leaves them empty."""
    train_variations: list[int] = field(default_factory=list)
    """Variations trained on; empty means the environment's training split (built-in: 0–4)."""
    test_variations: list[int] = field(default_factory=list)
    """Held-out variations for evaluation; empty means the environment's test split."""
    max_steps: int = 15
    """Step limit of an episode (paper: 30 on ScienceWorld, per-task in the reference code)."""
    correct_actions: bool = True
    """Replace an invalid action with the valid one of highest word overlap (reference setup)."""
    correction: str = "unparsed"
    """What counts as invalid (ScienceWorld, TextWorld): 'unparsed' (text the simulator does not
    understand) or 'listed' (anything not in its valid-action list: the reference code, which
    also turns 'open door' into 'close door' when the door is already open; docs/benchmarks.md)."""
    step_limits: str = "fixed"
    """'fixed': every task stops at max_steps; 'per-task': the environment's own table
    (ScienceWorld: the reference code's, e.g. 20 for power-component, 60 for chemistry-mix)."""
    simplification: str = "easy"
    """ScienceWorld simplifications, comma-separated ('easy': the paper's preset)."""
    workers: int = 1
    """Threads stepping the environments of a batch (ScienceWorld: each waits on its own JVM)."""
    step_timeout_s: float = 60.0
    """Longest reset or step of an environment found by name before the run fails; 0: no limit."""


@dataclass
class PolicyConfig:
    model: str = "builtin"
    """'builtin' for the cached built-in policy, 'builtin:<size>' for another size of it (tiny,
    default, large: policy/model.py), else a Hugging Face folder or hub id."""
    dtype: str = "auto"
    """'auto' (bf16 on CUDA, fp32 on CPU), 'float32', 'bfloat16', or 'mixed-bfloat16' (fp32
    master weights, bf16 compute: a full fine-tune at the paper's lr 1e-6 needs it)."""
    device: str = "auto"
    """'auto', 'cpu' or 'cuda'."""
    temperature: float = 1.0
    """Sampling temperature of training rollouts (paper: 1.0)."""
    eval_temperature: float = 0.4
    """Sampling temperature of evaluation episodes (paper: 0.4)."""
    max_action_tokens: int = 8
    """Tokens per action (paper: 32 with a subword tokenizer; built-in words are tokens)."""
    max_tip_tokens: int = 40
    """Tokens of a written tip (the paper asks for fewer than 100 words)."""
    history_steps: int = 3
    """Past steps shown in each prompt."""
    observation_words: int = 10
    """Words kept of each past observation (three times that of the current one)."""
    reflection_observation_words: int = 10
    """Words kept of each observation inside the reflection prompt; 0 keeps whole observations
    (the reference code). 10, like the history, is what the built-in policy was trained on, and
    can cut an item's name out of a long observation (docs/algorithm.md, deviation 15)."""
    history_action: str = "executed"
    """Which action the history and the reflection show: 'executed' (after invalid-action
    correction) or 'raw' (the policy's text, as the reference code)."""
    max_sequence_tokens: int = 0
    """Prompt plus response budget in tokens (paper: 4,500); the oldest history is dropped first
    to fit. 0: no budget."""
    generation_batch: int = 64
    """Prompts decoded together (one KV cache); larger batches run in chunks of this size."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass (needed for 7B models with long prompts)."""
    lora_rank: int = 0
    """LoRA rank r through peft; 0 trains every weight (the paper's full fine-tune)."""
    lora_alpha: float = 32.0
    """LoRA scaling numerator (the update is scaled by alpha / r)."""
    lora_dropout: float = 0.0
    """Dropout on the LoRA input (0 keeps rollout and update log-probs identical)."""
    lora_targets: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    """Module names that get adapters (Qwen2/Llama naming)."""


@dataclass
class AlgoConfig:
    batch_tasks: int = 4
    """B: tasks per iteration (paper: 16)."""
    group_size: int = 8
    """N: rollouts per task, one GRPO group (paper: 8)."""
    p_memory: float = 0.25
    """p: probability that an iteration's rollouts are memory-augmented (0 gives GRPO)."""
    q_off_policy: float = 2 / 3
    """q: probability that memory rollouts are trained off-policy (tips removed)."""
    off_policy_old_logprob: str = "with_tips"
    """Off-policy ratio denominator: 'with_tips' (paper Table 3) or 'without_tips' (Alg. 1)."""
    memory_contrast: str = "off"
    """'off': in a memory iteration every rollout of a group has tips (the paper draws the mode
    per batch). 'half': the first half of each group (N // 2) plays with tips and the rest
    without, under the group's one baseline, so a tip that makes its rollouts succeed is
    compared with the policy's own tip-free tries (docs/algorithm.md, deviation 25)."""
    clip_low: float = 0.2
    """ε_low of the asymmetric PPO clip."""
    clip_high: float = 0.3
    """ε_high of the asymmetric PPO clip."""
    dual_clip_c: float = 10.0
    """Dual-clip bound c for negative advantages."""
    low_prob_mask: str = "token"
    """Low-probability masking: 'token' (default), 'step' (reference code) or 'off'."""
    mask_log_delta: float = -5.0
    """log δ: tokens less likely than this are masked."""
    mask_scope: str = "all"
    """Which updates are masked: 'all' (every update mode, the reference code's scope when its
    mask is on) or 'memory' (only updates of memory rollouts, off-policy and on-policy-with-tips,
    where tips are in use: our variant, docs/algorithm.md deviation 23)."""
    mask_logprob: str = "current_no_tips"
    """Which log-prob masking tests: 'current_no_tips' (paper Eq. 2) or 'behaviour' (reference)."""
    intrinsic: str = "paper"
    """Intrinsic reward: 'paper' (state novelty), 'reference' (1/(tips retrieved + 1)) or 'off'."""
    intrinsic_coef: float = 1.0
    """Coefficient of the intrinsic reward (paper: 1; ablations 0.5, 2)."""
    novelty_threshold: float = 0.9
    """Cosine above which two states count as the same (not given in the paper)."""
    advantage_std_norm: bool = True
    """Divide GRPO advantages by the group's standard deviation."""
    reward_scale: float = 0.01
    """Score points to reward units: a full score of 100 is a return of 1."""
    kl_beta: float = 0.0
    """β of the KL penalty to the initial policy (0 on ScienceWorld, 0.01 on WebShop)."""
    kl_kind: str = "low_var_kl"
    """KL estimator: 'low_var_kl' (k3), 'kl' (k1) or 'mse' (k2)."""
    lr: float = 2e-4
    """AdamW learning rate (paper: 1e-6 for a 7B model; the tiny built-in policy needs more)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    grad_clip: float = 1.0
    """Gradient-norm clip."""
    minibatches: int = 2
    """Optimizer steps per iteration (the batch is split); later ones see ratios away from 1.
    The reference takes one step per mini-batch of 16 prompts' rows (docs/algorithm.md 22)."""
    minibatch_prompts: int = 0
    """0: `minibatches` optimizer steps per iteration, whatever the batch. N > 0: the reference's
    mini-batching, one optimizer step per mini-batch of N prompts' rows (N × group_size samples,
    each a step of an episode, as verl counts its mini-batch in prompts and multiplies it by the
    rollouts per prompt), so the steps grow with the batch (reference: 16)."""
    ppo_epochs: int = 1
    """Passes over the batch per iteration."""
    micro_batch: int = 64
    """Samples per forward/backward pass; gradients accumulate over a minibatch (memory knob
    only: the loss is the same for any value)."""


@dataclass
class MemoryConfig:
    capacity: int = 1000
    """Entries per task variation; the oldest are evicted first."""
    similarity_threshold: float = 0.5
    """Cosine a stored key must exceed to be retrieved."""
    top_k: int = 10
    """Entries retrieved per step, ranked by their episode's score."""
    key: str = "step"
    """What a tip is stored under: 'step', one entry per step of its episode keyed by that
    step's user turn, with the step's action (docs/paper.md §4; the default, which every recorded
    bench used); 'episode', one entry keyed by the episode's final conversation, with no action
    (the final reference code; docs/algorithm.md, "Memory key"). Queries are each step's user
    turn either way."""
    show_score: bool = True
    """Whether each tip in the tip block ends with the score its episode earned (`tip ; action :
    … ; score : 100`), as the reference code's entries do. Every bench recorded before this
    option was run without it (false), and so were the built-in policy's demonstrations
    (docs/algorithm.md, deviation 21)."""
    edited_tip_actions: str = "drop"
    """What the tip block shows for a tip whose current text a person wrote: 'drop', the text
    alone; 'keep', the text with its entry's action, as for any entry (docs/paper.md §4: entry = tip +
    the action its episode took; the reference code has no edits). The actions are what the
    episode that the old text described did, so after a rewrite they contradict it, and the
    built-in policy follows an entry's action over its text (host/benchmarks/probe_tips.py)."""
    write_tips: str = "auto"
    """When the policy writes a tip after a training episode: 'auto' when memory rollouts can
    happen (algo.p_memory > 0; with p = 0 nothing reads a tip, and reflection is about a third of
    an iteration, so GRPO skips it); 'always' (docs/paper.md §2.4 literally, e.g. to evaluate a GRPO
    run with memory)."""
    tip_writer: str = "policy"
    """Whose weights write the tips: 'policy', the policy being trained (docs/paper.md §2.4, the
    paper and the reference code); 'initial', the frozen warm start (under LoRA the base beneath
    the adapters, else a second copy, shared with the KL reference). A deviation for small
    policies: the update trains the shared weights on actions only, never on tips, and a small
    model's reflection drifts as they move (docs/algorithm.md, item 17); 'scripted', the
    built-in worlds state each episode's facts in the demonstrations' tip format (item 18), a
    stand-in for a writer that reflects truthfully, to test the algorithm apart from it."""


@dataclass
class EvalConfig:
    every: int = 5
    """Evaluate memory-free and memory-augmented success every this many iterations (0: never)."""
    episodes_per_variation: int = 1
    """Episodes per held-out variation and task."""
    max_variations: int = 10
    """Held-out variations evaluated per task (the first ones of the test split)."""


@dataclass
class DistConfig:
    strategy: str = "ddp"
    """How several processes (torchrun) share the model. 'ddp': every rank holds the whole model,
    gradients and optimizer state (training/distributed.py); 'fsdp2': each decoder layer and the
    root are sharded across ranks with PyTorch FSDP2, about 1/world of the bytes per rank
    (training/sharding.py), with sharded checkpoints that resume at any world size."""
    cpu_offload: bool = False
    """With fsdp2: keep parameter and optimizer shards in host memory between uses."""


@dataclass
class TrainConfig:
    name: str = ""
    """Run id; empty: the preset's name plus a timestamp."""
    root: str = ".empo2/runs"
    """Folder that holds run folders."""
    seed: int = 0
    """Seed of every random choice; on CPU the same seed gives the same run."""
    iterations: int = 40
    """Training iterations."""
    max_env_steps: int = 0
    """Stop once this many environment steps were taken (0: no limit); equal budgets for the bench."""
    checkpoint_every: int = 1
    """Save a checkpoint every this many iterations (resume starts from the last one)."""
    keep_checkpoints: int = 2
    """Newest checkpoints kept; older ones are deleted, except the newest one before a person's
    tip edit that no rerun branch has copied yet (so a rerun can start from before the edit)."""
    env: EnvConfig = field(default_factory=EnvConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    dist: DistConfig = field(default_factory=DistConfig)
    report_to: list[str] = field(default_factory=list)
    """Trackers that mirror the run while it trains, any of 'tensorboard' (event files in
    <run>/tensorboard/), 'wandb' (offline in <run>/wandb/ unless an account is configured) and
    'trackio' (its local store); empty: none. The mirror follows the run folder in a thread of
    its own and a failing tracker only logs a warning: metrics.jsonl stays the record
    (empo2/trackers/, docs/trackers.md). As an override: report_to=tensorboard,wandb."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


CHOICES = {
    "algo.off_policy_old_logprob": ("with_tips", "without_tips"),
    "algo.memory_contrast": ("off", "half"),
    "algo.low_prob_mask": ("token", "step", "off"),
    "algo.mask_logprob": ("current_no_tips", "behaviour"),
    "algo.mask_scope": ("all", "memory"),
    "algo.intrinsic": ("paper", "reference", "off"),
    "algo.kl_kind": ("low_var_kl", "kl", "mse"),
    "memory.write_tips": ("auto", "always"),
    "memory.edited_tip_actions": ("drop", "keep"),
    "memory.tip_writer": ("policy", "initial", "scripted"),
    "memory.key": ("step", "episode"),
    "policy.dtype": ("auto", "float32", "bfloat16", "mixed-bfloat16"),
    "policy.history_action": ("executed", "raw"),
    "policy.device": ("auto", "cpu", "cuda"),
    "env.correction": ("unparsed", "listed"),
    "env.step_limits": ("fixed", "per-task"),
    "dist.strategy": ("ddp", "fsdp2"),
}
# The built-in policy's sizes (policy/model.py's TINY_SIZES, a test holds them equal), named in
# policy.model as 'builtin:<size>'; plain 'builtin' is the default size.
BUILTIN_SIZES = ("tiny", "default", "large")
# The trackers report_to can name (trackers/sinks.py has one class per name, a test holds them equal).
TRACKERS = ("tensorboard", "wandb", "trackio")
PROBABILITIES = ("algo.p_memory", "algo.q_off_policy")
POSITIVE = (
    "iterations",
    "algo.batch_tasks",
    "algo.group_size",
    "env.max_steps",
    "policy.max_action_tokens",
    "policy.max_tip_tokens",
    "algo.minibatches",
    "algo.ppo_epochs",
    "memory.capacity",
    "memory.top_k",
    "keep_checkpoints",
    "checkpoint_every",
    "env.workers",
    "algo.micro_batch",
    "policy.generation_batch",
)


def builtin_size(model: str) -> str | None:
    """The built-in size that a policy.model names ('builtin' → 'default'), None for any other
    model."""
    if model == "builtin":
        return "default"
    prefix, sep, size = model.partition(":")
    return size if sep and prefix == "builtin" else None


def presets() -> dict[str, Path]:
    folder = resources.files("empo2") / "presets"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json")}


def load_config(source: str | dict | None = None, overrides: list[str] = ()) -> TrainConfig:
    """A validated config from a preset name, a JSON file or a dict, then `key=value` overrides."""
    if source is None:
        data: dict = {}
    elif isinstance(source, dict):
        data = source
    else:
        data = _read_source(source)
    config = _build(TrainConfig, data, "")
    for item in overrides:
        _apply_override(config, item)
    _tasks_of_the_named_environment(config, data, overrides)
    _validate(config)
    return config


# How env.name finds an environment (envs/registry.py makes it): a built-in family, an installed
# package's entry point in this group, `module:factory`, or one of these prefixes.
BUILTIN_ENVS = ("builtin", "scienceworld", "textworld")
ENV_ENTRY_POINTS = "empo2.environments"
GYMNASIUM, OPENENV = "gymnasium:", "openenv:"


def env_entry_points() -> dict:
    """The installed packages' environments by name: {name: importlib.metadata.EntryPoint}."""
    from importlib import metadata

    return {entry.name: entry for entry in metadata.entry_points(group=ENV_ENTRY_POINTS)}


def check_env_name(name: str) -> None:
    """A ConfigError unless `name` could name an environment: built in, an installed entry
    point, or of the module:factory or gymnasium:<id> form. It imports nothing; whether the name
    works shows when the run makes its environment."""
    if name.startswith(OPENENV):
        check_openenv_url(name[len(OPENENV) :])
        return
    if name in BUILTIN_ENVS or name.startswith(GYMNASIUM) or name in env_entry_points():
        return
    module, sep, attr = name.partition(":")
    if sep and module and attr:
        return
    raise ConfigError(
        f"config key 'env.name' names no environment: {name!r} is not built in "
        f"({', '.join(BUILTIN_ENVS)}), not an installed package's {ENV_ENTRY_POINTS} "
        "entry point, nor of the form package.module:factory or gymnasium:<id>"
    )


def check_openenv_url(url: str) -> None:
    """A ConfigError unless `url` (of env.name=openenv:<url>) can name an OpenEnv server."""
    from urllib.parse import urlparse

    parsed = urlparse(url)
    try:
        parsed.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https", "ws", "wss") or not parsed.hostname:
        raise ConfigError(
            f"config key 'env.name' is 'openenv:{url}': an OpenEnv server's URL starts with "
            "http://, https://, ws:// or wss:// and names a host (and a port that is a number)"
        )


def _tasks_of_the_named_environment(config: TrainConfig, data: dict, overrides) -> None:
    """Tasks and variations belong to the environment they were written for: a config naming
    another environment than 'builtin' without them, or an override that changes env.name
    without them, trains on all of its environment's tasks and their own variations."""
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    written_for = env.get("name", EnvConfig.name)
    overridden = {item.partition("=")[0] for item in overrides}
    renamed = config.env.name != written_for
    for key in ("tasks", "train_variations", "test_variations"):
        if f"env.{key}" in overridden:
            continue
        if renamed or (key not in env and config.env.name != EnvConfig.name):
            setattr(config.env, key, [])


def _read_source(source: str) -> dict:
    known = presets()
    path = known.get(source) or Path(source)
    if not path.exists():
        raise ConfigError(f"no preset or config file named {source!r} (presets: {', '.join(sorted(known))})")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path} is not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a JSON object")
    return data


def _build(cls, data: dict, prefix: str):
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(f"unknown config key '{prefix}{key}' (known: {', '.join(sorted(names))})")
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            if not isinstance(data[f.name], dict):
                raise ConfigError(f"config key '{prefix}{f.name}' must be an object")
            values[f.name] = _build(kind, data[f.name], f"{prefix}{f.name}.")
        else:
            values[f.name] = _coerce(data[f.name], kind, f"{prefix}{f.name}")
    return cls(**values)


def _coerce(value, kind, key: str):
    origin = typing.get_origin(kind)
    if origin is list:
        (inner,) = typing.get_args(kind)
        if not isinstance(value, list):
            raise ConfigError(f"config key '{key}' must be a list of {inner.__name__}")
        return [_coerce(v, inner, key) for v in value]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is bool and not isinstance(value, bool):
        raise ConfigError(f"config key '{key}' must be true or false, not {value!r}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"config key '{key}' must be an integer, not {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"config key '{key}' must be a {kind.__name__}, not {value!r}")
    return value


def _apply_override(config: TrainConfig, item: str) -> None:
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"override {item!r} must look like key=value (e.g. algo.p_memory=0)")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a bare word is a string
    *path, leaf = key.split(".")
    node = config
    for part in path:
        if not dataclasses.is_dataclass(node) or not hasattr(node, part):
            raise ConfigError(f"unknown config key '{key}'")
        node = getattr(node, part)
    fields = {f.name: f for f in dataclasses.fields(node)}
    if leaf not in fields or dataclasses.is_dataclass(getattr(node, leaf)):
        raise ConfigError(f"unknown config key '{key}'")
    kind = typing.get_type_hints(type(node))[leaf]
    if kind is str and not isinstance(value, str):
        value = raw
    if typing.get_origin(kind) is list and isinstance(value, str):
        value = [part for part in value.split(",") if part]  # a bare list: a,b,c
    setattr(node, leaf, _coerce(value, kind, key))


def _lookup(config: TrainConfig, key: str):
    node = config
    for part in key.split("."):
        node = getattr(node, part)
    return node


def _validate(config: TrainConfig) -> None:
    for key, allowed in CHOICES.items():
        if _lookup(config, key) not in allowed:
            raise ConfigError(f"config key '{key}' must be one of {', '.join(allowed)}")
    for key in PROBABILITIES:
        if not 0.0 <= _lookup(config, key) <= 1.0:
            raise ConfigError(f"config key '{key}' is a probability and must lie in [0, 1]")
    for key in POSITIVE:
        if _lookup(config, key) < 1:
            raise ConfigError(f"config key '{key}' must be at least 1")
    if config.algo.memory_contrast == "half" and config.algo.intrinsic == "reference":
        raise ConfigError(
            "config key 'algo.memory_contrast' can be 'half' only with algo.intrinsic "
            "paper or off (the reference reward pays tip-guided steps alone, which "
            "would favour one half of each group)"
        )
    if config.algo.minibatch_prompts < 0:
        raise ConfigError(
            "config key 'algo.minibatch_prompts' must be at least 0 (0: algo.minibatches steps per iteration)"
        )
    if config.algo.group_size < 2:
        raise ConfigError("config key 'algo.group_size' must be at least 2 (GRPO compares rollouts of a group)")
    unknown = [name for name in config.report_to if name not in TRACKERS]
    if unknown:
        raise ConfigError(f"config key 'report_to' names no tracker: {unknown[0]!r} (trackers: {', '.join(TRACKERS)})")
    check_env_name(config.env.name)
    if not config.env.step_timeout_s >= 0:
        raise ConfigError("config key 'env.step_timeout_s' must be at least 0 (0: no limit)")
    if config.memory.tip_writer == "scripted" and config.env.name != "builtin":
        raise ConfigError(
            "config key 'memory.tip_writer' can be 'scripted' only with env.name=builtin "
            "(it replays the built-in worlds to state what an episode did)"
        )
    p = config.policy
    if builtin_size(p.model) not in (None, *BUILTIN_SIZES):
        raise ConfigError(
            f"config key 'policy.model' names no built-in size: {p.model!r} (sizes: {', '.join(BUILTIN_SIZES)})"
        )
    if p.reflection_observation_words < 0:
        raise ConfigError("config key 'policy.reflection_observation_words' must be at least 0 (0: whole observations)")
    if p.max_sequence_tokens < 0 or p.lora_rank < 0 or not 0.0 <= p.lora_dropout < 1.0:
        raise ConfigError(
            "config keys 'policy.max_sequence_tokens' and 'policy.lora_rank' must be "
            "at least 0 and 'policy.lora_dropout' lie in [0, 1)"
        )
    if 0 < p.max_sequence_tokens <= max(p.max_action_tokens, p.max_tip_tokens):
        raise ConfigError(
            "config key 'policy.max_sequence_tokens' must exceed the action and tip "
            "token limits (it is the prompt plus the response)"
        )
    if p.lora_rank and not p.lora_targets:
        raise ConfigError("config key 'policy.lora_targets' must name at least one module when LoRA is on")


__all__ = ["TrainConfig", "ConfigError", "load_config", "presets"]
