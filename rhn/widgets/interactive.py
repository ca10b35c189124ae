"""The three interactive figures as anywidget widgets.

Each widget is an :class:`InteractiveFigure`: its ``data`` trait carries the
model's numbers (from :mod:`rhn.widgets.models`), its ``values`` trait the
slider setting, and its ES module (``static/widget.js``, bundled from
``js/`` by :mod:`rhn.widgets.build`) computes and draws everything in the
browser. The same module runs in JupyterLab, Notebook 7, VS Code, Colab
(anywidget switches on Colab's custom widget manager by itself; there the
output carries no PNG fallback) and, from the widget state saved in the page,
on the static website.
"""

from __future__ import annotations

import base64
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import _checks
from . import figures, models

__all__ = [
    "DOM_CLASS",
    "BUNDLE",
    "InteractiveFigure",
    "rnn_discs_widget",
    "rhn_jacobian_widget",
    "gradient_flow_widget",
]

DOM_CLASS = "rhn-interactive-figure"  # CSS class of every figure, for the tests
BUNDLE = Path(__file__).with_name("static") / "widget.js"
"""The bundled ES module (committed: pip installs from the repository)."""


@functools.lru_cache(maxsize=1)
def _bundle_source() -> str:
    if not BUNDLE.is_file():
        raise FileNotFoundError(
            f"{BUNDLE} is missing: rebuild it with `python -m rhn.widgets.build`"
        )
    return BUNDLE.read_text(encoding="utf-8")


# the PNG beside a widget (what a page without JavaScript shows): shown at
# the figure's size at PNG_DPI, drawn with PNG_SCALE times the pixels, so that
# a phone's 3x screen shows it sharp (at 1x, 345 px drawn for 345 px shown
# were blurry there)
PNG_DPI = 72
PNG_SCALE = 3


def _slider(
    name: str,
    label: str,
    lo: float,
    hi: float,
    *,
    integer: bool = False,
    shown_per_unit: float = 1.0,
    power_of_ten: bool = False,
) -> dict[str, Any]:
    """A slider over ``[lo, hi]`` for the value ``name``; its readout shows the
    value times ``shown_per_unit`` (the quantity that ``label`` names). With
    ``power_of_ten`` the slider moves log10 of the quantity and its read-out
    shows the quantity itself (0.01, not -2)."""
    spec = {
        "type": "slider",
        "name": name,
        "label": label,
        "min": lo,
        "max": hi,
        "integer": integer,
        "shown_per_unit": shown_per_unit,
    }
    if power_of_ten:
        spec["power_of_ten"] = True
    return spec


def _toggle(name: str, label: str, options: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        "type": "toggle",
        "name": name,
        "label": label,
        "options": [{"label": text, "value": value} for text, value in options],
    }


