"""rhn.widgets.playground: the browser's training numerics (run under node)
against torch.autograd and torch.optim.Adam in float64, the initial weights
against rhn.RHN / rhn.RNN, the browser's batches, the committed bundle and the
widget's state.

The playground in a real browser is checked by
tests/browser/test_playground_harness.py and test_playground_site.py.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from rhn import RHN, RNN, tasks
from rhn.baselines import count_parameters
from rhn.widgets import build, playground
from rhn.widgets.playground import (
    PlaygroundNet,
    matched_rnn_size,
    playground_data,
    playground_nets,
    playground_widget,
)

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
REL = 1e-9
H = 8  # small: the comparisons are exact formulas, size does not matter

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _node(request: dict) -> object:
    proc = subprocess.run(
        [NODE, str(ROOT / "tests" / "playground_numerics.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(proc.stdout)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture(scope="module")
def data() -> dict:
    return playground_data(hidden_size=H, max_depth=4, seed=3)


# --- initial weights ----------------------------------------------------------


@needs_node
@pytest.mark.parametrize(("depth", "bias"), [(1, -2.0), (3, 0.7), (4, -4.25)])
def test_browser_starts_from_the_package_models(data, depth, bias):
    got = _node({"op": "init", "data": data, "depth": depth, "transform_bias": bias})
    rhn_net, rnn_net = playground_nets(depth, bias, hidden_size=H, seed=3)
    # the RHN of this depth is its own seeded model, not a slice made in Python
    assert isinstance(rhn_net.body, RHN) and rhn_net.body.depth == depth
    for name, net in (("rhn", rhn_net), ("rnn", rnn_net)):
        params = net.browser_params()
        assert sorted(got[name]) == sorted(params)
        for n, p in params.items():
            # exact: base64 float64 and the bias set in the browser
            np.testing.assert_array_equal(got[name][n], p.detach().flatten().numpy())
    assert len(got["rnn"]["weight_hh_l0"]) == matched_rnn_size(H, depth) ** 2


def test_matched_rnn_size_is_the_closest_count():
    for h, d in [(16, 1), (16, 2), (16, 5), (8, 3)]:
        rhn_net, rnn_net = playground_nets(d, hidden_size=h)
        target = count_parameters(rhn_net.body)
        n = matched_rnn_size(h, d)
        assert rnn_net.body.hidden_size == n
        best = min(abs(count_parameters(RNN(2, m)) - target) for m in range(1, 80))
        assert abs(count_parameters(rnn_net.body) - target) == best


# --- gradients and Adam against torch -------------------------------------------


def _torch_run(net: PlaygroundNet, batches, lr: float, clip: float) -> dict:
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    params = net.browser_params()
    names = list(params)
    steps = []
    for x, y in batches:
        opt.zero_grad()
        net.body.zero_grad()
        # the state after every micro-layer, to read dL/ds as the browser does
        states = []
        if isinstance(net.body, RHN):
            cell = net.body.cells[0]
            s = torch.zeros(x.shape[1], cell.hidden_size, dtype=x.dtype)
            x_proj = torch.nn.functional.linear(x, cell.weight_ih)
            for t in range(x.shape[0]):
                gates = []
                for k in range(cell.depth):
                    h, g, c = cell.gate_values(k, s, x_proj[t] if k == 0 else None)
                    s = h * g + s * c
                    s.retain_grad()
                    states.append(s)
                    gates.append(g.mean())
            pred = net.out(s).squeeze(-1)
            # and the same as the package's forward
            torch.testing.assert_close(pred, net(x), rtol=1e-12, atol=1e-12)
        else:
            rnn = net.body.rnn
            s = torch.zeros(x.shape[1], rnn.hidden_size, dtype=x.dtype)
            for t in range(x.shape[0]):
                s = torch.tanh(
                    x[t] @ rnn.weight_ih_l0.T
                    + rnn.bias_ih_l0
                    + s @ rnn.weight_hh_l0.T
                    + rnn.bias_hh_l0
                )
                s.retain_grad()
                states.append(s)
            pred = net.out(s).squeeze(-1)
            torch.testing.assert_close(pred, net(x), rtol=1e-12, atol=1e-12)
        loss = torch.nn.functional.mse_loss(pred, y)
        loss.backward()
        grads = {n: params[n].grad.detach().clone() for n in names}
        norm = torch.nn.utils.clip_grad_norm_(net.parameters(), clip or float("inf"))
        steps.append(
            {
                "loss": loss.item(),
                "grads": grads,
                "grad_norm": norm.item(),
                "grad_norms": [st.grad.norm().item() for st in states],
            }
        )
        opt.step()
    return {
        "steps": steps,
        "params": {n: p.detach().clone() for n, p in params.items()},
    }


@needs_node
@pytest.mark.parametrize(
    ("depth", "bias", "T", "clip"),
    [(1, -2.0, 6, 0.05), (3, 0.5, 9, 0.05), (2, -1.0, 7, 0.0)],
)
def test_gradients_and_adam_agree_with_torch(data, depth, bias, T, clip):
    lr = 0.02
    g = torch.Generator().manual_seed(11)
    batches = [
        tasks.adding_problem(5, T, generator=g, dtype=torch.float64) for _ in range(6)
    ]
    got = _node(
        {
            "op": "train",
            "data": data,
            "depth": depth,
            "transform_bias": bias,
            "lr": lr,
            "clip": clip,
            "batches": [
                {"T": T, "B": 5, "x": x.flatten().tolist(), "y": y.tolist()}
                for x, y in batches
            ],
        }
    )
    nets = playground_nets(depth, bias, hidden_size=H, seed=3)
    clipped = 0
    for kind, net in zip(("rhn", "rnn"), nets, strict=True):
        want = _torch_run(net, batches, lr, clip)
        for mine, ref in zip(got[kind]["steps"], want["steps"], strict=True):
            assert _rel(mine["loss"], ref["loss"]) < REL
            assert _rel(mine["grad_norm"], ref["grad_norm"]) < REL
            assert _rel(mine["grad_norms"], ref["grad_norms"]) < REL
            for n, grad in ref["grads"].items():
                assert _rel(mine["grads"][n], grad.flatten().numpy()) < REL, (kind, n)
            clipped += clip > 0 and ref["grad_norm"] > clip
        for n, p in want["params"].items():
            assert _rel(got[kind]["params"][n], p.flatten().numpy()) < REL, (kind, n)
        # the weights moved: a test of Adam, not of the initial state
        start = {"op": "init", "data": data, "depth": depth, "transform_bias": bias}
        assert got[kind]["params"] != _node(start)[kind]
    if clip:
        assert clipped, "no step was clipped: the clip path was not tested"


@needs_node
def test_gate_means_are_the_mean_transform_gate(data):
    T = 5
    x, y = tasks.adding_problem(3, T, seed=2, dtype=torch.float64)
    got = _node(
        {
            "op": "train",
            "data": data,
            "depth": 3,
            "transform_bias": -1.5,
            "lr": 0.01,
            "clip": 1.0,
            "batches": [{"T": T, "B": 3, "x": x.flatten().tolist(), "y": y.tolist()}],
        }
    )
    net, _ = playground_nets(3, -1.5, hidden_size=H, seed=3)
    cell = net.body.cells[0]
    s = torch.zeros(3, H, dtype=torch.float64)
    x_proj = torch.nn.functional.linear(x, cell.weight_ih)
    sums = torch.zeros(3, dtype=torch.float64)
    with torch.no_grad():
        for t in range(T):
            for k in range(3):
                h, g, c = cell.gate_values(k, s, x_proj[t] if k == 0 else None)
                s = h * g + s * c
                sums[k] += g.mean() / T
    assert _rel(got["rhn"]["steps"][0]["gate_mean"], sums.numpy()) < REL


# --- the browser's batches --------------------------------------------------------


@needs_node
@pytest.mark.parametrize("T", [2, 3, 30, 101])
def test_browser_batches_are_adding_problems(T):
    B = 64
    got = _node({"op": "batches", "seed": 5, "T": T, "B": B, "n": 20})
    xs = np.array([b["x"] for b in got]).reshape(20, T, B, 2)
    ys = np.array([b["y"] for b in got])
    values, markers = xs[..., 0], xs[..., 1]
    half = T // 2
    assert ((values >= 0) & (values < 1)).all()
    assert (markers[:, :half].sum(1) == 1).all()
    assert (markers[:, half:].sum(1) == 1).all()
    np.testing.assert_allclose(ys, (values * markers).sum(1), rtol=0, atol=1e-15)
    # fresh numbers at every batch, and the same for the same seed
    assert len({tuple(b["y"]) for b in got}) == 20
    again = _node({"op": "batches", "seed": 5, "T": T, "B": B, "n": 1})
    assert again[0] == got[0]
    # the distribution of the task: mean 1, variance 1/6 (the baseline)
    assert abs(ys.mean() - 1) < 0.05 and abs(ys.var() - 1 / 6) < 0.03


# --- the widget -------------------------------------------------------------------


def test_widget_state_and_checked_values():
    fig = playground_widget()
    assert fig._esm == playground.PLAYGROUND_BUNDLE.read_text()
    assert playground.PLAYGROUND_CLASS in fig._dom_classes
    assert fig.values == {
        "depth": 2,
        "transform_bias": -3.0,  # the package's default, rhn.defaults
        "log_lr": -2.0,
        "seq_len": 30,
    }
    assert fig.data["baseline"] == pytest.approx(1 / 6)
    # the page weight the data adds (the bundle comes on top)
    assert len(json.dumps(fig.data)) < 200_000
    for values, error in [
        ({**fig.values, "seq_len": 101}, ValueError),
        ({**fig.values, "depth": 0}, ValueError),
        ({**fig.values, "log_lr": "0.01"}, TypeError),
        ({"depth": 2}, ValueError),
    ]:
        with pytest.raises(error):
            fig.values = values


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: playground_widget(learning_rate=1.0), ValueError, "learning_rate"),
        (lambda: playground_widget(seed=-1), ValueError, "seed"),
        (lambda: playground_data(hidden_size=64), ValueError, "hidden_size"),
        (lambda: playground_data(max_depth=0), ValueError, "max_depth"),
        (lambda: playground_nets(0), ValueError, "depth"),
        (lambda: playground_nets(2, "x"), TypeError, "transform_bias"),
        (lambda: matched_rnn_size(16, 1.5), TypeError, "depth"),
    ],
)
def test_bad_arguments_name_themselves(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_playground_nets_leave_the_global_generator_alone():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    playground_nets(2)
    assert torch.equal(torch.rand(3), before)


@pytest.mark.skipif(not build.ESBUILD.is_file(), reason="esbuild is not installed")
def test_committed_playground_bundle_is_rebuilt_byte_identical():
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build.build(
            Path(tmp) / "playground.js", source=build.PLAYGROUND_SOURCE
        ).read_bytes()
    assert fresh == build.PLAYGROUND_BUNDLE.read_bytes(), (
        "rhn/widgets/static/playground.js is stale: run python -m rhn.widgets.build"
    )
    text = build.PLAYGROUND_BUNDLE.read_text()
    assert "export" in text and "render" in text
    assert len(text.encode()) < 100_000


def test_initial_gradients_end_where_the_loss_says():
    # the last state's gradient of L = mean_b (w . s_b + c - y_b)^2 is
    # 2 / B (w . s_b + c - y_b) w for sequence b: its norm, averaged over b,
    # is 2 / B * mean_b |residual_b| * |w|
    maps = playground.initial_gradients(3, -1.5, 12, hidden_size=H, seed=2)
    assert maps["rhn"].shape == (3, 12) and maps["rnn"].shape == (1, 12)
    x, y = tasks.adding_problem(playground.BATCH, 12, seed=1, dtype=torch.float64)
    for kind, net in zip(
        ("rhn", "rnn"), playground_nets(3, -1.5, hidden_size=H, seed=2), strict=True
    ):
        with torch.no_grad():
            residual = net(x) - y  # (B,)
        w = net.out.weight[0].detach()
        expected = 2 / len(y) * residual.abs().mean() * w.norm()
        torch.testing.assert_close(maps[kind][-1, -1], expected)
        torch.testing.assert_close(maps[f"loss_{kind}"], residual.pow(2).mean().item())
        assert torch.all(maps[kind] > 0)
    # the RNN's gradient fades along the sequence far faster than the RHN's
    assert (
        maps["rnn"][0, 0] / maps["rnn"][0, -1] < maps["rhn"][0, 0] / maps["rhn"][-1, -1]
    )


def test_png_fallback_shows_the_setting():
    widget = playground_widget(depth=2, seq_len=20)
    data = widget._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == widget.png()
    assert len(png) < 60_000
    widget.values = {**widget.values, "depth": 4}
    assert widget.png() != png


@needs_node
@pytest.mark.parametrize("setting", ["default_bias", "open_gates"])
def test_the_chapter_record_reruns(setting):
    """Seed 0 of chapter 14's record, rerun with the page's numerics, agrees.

    Chapter 14 checks its sentences against ``playground_seeds.json``; this
    reruns one seed of each setting it quotes, as
    ``benchmarks/playground_seeds.py`` made it, so the record is the output of
    today's code and not only a file: every 100 steps, both losses and both
    gradient ratios, to rounding (the record names the Node.js that made it).
    """
    from rhn.results import load

    record = load("playground_seeds.json")
    (stored,) = [
        r for r in record["runs"] if r["setting"] == setting and r["seed"] == 0
    ]
    request = {
        "op": "runs",
        "data": playground_data(seed=0, data_seed=stored["data_seed"]),
        "settings": [record["settings"][setting]],
        "window": record["window"],
        "every": 100,
    }
    (run,) = _node(request)
    keys = ("rhn", "rnn", "ratio_rhn", "ratio_rnn")
    got = np.array([row[1:] for row in run["trace"]], dtype=np.float64)
    want = np.array([[p[k] for k in keys] for p in stored["trace"]])
    assert [row[0] for row in run["trace"]] == [p["step"] for p in stored["trace"]]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-300)
