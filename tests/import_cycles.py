"""Print every import cycle in the ``agentbar`` package as JSON (a list of module lists), from
grimp's graph of the package found on ``PYTHONPATH`` (the tree's ``.layout``). Run as a script
by ``test_import_cycles.py``: grimp must find the package by its import name."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

import grimp
import orjson


def cycles(modules: Iterable[str], imports: Callable[[str], set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def main() -> int:
    graph = grimp.build_graph("agentbar", cache_dir=None)
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    sys.stdout.write(orjson.dumps(found).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
