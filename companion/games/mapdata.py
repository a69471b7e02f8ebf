"""Helpers for the games' map data files (data/*.toml)."""

from __future__ import annotations

from typing import Callable, Iterable, Mapping


def symmetric_links(nodes: Iterable[str], table: Mapping[str, Iterable[str]],
                    resolve: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """Neighbours of every node from a table listing each border once (a - b gives b - a too).

    `resolve` turns a name as written in the file into the node's canonical name (KeyError if unknown).
    """
    links: dict[str, set[str]] = {n: set() for n in nodes}
    for a, others in table.items():
        for b in others:
            na, nb = resolve(a), resolve(b)
            links[na].add(nb)
            links[nb].add(na)
    return {n: frozenset(v) for n, v in links.items()}
