"""Does the built-in policy read tips? Held-out success with no memory, with a success tip and
with a failure tip (gold-path or habit-path tips stored in a real MemoryStore).

    .venv/bin/python host/benchmarks/probe_tips.py ~/.cache/empo2/policies/<builtin-folder>
"""
import sys, torch, collections
from empo2.policy.model import load_policy
from empo2.config import load_config
from empo2.envs.registry import make_env
from empo2.rollout import Episode, RolloutSettings, roll_out
from empo2.envs.builtin.demos import render_tip
from empo2.policy.prompting import step_user_text, Turn
from empo2.memory.store import MemoryStore
from empo2.memory.embedding import SentenceEmbedder
path = sys.argv[1]
model, tok = load_policy(path); model.eval()
cfg = load_config("builtin"); p = cfg.policy
env = make_env(cfg.env)
emb = SentenceEmbedder()
pairs = [(t, v) for t in cfg.env.tasks + ["repair-radio"] for v in env.variations(t, "test")[:4]]
mem_s = MemoryStore.open(None, emb); mem_f = MemoryStore.open(None, emb)
for t, v in pairs:
    obs, info = env.reset(t, v); w = env.world
    gold = [f"go to {w.item_room}", f"open {w.container_of[w.item_room]}", f"take {w.item}", f"go to {w.target_room}", f"put {w.item} in {w.target}", f"{w.kind.use_verb} {w.target}"]
    turns, steps = [], []
    for a in gold:
        steps.append((step_user_text(info.task_description, turns, obs, p.history_steps, p.observation_words), a))
        obs, r, d, info = env.step(a); turns.append(Turn(a, obs))
    mem_s.add_episode_tip(f"{t}/{v}", render_tip(w.item, 100, (w.container_of[w.item_room], w.item_room), [], w.target), steps, 100.0, {})
    obs, info = env.reset(t, v)
    fail = ["open " + w.container_of["hallway"], "go to kitchen", "open " + w.container_of["kitchen"], "go to hallway"]
    turns, steps = [], []
    for a in fail:
        steps.append((step_user_text(info.task_description, turns, obs, p.history_steps, p.observation_words), a))
        obs, r, d, info = env.step(a); turns.append(Turn(a, obs))
    mem_f.add_episode_tip(f"{t}/{v}", render_tip(w.item, 0, None, [(w.container_of[r], r) for r in ("hallway", "kitchen")], w.target), steps, 0.0, {})
s = RolloutSettings(p.max_action_tokens, 1.0, p.history_steps, p.observation_words)
for name, mem in (("none", None), ("success-tip", mem_s), ("failure-tip", mem_f)):
    eps = [Episode(f"e{k}", t, v, k, "memory") for k, (t, v) in enumerate(pairs * 4)]
    roll_out([make_env(cfg.env) for _ in eps], eps, model, tok, s, torch.Generator().manual_seed(0), mem)
    by = collections.defaultdict(list)
    for e in eps: by[e.task].append(e.success)
    rooms = collections.Counter(st.executed_action for e in eps for st in e.steps if st.executed_action.startswith("go to"))
    print(name, {k: round(sum(v)/len(v), 2) for k, v in by.items()}, "score", sum(e.final_score for e in eps)/len(eps))
    print("   ", rooms.most_common(6))
    if mem is not None: print("   ", eps[0].steps[0].tips[:2], [st.executed_action for st in eps[0].steps])
