r"""Diagrams drawn by code, one function per diagram.

Every drawing function is pure matplotlib, ``f(..., ax=None) -> Axes``: it
draws on ``ax`` (or on a new figure's axes) and returns the axes, like
:mod:`rhn.plots`. The graphs a diagram shows are built by small public
functions, so a chapter can compute with exactly what the figure draws.

Credit-assignment paths (chapter 1). Unroll a recurrent network over
:math:`T` steps and draw one node per non-linear transformation: a grid of
``layers`` rows by ``steps`` columns. *Stacking* :math:`N` one-layer RNNs
connects each node to the one above it (same step) and to the one on its
right (same layer, next step). A *deep transition* of recurrence depth
:math:`D` connects the :math:`D` micro-layers of a step in series and the
top of step :math:`t` to the bottom of step :math:`t + 1`. The input
:math:`x^{[1]}` enters node ``(0, 0)``; the longest path from there to the
top node of the last step crosses :math:`N + T - 1` transformations when
stacking and :math:`D \times T` with a deep transition (Pascanu et al., 2013,
*How to construct deep recurrent neural networks*).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from typing import TypeVar

from matplotlib.axes import Axes

from . import _checks
from .plots import COLORS

__all__ = [
    "credit_assignment_graph",
    "longest_path",
    "stacking_vs_deep_transition",
]

Node = tuple[int, int]  # (row, column) = (layer or micro-layer, time step), 0-based
Edge = tuple[Node, Node]
V = TypeVar("V", bound=Hashable)  # any node type, for longest_path

KINDS = ("stacked", "deep")


def credit_assignment_graph(
    kind: str, layers: int, steps: int
) -> tuple[list[Node], list[Edge]]:
    r"""The unrolled graph of non-linear transformations of a recurrent network.

    Args:
        kind: ``"stacked"`` (``layers`` stacked one-layer RNNs) or ``"deep"``
            (one RNN whose transition has ``layers`` micro-layers in series,
            as in an RHN of recurrence depth ``D = layers``).
        layers: rows of the grid, :math:`N` or :math:`D` (at least 1).
        steps: time steps :math:`T` (at least 1).

    Returns:
        ``(nodes, edges)``: the ``layers * steps`` nodes ``(row, column)``,
        0-based, and the directed edges ``(from, to)``. Row 0 is the node
        that reads the input of its step.
    """
    kind = _checks.choice("kind", kind, KINDS)
    layers = _checks.positive_int("layers", layers)
    steps = _checks.positive_int("steps", steps)
    nodes = [(r, c) for c in range(steps) for r in range(layers)]
    edges: list[Edge] = [
        ((r, c), (r + 1, c)) for c in range(steps) for r in range(layers - 1)
    ]
    if kind == "stacked":  # every layer passes its state on in time
        edges += [((r, c), (r, c + 1)) for c in range(steps - 1) for r in range(layers)]
    else:  # only the top micro-layer's state enters the next step, at the bottom
        edges += [((layers - 1, c), (0, c + 1)) for c in range(steps - 1)]
    return nodes, edges


def longest_path(
    nodes: Sequence[V], edges: Sequence[tuple[V, V]], source: V, target: V
) -> list[V]:
    r"""The longest directed path from ``source`` to ``target`` in a DAG.

    Dynamic programming in topological order (Kahn's algorithm): the length
    of the longest path to a node is one more than the longest to any of its
    predecessors. Lengths count nodes, so a path through ``m`` nodes crosses
    ``m`` non-linear transformations.

    Args:
        nodes: the nodes of a directed acyclic graph.
        edges: its edges ``(from, to)``.
        source, target: end points; ``target`` must be reachable.

    Returns:
        The nodes of one longest path, from ``source`` to ``target``.
    """
    known = set(nodes)
    for name, node in (("source", source), ("target", target)):
        if node not in known:
            raise ValueError(f"{name} must be one of the nodes, got {node!r}")
    succ: dict[V, list[V]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    best: dict[V, int] = {source: 1}  # nodes on the longest path ending here
    parent: dict[V, V] = {}
    queue = deque(n for n in nodes if indegree[n] == 0)
    seen = 0
    while queue:
        a = queue.popleft()
        seen += 1
        for b in succ[a]:
            if a in best and best[a] + 1 > best.get(b, 0):
                best[b], parent[b] = best[a] + 1, a
            indegree[b] -= 1
            if indegree[b] == 0:
                queue.append(b)
    if seen != len(nodes):
        raise ValueError("edges must form a directed acyclic graph; found a cycle")
    if target not in best:
        raise ValueError(f"target {target!r} is not reachable from source {source!r}")
    path = [target]
    while path[-1] != source:
        path.append(parent[path[-1]])
    return path[::-1]


def _draw_graph(
    ax: Axes, kind: str, layers: int, steps: int, x0: float, label: str
) -> int:
    """One unrolled graph with its longest path highlighted; returns the path length."""
    nodes, edges = credit_assignment_graph(kind, layers, steps)
    path = longest_path(nodes, edges, (0, 0), (layers - 1, steps - 1))
    on_path = set(zip(path, path[1:], strict=False))
    highlight = COLORS["rnn"]
    for a, b in edges:
        hot = (a, b) in on_path
        ax.annotate(
            "",
            xy=(x0 + b[1], b[0]),
            xytext=(x0 + a[1], a[0]),
            arrowprops={
                "arrowstyle": "-|>",
                "color": highlight if hot else "0.6",
                "lw": 2.2 if hot else 1.0,
                "shrinkA": 7,
                "shrinkB": 7,
                # the deep transition's step-to-step edge curves past the column
                "connectionstyle": "arc3,rad=-0.25" if b[0] < a[0] else "arc3",
            },
        )
    xs = [x0 + c for _, c in nodes]
    ys = [r for r, _ in nodes]
    ax.scatter(xs, ys, s=150, color="white", edgecolor="0.3", zorder=3)
    ax.scatter(
        [x0 + c for _, c in path],
        [r for r, _ in path],
        s=150,
        color=highlight,
        edgecolor="0.3",
        zorder=4,
        label=f"longest path ({kind})",
    )
    for c in range(steps):  # the inputs, entering row 0 of every step
        ax.annotate(
            "",
            xy=(x0 + c, 0),
            xytext=(x0 + c, -0.75),
            arrowprops={"arrowstyle": "-|>", "color": "0.6", "lw": 1.0, "shrinkB": 7},
        )
        ax.text(x0 + c, -0.95, f"$x^{{[{c + 1}]}}$", ha="center", va="top", fontsize=9)
    ax.text(
        x0 + (steps - 1) / 2,
        layers - 0.3,
        label,
        ha="center",
        va="bottom",
        fontsize=10,
    )
    return len(path)


def stacking_vs_deep_transition(
    layers: int = 3, steps: int = 4, ax: Axes | None = None
) -> Axes:
    r"""Credit-assignment paths: stacked layers beside a deep transition.

    Both graphs have ``layers * steps`` non-linear transformations (circles);
    arrows are the dependencies. The longest path from the input
    :math:`x^{[1]}` to the top node of the last step is drawn in colour:
    ``layers + steps - 1`` nodes when stacking, ``layers * steps`` with a
    deep transition.

    Args:
        layers: stacked layers :math:`N` on the left, recurrence depth
            :math:`D` on the right (default 3).
        steps: time steps :math:`T` (default 4).
        ax: the axes to draw on (default: a new figure).

    Returns:
        The axes.
    """
    layers = _checks.positive_int("layers", layers)
    steps = _checks.positive_int("steps", steps)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(2.2 * steps + 2.5, 0.9 * layers + 1.6))
    n_stack = layers + steps - 1
    n_deep = layers * steps
    _draw_graph(
        ax,
        "stacked",
        layers,
        steps,
        0.0,
        f"stacking $N = {layers}$ layers: path $N + T - 1 = {n_stack}$",
    )
    _draw_graph(
        ax,
        "deep",
        layers,
        steps,
        steps + 0.8,
        f"recurrence depth $D = {layers}$: path $D \\times T = {n_deep}$",
    )
    ax.set(xlim=(-0.6, 2 * steps + 0.4), ylim=(-1.5, layers + 0.2), aspect="equal")
    ax.axis("off")
    return ax
