"""Small linear algebra for the sensing fits, in plain Python: the systems are a few to a score of unknowns, so
numpy's call overhead would cost more than the arithmetic (and sensing keeps no numpy dependency)."""

from __future__ import annotations


def solve_symmetric(m: list[list[float]], v: list[float]) -> tuple[list[float], list[list[float]]] | None:
    """Solve m·x = v (symmetric, small) by Gauss-Jordan with partial pivoting; also m⁻¹. None when singular."""
    n = len(v)
    a = [list(row) + [1.0 if i == j else 0.0 for j in range(n)] + [v[i]] for i, row in enumerate(m)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-18:
            return None
        a[c], a[p] = a[p], a[c]
        piv = a[c][c]
        a[c] = [x / piv for x in a[c]]
        for r in range(n):
            if r != c and a[r][c] != 0.0:
                f = a[r][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][-1] for i in range(n)], [a[i][n:2 * n] for i in range(n)]
