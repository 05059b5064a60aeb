"""The host's modules import one way: no cycles, and no layer imports a layer above it.

Read from the source, so this is cheap and needs nothing installed. The cycle check reads
module-level imports only (an import inside a function is a deliberate late load, e.g. the
server's training stack); the layering reads every import, late ones too: loading late keeps
torch out of the server's start-up, it does not let a lower layer reach up.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "empo2"

# The layers of empo2, bottom to top, each a tuple of its units (a sub-package or a module at the
# top, by name; "" is empo2/__init__.py). A module may import its own unit and any unit of a
# lower layer; never another unit of its own layer, never a higher one.
LAYERS: list[tuple[str, ...]] = [
    # the ground floor: the version, the config, the metrics' keys, the crash-safe write kit, the
    # modes' names, the one-sentence error, the cache's place, the torchrun job a process is in,
    # the CPU thread pools' settings (made before torch loads)
    ("", "config", "metric_keys", "atomic", "modes", "one_sentence", "cache", "torchrun", "cpu_threads"),
    # pure maths; the text worlds; the run folder on disk
    ("algo", "envs", "run_folder"),
    # the tip store (algo's bit-exact cosine); the policy (its demonstrations play the built-in worlds)
    ("memory", "policy"),
    # the run folder mirrored to TensorBoard, W&B and trackio (reads the run's files and memory log)
    ("trackers",),
    # the loop and everything one iteration needs
    ("training",),
    # what runs the trainer: reruns on branches, the bench, exporting a policy
    ("rerun", "bench", "export"),
    # what serves it: the JSON-RPC host, the debugger's sessions
    ("server", "debug"),
    # the command line; a client of the host for scripts and tests
    ("cli", "client"),
]
LAYER_OF = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}

# The only modules at the top of the package: the entry point and the ground floor. Everything
# else lives in the package of its feature.
TOP_MODULES = {
    "__init__.py",
    "config.py",
    "metric_keys.py",
    "atomic.py",
    "modes.py",
    "one_sentence.py",
    "cache.py",
    "torchrun.py",
    "cpu_threads.py",
}


def module_name(path: Path) -> str:
    parts = ["empo2", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """The top-level unit of a module: `empo2.training.update` → "training", `empo2` → ""."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports_of(path: Path, late: bool) -> set[str]:
    """empo2 modules imported (relative imports resolved): at module level, or anywhere with late."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree) if late else tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("empo2")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base == "empo2" or base.startswith("empo2."):
                # `from . import x` names a submodule when one exists
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if _exists(sub) else base)
    return found - {name}


def top_level_imports(path: Path) -> set[str]:
    return imports_of(path, late=False)


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def graph(late: bool = False) -> dict[str, set[str]]:
    return {module_name(p): imports_of(p, late) for p in PACKAGE.rglob("*.py")}


def test_the_module_graph_has_no_cycles():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    # A package's __init__ importing its own submodules is no cycle of behaviour.
    real = [c for c in cycles if not all(m == c[0] or m.startswith(c[0] + ".") for m in c)]
    assert real == [], f"import cycles: {real[:3]}"


def test_every_unit_of_the_package_has_a_layer():
    units = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    units |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"} | {""}
    assert units == set(LAYER_OF), "a new package or top module needs its place in LAYERS"


def test_only_the_entry_point_and_the_ground_floor_are_modules_at_the_top():
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose == TOP_MODULES, "put a new module into the package of its feature"


def test_no_layer_imports_its_own_neighbours_or_a_layer_above():
    wrong = []
    for module, targets in sorted(graph(late=True).items()):
        source = unit_of(module)
        for target in sorted(targets):
            to = unit_of(target)
            if to != source and LAYER_OF[to] >= LAYER_OF[source]:
                wrong.append(f"{module} → {target}")
    assert wrong == []


def test_the_layers_see_the_imports():
    """The reader finds late imports and resolves relative ones (the layering test would pass
    vacuously if it did not)."""
    edges = graph(late=True)
    assert "empo2.training.trainer" in edges["empo2.cli.commands"]  # a late import, inside a function
    assert "empo2.atomic" in edges["empo2.run_folder.folder"]  # `from ..atomic import ...`
    assert "empo2.metric_keys" in edges["empo2.training.trainer"]  # `from .. import metric_keys`


def test_the_server_s_transport_knows_nothing_of_its_runs_or_its_methods():
    """server/ by feature: transport/ carries frames for any protocol; runs/ and methods/ build
    on it, never the other way round (a late import counts)."""
    edges = graph(late=True)
    transport = [m for m in edges if m.startswith("empo2.server.transport")]
    assert "empo2.server.transport.connection" in transport
    upward = [
        f"{m} → {t}"
        for m in transport
        for t in edges[m]
        if t.startswith(("empo2.server.runs", "empo2.server.methods", "empo2.server.app"))
    ]
    assert upward == []
    runs = [m for m in edges if m.startswith("empo2.server.runs")]
    assert [f"{m} → {t}" for m in runs for t in edges[m] if t.startswith("empo2.server.methods")] == []


def test_no_room_of_the_host_holds_over_a_fifth_of_it():
    """A unit that grows past a fifth of the package's lines is split by feature first."""
    lines: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        unit = unit_of(module_name(path))
        lines[unit] = lines.get(unit, 0) + len(path.read_text().splitlines())
    total = sum(lines.values())
    crowded = {unit: f"{n / total:.1%}" for unit, n in lines.items() if n > 0.2 * total}
    assert crowded == {}