class InteractiveFigure(anywidget.AnyWidget):
    """One interactive figure: numbers from Python, computing and drawing in JS.

    Attributes:
        data: the model's parameters and inputs, the controls and the view
            (``data["kind"]`` names the figure).
        values: the current setting of the controls, ``{name: value}``; it
            follows the sliders when a kernel is connected, and setting it
            from Python moves them.
    """

    data = traitlets.Dict().tag(sync=True)
    values = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        data: dict[str, Any],
        values: dict[str, Any],
        draw: Callable[..., Any],
        figsize: tuple[float, float],
    ) -> None:
        self._draw = draw
        self._figsize = figsize
        super().__init__(_esm=_bundle_source(), data=data, values=values)
        self.add_class(DOM_CLASS)

    @traitlets.validate("values")
    def _check_values(self, proposal: dict[str, Any]) -> dict[str, Any]:
        # the browser trusts these: a string "no" would be a true carry gate
        return _check_setting(self.data.get("controls", []), proposal["value"])

    def png(self) -> bytes:
        """The figure at the current setting, drawn by matplotlib, as PNG, at
        ``PNG_SCALE`` times the pixels of its shown size (``figsize`` at 72 dpi)."""
        return figures.render_png(
            self._draw,
            dict(self.values),
            figsize=self._figsize,
            dpi=PNG_DPI * PNG_SCALE,
            record_text=True,
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        # a PNG of the current setting beside the widget view: what nbconvert
        # (PDF, LaTeX), front ends without widgets and a page without
        # JavaScript show
        width = round(self._figsize[0] * PNG_DPI)
        return with_png(super()._repr_mimebundle_(**kwargs), self.png, width)


def with_png(bundle: Any, png: Callable[[], bytes], width: int | None = None) -> Any:
    """``bundle`` (a widget's MIME bundle) with the PNG ``png()`` beside it,
    to be shown ``width`` CSS px wide (the output's metadata says so; the book
    draws it at ``PNG_SCALE`` times that, sharp on a phone's 3x screen).

    No PNG in Colab: anywidget has switched on Colab's custom widget manager
    and named it in the output's metadata, so Colab draws the live widget; a
    PNG there would only be drawn by matplotlib at every display and saved with
    the notebook, never shown.
    """
    if _in_colab():
        return bundle
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    data = dict(data or {})
    data["image/png"] = base64.b64encode(png()).decode("ascii")
    if width is not None:
        metadata = dict(metadata or {})
        metadata["image/png"] = {"width": f"{width}px"}
    return (data, metadata) if metadata is not None else data


def _in_colab() -> bool:
    # anywidget's own test (anywidget._util.in_colab): Colab's kernel has
    # loaded google.colab.output before any cell runs
    return "google.colab.output" in sys.modules


def rnn_discs_widget(
    *, hidden_size: int = 12, seed: int = 0, view: float = 3.2
) -> InteractiveFigure:
    """Chapter 4: Geršgorin discs of a tanh RNN under a weight-scale slider.

    The browser redoes :func:`rhn.widgets.example_rnn_jacobian` for any
    scale in [0.1, 3] and either recurrent matrix.

    Args:
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        view: half-width of the square shown (default 3.2).
    """
    seed = models._seed(seed)
    view = _positive("view", view)
    data = models.rnn_discs_data(hidden_size=hidden_size, seed=seed)
    data.update(
        kind="rnn_discs",
        view=view,
        controls=[
            _slider("scale", "weight scale g", 0.1, 3.0),
            _toggle(
                "init",
                "recurrent matrix",
                [("gaussian", "gaussian"), ("identity", "identity")],
            ),
        ],
    )
    draw = functools.partial(
        figures.rnn_discs_figure, hidden_size=hidden_size, seed=seed, view=view
    )
    return InteractiveFigure(
        data, {"scale": 1.0, "init": "gaussian"}, draw, figsize=(4.8, 4.6)
    )


def rhn_jacobian_widget(
    *, hidden_size: int = 12, seed: int = 0, max_depth: int = 5, view: float = 2.2
) -> InteractiveFigure:
    r"""Chapter 7: RHN Jacobian discs under bias, weight scale, depth and carry gate.

    The browser redoes :func:`rhn.widgets.example_rhn_jacobian` for any
    transform-gate bias in [-10, 10], weight scale :math:`g` of the notation
    page in :math:`[0.25, 3]/\sqrt{3}`, depth 1 to ``max_depth`` and either
    carry gate. The slider reads :math:`g`; the value it sets, ``scale``,
    multiplies the package's :math:`U(\pm 1/\sqrt{H})` initialisation, whose
    :math:`g` is ``models.G_PACKAGE`` :math:`= 1/\sqrt{3}`, so ``scale = 1`` is
    that initialisation and the slider shows ``scale * G_PACKAGE``.

    Args:
        hidden_size: ``H`` (default 12).
        seed: seed of the weights and inputs (default 0).
        max_depth: the largest depth on the slider (default 5).
        view: half-width of the square shown (default 2.2).
    """
    seed = models._seed(seed)
    view = _positive("view", view)
    data = models.rhn_jacobian_data(
        hidden_size=hidden_size, seed=seed, max_depth=max_depth
    )
    data.update(
        kind="rhn_jacobian",
        view=view,
        g_package=models.G_PACKAGE,
        controls=[
            _slider("transform_bias", "transform-gate bias b_T", -10.0, 10.0),
            _slider(
                "scale", "weight scale g", 0.25, 3.0, shown_per_unit=models.G_PACKAGE
            ),
            _slider("depth", "depth D", 1, max_depth, integer=True),
            _toggle("coupled", "carry gate", [("coupled", True), ("uncoupled", False)]),
        ],
    )
    values = {"transform_bias": -2.0, "scale": 1.0, "depth": 2, "coupled": True}
    draw = functools.partial(
        figures.rhn_jacobian_figure, hidden_size=hidden_size, seed=seed, view=view
    )
    return InteractiveFigure(data, values, draw, figsize=(4.8, 4.6))


def gradient_flow_widget(
    *,
    depth: int = 3,
    steps: int = 40,
    hidden_size: int = 16,
    seed: int = 0,
    ylim: tuple[float, float] = (1e-16, 1e2),
) -> InteractiveFigure:
    """Chapter 9: gradient norm versus lag under a transform-gate bias slider.

    The browser redoes the RHN curve of
    :func:`rhn.widgets.gradient_flow_curves` for any bias in [-10, 10]; the
    RNN and LSTM curves, which do not depend on it, come from Python.

    Args:
        depth: the RHN's recurrence depth (default 3).
        steps: sequence length ``T`` (default 40).
        hidden_size: ``H`` of every model (default 16).
        seed: seed of the weights and inputs (default 0).
        ylim: the y range, two positive numbers (default ``(1e-16, 1e2)``).
    """
    seed = models._seed(seed)
    lo, hi = models._ylim(ylim)
    data = models.gradient_flow_data(
        depth=depth, steps=steps, hidden_size=hidden_size, seed=seed
    )
    data.update(
        kind="gradient_flow",
        ylim=[lo, hi],
        controls=[_slider("transform_bias", "transform-gate bias b_T", -10.0, 10.0)],
    )
    draw = functools.partial(
        figures.gradient_flow_figure,
        depth=depth,
        steps=steps,
        hidden_size=hidden_size,
        seed=seed,
        ylim=(lo, hi),
    )
    return InteractiveFigure(data, {"transform_bias": -2.0}, draw, figsize=(6.4, 4.0))


def _check_setting(controls: list[dict[str, Any]], values: object) -> dict[str, Any]:
    """``values`` if it sets every control to a value it can take; raise otherwise."""
    if not isinstance(values, dict):
        raise TypeError(f"values must be a dict, got {type(values).__name__}")
    names = [c["name"] for c in controls]
    if sorted(values) != sorted(names):
        raise ValueError(f"values must set exactly {names}, got {sorted(values)}")
    out = {}
    for c in controls:
        name, value = c["name"], values[c["name"]]
        if c["type"] == "toggle":
            options = [o["value"] for o in c["options"]]
            # True == 1 in Python: compare types too, so 1 is not a carry gate
            if not any(type(value) is type(o) and value == o for o in options):
                raise ValueError(f"{name} must be one of {options}, got {value!r}")
        elif c["integer"]:
            value = _checks.positive_int(name, value, minimum=c["min"])
            if value > c["max"]:
                raise ValueError(
                    f"{name} must be an int in [{c['min']}, {c['max']}], got {value}"
                )
        else:
            value = _checks.real(name, value)
            if not c["min"] <= value <= c["max"]:
                raise ValueError(
                    f"{name} must be in [{c['min']}, {c['max']}], got {value}"
                )
        out[name] = value
    return out


def _positive(name: str, value: object) -> float:
    value = _checks.real(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value
