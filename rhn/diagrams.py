r"""Diagrams drawn by code: the pictures of the book that are not data plots.

Each function draws on a matplotlib ``Axes`` (a new figure when ``ax`` is
``None``) and returns it. The parts of a diagram carry a ``gid`` (for example
``"micro-layer-2"``), so that tests and readers can find them.
"""

from __future__ import annotations

from typing import Any

from . import _checks

__all__ = ["draw_rhn_cell"]


def _box(ax: Any, x: float, y: float, w: float, h: float, text: str, **kw: Any) -> Any:
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
    ax.text(x, y, text, ha="center", va="center", fontsize=10)
    return patch


def _arrow(ax: Any, start: tuple, end: tuple, text: str = "", **kw: Any) -> Any:
    style = {"arrowstyle": "-|>", "lw": 1.2, "color": "0.2", **kw}
    arrow = ax.annotate("", xy=end, xytext=start, arrowprops=style)
    if text:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        ax.text(mid[0], mid[1] + 0.12, text, ha="center", va="bottom", fontsize=9)
    return arrow


def draw_rhn_cell(depth: int = 3, ax: Any = None, *, coupled: bool = True) -> Any:
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
    if ax is None:
        _, ax = plt.subplots(figsize=(2.2 + 2.1 * depth, 3.4))
    step = 2.1  # horizontal distance between micro-layers
    y_box, y_carry, y_node = 0.0, 1.1, 1.1
    x0 = 1.2
    ax.text(0.0, y_carry, r"$s^{[t-1]}$", ha="center", va="center", fontsize=11)
    prev = (0.35, y_carry)
    for k in range(depth):
        xk = x0 + k * step
        box = _box(
            ax,
            xk,
            y_box,
            1.3,
            0.75,
            rf"$h_{k},\ t_{k}$" + "\n" + rf"$R_{{{k}}},\ b_{{{k}}}$",
            facecolor="#d6e6f5",
            edgecolor="#1f77b4",
        )
        box.set_gid(f"micro-layer-{k}")
        node = Circle((xk + 0.75, y_node), 0.17, facecolor="white", edgecolor="0.2")
        node.set_gid(f"gate-{k}")
        ax.add_patch(node)
        ax.text(xk + 0.75, y_node, r"$+$", ha="center", va="center", fontsize=10)
        # the state enters the box from the carry line, and bypasses it on top
        ax.plot([prev[0] + 0.05, xk - 0.45], [y_carry, y_carry], color="0.2", lw=1.2)
        _arrow(ax, (xk - 0.45, y_carry), (xk - 0.45, y_box + 0.4))
        carry_label = rf"$1 - t_{k}$" if coupled else rf"$c_{k}$"
        carry = _arrow(ax, (xk - 0.45, y_carry), (xk + 0.57, y_node), carry_label)
        carry.set_gid(f"carry-{k}")
        _arrow(ax, (xk + 0.45, y_box + 0.4), (xk + 0.68, y_node - 0.15))
        ax.text(xk + 0.72, y_box + 0.5, rf"$t_{k} \odot h_{k}$", fontsize=9, ha="left")
        ax.text(xk + 1.05, y_node + 0.22, rf"$s_{k}$", fontsize=10, ha="center")
        prev = (xk + 0.92, y_carry)
    end = x0 + (depth - 1) * step + 1.9
    _arrow(ax, (prev[0], y_carry), (end - 0.35, y_carry))
    ax.text(end, y_carry, r"$s^{[t]}$", ha="center", va="center", fontsize=11)
    # the input enters micro-layer 0 only
    ax.text(x0, -1.35, r"$x^{[t]}$", ha="center", va="center", fontsize=11)
    _arrow(ax, (x0, -1.15), (x0, y_box - 0.4))
    ax.text(x0 + 0.1, -0.8, r"$W$", fontsize=9, ha="left")
    # recurrence: the new state is the next step's incoming state
    ax.annotate(
        "",
        xy=(0.0, y_carry + 0.25),
        xytext=(end, y_carry + 0.25),
        arrowprops={
            "arrowstyle": "-|>",
            "ls": "--",
            "color": "0.5",
            "connectionstyle": "arc3,rad=0.25",
        },
    )
    ax.text(
        end / 2,
        y_carry + 1.25,
        "next time step",
        ha="center",
        fontsize=9,
        color="0.4",
    )
    ax.set(xlim=(-0.5, end + 0.5), ylim=(-1.7, 2.6), aspect="equal")
    ax.set_axis_off()
    ax.set_title(f"One RHN time step, recurrence depth D = {depth}")
    return ax
