"""Plotting helpers shared by every chapter.

Every function is pure: ``f(data, ax=None, **style) -> Axes``. It draws on
``ax`` (or on a new figure's axes) and returns the axes, so chapters and
widgets compose them freely. One colour scheme, :data:`COLORS`, is used for
the same thing everywhere in the book.

The functions never call ``tight_layout`` or ``show`` and draw few artists
(all discs are one collection), so a widget can clear an axes and redraw
many times a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, Patch

from . import _checks
from .analysis import eigenvalues as _eigenvalues
from .analysis import gershgorin_discs

__all__ = ["COLORS", "plot_discs", "plot_spectrum"]

COLORS: dict[str, str] = {
    # models
    "rhn": "#1f77b4",  # blue
    "lstm": "#ff7f0e",  # orange
    "gru": "#2ca02c",  # green
    "rnn": "#d62728",  # red
    # spectra
    "disc": "#1f77b4",
    "eigenvalue": "#d62728",
    "unit_circle": "#555555",
    "baseline": "#7f7f7f",  # constant-prediction baselines, reference lines
}
"""Colour for each model and each element of a spectrum plot."""


def _as_array(name: str, value: object, complex_ok: bool) -> np.ndarray:
    """A 1-D numpy array from a tensor, an array or a sequence of numbers."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.is_complex():
            value = value.to(torch.complex128)
        else:
            value = value.to(torch.float64)
        arr = value.numpy()
    else:
        try:
            arr = np.asarray(value)
        except Exception as err:  # ragged lists and other oddities
            raise TypeError(
                f"{name} must be a tensor, an array or a sequence of numbers, "
                f"got {type(value).__name__}"
            ) from err
    if arr.dtype.kind not in "iufc" or (arr.dtype.kind == "c" and not complex_ok):
        kind = "real or complex" if complex_ok else "real"
        raise TypeError(f"{name} must hold {kind} numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one matrix; loop over a batch), got shape "
            f"{_checks.shape_str(arr.shape)}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got NaN or inf values")
    return arr


def _view(
    centres: np.ndarray,
    radii: np.ndarray,
    eigs: np.ndarray | None,
    max_view: float,
) -> tuple[tuple[float, float, float, float], bool]:
    """Axis limits that show the unit circle, the eigenvalues and the discs.

    The discs can be huge (a large weight scale gives radii of tens); they are
    cut at ``max_view`` (or just beyond the largest eigenvalue, if that is
    further out) so that the picture stays readable. Returns the limits and
    whether a disc was cut.
    """
    x0, x1 = float(np.min(centres.real - radii)), float(np.max(centres.real + radii))
    y0, y1 = float(np.min(centres.imag - radii)), float(np.max(centres.imag + radii))
    x0, x1, y0, y1 = min(x0, -1.0), max(x1, 1.0), min(y0, -1.0), max(y1, 1.0)
    if eigs is not None and eigs.size:
        x0, x1 = min(x0, eigs.real.min()), max(x1, eigs.real.max())
        y0, y1 = min(y0, eigs.imag.min()), max(y1, eigs.imag.max())
    cap = max_view
    if eigs is not None and eigs.size:
        cap = max(cap, 1.1 * float(np.abs(eigs).max()))
    clipped = min(x0, y0) < -cap or max(x1, y1) > cap
    x0, x1, y0, y1 = (max(v, -cap) if v < 0 else min(v, cap) for v in (x0, x1, y0, y1))
    pad = 0.08 * max(x1 - x0, y1 - y0)
    return (x0 - pad, x1 + pad, y0 - pad, y1 + pad), clipped


