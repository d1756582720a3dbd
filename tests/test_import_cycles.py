"""The package's imports form no cycle: each stage imports only stages below it.

Every ``import`` / ``from … import`` in ``traceviz/`` counts, at module level or inside a
function (a cycle hidden in a function is still a knot), except those under
``if TYPE_CHECKING:`` (annotations only). ``from pkg import sub`` where ``sub`` is a module is an
edge to ``pkg.sub`` alone; a C extension (``traceviz/trace/_scan.c``) is a module that imports
nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "traceviz"


def module_names() -> dict[str, Path]:
    names = {}
    for path in ROOT.rglob("*.c"):
        names[".".join(path.relative_to(ROOT.parent).with_suffix("").parts)] = path
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING"
                                         or getattr(test, "attr", None) == "TYPE_CHECKING"):
            skip.update(id(n) for sub in node.body for n in ast.walk(sub))
    return skip


def imports_of(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    if path.suffix == ".c":
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in mods)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            subs = {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods}
            if len(subs) < len(node.names) and base in mods:
                out.add(base)
            out.update(subs)
    out.discard(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_of_traceviz_is_in_an_import_cycle():
    mods = module_names()
    graph = {name: imports_of(name, path, mods) for name, path in mods.items()}
    assert sum(len(v) for v in graph.values()) > 200  # the walk saw the real imports
    assert cycles(graph) == []
