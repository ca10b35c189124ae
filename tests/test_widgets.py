"""rhn.widgets: the widgets it builds, extreme settings, and one drawing path."""

from __future__ import annotations

import io

import ipywidgets as W
import numpy as np
import pytest
from PIL import Image

from rhn import widgets


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


def _cheap_draw(ax, *, a: float = 0.0, kind: str = "line") -> None:  # noqa: ANN001
    x = np.linspace(0, 1, 20)
    ax.plot(x, a * x if kind == "line" else a * x**2)
    ax.set_ylim(-3, 3)
    ax.set_title(f"a = {a:g}, {kind}")


CONTROLS = [
    widgets.Control("a", (-2.0, 0.0, 2.0), 0.0, label="slope", step=0.5),
    widgets.Control("kind", ("line", "parabola"), "line", labels=("y = ax", "ax²")),
]


def test_control_checks_its_arguments():
    with pytest.raises(ValueError, match="default"):
        widgets.Control("a", (1.0, 2.0), 3.0)
    with pytest.raises(ValueError, match="labels"):
        widgets.Control("a", (1.0, 2.0), 1.0, labels=("one",))
    with pytest.raises(ValueError, match="identifier"):
        widgets.Control("not a name", (1.0,), 1.0)
    with pytest.raises(ValueError, match="finite"):
        widgets.Control("a", (1.0, float("nan")), 1.0)


def test_interactive_figure_checks_its_arguments():
    with pytest.raises(ValueError, match="mode"):
        widgets.interactive_figure(_cheap_draw, CONTROLS, mode="website")
    with pytest.raises(TypeError, match="draw"):
        widgets.interactive_figure("not callable", CONTROLS, mode="live")
    with pytest.raises(ValueError, match="max_frames"):
        widgets.interactive_figure(_cheap_draw, CONTROLS, mode="static", max_frames=5)
    with pytest.raises(ValueError, match="unique"):
        widgets.interactive_figure(_cheap_draw, [CONTROLS[0]] * 2, mode="live")


def test_static_mode_wires_controls_to_nested_stacks():
    fig = widgets.interactive_figure(_cheap_draw, CONTROLS, mode="static")
    assert isinstance(fig, W.VBox) and fig.mode == "static"
    slider, toggle = fig.control_widgets["a"], fig.control_widgets["kind"]
    assert isinstance(slider, W.SelectionSlider) and isinstance(toggle, W.ToggleButtons)
    assert slider.value == 0.0 and slider.label == "0"
    assert toggle._options_labels == ("y = ax", "ax²") and toggle.value == "line"
    assert fig.children == (slider, toggle, fig.view)
    # outer stack: one child per slope; each child: one frame per kind
    outer = fig.view
    assert isinstance(outer, W.Stack) and len(outer.children) == 3
    assert outer.selected_index == 1  # the default slope 0.0
    for inner, a in zip(outer.children, CONTROLS[0].values, strict=True):
        assert isinstance(inner, W.Stack) and inner.selected_index == 0
        for image, kind in zip(inner.children, CONTROLS[1].values, strict=True):
            assert isinstance(image, W.Image) and image.format == "png"
            assert image.value == fig.frames[(a, kind)]
    assert len(fig.frames) == 6 and len(set(fig.frames.values())) == 6
    # jslink: the slider drives the outer stack, the toggle every inner stack
    pairs = {(link.source[0].model_id, link.target[0].model_id) for link in fig.links}
    assert all(link._model_name == "LinkModel" for link in fig.links)
    assert {(link.source[1], link.target[1]) for link in fig.links} == {
        ("index", "selected_index")
    }
    expected = {(slider.model_id, outer.model_id)} | {
        (toggle.model_id, inner.model_id) for inner in outer.children
    }
    assert pairs == expected


def test_live_mode_redraws_on_every_change():
    fig = widgets.interactive_figure(_cheap_draw, CONTROLS, mode="live")
    slider, toggle = fig.control_widgets["a"], fig.control_widgets["kind"]
    assert isinstance(slider, W.FloatSlider) and isinstance(toggle, W.ToggleButtons)
    assert (slider.min, slider.max, slider.step, slider.value) == (-2.0, 2.0, 0.5, 0.0)
    assert isinstance(fig.view, W.Image) and not fig.frames and not fig.links
    first = fig.view.value
    slider.value = 1.5  # not on the static grid: live mode draws any value
    assert fig.view.value != first
    assert fig.view.value == widgets.render_png(
        _cheap_draw, {"a": 1.5, "kind": "line"}, figsize=(5.0, 4.2)
    )
    toggle.value = "parabola"
    assert fig.view.value == widgets.render_png(
        _cheap_draw, {"a": 1.5, "kind": "parabola"}, figsize=(5.0, 4.2)
    )


def test_render_png_is_deterministic_and_small():
    a = widgets.render_png(_cheap_draw, {"a": 1.0})
    assert a == widgets.render_png(_cheap_draw, {"a": 1.0})
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(a) < len(widgets.render_png(_cheap_draw, {"a": 1.0}, colors=None))
    assert _pixels(a).shape == (302, 360, 3)  # 4.2 x 5.0 inches at 72 dpi