def plot_discs(
    centres: Any,
    radii: Any,
    eigenvalues: Any = None,
    ax: Axes | None = None,
    *,
    color: str | None = None,
    eigenvalue_color: str | None = None,
    alpha: float | None = None,
    unit_circle: bool = True,
    annotate: bool = True,
    legend: bool = True,
    view: float | Sequence[float] | None = None,
    max_view: float = 4.0,
    title: str | None = None,
    markersize: float = 16.0,
) -> Axes:
    r"""Draw Geršgorin discs (and eigenvalues) in the complex plane.

    Each disc :math:`\{z : |z - c_i| \le r_i\}` is a translucent circle, so
    regions covered by many discs look darker; the eigenvalues are dots, the
    unit circle (the boundary between shrinking and growing directions) is
    dashed.

    Args:
        centres: disc centres :math:`c_i`, ``(n,)``, real or complex (tensor,
            array or sequence), e.g. from :func:`rhn.analysis.gershgorin_discs`.
        radii: disc radii :math:`r_i \ge 0`, ``(n,)``.
        eigenvalues: optional eigenvalues ``(m,)`` to draw as dots (default
            ``None``).
        ax: the axes to draw on; a new 4.2 x 4.2 inch figure if ``None``.
        color: disc colour (default ``COLORS["disc"]``).
        eigenvalue_color: dot colour (default ``COLORS["eigenvalue"]``).
        alpha: opacity of each disc's fill. The default ``None`` picks it
            from the number of discs ``n`` so that a point covered by all of
            them is about 70% opaque and one covered by a single disc is still
            visible; the outlines are drawn more opaque, so every disc shows.
        unit_circle: draw the unit circle (default ``True``).
        annotate: write the spectral radius :math:`\rho = \max |\lambda|` in a
            corner, and a note when discs are cut by the view (default
            ``True``).
        legend: draw a legend (default ``True``).
        view: fixed limits: a half-width ``L`` for the square
            :math:`[-L, L]^2`, or ``(xmin, xmax, ymin, ymax)``. Widgets pass
            one so the axes do not jump while a slider moves. Default ``None``
            fits the unit circle, the eigenvalues and the discs.
        max_view: with ``view=None``, the largest half-width shown (default
            ``4.0``, widened to show every eigenvalue); bigger discs are cut
            and the note says how far they reach.
        title: axes title (default none).
        markersize: eigenvalue marker area in points² (default ``16``).

    Returns:
        The axes, with equal aspect ratio and the axes labelled ``Re`` and
        ``Im``.
    """
    import matplotlib.pyplot as plt  # only needed for a new figure

    c = _as_array("centres", centres, complex_ok=True).astype(complex)
    r = _as_array("radii", radii, complex_ok=False).astype(float)
    if c.shape != r.shape or c.size == 0:
        raise ValueError(
            f"centres and radii must have the same non-empty shape (n,), got "
            f"{_checks.shape_str(c.shape)} and {_checks.shape_str(r.shape)}"
        )
    if (r < 0).any():
        raise ValueError("radii must be >= 0")
    eigs = None
    if eigenvalues is not None:
        eigs = _as_array("eigenvalues", eigenvalues, complex_ok=True).astype(complex)
    max_view = _checks.real("max_view", max_view)
    if max_view <= 0:
        raise ValueError(f"max_view must be > 0, got {max_view}")
    if view is None:
        limits, clipped = _view(c, r, eigs, max_view)
    else:
        if isinstance(view, (int, float)) and not isinstance(view, bool):
            half = _checks.real("view", view)
            limits = (-half, half, -half, half)
        elif isinstance(view, Sequence) and len(view) == 4:
            limits = tuple(_checks.real("view", v) for v in view)
        else:
            raise TypeError(
                f"view must be a half-width L or (xmin, xmax, ymin, ymax), got {view!r}"
            )
        if limits[0] >= limits[1] or limits[2] >= limits[3]:
            raise ValueError(f"view must have xmin < xmax and ymin < ymax, got {view}")
        clipped = bool(
            (c.real - r < limits[0]).any()
            or (c.real + r > limits[1]).any()
            or (c.imag - r < limits[2]).any()
            or (c.imag + r > limits[3]).any()
        )
    if alpha is None:
        # (1 - alpha)^n = 0.3: the union never turns into a solid blob
        alpha = float(np.clip(1.0 - 0.3 ** (1.0 / c.size), 0.02, 0.25))
    else:
        alpha = _checks.real("alpha", alpha)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    color = color or COLORS["disc"]
    eigenvalue_color = eigenvalue_color or COLORS["eigenvalue"]
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4.2))

    ax.axhline(0.0, color="#bbbbbb", lw=0.6, zorder=0)
    ax.axvline(0.0, color="#bbbbbb", lw=0.6, zorder=0)
    discs = PatchCollection(
        [Circle((z.real, z.imag), rad) for z, rad in zip(c, r, strict=True)],
        facecolor=to_rgba(color, alpha),
        edgecolor=to_rgba(color, max(alpha, 0.35)),
        linewidth=0.7,
        zorder=1,
    )
    ax.add_collection(discs)
    # the centres, so that zero-radius discs still show
    ax.scatter(c.real, c.imag, s=6, color=color, marker="+", lw=0.8, zorder=2)
    handles: list[Any] = [
        Patch(facecolor=to_rgba(color, 0.3), edgecolor=color, label="Geršgorin discs")
    ]
    if unit_circle:
        ax.add_patch(
            Circle(
                (0.0, 0.0),
                1.0,
                fill=False,
                ls="--",
                lw=1.0,
                color=COLORS["unit_circle"],
                zorder=2.5,
                # a white halo keeps the circle visible on top of dense discs
                path_effects=[patheffects.withStroke(linewidth=2.6, foreground="w")],
            )
        )
        handles.append(
            Line2D([], [], ls="--", color=COLORS["unit_circle"], label="unit circle")
        )
    if eigs is not None:
        ax.scatter(
            eigs.real,
            eigs.imag,
            s=markersize,
            color=eigenvalue_color,
            edgecolor="white",
            linewidth=0.4,
            zorder=3,
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                color=eigenvalue_color,
                markersize=5,
                label="eigenvalues",
            )
        )
    ax.set_xlim(limits[0], limits[1])
    ax.set_ylim(limits[2], limits[3])
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("Re")
    ax.set_ylabel("Im")
    if title is not None:
        ax.set_title(title)
    if annotate:
        lines = []
        if eigs is not None and eigs.size:
            lines.append(rf"$\rho = {np.abs(eigs).max():.3g}$")
        if clipped:
            reach = float((np.abs(c) + r).max())
            lines.append(f"discs reach |z| = {reach:.3g} (cut)")
        if lines:
            ax.text(
                0.03,
                0.97,
                "\n".join(lines),
                transform=ax.transAxes,
                va="top",
                ha="left",
                fontsize="small",
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"},
                zorder=4,
            )
    if legend:
        ax.legend(handles=handles, loc="lower right", fontsize="small", framealpha=0.8)
    return ax


