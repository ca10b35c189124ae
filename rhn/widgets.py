r"""Interactive figures: sliders that redraw live with a kernel, and still move
the figure on the static website, where no kernel runs.

Every interactive figure here is one *draw function* ``draw(ax, **params)``
that draws a figure for one setting of its parameters, and a list of
:class:`Control` objects (one per slider or toggle) that name the parameters
and the values they take. :func:`interactive_figure` turns them into widgets
in one of two modes:

``"live"`` (a kernel is running: Jupyter, Colab, VS Code)
    Continuous sliders; every change calls :func:`render_png`, which runs
    ``draw`` on a fresh figure and returns PNG bytes, and shows the result in
    an ``ipywidgets.Image``.

``"static"`` (the book's website, which has no kernel)
    :func:`render_png` is called once for every point of the grid of values
    of the controls when the page is *built*; the frames go into nested
    ``ipywidgets.Stack`` containers, and each control's ``index`` is wired to
    the ``selected_index`` of the stacks at its level with
    ``ipywidgets.jslink``. ``jslink`` runs in the browser, from the widget
    state saved in the page, so moving a slider switches frames without a
    kernel.

Both modes make their pictures with the same function, :func:`render_png`,
from the same ``draw``: a frame of the website and a live redraw at the same
setting are the same PNG bytes (``tests/test_widgets.py`` checks it).

The three figures of the book:

- :func:`rnn_discs_widget`: Geršgorin discs of a plain tanh RNN's temporal
  Jacobian under a recurrent-weight-scale slider (chapter 4);
- :func:`rhn_jacobian_widget`: discs and eigenvalues of the RHN temporal
  Jacobian under transform-gate bias, weight scale and depth sliders and a
  coupled/uncoupled toggle (chapter 7);
- :func:`gradient_flow_widget`: gradient norm versus lag for an RHN, under a
  transform-gate bias slider, against an RNN and an LSTM (chapter 8).

This module needs ``ipywidgets`` (``pip install "rhn[widgets]"``); the rest of
the package does not import it.
"""

from __future__ import annotations

import functools
import io
import itertools
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import PIL.Image
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullLocator

from . import _checks

try:
    import ipywidgets as W
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "rhn.widgets needs ipywidgets; install it with: pip install 'rhn[widgets]'"
    ) from err

__all__ = [
    "Control",
    "InteractiveFigure",
    "render_png",
    "interactive_figure",
    "default_mode",
    "example_rnn_jacobian",
    "example_rhn_jacobian",
    "gradient_flow_curves",
    "rnn_discs_figure",
    "rhn_jacobian_figure",
    "gradient_flow_figure",
    "rnn_discs_widget",
    "rhn_jacobian_widget",
    "gradient_flow_widget",
]

DrawFn = Callable[..., Any]
"""``draw(ax, **params)``: draws one setting of the parameters on ``ax``."""

MODES = ("auto", "live", "static")
DOM_CLASS = "rhn-interactive-figure"  # CSS class of every InteractiveFigure
_LABEL_WIDTH = "13em"  # the same for every control, so the sliders line up
_CONTROL_WIDTH = "36em"


