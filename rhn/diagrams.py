r"""Diagrams drawn by code: the pictures of the book that are not data plots.

One function per diagram, pure matplotlib, ``f(..., ax=None) -> Axes``: it
draws on ``ax`` (a new figure's axes when ``ax`` is ``None``) and returns
it, like :mod:`rhn.plots`. Parts of a diagram carry a ``gid`` or a label
(for example ``"micro-layer-2"``) so that tests and readers can find them,
and the graphs a diagram shows are built by small public functions, so a
chapter can compute with exactly what the figure draws.

- :func:`stacking_vs_deep_transition` (chapter 1): credit-assignment paths.
- :func:`draw_rhn_cell` (chapter 6): one RHN step with its micro-layers.

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

import functools
from collections import deque
from collections.abc import Hashable, Sequence
from typing import Any

from matplotlib.axes import Axes

from . import _checks
from .plots import COLORS

__all__ = [
    "credit_assignment_graph",
    "draw_rhn_cell",
    "longest_path",
    "stacking_vs_deep_transition",
]

Node = tuple[int, int]  # (row, column) = (layer or micro-layer, time step), 0-based
Edge = tuple[Node, Node]
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
    nodes: Sequence[Hashable],
    edges: Sequence[tuple[Hashable, Hashable]],
    source: Hashable,
    target: Hashable,
) -> list[Hashable]:
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
    succ: dict[Hashable, list[Hashable]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    best: dict[Hashable, int] = {source: 1}  # nodes on the longest path ending here
    parent: dict[Hashable, Hashable] = {}
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
        # 12.5 pt: the superscript, at 0.7 of it, is 9 CSS px where a phone
        # shows the chapter's figure, at about 0.77 of its size
        ax.text(
            x0 + c, -0.95, f"$x^{{[{c + 1}]}}$", ha="center", va="top", fontsize=12.5
        )
    ax.text(
        x0 + (steps - 1) / 2,
        layers - 0.3,
        label,
        ha="center",
        va="bottom",
        fontsize=11,
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
        f"stacking $N = {layers}$ layers\nlongest path $N + T - 1 = {n_stack}$",
    )
    _draw_graph(
        ax,
        "deep",
        layers,
        steps,
        steps + 1.4,
        f"recurrence depth $D = {layers}$\nlongest path $D \\times T = {n_deep}$",
    )
    ax.set(xlim=(-0.6, 2 * steps + 1.0), ylim=(-1.5, layers + 0.6), aspect="equal")
    ax.axis("off")
    return ax


# --- the RHN cell (chapter 6) -----------------------------------------------


def _box(
    ax: Any,
    x: float,
    y: float,
    w: float,
    h: float,
    text: str,
    *,
    fontsize: float = 10,
    **kw: Any,
) -> Any:
    from matplotlib.patches import FancyBboxPatch

    patch = FancyBboxPatch(
        (x - w / 2, y - h / 2),
        w,
        h,
        boxstyle="round,pad=0.02,rounding_size=0.08",
        linewidth=1.2,
        **kw,
    )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)
    return patch


def _arrow(
    ax: Any,
    start: tuple,
    end: tuple,
    text: str = "",
    *,
    fontsize: float = 9,
    beside: bool = False,
    **kw: Any,
) -> Any:
    """An arrow from ``start`` to ``end``, its label ``text`` above its middle
    (``beside``: to the right of it, for an arrow that points up)."""
    style = {"arrowstyle": "-|>", "lw": 1.2, "color": "0.2", **kw}
    arrow = ax.annotate("", xy=end, xytext=start, arrowprops=style)
    if text:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        if beside:
            ax.text(
                mid[0] + 0.12, mid[1], text, ha="left", va="center", fontsize=fontsize
            )
        else:
            ax.text(
                mid[0], mid[1] + 0.12, text, ha="center", va="bottom", fontsize=fontsize
            )
    return arrow


def draw_rhn_cell(
    depth: int = 3, ax: Any = None, *, coupled: bool = True, vertical: bool = False
) -> Any:
    r"""One RHN time step: ``D`` highway micro-layers between two states.

    Micro-layer :math:`k` (a box) reads the state :math:`s_{k-1}` and computes
    the candidate :math:`h_k` and the transform gate :math:`t_k`; its output
    :math:`s_k = t_k \odot h_k + c_k \odot s_{k-1}` mixes them with the carried
    state, which bypasses the box along the top (the carry path, weighted by
    :math:`c_k = 1 - t_k` when ``coupled``). The input :math:`x^{[t]}` enters
    micro-layer 0 only; the state :math:`s^{[t]} = s_{D-1}` leaves the step
    and returns as the next step's :math:`s^{[t]}` (dashed loop).

    Args:
        depth: recurrence depth ``D`` to draw (1 to 8).
        ax: the Axes to draw on; default ``None`` makes a new figure.
        coupled: label the carry path ``1 - t_k`` (default) or ``c_k``.
        vertical: ``False`` (default): the micro-layers from left to right,
            the carry path along the top; ``True``: from bottom to top, the
            carry path on the right, in a figure narrow enough for a phone's
            column with larger text. A figure made here (``ax=None``) carries
            the vertical drawing for a phone (:func:`rhn.plots.use_style`
            serves it to the book's phone readers).

    Returns:
        The Axes. Patches have the ``gid`` ``"micro-layer-k"`` (the boxes),
        ``"gate-k"`` (the mixing nodes) and ``"carry-k"`` (the carry arrows).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    depth = _checks.positive_int("depth", depth)
    if depth > 8:
        raise ValueError(f"depth must be at most 8 to fit the drawing, got {depth}")
    coupled = _checks.boolean("coupled", coupled)
    vertical = _checks.boolean("vertical", vertical)
    step = 2.1  # distance between micro-layers along the step
    # u runs along the step, v across it towards the carry path; a box is
    # `along` long and `across` wide, the state enters and leaves it `port`
    # before and after its middle, and arrows stop just short of its `edge`
    along, across = (1.0, 1.45) if vertical else (1.3, 0.75)
    port = 0.3 if vertical else 0.45
    v_carry = 2.3 if vertical else 1.1
    v_input = -1.75 if vertical else -1.35
    # 10 pt at least: the scripts of $t_0$ and $s_0$ are 0.7 of it, 9 CSS px
    small, mid, big = (10.5, 11, 12) if vertical else (10, 10, 11)
    edge = across / 2 + 0.025
    u0 = 1.2
    end = u0 + (depth - 1) * step + 1.9
    if ax is None:
        if vertical:
            size = (3.9, 0.62 * (end + 1.0) + 0.8)
        else:
            size = (2.2 + 2.1 * depth, 3.4)
        fig, ax = plt.subplots(figsize=size)
        if not vertical:
            # the drawing a phone's column reads (rhn.plots.figure_png_for_phone)
            fig.rhn_phone_drawing = functools.partial(
                _phone_cell, depth=depth, coupled=coupled
            )

    def at(u: float, v: float) -> tuple[float, float]:
        return (v, u) if vertical else (u, v)

    def text(u: float, v: float, s: str, **kw: Any) -> None:
        ax.text(*at(u, v), s, **kw)

    text(0.0, v_carry, r"$s^{[t-1]}$", ha="center", va="center", fontsize=big)
    prev = 0.35
    for k in range(depth):
        uk = u0 + k * step
        w, h = (across, along) if vertical else (along, across)
        box = _box(
            ax,
            *at(uk, 0.0),
            w,
            h,
            rf"$h_{k},\ t_{k}$" + "\n" + rf"$R_{{{k}}},\ b_{{{k}}}$",
            fontsize=mid,
            facecolor="#d6e6f5",
            edgecolor="#1f77b4",
        )
        box.set_gid(f"micro-layer-{k}")
        node = Circle(at(uk + 0.75, v_carry), 0.17, facecolor="white", edgecolor="0.2")
        node.set_gid(f"gate-{k}")
        ax.add_patch(node)
        text(uk + 0.75, v_carry, r"$+$", ha="center", va="center", fontsize=mid)
        # the state enters the box from the carry line, and bypasses it on top
        line = [at(prev + 0.05, v_carry), at(uk - port, v_carry)]
        ax.plot(*zip(*line, strict=True), color="0.2", lw=1.2)
        _arrow(ax, at(uk - port, v_carry), at(uk - port, edge))
        carry_label = rf"$1 - t_{k}$" if coupled else rf"$c_{k}$"
        carry = _arrow(
            ax,
            at(uk - port, v_carry),
            at(uk + 0.57, v_carry),
            carry_label,
            fontsize=small,
            beside=vertical,
        )
        carry.set_gid(f"carry-{k}")
        _arrow(ax, at(uk + port, edge), at(uk + 0.68, v_carry - 0.15))
        label = rf"$t_{k} \odot h_{k}$"
        if vertical:  # above the arrow from the box to the node
            middle = (edge + v_carry) / 2 - 0.1
            text(uk + 0.62, middle, label, fontsize=small, ha="center", va="bottom")
            text(uk + 0.75, v_carry + 0.25, rf"$s_{k}$", fontsize=mid, va="center")
        else:
            text(uk + 0.72, 0.5, label, fontsize=small, ha="left")
            text(uk + 1.05, v_carry + 0.22, rf"$s_{k}$", fontsize=mid, ha="center")
        prev = uk + 0.92
    _arrow(ax, at(prev, v_carry), at(end - 0.35, v_carry))
    text(end, v_carry, r"$s^{[t]}$", ha="center", va="center", fontsize=big)
    # the input enters micro-layer 0 only
    text(u0, v_input, r"$x^{[t]}$", ha="center", va="center", fontsize=big)
    _arrow(ax, at(u0, v_input + (0.4 if vertical else 0.2)), at(u0, -edge))
    if vertical:
        w_at = (v_input + 0.4 - edge) / 2
        text(u0 + 0.1, w_at, r"$W$", fontsize=small, ha="center", va="bottom")
    else:
        text(u0 + 0.1, -0.8, r"$W$", fontsize=small, ha="left")
    # recurrence: the new state is the next step's incoming state, along a
    # bracket right of the labels (vertical) or an arc over the top
    loop = v_carry + (0.55 if vertical else 0.25)  # clear of the states' labels
    ax.annotate(
        "",
        xy=at(0.0, loop),
        xytext=at(end, loop),
        arrowprops={
            "arrowstyle": "-|>",
            "ls": "--",
            "color": "0.5",
            "connectionstyle": (
                f"bar,fraction={-1.0 / end:.4f}" if vertical else "arc3,rad=0.25"
            ),
        },
    )
    text(
        end / 2,
        v_carry + (1.7 if vertical else 1.25),
        "next time step",
        ha="center",
        va="bottom" if vertical else "baseline",
        rotation=-90 if vertical else 0,
        fontsize=small,
        color="0.4",
    )
    if vertical:
        limits = {"xlim": (v_input - 0.45, v_carry + 2.1), "ylim": (-0.5, end + 0.5)}
        ax.set(**limits, aspect="equal")
        ax.set_title(f"One RHN time step,\nrecurrence depth D = {depth}")
    else:
        ax.set(xlim=(-0.5, end + 0.5), ylim=(-1.7, 2.6), aspect="equal")
        ax.set_title(f"One RHN time step, recurrence depth D = {depth}")
    ax.set_axis_off()
    return ax


def _phone_cell(*, depth: int, coupled: bool) -> Any:
    """The vertical drawing of :func:`draw_rhn_cell`, in a figure of its own."""
    return draw_rhn_cell(depth, coupled=coupled, vertical=True).figure
