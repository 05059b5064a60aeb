"""The host's modules import one way: no cycles, and the lower layers never import the upper.

Read from the source (module-level imports only; an import inside a function is a deliberate
late load, e.g. the server's training stack), so this is cheap and needs nothing installed.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "empo2"

# Who may not import whom at module level: the environments know nothing of policies, training
# or the server; the memory and the run folder know nothing of training or the server.
FORBIDDEN = {
    "empo2.envs": ("empo2.policy", "empo2.training.trainer", "empo2.training.rollout", "empo2.server"),
    "empo2.memory": ("empo2.policy", "empo2.training.trainer", "empo2.training.rollout", "empo2.server"),
    "empo2.run_folder": ("empo2.training.trainer", "empo2.server"),
    "empo2.algo": ("empo2.policy", "empo2.training.trainer", "empo2.server"),
}


def module_name(path: Path) -> str:
    parts = ["empo2", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """empo2 modules imported at module level (relative imports resolved)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("empo2")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base.startswith("empo2"):
                # `from . import x` names a submodule when one exists
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if _exists(sub) else base)
    return found - {name}


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def graph() -> dict[str, set[str]]:
    return {module_name(p): top_level_imports(p) for p in PACKAGE.rglob("*.py")}


def test_the_module_graph_has_no_cycles():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    # A package's __init__ importing its own submodules is no cycle of behaviour.
    real = [c for c in cycles if not all(m == c[0] or m.startswith(c[0] + ".") for m in c)]
    assert real == [], f"import cycles: {real[:3]}"


def test_lower_layers_never_import_upper_ones():
    edges = graph()
    wrong = [(module, target) for module, targets in edges.items() for target in targets
             for layer, banned in FORBIDDEN.items() if module.startswith(layer)
             for b in banned if target == b or target.startswith(b + ".")]
    assert wrong == []