def plot_spectrum(
    J: torch.Tensor,
    ax: Axes | None = None,
    *,
    columns: bool = False,
    **style: Any,
) -> Axes:
    r"""Geršgorin discs and eigenvalues of one square matrix ``J``.

    A convenience over :func:`rhn.analysis.gershgorin_discs`,
    :func:`rhn.analysis.eigenvalues` and :func:`plot_discs`.

    Args:
        J: a square matrix ``(n, n)``.
        ax: the axes to draw on (default: a new figure).
        columns: draw the column discs instead of the row discs (default
            ``False``).
        **style: passed to :func:`plot_discs`.

    Returns:
        The axes.
    """
    if isinstance(J, torch.Tensor) and J.dim() != 2:
        raise ValueError(
            f"J must be one square matrix (n, n), got shape "
            f"{_checks.shape_str(J.shape)}; loop over a batch"
        )
    centres, radii = gershgorin_discs(J, columns=columns)
    return plot_discs(centres, radii, _eigenvalues(J), ax=ax, **style)


# --- gradient norm versus lag or layer (rhn.gradflow) --------------------------


def plot_gradient_norms(
    curves: dict[str, Any],
    ax: Axes | None = None,
    *,
    colors: dict[str, str] | None = None,
    styles: dict[str, str] | None = None,
    xlabel: str = "lag $k$ (steps before the end)",
    ylabel: str = "mean gradient norm",
    title: str | None = None,
    legend: bool = True,
) -> Axes:
    r"""Gradient norm against lag (or layer) on a log scale, one line per curve.

    Made for :func:`rhn.gradflow.gradient_norms` and
    :func:`rhn.gradflow.layer_gradient_norms`. Zeros (an underflow) and
    non-finite values are left out of the line rather than drawn at the axis.

    Args:
        curves: ``{label: values}``, each a 1-D tensor, array or list.
        ax: the axes to draw on (default: a new figure).
        colors: ``{label: colour}``; a label without one takes the model
            colour of :data:`COLORS` whose key starts it (``"lstm"``,
            ``"RHN D=3"`` ...), else matplotlib's cycle.
        styles: ``{label: linestyle}`` (default solid).
        xlabel, ylabel, title: axis labels and title.
        legend: draw a legend (default ``True``).

    Returns:
        The axes.
    """
    import matplotlib.pyplot as plt

    if not isinstance(curves, dict) or not curves:
        raise TypeError("curves must be a non-empty dict {label: 1-D values}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    colors = colors or {}
    styles = styles or {}
    for label, values in curves.items():
        if hasattr(values, "detach"):
            values = values.detach().cpu().double().numpy()
        y = np.asarray(values, dtype=float)
        if y.ndim != 1:
            raise ValueError(
                f"curves[{label!r}] must be 1-D, got shape {tuple(y.shape)}"
            )
        y = np.where(np.isfinite(y) & (y > 0), y, np.nan)
        color = colors.get(label)
        if color is None:
            key = str(label).split()[0].lower() if str(label).split() else ""
            color = COLORS.get(key) if key in ("rhn", "lstm", "gru", "rnn") else None
        ax.plot(
            np.arange(len(y)),
            y,
            label=str(label),
            color=color,
            linestyle=styles.get(label, "-"),
        )
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(fontsize="small")
    return ax


__all__ += ["plot_gradient_norms"]