@pytest.mark.parametrize(
    ("builder", "small"),
    [
        (widgets.rnn_discs_widget, {"hidden_size": 4}),
        (widgets.gradient_flow_widget, {"steps": 6, "hidden_size": 4}),
    ],
)
def test_static_frames_are_live_redraws(builder, small):
    """The website's frame for a setting is the live redraw for that setting."""
    static = builder(mode="static", **small)
    live = builder(mode="live", **small)
    assert set(static.control_widgets) == set(live.control_widgets)
    rng = np.random.default_rng(0)
    points = list(static.frames)
    for k in rng.choice(len(points), size=3, replace=False):
        point = points[k]
        for control, value in zip(live.controls, point, strict=True):
            live.control_widgets[control.name].value = value
        assert live.view.value == static.frames[point], point


def test_book_widgets_have_the_issue_controls():
    rhn_fig = widgets.rhn_jacobian_widget(mode="live")
    assert list(rhn_fig.control_widgets) == [
        "transform_bias",
        "scale",
        "depth",
        "coupled",
    ]
    bias = rhn_fig.control_widgets["transform_bias"]
    assert (bias.min, bias.max) == (-10.0, 10.0)
    assert rhn_fig.control_widgets["scale"].max == 3.0
    assert isinstance(rhn_fig.control_widgets["depth"], W.IntSlider)
    assert rhn_fig.control_widgets["coupled"]._options_labels == (
        "coupled",
        "uncoupled",
    )
    # the static grid of chapter 7 stays small enough for one page
    n = np.prod([len(c.values) for c in rhn_fig.controls])
    assert n <= 250
    grad = widgets.gradient_flow_widget(mode="live")
    assert list(grad.control_widgets) == ["transform_bias"]
    scale = widgets.rnn_discs_widget(mode="live").control_widgets["scale"]
    assert scale.max == 3.0


def _assert_readable(png: bytes) -> None:
    pixels = _pixels(png)
    assert pixels.shape[0] > 200 and pixels.shape[1] > 200
    # a drawn figure, not a blank or single-colour image
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 8


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("bias", [-10.0, 10.0])
def test_extreme_rhn_settings_are_finite(bias, coupled):
    J = widgets.example_rhn_jacobian(
        transform_bias=bias, scale=3.0, depth=4, coupled=coupled
    )
    assert J.isfinite().all()
    png = widgets.render_png(
        widgets.rhn_jacobian_figure,
        {"transform_bias": bias, "scale": 3.0, "depth": 4, "coupled": coupled},
    )
    _assert_readable(png)


def test_large_negative_bias_carries_the_state():
    """b_T = -10 closes the transform gate: the step Jacobian is almost I."""
    J = widgets.example_rhn_jacobian(transform_bias=-10.0, scale=3.0, depth=4)
    assert np.allclose(J.numpy(), np.eye(12), atol=1e-3)


@pytest.mark.parametrize("bias", [-10.0, 10.0])
def test_extreme_gradient_flow_is_finite(bias):
    norms = widgets.gradient_flow_curves(transform_bias=bias)["rhn"]
    assert np.isfinite(norms).all() and (norms >= 0).all()
    _assert_readable(
        widgets.render_png(widgets.gradient_flow_figure, {"transform_bias": bias})
    )


def test_extreme_rnn_scale_is_finite():
    for init in ("gaussian", "identity"):
        _assert_readable(
            widgets.render_png(widgets.rnn_discs_figure, {"scale": 3.0, "init": init})
        )


def test_default_mode(monkeypatch):
    for name in ("RHN_WIDGETS", "JPY_SESSION_NAME", "VSCODE_PID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(__import__("sys").modules, "google.colab", raising=False)
    assert widgets.default_mode() == "static"  # e.g. the book's build
    monkeypatch.setenv("JPY_SESSION_NAME", "book/07_rhn_jacobian.ipynb")
    assert widgets.default_mode() == "live"  # a Jupyter server's kernel
    monkeypatch.setenv("RHN_WIDGETS", "static")
    assert widgets.default_mode() == "static"
    monkeypatch.setenv("RHN_WIDGETS", "live")
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert widgets.default_mode() == "live"


def test_drawing_leaves_the_global_random_state_alone():
    import torch

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    widgets.example_rnn_jacobian(scale=0.7)
    widgets.example_rhn_jacobian(transform_bias=0.3)
    widgets.gradient_flow_curves(transform_bias=0.3, steps=4, hidden_size=3)
    torch.testing.assert_close(torch.rand(3), expected)


def test_without_stack_auto_mode_is_live(monkeypatch):
    """ipywidgets 7 (Colab's default) has no Stack: the figure must stay live."""
    monkeypatch.setenv("RHN_WIDGETS", "static")
    monkeypatch.delattr(widgets.W, "Stack")
    assert widgets.default_mode() == "live"
    with pytest.raises(RuntimeError, match="ipywidgets >= 8"):
        widgets.interactive_figure(_cheap_draw, CONTROLS, mode="static")
