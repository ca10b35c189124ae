r"""The figures of the interactive widgets drawn with matplotlib, as PNG.

Front ends that cannot run widgets (nbconvert to PDF or LaTeX, a notebook
viewer without JavaScript) show this picture instead: every widget of
:mod:`rhn.widgets` puts a PNG of its current setting, drawn by these
functions from the reference numbers of :mod:`rhn.widgets.models`, beside its
widget view in the notebook's output. The browser draws the same figure in SVG
(``js/draw.js``).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import PIL.Image
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullLocator

from .models import (
    G_PACKAGE,
    _ylim,
    example_rhn_jacobian,
    example_rnn_jacobian,
    gradient_flow_curves,
)

__all__ = [
    "render_png",
    "rnn_discs_figure",
    "rhn_jacobian_figure",
    "gradient_flow_figure",
]

DrawFn = Callable[..., Any]
"""``draw(ax, **params)``: draws one setting of the parameters on ``ax``."""


def render_png(
    draw: DrawFn,
    params: dict[str, Any],
    *,
    figsize: tuple[float, float] = (5.0, 4.2),
    dpi: float = 72.0,
    colors: int | None = 64,
    record_text: bool = False,
) -> bytes:
    """Draw one frame on a fresh figure and return it as PNG bytes.

    This is the single drawing path of the module: live redraws and the
    precomputed frames of the static website both call it, so they cannot
    disagree. The figure is never registered with pyplot (no
    ``plt.show`` side effects, nothing left open), and the PNG carries no
    timestamp or other metadata, so the same input gives the same bytes.

    Args:
        draw: ``draw(ax, **params)``.
        params: the keyword arguments for ``draw``.
        figsize: figure size in inches (default ``(5.0, 4.2)``).
        dpi: resolution (default 72).
        colors: reduce the image to a palette of this many colours (default
            64), which makes a frame 3-4 times smaller (about 5-10 KB) with no
            visible change in these flat-coloured plots; ``None`` keeps full
            colour. The website stores hundreds of frames per page.
        record_text: store the figure's smallest font size, its smallest
            script and its dpi in the PNG (:data:`rhn.plots.SMALLEST_TEXT_KEY`,
            :data:`rhn.plots.SMALLEST_SCRIPT_KEY`), as the chapters'
            figures do, so that the site can show it where its text reads on
            a phone (default ``False``).

    Returns:
        The PNG file's bytes.
    """
    fig = Figure(figsize=figsize, dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    # fixed margins rather than tight_layout, which costs a second full draw
    ax = fig.add_axes((0.15, 0.11, 0.82, 0.80))
    draw(ax, **params)
    canvas.draw()
    # encode the pixels once, with PIL (savefig would encode them a second time)
    image = PIL.Image.frombuffer(
        "RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
    ).convert("RGB")
    if colors is not None:
        # no dithering: it would speckle the flat areas and cost bytes
        image = image.quantize(
            colors=colors,
            method=PIL.Image.Quantize.MEDIANCUT,
            dither=PIL.Image.Dither.NONE,
        )
    out = io.BytesIO()
    extra: dict[str, Any] = {}
    if record_text:
        from PIL.PngImagePlugin import PngInfo

        from ..plots import text_record

        info = PngInfo()
        for key, value in text_record(fig).items():
            info.add_text(key, value)
        extra = {"pnginfo": info, "dpi": (dpi, dpi)}
    image.save(out, format="PNG", compress_level=9, **extra)
    return out.getvalue()


def rnn_discs_figure(
    ax: Axes,
    *,
    scale: float = 1.0,
    init: str = "gaussian",
    hidden_size: int = 12,
    seed: int = 0,
    view: float = 3.2,
) -> Axes:
    r"""Geršgorin discs of a tanh RNN's temporal Jacobian at weight scale ``scale``.

    The recurrent matrix is ``scale * R0`` with ``R0`` a fixed Gaussian matrix
    with entries :math:`\mathcal{N}(0, 1/H)` (``init="gaussian"``) or the
    identity (``init="identity"``, the IRNN of Le et al.). The RNN runs 20
    steps on random inputs, and the figure shows the discs and eigenvalues of
    :math:`J = \operatorname{diag}(1 - \tanh^2(a)) R` at the next step
    (:func:`rhn.analysis.rnn_temporal_jacobian`).

    Args:
        ax: axes to draw on.
        scale: the weight scale :math:`g`, multiplier of ``R0`` (default 1).
        init: ``"gaussian"`` (default) or ``"identity"``.
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        view: the largest half-width of the square shown (default 3.2); it
            shrinks to the smallest of ``VIEWS`` that holds the discs, the
            eigenvalues and the unit circle (``fit_view``), in steps, so
            the identity's radius-0 discs (drawn as dots) are not lost.

    Returns:
        ``ax``.
    """
    from .. import plots

    J = example_rnn_jacobian(scale=scale, init=init, hidden_size=hidden_size, seed=seed)
    init, H = init.lower(), J.shape[0]
    title = f"tanh RNN, {init} R, g = {scale:.3g}  (H = {H})"
    return _discs(plots, J, ax, view, title)


def rhn_jacobian_figure(
    ax: Axes,
    *,
    transform_bias: float = -2.0,
    scale: float = 1.0,
    depth: int = 2,
    coupled: bool = True,
    hidden_size: int = 12,
    seed: int = 0,
    view: float = 2.2,
) -> Axes:
    r"""Geršgorin discs, eigenvalues and spectral radius of an RHN step.

    An :class:`rhn.RHNCell` with the package's initialisation, its recurrent
    weights multiplied by ``scale`` and its transform-gate biases set to
    ``transform_bias``, runs 20 steps on random inputs; the figure shows the
    discs and eigenvalues of the temporal Jacobian
    :math:`\partial s^{[t]} / \partial s^{[t-1]}` of the next step
    (:func:`rhn.analysis.temporal_jacobian`), the unit circle and
    :math:`\rho`.

    Args:
        ax: axes to draw on.
        transform_bias: :math:`b_T` of every micro-layer (default -2).
        scale: multiplier of the recurrent weights (default 1: weights
            :math:`U(\pm 1/\sqrt{H})`, weight scale :math:`g = 1/\sqrt{3}`;
            the title shows :math:`g` = ``scale * G_PACKAGE``).
        depth: recurrence depth ``D`` (default 2).
        coupled: coupled carry gate ``c = 1 - t`` (default ``True``).
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        view: the largest half-width of the square shown (default 2.2), as
            in :func:`rnn_discs_figure`; discs reaching beyond it are cut, and
            a note says how far they reach.

    Returns:
        ``ax``.
    """
    from .. import plots

    J = example_rhn_jacobian(
        transform_bias=transform_bias,
        scale=scale,
        depth=depth,
        coupled=coupled,
        hidden_size=hidden_size,
        seed=seed,
    )
    b, D = float(transform_bias), int(depth)
    kind = "coupled" if coupled else "uncoupled"
    g = scale * G_PACKAGE  # the weights' scale g, as the slider reads it
    # b_T typeset (a picture shown without JavaScript read "b_T" raw)
    title = f"RHN, D = {D}, $b_T$ = {_signed(b)}, g = {g:.3g}, {kind}"
    return _discs(plots, J, ax, view, title)


# the half-widths a disc plot may take (the browser's draw.js: VIEWS)
VIEWS = (1.25, 1.5, 2.0, 2.5, 3.0)


def fit_view(J: Any, most: float) -> float:
    """The smallest of ``VIEWS`` (at most ``most``, else ``most``) that shows the
    discs of ``J``, its eigenvalues and the unit circle with 5 % to spare."""
    from ..analysis import eigenvalues, gershgorin_discs

    centres, radii = gershgorin_discs(J)
    extent = max(
        1.0,
        float((centres.abs() + radii).max()),
        float(eigenvalues(J).abs().max()),
    )
    return next((v for v in VIEWS if extent * 1.05 <= v <= most), most)


def _signed(value: float) -> str:
    """``value`` as the browser's figures write it: ``g`` format, a minus
    sign (U+2212) rather than a hyphen."""
    return f"{value:g}".replace("-", "\u2212")


def _discs(plots: Any, J: Any, ax: Axes, view: float, title: str) -> Axes:
    """The discs of ``J`` on axes fitted to them (``fit_view``); a disc of
    radius 0 (a diagonal matrix) as a dot."""
    plots.plot_spectrum(J, ax, view=fit_view(J, view), title=title)
    from ..analysis import gershgorin_discs

    centres, radii = gershgorin_discs(J)
    dots = centres[radii == 0].numpy()
    if dots.size:
        ax.plot(dots, np.zeros_like(dots), "o", ms=4, color=plots.COLORS["disc"])
    return ax


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(value: float, pos: int | None = None) -> str:
    """Tick label ``10⁻⁴`` in plain Unicode: mathtext labels are slow to lay out."""
    return "10" + str(round(math.log10(value))).translate(_SUPERSCRIPT)


_FLOOR = 1e-30  # norms below this (or exactly 0) are drawn at the floor


def gradient_flow_figure(
    ax: Axes,
    *,
    transform_bias: float = -2.0,
    depth: int = 3,
    steps: int = 40,
    hidden_size: int = 16,
    seed: int = 0,
    ylim: tuple[float, float] = (1e-16, 1e2),
) -> Axes:
    r"""Gradient norm versus lag: an RHN at ``transform_bias`` against RNN and LSTM.

    Freshly initialised models (``H = hidden_size``, float64) read the same
    random sequence of ``steps`` steps; :func:`rhn.gradflow.gradient_norms`
    gives :math:`\lVert \partial \mathcal{L} / \partial s^{[T-n]} \rVert`
    at every lag :math:`n = 1, \dots, T` (its entry ``n - 1``: lag 1 is the
    state entering the last step, lag ``T`` the initial state), drawn at x = n.
    Only the RHN depends on the slider; the RNN and LSTM
    curves are computed once and cached.

    Args:
        ax: axes to draw on.
        transform_bias: the RHN's :math:`b_T` (default -2).
        depth: the RHN's recurrence depth (default 3).
        steps: sequence length ``T`` (default 40).
        hidden_size: ``H`` of every model (default 16).
        seed: seed of the weights, inputs and loss (default 0).
        ylim: fixed y range (default ``(1e-16, 1e2)``); values outside are
            drawn at the edge, so extreme settings stay readable.

    Returns:
        ``ax``.
    """
    from ..plots import COLORS, MODEL_STYLES

    curves = gradient_flow_curves(
        transform_bias=transform_bias,
        depth=depth,
        steps=steps,
        hidden_size=hidden_size,
        seed=seed,
    )
    b, D, T, H = float(transform_bias), int(depth), int(steps), int(hidden_size)
    lo, hi = _ylim(ylim)
    lags = np.arange(1, T + 1)  # the lag n of entry n - 1
    # b_T typeset as in the browser's drawing (one short mathtext each)
    labels = {
        "rhn": f"RHN (D = {D}, $b_T$ = {_signed(b)})",
        "rnn": "RNN",
        "lstm": "LSTM",
    }
    for name in ("rnn", "lstm", "rhn"):
        y = np.nan_to_num(curves[name], nan=hi, posinf=hi)
        y = np.clip(np.maximum(y, _FLOOR), lo, hi)
        ax.plot(
            lags,
            y,
            color=COLORS[name],
            linestyle=MODEL_STYLES[name]["linestyle"],
            lw=2.2 if name == "rhn" else 1.4,
            label=labels[name],
        )
    ax.axhline(1.0, color=COLORS["baseline"], lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    # a few labelled decades and no minor ticks: tick labels are most of the
    # drawing time of a log axis, and the redraw must stay fast
    decades = np.arange(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)
    ax.set_yticks(10.0 ** decades[:: max(1, len(decades) // 5)])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.set_xlim(1, T)
    ax.set_xlabel("lag $n$ (steps back from the last step)")
    ax.set_ylabel("gradient norm ‖∂L/∂s‖ at lag n")
    ax.set_title(f"Gradient norm versus lag at initialisation (H = {H})")
    ax.legend(loc="lower left", fontsize="small")
    ax.grid(True, which="major", alpha=0.3)
    return ax