# ---------------------------------------------------------------------------
# the generic machinery
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Control:
    """One slider (numeric values) or toggle (booleans or strings).

    Args:
        name: the keyword argument of the draw function that it sets.
        values: the values precomputed for the static website, in slider
            order. In live mode a numeric control becomes a continuous slider
            from ``values[0]`` to ``values[-1]``.
        default: the initial value; must be one of ``values``.
        label: the text shown beside the control (default: ``name``).
        step: step of the live slider (default: the smallest gap in
            ``values``; integers step by at least 1).
        labels: the text shown for each value (default: ``f"{v:g}"`` for
            numbers, ``str(v)`` otherwise).
    """

    name: str
    values: Sequence[Any]
    default: Any
    label: str = ""
    step: float | None = None
    labels: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        values = tuple(self.values)
        if not values:
            raise ValueError(f"values of control {self.name!r} must not be empty")
        if self.default not in values:
            raise ValueError(
                f"default of control {self.name!r} must be one of {list(values)}, "
                f"got {self.default!r}"
            )
        if self.numeric and any(not math.isfinite(v) for v in values):
            raise ValueError(f"values of control {self.name!r} must be finite")
        object.__setattr__(self, "values", values)
        if self.labels is None:
            fmt = "{:g}" if self.numeric else "{}"
            labels = tuple(fmt.format(v) for v in values)
        else:
            labels = tuple(str(text) for text in self.labels)
            if len(labels) != len(values):
                raise ValueError(
                    f"labels of control {self.name!r} must have one text per value "
                    f"({len(values)}), got {len(labels)}"
                )
        object.__setattr__(self, "labels", labels)

    @property
    def numeric(self) -> bool:
        """``True`` for a slider (numbers), ``False`` for a toggle."""
        return all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values
        )

    @property
    def integer(self) -> bool:
        return self.numeric and all(isinstance(v, int) for v in self.values)

    def static_widget(self) -> W.Widget:
        """A selection widget over ``values``, whose ``index`` jslink can drive."""
        options = list(zip(self.labels, self.values, strict=True))
        common = {
            "options": options,
            "value": self.default,
            "description": self.label or self.name,
            "style": {"description_width": _LABEL_WIDTH},
            "layout": W.Layout(width=_CONTROL_WIDTH),
        }
        if self.numeric:
            return W.SelectionSlider(continuous_update=True, **common)
        return W.ToggleButtons(**common)

    def live_widget(self) -> W.Widget:
        """A continuous slider (numbers) or toggle buttons (other values)."""
        common = {
            "description": self.label or self.name,
            "style": {"description_width": _LABEL_WIDTH},
            "layout": W.Layout(width=_CONTROL_WIDTH),
        }
        if not self.numeric:
            options = list(zip(self.labels, self.values, strict=True))
            return W.ToggleButtons(options=options, value=self.default, **common)
        lo, hi = min(self.values), max(self.values)
        gaps = np.diff(sorted(set(self.values)))
        step = self.step or (float(gaps.min()) if gaps.size else 1.0)
        # redraw when the slider is released: a drag would queue many redraws
        if self.integer:
            return W.IntSlider(
                value=self.default,
                min=lo,
                max=hi,
                step=max(1, int(step)),
                continuous_update=False,
                **common,
            )
        return W.FloatSlider(
            value=self.default,
            min=lo,
            max=hi,
            step=step,
            continuous_update=False,
            readout_format=".3g",
            **common,
        )


