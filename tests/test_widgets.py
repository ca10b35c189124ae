"""rhn.widgets: checks of the slider values, the numbers sent to the browser,
the browser's numerics (under node) against rhn.analysis / rhn.gradflow, the
committed bundle, and the widgets in a live kernel.

The same numerics are compared again in a real browser, on the built site, by
tests/browser/test_widgets_site.py.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

import rhn
from rhn import analysis, gradflow, plots, widgets
from rhn.widgets import build, models

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
HAVE_NODE_MODULES = (ROOT / "node_modules" / "ml-matrix").is_dir()
REL = 1e-9  # the issue asks for 1e-6; float64 in both languages gives ~1e-14


# --- bad slider values get clear errors --------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: widgets.example_rhn_jacobian(coupled="no"), TypeError, "coupled"),
        (lambda: widgets.example_rhn_jacobian(coupled=1), TypeError, "coupled"),
        (lambda: widgets.example_rhn_jacobian(seed=1.5), TypeError, "seed"),
        (lambda: widgets.example_rhn_jacobian(seed="0"), TypeError, "seed"),
        (lambda: widgets.example_rhn_jacobian(seed=-1), ValueError, "seed"),
        (lambda: widgets.example_rhn_jacobian(seed=2**64), ValueError, "seed"),
        (lambda: widgets.example_rnn_jacobian(seed=True), TypeError, "seed"),
        (lambda: widgets.example_rhn_jacobian(depth=0), ValueError, "depth"),
        (lambda: widgets.example_rhn_jacobian(scale="2"), TypeError, "scale"),
        (lambda: widgets.example_rnn_jacobian(init="orthogonal"), ValueError, "init"),
        (lambda: widgets.gradient_flow_curves(seed=0.0), TypeError, "seed"),
        (lambda: widgets.gradient_flow_widget(ylim=(0.0, 1.0)), ValueError, "ylim"),
        (lambda: widgets.gradient_flow_widget(ylim=(-1.0, 1.0)), ValueError, "ylim"),
        (lambda: widgets.gradient_flow_widget(ylim=(1e2, 1e-16)), ValueError, "ylim"),
        (lambda: widgets.gradient_flow_widget(ylim=1.0), TypeError, "ylim"),
        (lambda: widgets.gradient_flow_widget(ylim=(1e-9, "1")), TypeError, "ylim"),
        (lambda: widgets.rhn_jacobian_widget(seed="1"), TypeError, "seed"),
        (lambda: widgets.rhn_jacobian_widget(max_depth=0), ValueError, "max_depth"),
        (lambda: widgets.rnn_discs_widget(view=0.0), ValueError, "view"),
        (lambda: widgets.rhn_jacobian_figure(None, coupled="on"), TypeError, "coupled"),
    ],
)
def test_bad_values_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_values_set_from_python_are_checked():
    fig = widgets.rhn_jacobian_widget()
    good = {"transform_bias": 0.3, "scale": 2.0, "depth": 4, "coupled": False}
    fig.values = good
    assert fig.values == good
    bad = [
        ({**good, "coupled": "no"}, ValueError, "coupled"),
        ({**good, "coupled": 0}, ValueError, "coupled"),
        ({**good, "depth": 2.5}, TypeError, "depth"),
        ({**good, "depth": 6}, ValueError, "depth"),
        ({**good, "transform_bias": 11.0}, ValueError, "transform_bias"),
        ({**good, "scale": "1"}, TypeError, "scale"),
        ({"transform_bias": 0.0}, ValueError, "values"),
    ]
    for values, error, match in bad:
        with pytest.raises(error, match=match):
            fig.values = values
    assert fig.values == good  # a refused setting leaves the figure as it was


# --- the numbers sent to the browser are exactly the model's -----------------


def _roundtrip(data: dict) -> dict:
    """What the browser receives: the widget state as JSON text."""
    return json.loads(json.dumps(data))


def _tensor(values, *shape) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).reshape(*shape)


def test_rhn_weights_roundtrip_exactly_for_every_depth_and_gate():
    max_depth, H, seed = 4, 6, 3
    fig = widgets.rhn_jacobian_widget(hidden_size=H, seed=seed, max_depth=max_depth)
    data = _roundtrip(fig.get_state()["data"])
    I = data["input_size"]
    assert torch.equal(_tensor(data["xs"], -1, I), models._rhn_inputs(seed))
    for name, coupled in (("coupled", True), ("uncoupled", False)):
        G = 2 if coupled else 3
        sent = data["cells"][name]
        for depth in range(1, max_depth + 1):
            # the cell the Python reference builds at this setting (bias -1.3)
            cell = models._rhn_cell(depth, coupled, H, seed, -1.3)
            assert torch.equal(_tensor(sent["w_ih"], G * H, I), cell.weight_ih)
            for k in range(depth):
                w = _tensor(sent["w_hh"][k], G * H, H)
                assert torch.equal(w, cell.recurrent_weight(k)), (name, depth, k)


def test_rnn_and_gradient_flow_data_roundtrip_exactly():
    rnn = _roundtrip(widgets.rnn_discs_widget(hidden_size=5, seed=2).data)
    w_ih, r0, xs = models._base_rnn(5, 2)
    assert torch.equal(_tensor(rnn["w_ih"], 5, -1), w_ih)
    assert torch.equal(_tensor(rnn["r0"], 5, 5), r0)
    assert torch.equal(_tensor(rnn["xs"], -1, models.INPUT_SIZE), xs)

    T, H, D = 7, 5, 2
    flow = _roundtrip(
        widgets.gradient_flow_widget(steps=T, hidden_size=H, depth=D, seed=1).data
    )
    model = models._rhn_model(-2.5, D, H, 1)
    cell = model.cells[0]
    assert len(model.cells) == 1 and model.coupled
    assert torch.equal(_tensor(flow["cell"]["w_ih"], 2 * H, -1), cell.weight_ih)
    for k in range(D):
        w = _tensor(flow["cell"]["w_hh"][k], 2 * H, H)
        assert torch.equal(w, cell.recurrent_weight(k))
    x = _tensor(flow["xs"], T, flow["batch"], -1)
    assert torch.equal(x, models._gradflow_input(T, 1))
    assert torch.equal(_tensor(flow["v"], H), gradflow.projection(H, 0, dtype=x.dtype))
    curves = widgets.gradient_flow_curves(steps=T, hidden_size=H, depth=D, seed=1)
    for name in ("rnn", "lstm"):
        assert np.array_equal(np.array(flow["baselines"][name]), curves[name])


def test_widget_state_carries_the_bundle_controls_and_class():
    fig = widgets.rhn_jacobian_widget()
    state = fig.get_state()
    assert state["_esm"] == widgets.interactive.BUNDLE.read_text()
    assert state["_model_module"] == "anywidget"
    assert widgets.DOM_CLASS in state["_dom_classes"]
    assert state["values"] == {
        "transform_bias": -2.0,
        "scale": 1.0,
        "depth": 2,
        "coupled": True,
    }
    names = [c["name"] for c in state["data"]["controls"]]
    assert names == ["transform_bias", "scale", "depth", "coupled"]
    bias = state["data"]["controls"][0]
    assert (bias["min"], bias["max"], bias["integer"]) == (-10.0, 10.0, False)


def test_weight_sliders_read_the_weight_scale_g():
    """Both disc figures' weight sliders read g of the notation page: the RNN's
    value is g itself; the RHN's value multiplies the package's initialisation,
    so its readout and title show value * G_PACKAGE, the g of those weights."""
    rnn_slider = widgets.rnn_discs_widget().data["controls"][0]
    rhn_fig = widgets.rhn_jacobian_widget()
    rhn_slider = rhn_fig.data["controls"][1]
    assert rnn_slider["label"] == rhn_slider["label"] == "weight scale g"
    assert rnn_slider["shown_per_unit"] == 1.0
    assert rhn_slider["shown_per_unit"] == rhn_fig.data["g_package"]
    # g is the weights' standard deviation times sqrt(H): measure it on a
    # package cell (6 H^2 = 1.5 million draws: within 0.3 % of the truth)
    H = 500
    torch.manual_seed(0)
    cell = rhn.RHNCell(4, H)
    g = cell.recurrent_weight(0).std().item() * H**0.5
    assert g == pytest.approx(widgets.models.G_PACKAGE, rel=3e-3)
    assert widgets.models.G_PACKAGE == pytest.approx(0.5774, abs=1e-4)
    # the RHN title names the same g as the readout (3 significant digits)
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    widgets.rhn_jacobian_figure(ax, scale=3.0, hidden_size=4)
    assert ", g = 1.73, " in ax.get_title()


def test_png_fallback_follows_the_setting():
    fig = widgets.rnn_discs_widget(hidden_size=4)
    bundle = fig._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == fig.png()
    fig.values = {"scale": 2.2, "init": "identity"}
    assert fig.png() != png
    assert fig.png() == widgets.render_png(
        lambda ax, **v: widgets.rnn_discs_figure(ax, hidden_size=4, **v),
        {"scale": 2.2, "init": "identity"},
        figsize=(4.8, 4.6),
        dpi=216,
        record_text=True,
    )
    # the fallback records its smallest text and dpi, as the chapters' figures
    # do: the site shows it where that text reads on a phone
    width, dpi, pt = plots.png_facts(png)
    assert pt is not None and 6 < pt < 14 and round(dpi) == 216


def _png_width(png: bytes) -> int:
    return int.from_bytes(png[16:20], "big")  # the IHDR chunk's width


def test_the_png_beside_a_widget_is_sharp_at_3x():
    """Shown 345 px wide (4.8 in at 72 dpi), it has 3 times the pixels."""
    fig = widgets.rnn_discs_widget(hidden_size=4)
    data, metadata = fig._repr_mimebundle_()
    png = base64.b64decode(data["image/png"])
    assert metadata["image/png"] == {"width": "346px"}
    assert abs(_png_width(png) - 3 * 346) <= 2  # 4.8 in at 216 dpi: 1036 px


# --- the browser's numerics, run by node, agree with the package -------------

needs_node = pytest.mark.skipif(
    NODE is None or not HAVE_NODE_MODULES,
    reason="node and node_modules (npm ci) are needed to run the widget's JavaScript",
)


def _node(script: str, payload: dict):
    """Run ``tests/<script>`` under node with ``payload`` as JSON on stdin;
    its JSON answer."""
    proc = subprocess.run(
        [NODE, str(ROOT / "tests" / script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _run_js(data: dict, settings: list[dict]) -> list[dict]:
    return _node("widget_numerics.mjs", {"data": data, "settings": settings})


def _close(a, b, rel=REL) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all(np.abs(a - b) <= rel * np.maximum(np.abs(b).max(), 1e-300)))


def _same_eigenvalues(out: dict, J: torch.Tensor, rel=REL) -> bool:
    """The eigenvalues the page draws are those of ``J`` (as a multiset).

    Each eigenvalue of ``J`` (LAPACK) is paired with the nearest unpaired one
    from the browser (ml-matrix); every pair must agree to ``rel`` of the
    spectral radius.
    """
    ref = torch.linalg.eigvals(J).numpy()
    got = list(
        np.asarray(out["eigenvalues_re"]) + 1j * np.asarray(out["eigenvalues_im"])
    )
    if len(got) != len(ref):
        return False
    for z in ref:
        dist = [abs(z - g) for g in got]
        i = int(np.argmin(dist))
        if dist[i] > rel * np.abs(ref).max():
            return False
        got.pop(i)
    return True


@needs_node
def test_js_rhn_jacobian_matches_rhn_analysis():
    fig = widgets.rhn_jacobian_widget()
    # grid values and values between them, both gates, every depth
    settings = [
        {"transform_bias": b, "scale": s, "depth": d, "coupled": c}
        for b in (-10.0, -3.3, -2.0, -0.41, 1.7, 10.0)
        for s in (0.25, 1.0, 2.35)
        for d in (1, 2, 5)
        for c in (True, False)
    ]
    for v, out in zip(settings, _run_js(fig.data, settings), strict=True):
        J = widgets.example_rhn_jacobian(**v)
        centres, radii = analysis.gershgorin_discs(J)
        rho = analysis.spectral_radius(J).item()
        assert _close(out["jacobian"], J.flatten()), v
        assert _close(out["centres"], centres) and _close(out["radii"], radii), v
        assert abs(out["spectral_radius"] - rho) <= REL * rho, v
        assert _same_eigenvalues(out, J), v


@needs_node
def test_js_rnn_jacobian_matches_rhn_analysis():
    fig = widgets.rnn_discs_widget()
    settings = [
        {"scale": s, "init": i}
        for s in (0.1, 0.63, 1.0, 1.37, 3.0)
        for i in ("gaussian", "identity")
    ]
    for v, out in zip(settings, _run_js(fig.data, settings), strict=True):
        J = widgets.example_rnn_jacobian(**v)
        centres, radii = analysis.gershgorin_discs(J)
        rho = analysis.spectral_radius(J).item()
        assert _close(out["jacobian"], J.flatten()), v
        assert _close(out["centres"], centres) and _close(out["radii"], radii), v
        assert abs(out["spectral_radius"] - rho) <= REL * rho, v
        assert _same_eigenvalues(out, J), v


@needs_node
def test_js_gradient_norms_match_rhn_gradflow():
    fig = widgets.gradient_flow_widget()
    settings = [{"transform_bias": b} for b in (-10.0, -2.0, -1.234, 0.5, 10.0)]
    for v, out in zip(settings, _run_js(fig.data, settings), strict=True):
        ref = widgets.gradient_flow_curves(**v)["rhn"]
        got = np.array(out["gradient_norms"])
        # every lag to 1e-9 of its own size (the norms span 30 decades)
        assert np.all(np.abs(got - ref) <= REL * ref), v


# --- the committed bundle is what the sources build to ------------------------


@pytest.mark.skipif(
    not build.ESBUILD.is_file(), reason="esbuild is not installed (npm ci)"
)
def test_committed_bundle_is_rebuilt_byte_identical():
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build.build(Path(tmp) / "widget.js").read_bytes()
    assert fresh == build.BUNDLE.read_bytes(), (
        "rhn/widgets/static/widget.js is stale: run python -m rhn.widgets.build"
    )


def test_bundle_is_an_es_module_with_a_render():
    text = build.BUNDLE.read_text()
    assert text.rstrip().endswith("as default};")
    assert len(text.encode()) < 150_000  # saved in every page that shows a widget


# --- the widgets in a live kernel ---------------------------------------------


def test_widgets_in_a_live_kernel():
    """A kernel builds the three widgets; their saved state is what we sent."""
    from nbclient import NotebookClient

    code = [
        "from rhn import widgets\n"
        "w4 = widgets.rnn_discs_widget()\n"
        "w7 = widgets.rhn_jacobian_widget()\n"
        "w8 = widgets.gradient_flow_widget(steps=12)\n"
        "w7.values = {**w7.values, 'transform_bias': 1.25}\n"
        "display(w4, w7, w8)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in code])
    env_path = str(ROOT)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": env_path}},
    )
    client.execute(env={"PYTHONPATH": env_path, "OMP_NUM_THREADS": "1"})
    outputs = nb.cells[0].outputs
    views = [o["data"]["application/vnd.jupyter.widget-view+json"] for o in outputs]
    assert len(views) == 3 and all("image/png" in o["data"] for o in outputs)
    state = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    kinds = {}
    for view in views:
        model = state[view["model_id"]]
        assert model["model_module"] == "anywidget"
        kinds[model["state"]["data"]["kind"]] = model["state"]
    assert set(kinds) == {"rnn_discs", "rhn_jacobian", "gradient_flow"}
    assert kinds["rhn_jacobian"]["values"]["transform_bias"] == 1.25
    assert kinds["gradient_flow"]["data"]["steps"] == 12
    assert kinds["rnn_discs"]["_esm"] == build.BUNDLE.read_text()


def test_colab_custom_widget_manager_is_switched_on(monkeypatch):
    """In Colab, making a widget turns on Colab's custom widget manager
    (anywidget does it; third-party widgets stay blank without it)."""
    import sys
    import types

    from anywidget import _util

    calls = []
    output = types.ModuleType("google.colab.output")
    output.enable_custom_widget_manager = lambda: calls.append(1)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    _util.enable_custom_widget_manager_once.cache_clear()
    try:
        widgets.rnn_discs_widget(hidden_size=3)
        widgets.gradient_flow_widget(hidden_size=3, steps=3)
    finally:
        _util.enable_custom_widget_manager_once.cache_clear()
    assert calls == [1]  # once per session, as Colab asks


def test_colab_gets_the_live_widget_without_the_png(monkeypatch):
    """In Colab anywidget names the custom widget manager in the output's
    metadata, and the widget is drawn live: the PNG fallback is left out there
    (elsewhere it stays, for nbconvert). tools/colab.py checks the same in the
    chapters, run in a Colab stand-in."""
    import sys
    import types

    from anywidget import _util

    output = types.ModuleType("google.colab.output")
    output._widgets = types.SimpleNamespace(_installed_url=None)

    def enable():
        output._widgets._installed_url = "stand-in://widget-manager.js"

    output.enable_custom_widget_manager = enable
    fig = widgets.rnn_discs_widget(hidden_size=3)  # made outside Colab
    data, _ = fig._repr_mimebundle_()
    assert "image/png" in data
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    _util.enable_custom_widget_manager_once.cache_clear()
    try:
        data, metadata = fig._repr_mimebundle_()
    finally:
        _util.enable_custom_widget_manager_once.cache_clear()
    view = "application/vnd.jupyter.widget-view+json"
    assert set(data) == {"text/plain", view}
    assert data[view]["model_id"] == fig.model_id
    manager = metadata[view]["colab"]["custom_widget_manager"]
    assert manager == {"url": "stand-in://widget-manager.js"}


def test_disc_figures_fit_their_axes_and_show_radius_zero_as_dots():
    """Identity R at 1.1: discs of radius 0 at 1.1 on axes of +-1.25 (the
    browser's rule, draw.js), with a dot per disc; Gaussian R at 2.2, H = 32:
    +-3.2, no dots."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    widgets.rnn_discs_figure(ax, scale=1.1, init="identity", hidden_size=4)
    assert ax.get_xlim() == pytest.approx((-1.25, 1.25))
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == 1 and len(dots[0].get_xdata()) == 4
    from rhn.analysis import gershgorin_discs
    from rhn.widgets.figures import example_rnn_jacobian

    J = example_rnn_jacobian(scale=1.1, init="identity", hidden_size=4)
    centres, radii = gershgorin_discs(J)
    assert radii.abs().max() == 0
    assert dots[0].get_xdata() == pytest.approx(centres.numpy())
    ax = Figure().add_subplot()
    widgets.rnn_discs_figure(ax, scale=2.2, init="gaussian", hidden_size=32)
    assert ax.get_xlim() == pytest.approx((-3.2, 3.2))
    assert not [line for line in ax.lines if line.get_marker() == "o"]


@needs_node
def test_slider_readout_reads_to_a_500th_of_its_range():
    """A tap near 0 on the bias slider (-10 to 10) reads "0", not
    "-0.000676"; round values read as themselves, with a true minus sign."""
    script = (
        "import('./rhn/widgets/js/controls.js').then((m) => {"
        " const bias = {min: -10, max: 10};"
        " const g = {min: 0.2, max: 3, shown_per_unit: 0.5};"
        " const out = [m.readout(bias, -0.000676), m.readout(bias, -2),"
        " m.readout(bias, -2.0037), m.readout(bias, 0.30000000000000004),"
        " m.readout(g, 1.23456), m.readout({min: 1, max: 8, integer: true}, 3)];"
        " console.log(JSON.stringify(out)); })"
    )
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["0", "\u22122", "\u22122", "0.3", "0.617", "3"]


def _controls_js(fig, moves: dict, later: dict) -> list[dict]:
    """What each slider of ``fig`` holds, shows and tells a screen reader as
    controls.js builds it, after each of ``moves`` (a reader's), and after
    ``later`` is set from Python: tests/widget_controls.mjs under node."""
    state = {"controls": fig.data["controls"], "values": fig.values}
    return _node("widget_controls.mjs", {**state, "moves": moves, "set": later})


@needs_node
def test_every_slider_tells_a_screen_reader_the_value_it_shows():
    """aria-valuetext is the readout, as the slider is built, moved and set
    from Python: chapter 7's weight slider moves a factor of the package's
    initialisation (1) and shows g (0.577); chapter 14's learning rate moves
    log10 of it (-2) and shows 0.01. Without aria-valuetext a screen reader
    announces the input's own value."""
    figures = [
        (
            widgets.rhn_jacobian_widget(),
            {"transform_bias": -2.5, "scale": 2.0, "depth": 4},
            {"transform_bias": 1.0, "scale": 3.0, "depth": 5, "coupled": False},
        ),
        (
            widgets.playground_widget(),
            {"log_lr": -3.0, "transform_bias": -1.25, "seq_len": 50, "depth": 3},
            {"log_lr": -1.0, "transform_bias": 2.0, "seq_len": 2, "depth": 1},
        ),
        (widgets.gradient_flow_widget(), {"transform_bias": 0.3}, {}),
        (widgets.rnn_discs_widget(hidden_size=4), {"scale": 2.2}, {"scale": 0.5}),
    ]
    built = []
    for fig, moves, later in figures:
        steps = _controls_js(fig, moves, later)
        assert [step["step"] for step in steps] == [
            "built",
            *(f"moved {name}" for name in moves),
            "set",
        ]
        sliders = [c["name"] for c in fig.data["controls"] if c["type"] == "slider"]
        for step in steps:
            assert sorted(step["sliders"]) == sorted(sliders)
            for name, got in step["sliders"].items():
                assert got["valuetext"] == got["shown"], (step["step"], name, got)
        built.append(steps[0]["sliders"])
    # the two the review found: the value the input holds is not what it shows
    g, lr = built[0]["scale"], built[1]["log_lr"]
    assert (g["value"], g["valuetext"]) == ("1", "0.577")
    assert (lr["value"], lr["valuetext"]) == ("-2", "0.01")


def test_the_png_figures_write_a_negative_bias_with_a_minus_sign():
    """The PNG beside a widget (shown without JavaScript) writes b_T = -2 as
    the browser's drawing does, with a minus sign (U+2212), not a hyphen, and
    b_T typeset (a subscript T), not as the raw "b_T"."""
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    widgets.rhn_jacobian_figure(ax, transform_bias=-2.0, hidden_size=4)
    assert "$b_T$ = \u22122," in ax.get_title() and "-" not in ax.get_title()
    ax = Figure().subplots()
    widgets.gradient_flow_figure(ax, transform_bias=-2.5, hidden_size=4, steps=5)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "RHN (D = 3, $b_T$ = \u22122.5)" in labels, labels