def render_png(
    draw: DrawFn,
    params: dict[str, Any],
    *,
    figsize: tuple[float, float] = (5.0, 4.2),
    dpi: float = 72.0,
    colors: int | None = 64,
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
    image.save(out, format="PNG", compress_level=9)
    return out.getvalue()


def default_mode() -> str:
    """``"live"`` when a person is at a kernel, ``"static"`` otherwise.

    A notebook run by the book's build (or ``jupyter nbconvert``) has a kernel
    but nobody to move the sliders, and its widgets end up on the website:
    there the figure must be precomputed. A Jupyter server sets
    ``JPY_SESSION_NAME`` for its kernels, Colab loads ``google.colab`` and VS
    Code sets ``VSCODE_PID``; any of these means live. The environment
    variable ``RHN_WIDGETS`` (``live`` or ``static``) overrides the guess.
    ``ipywidgets`` 7 (Colab's default) has no ``Stack``, so it is always live.
    """
    forced = os.environ.get("RHN_WIDGETS", "").strip().lower()
    if forced in ("live", "static"):
        mode = forced
    elif (
        "google.colab" in sys.modules
        or os.environ.get("JPY_SESSION_NAME")
        or os.environ.get("VSCODE_PID")
    ):
        mode = "live"
    else:
        mode = "static"
    if mode == "static" and not hasattr(W, "Stack"):
        mode = "live"
    return mode


class InteractiveFigure(W.VBox):
    """The controls above the figure, as returned by :func:`interactive_figure`.

    Attributes:
        mode: ``"live"`` or ``"static"``.
        controls: the :class:`Control` specifications, in order.
        control_widgets: ``{name: widget}`` for each control.
        frames: static mode: ``{values tuple: PNG bytes}`` for every point of
            the grid, keys in the order of ``controls``; live mode: empty.
        view: live mode: the ``Image`` that is redrawn; static mode: the
            outermost ``Stack``.
        links: static mode: the ``jslink`` objects; live mode: empty.
    """

    def __init__(
        self,
        draw: DrawFn,
        controls: Sequence[Control],
        mode: str,
        render: Callable[[dict[str, Any]], bytes],
    ) -> None:
        self.draw = draw
        self.controls = tuple(controls)
        self.mode = mode
        self._render = render
        self.frames: dict[tuple[Any, ...], bytes] = {}
        self.links: list[Any] = []
        if mode == "live":
            self.control_widgets = {c.name: c.live_widget() for c in self.controls}
            self.view = W.Image(value=render(self.params()), format="png")
            for widget in self.control_widgets.values():
                widget.observe(self._on_change, names="value")
        else:
            self.control_widgets = {c.name: c.static_widget() for c in self.controls}
            self.view = self._build_stacks()
        super().__init__(
            children=[*self.control_widgets.values(), self.view],
            layout=W.Layout(align_items="flex-start"),
        )
        # marks the figure in the page, for the browser tests (tests/browser)
        self.add_class(DOM_CLASS)

    def params(self) -> dict[str, Any]:
        """The current value of every control, as keyword arguments of draw."""
        return {name: w.value for name, w in self.control_widgets.items()}

    def redraw(self) -> None:
        """Live mode: draw the current setting into the image."""
        self.view.value = self._render(self.params())

    def _on_change(self, change: dict[str, Any]) -> None:
        self.redraw()

    def _build_stacks(self) -> W.Widget:
        names = [c.name for c in self.controls]
        grids = [c.values for c in self.controls]
        for point in itertools.product(*grids):
            self.frames[point] = self._render(dict(zip(names, point, strict=True)))
        # one list of stacks per control level; a level-l stack holds the
        # frames (or stacks) for each value of control l
        levels: list[list[W.Stack]] = [[] for _ in self.controls]
        # one Layout for all frames and one for all stacks: each widget would
        # otherwise carry its own copy of ~40 layout fields into the page
        image_layout, stack_layout = W.Layout(), W.Layout()

        def build(level: int, prefix: tuple[Any, ...]) -> W.Widget:
            if level == len(self.controls):
                return W.Image(
                    value=self.frames[prefix], format="png", layout=image_layout
                )
            control = self.controls[level]
            children = [build(level + 1, prefix + (v,)) for v in control.values]
            stack = W.Stack(
                children=children,
                selected_index=control.values.index(control.default),
                layout=stack_layout,
            )
            levels[level].append(stack)
            return stack

        root = build(0, ())
        for control, stacks in zip(self.controls, levels, strict=True):
            widget = self.control_widgets[control.name]
            for stack in stacks:
                self.links.append(
                    W.jslink((widget, "index"), (stack, "selected_index"))
                )
        return root

    def frame(self, **params: Any) -> bytes:
        """The PNG for one setting: the stored frame, or a fresh render (live)."""
        key = tuple(params[c.name] for c in self.controls)
        if key in self.frames:
            return self.frames[key]
        return self._render(dict(params))


def interactive_figure(
    draw: DrawFn,
    controls: Sequence[Control],
    *,
    mode: str = "auto",
    figsize: tuple[float, float] = (5.0, 4.2),
    dpi: float = 72.0,
    colors: int | None = 64,
    max_frames: int = 400,
) -> InteractiveFigure:
    """Widgets that show ``draw`` under sliders, live or from precomputed frames.

    Args:
        draw: ``draw(ax, **params)`` with one keyword per control.
        controls: the sliders and toggles, top to bottom.
        mode: ``"live"`` (redraw on every change; needs a kernel),
            ``"static"`` (precompute every grid point; works from saved widget
            state with no kernel) or ``"auto"`` (default: :func:`default_mode`).
        figsize, dpi, colors: passed to :func:`render_png`.
        max_frames: static mode refuses grids with more points than this
            (default 400): every frame is stored in the page.

    Returns:
        An :class:`InteractiveFigure` (an ``ipywidgets.VBox``); display it.
    """
    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    controls = tuple(controls)
    if not controls or not all(isinstance(c, Control) for c in controls):
        raise TypeError("controls must be a non-empty sequence of rhn.widgets.Control")
    names = [c.name for c in controls]
    if len(set(names)) != len(names):
        raise ValueError(f"control names must be unique, got {names}")
    mode = _checks.choice("mode", mode, list(MODES))
    if mode == "auto":
        mode = default_mode()
    max_frames = _checks.positive_int("max_frames", max_frames)
    if mode == "static":
        if not hasattr(W, "Stack"):
            raise RuntimeError("mode='static' needs ipywidgets >= 8 (for Stack)")
        n = math.prod(len(c.values) for c in controls)
        if n > max_frames:
            raise ValueError(
                f"the static grid has {n} frames, more than max_frames={max_frames}; "
                "use fewer values per control"
            )
    render = functools.partial(
        _render_params, draw, figsize=figsize, dpi=dpi, colors=colors
    )
    return InteractiveFigure(draw, controls, mode, render)


def _render_params(draw: DrawFn, params: dict[str, Any], **kw: Any) -> bytes:
    return render_png(draw, params, **kw)


# ---------------------------------------------------------------------------
# the book's figures: draw functions
# ---------------------------------------------------------------------------

_INPUT = 4  # input size of the example models
_WARMUP = 20  # steps run on random inputs to reach a typical state


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@functools.lru_cache(maxsize=8)
def _base_rnn(hidden_size: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Seeded RNN weights (unit scale), input sequence; float64."""
    g = _seeded(seed)
    H = hidden_size
    w_ih = torch.randn(H, _INPUT, generator=g, dtype=torch.float64) / math.sqrt(_INPUT)
    w_hh = torch.randn(H, H, generator=g, dtype=torch.float64) / math.sqrt(H)
    xs = torch.randn(_WARMUP + 1, _INPUT, generator=g, dtype=torch.float64)
    return w_ih, w_hh, xs


def example_rnn_jacobian(
    *,
    scale: float = 1.0,
    init: str = "gaussian",
    hidden_size: int = 12,
    seed: int = 0,
) -> torch.Tensor:
    r"""The temporal Jacobian drawn by :func:`rnn_discs_figure`, ``(H, H)`` float64.

    A tanh :class:`rhn.RNN` with recurrent matrix ``scale * R0`` (``R0`` a
    fixed Gaussian matrix with entries :math:`\mathcal{N}(0, 1/H)`, or the
    identity), zero biases, runs 20 steps on seeded random inputs; the result
    is :func:`rhn.analysis.rnn_temporal_jacobian` at the next step.
    """
    from . import analysis
    from .baselines import RNN

    scale = _checks.real("scale", scale)
    init = _checks.choice("init", init, ["gaussian", "identity"])
    H = _checks.positive_int("hidden_size", hidden_size)
    w_ih, w_hh, xs = _base_rnn(H, seed)
    R = w_hh if init == "gaussian" else torch.eye(H, dtype=torch.float64)
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        rnn = RNN(_INPUT, H, dtype=torch.float64)
    with torch.no_grad():
        rnn.rnn.weight_ih_l0.copy_(w_ih)
        rnn.rnn.weight_hh_l0.copy_(scale * R)
        rnn.rnn.bias_ih_l0.zero_()
        rnn.rnn.bias_hh_l0.zero_()
        _, s = rnn(xs[:-1].unsqueeze(1))  # (N=1, B=1, H)
        return analysis.rnn_temporal_jacobian(rnn, xs[-1], s[0, 0])  # (H, H)


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
        scale: multiplier of the recurrent weights (default 1).
        init: ``"gaussian"`` (default) or ``"identity"``.
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        view: half-width of the square shown (default 3.2), fixed so the axes
            do not jump as the slider moves.

    Returns:
        ``ax``.
    """
    from . import plots

    J = example_rnn_jacobian(scale=scale, init=init, hidden_size=hidden_size, seed=seed)
    init, H = init.lower(), J.shape[0]
    title = f"tanh RNN, {init} R × {scale:g}  (H = {H})"
    return plots.plot_spectrum(J, ax, view=view, title=title)


@functools.lru_cache(maxsize=64)
def _rhn_jacobian(
    transform_bias: float,
    scale: float,
    depth: int,
    coupled: bool,
    hidden_size: int,
    seed: int,
) -> torch.Tensor:
    from . import analysis
    from .cells import RHNCell

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        cell = RHNCell(
            _INPUT,
            hidden_size,
            depth,
            coupled=coupled,
            transform_bias=transform_bias,
            dtype=torch.float64,
        )
    g = _seeded(seed + 1)
    xs = torch.randn(_WARMUP + 1, _INPUT, generator=g, dtype=torch.float64)
    with torch.no_grad():
        for k in range(depth):
            cell.recurrent_weight(k).mul_(scale)
        s = torch.zeros(hidden_size, dtype=torch.float64)
        for x in xs[:-1]:
            s = cell(x, s)
        return analysis.temporal_jacobian(cell, xs[-1], s)  # (H, H)


def example_rhn_jacobian(
    *,
    transform_bias: float = -2.0,
    scale: float = 1.0,
    depth: int = 2,
    coupled: bool = True,
    hidden_size: int = 12,
    seed: int = 0,
) -> torch.Tensor:
    """The temporal Jacobian drawn by :func:`rhn_jacobian_figure`, ``(H, H)``.

    Float64; see :func:`rhn_jacobian_figure` for the set-up. Results are
    cached, so a slider that returns to a setting costs nothing.
    """
    b = _checks.real("transform_bias", transform_bias)
    scale = _checks.real("scale", scale)
    D = _checks.positive_int("depth", depth)
    H = _checks.positive_int("hidden_size", hidden_size)
    _checks.boolean("coupled", coupled)
    return _rhn_jacobian(b, scale, D, coupled, H, seed).clone()


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
            :math:`U(\pm 1/\sqrt{H})`).
        depth: recurrence depth ``D`` (default 2).
        coupled: coupled carry gate ``c = 1 - t`` (default ``True``).
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        view: half-width of the square shown (default 2.2); discs reaching
            beyond it are cut, and a note says how far they reach.

    Returns:
        ``ax``.
    """
    from . import plots

    J = example_rhn_jacobian(
        transform_bias=transform_bias,
        scale=scale,
        depth=depth,
        coupled=bool(coupled),
        hidden_size=hidden_size,
        seed=seed,
    )
    b, D = float(transform_bias), int(depth)
    kind = "coupled" if coupled else "uncoupled"
    title = f"RHN, D = {D}, b_T = {b:g}, R × {scale:g}, {kind}"
    return plots.plot_spectrum(J, ax, view=view, title=title)


@functools.lru_cache(maxsize=8)
def _baseline_norms(steps: int, hidden_size: int, seed: int) -> dict[str, np.ndarray]:
    """Gradient norm versus lag of a seeded RNN and LSTM (no gate bias to vary)."""
    from . import gradflow
    from .baselines import LSTM, RNN

    x = _gradflow_input(steps, seed)
    out = {}
    for name, cls in (("rnn", RNN), ("lstm", LSTM)):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = cls(_INPUT, hidden_size, dtype=torch.float64)
        out[name] = gradflow.gradient_norms(model, x).numpy()
    return out


def _gradflow_input(steps: int, seed: int) -> torch.Tensor:
    g = _seeded(seed + 2)
    return torch.randn(steps, 2, _INPUT, generator=g, dtype=torch.float64)  # (T, B, I)


@functools.lru_cache(maxsize=64)
def _rhn_norms(
    transform_bias: float, depth: int, steps: int, hidden_size: int, seed: int
) -> np.ndarray:
    from . import gradflow
    from .cells import RHN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = RHN(
            _INPUT,
            hidden_size,
            depth,
            transform_bias=transform_bias,
            dtype=torch.float64,
        )
    return gradflow.gradient_norms(model, _gradflow_input(steps, seed)).numpy()


def gradient_flow_curves(
    *,
    transform_bias: float = -2.0,
    depth: int = 3,
    steps: int = 40,
    hidden_size: int = 16,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """The curves drawn by :func:`gradient_flow_figure`.

    Returns:
        ``{"rhn": ..., "rnn": ..., "lstm": ...}``, each an array of shape
        ``(steps,)``: the gradient norm at lag ``k`` (index ``k``). Cached.
    """
    b = _checks.real("transform_bias", transform_bias)
    D = _checks.positive_int("depth", depth)
    T = _checks.positive_int("steps", steps, minimum=2)
    H = _checks.positive_int("hidden_size", hidden_size)
    curves = dict(_baseline_norms(T, H, seed))
    curves["rhn"] = _rhn_norms(b, D, T, H, seed)
    return {name: values.copy() for name, values in curves.items()}


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
    gives :math:`\lVert \partial \mathcal{L} / \partial s^{[T-2-k]} \rVert`
    for every lag ``k``. Only the RHN depends on the slider; the RNN and LSTM
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
    from .plots import COLORS

    curves = gradient_flow_curves(
        transform_bias=transform_bias,
        depth=depth,
        steps=steps,
        hidden_size=hidden_size,
        seed=seed,
    )
    b, D, T, H = float(transform_bias), int(depth), int(steps), int(hidden_size)
    lo, hi = ylim
    lags = np.arange(T)
    # plain-text labels: mathtext layout is a large part of a redraw
    labels = {"rhn": f"RHN (D = {D}, b_T = {b:g})", "rnn": "RNN", "lstm": "LSTM"}
    for name in ("rnn", "lstm", "rhn"):
        y = np.nan_to_num(curves[name], nan=hi, posinf=hi)
        y = np.clip(np.maximum(y, _FLOOR), lo, hi)
        ax.plot(
            lags,
            y,
            color=COLORS[name],
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
    ax.set_xlim(0, T - 1)
    ax.set_xlabel("lag $k$ (steps back from the end)")
    ax.set_ylabel("gradient norm ‖∂L/∂s‖ at lag k")
    ax.set_title(f"Gradient norm versus lag at initialisation (H = {H})")
    ax.legend(loc="lower left", fontsize="small")
    ax.grid(True, which="major", alpha=0.3)
    return ax


# ---------------------------------------------------------------------------
# the book's figures: widgets
# ---------------------------------------------------------------------------

BIAS_GRID = (-10.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 10.0)
"""Transform-gate biases precomputed for the website (``-2`` is the default)."""


def rnn_discs_widget(*, mode: str = "auto", **figure: Any) -> InteractiveFigure:
    """Chapter 4: RNN Geršgorin discs under a weight-scale slider.

    Args:
        mode: ``"auto"``, ``"live"`` or ``"static"`` (see
            :func:`interactive_figure`).
        **figure: passed to :func:`rnn_discs_figure` (``hidden_size``,
            ``seed``, ``view``).
    """
    controls = [
        Control(
            "scale",
            (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0),
            1.0,
            label="weight scale",
            step=0.05,
        ),
        Control("init", ("gaussian", "identity"), "gaussian", label="recurrent matrix"),
    ]
    draw = functools.partial(rnn_discs_figure, **figure)
    return interactive_figure(draw, controls, mode=mode, figsize=(4.8, 4.6))


def rhn_jacobian_widget(*, mode: str = "auto", **figure: Any) -> InteractiveFigure:
    """Chapter 7: RHN Jacobian discs under bias, scale and depth sliders.

    The static website stores the full grid (9 biases × 4 scales × 3 depths ×
    coupled/uncoupled = 216 frames), so every combination can be reached.

    Args:
        mode: ``"auto"``, ``"live"`` or ``"static"``.
        **figure: passed to :func:`rhn_jacobian_figure`.
    """
    controls = [
        Control(
            "transform_bias",
            BIAS_GRID,
            -2.0,
            label="transform-gate bias b_T",
            step=0.25,
        ),
        Control("scale", (0.5, 1.0, 2.0, 3.0), 1.0, label="weight scale", step=0.1),
        Control("depth", (1, 2, 4), 2, label="depth D"),
        Control(
            "coupled",
            (True, False),
            True,
            label="carry gate",
            labels=("coupled", "uncoupled"),
        ),
    ]
    draw = functools.partial(rhn_jacobian_figure, **figure)
    return interactive_figure(draw, controls, mode=mode, figsize=(4.8, 4.6))


def gradient_flow_widget(*, mode: str = "auto", **figure: Any) -> InteractiveFigure:
    """Chapter 8: gradient norm versus lag under a transform-gate bias slider.

    Args:
        mode: ``"auto"``, ``"live"`` or ``"static"``.
        **figure: passed to :func:`gradient_flow_figure` (``depth``, ``steps``,
            ``hidden_size``, ``seed``, ``ylim``).
    """
    controls = [
        Control(
            "transform_bias",
            BIAS_GRID,
            -2.0,
            label="transform-gate bias b_T",
            step=0.25,
        )
    ]
    draw = functools.partial(gradient_flow_figure, **figure)
    return interactive_figure(draw, controls, mode=mode, figsize=(6.4, 4.0))
