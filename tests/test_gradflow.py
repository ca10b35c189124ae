"""Gradient norm versus lag: checked against independent computations in float64."""

import re

import pytest
import torch
from torch import nn

import rhn
from rhn.gradflow import (
    factor_per_step,
    gradient_norms,
    layer_gradient_norms,
    projection,
)

NAMES = ["rhn", "rnn", "lstm", "gru"]


def _model(name, I=3, H=5, num_layers=1, **kw):
    if name == "rhn":
        kw.setdefault("depth", 2)
    return rhn.build_model(name, I, H, num_layers=num_layers, **kw).double()


def _state_part(name, state, part="h"):
    if name == "lstm":
        return state[0] if part == "h" else state[1]
    return state


def _reference_norms(model, name, x, loss_fn=None, seed=0):
    """Lag k by splitting the sequence at T-1-k and differentiating w.r.t. a leaf.

    Uses the model's own full-sequence forward on each half, not a step loop.
    For every-step losses the output of the first half enters the loss too.
    """
    T = x.shape[0]
    v = projection(model.hidden_size, seed, dtype=x.dtype)
    norms = []
    for k in range(T):
        split = T - 1 - k
        if split > 0:
            out1, s = model(x[:split])
        else:
            out1, s = x.new_zeros(0, x.shape[1], model.hidden_size), None
            zeros = x.new_zeros(model.num_layers, x.shape[1], model.hidden_size)
            s = (zeros, zeros.clone()) if name == "lstm" else zeros
        s = (
            tuple(p.detach().requires_grad_(True) for p in s)
            if name == "lstm"
            else s.detach().requires_grad_(True)
        )
        out2, _ = model(x[split:], s)
        # the first half's last output is the state's last layer: route it via s
        if split > 0:
            last = _state_part(name, s)[-1].unsqueeze(0)
            output = torch.cat([out1[:-1].detach(), last, out2])
        else:
            output = out2
        loss = (output[-1] @ v).sum() if loss_fn is None else loss_fn(output)
        leaf = _state_part(name, s)
        (g,) = torch.autograd.grad(loss, [leaf])
        norms.append(g.transpose(0, 1).reshape(x.shape[1], -1).norm(dim=1).mean())
    return torch.stack(norms)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("num_layers", [1, 2])
def test_matches_split_sequence_reference(name, num_layers):
    model = _model(name, num_layers=num_layers)
    x = torch.randn(6, 4, 3, dtype=torch.float64)
    got = gradient_norms(model, x)
    assert got.shape == (6,)
    torch.testing.assert_close(got, _reference_norms(model, name, x))


@pytest.mark.parametrize("name", NAMES)
def test_every_step_loss_matches_reference(name):
    model = _model(name)
    x = torch.randn(5, 3, 3, dtype=torch.float64)
    w = torch.randn(5, 1, 5, dtype=torch.float64)

    def loss_fn(output):  # (T, B, H) -> scalar, a loss on every time step
        return (w * output).sum()

    got = gradient_norms(model, x, loss_fn=loss_fn)
    torch.testing.assert_close(got, _reference_norms(model, name, x, loss_fn))
    # a loss on every step adds a term at every lag (the output y^[T-n])
    assert not torch.allclose(got, gradient_norms(model, x))


def test_tanh_rnn_with_small_weights_vanishes():
    model = _model("rnn", H=16)
    with torch.no_grad():
        model.rnn.weight_hh_l0.mul_(0.5)  # gamma * sigma_max well below 1
    x = torch.randn(30, 8, 3, dtype=torch.float64)
    norms = gradient_norms(model, x)
    assert torch.all(norms[1:] < norms[:-1])
    sigma = torch.linalg.matrix_norm(model.rnn.weight_hh_l0, ord=2)
    assert sigma < 1
    # |tanh'| <= 1, so every step shrinks by at least sigma (paper, section 3)
    lags = torch.arange(30, dtype=torch.float64)
    assert torch.all(norms <= sigma ** (lags + 1) * (1 + 1e-9))


def test_rhn_with_open_transform_gate_vanishes():
    model = _model("rhn", H=16, depth=1, transform_bias=40.0, init_scale=0.05)
    norms = gradient_norms(model, torch.randn(20, 8, 3, dtype=torch.float64))
    assert torch.all(norms[1:] < norms[:-1])
    assert norms[-1] < 1e-12 * norms[0]


@pytest.mark.parametrize("impl", ["fast", "loop"])
def test_rhn_implementations_agree(impl):
    model = _model("rhn", depth=3, num_layers=2, transform_bias=-1.0, impl=impl)
    x = torch.randn(8, 3, 3, dtype=torch.float64)
    torch.testing.assert_close(
        gradient_norms(model, x), _reference_norms(model, "rhn", x)
    )


@pytest.mark.parametrize("depth", [1, 3])
def test_rhn_with_closed_transform_gate_keeps_the_norm(depth):
    # t = sigm(-60) ~ 1e-26: c = 1 - t, the Jacobian is the identity (eq. 15)
    model = _model("rhn", H=6, depth=depth, transform_bias=-60.0)
    norms = gradient_norms(model, torch.randn(40, 4, 3, dtype=torch.float64))
    torch.testing.assert_close(norms, torch.ones(40, dtype=torch.float64))


def test_agrees_with_product_of_analytic_rnn_jacobians():
    # tanh RNN: s_t = tanh(W x_t + R s_{t-1} + b), J_t = diag(1 - s_t^2) R
    model = _model("rnn", H=7)
    T, B = 12, 3
    x = torch.randn(T, B, 3, dtype=torch.float64)
    with torch.no_grad():
        out, _ = model(x)  # (T, B, H), out[t] = s_t
    R = model.rnn.weight_hh_l0
    g = projection(7, 0, dtype=torch.float64).expand(B, 7)  # dL/ds_{T-1}
    expected = []
    for t in range(T - 1, -1, -1):
        J = (1 - out[t] ** 2).unsqueeze(-1) * R  # (B, H, H)
        g = torch.einsum("bi,bij->bj", g, J)
        expected.append(g.norm(dim=1).mean())
    torch.testing.assert_close(gradient_norms(model, x), torch.stack(expected))


@pytest.mark.parametrize("name", NAMES)
def test_batch_first_and_unbatched_layouts(name):
    model = _model(name)
    x = torch.randn(6, 4, 3, dtype=torch.float64)
    ref = gradient_norms(model, x, reduction="none")  # (T, B)
    assert ref.shape == (6, 4)
    model_bf = _model(name, batch_first=True)
    model_bf.load_state_dict(model.state_dict())
    torch.testing.assert_close(gradient_norms(model_bf, x.transpose(0, 1)), ref.mean(1))
    torch.testing.assert_close(gradient_norms(model, x[:, 1]), ref[:, 1])


def test_lstm_state_choices_and_layer_selection():
    model = _model("lstm", num_layers=2)
    x = torch.randn(5, 3, 3, dtype=torch.float64)
    h = gradient_norms(model, x, lstm_state="h", reduction="none")
    c = gradient_norms(model, x, lstm_state="c", reduction="none")
    hc = gradient_norms(model, x, lstm_state="hc", reduction="none")
    torch.testing.assert_close(hc, (h**2 + c**2).sqrt())
    top = gradient_norms(model, x, layer=1, reduction="none")
    bottom = gradient_norms(model, x, layer=0, reduction="none")
    torch.testing.assert_close(h, (top**2 + bottom**2).sqrt())
    l1 = gradient_norms(model, x, ord=1, reduction="none")
    assert torch.all(l1 >= h)  # ||g||_1 >= ||g||_2


def test_initial_state_mode_and_parameter_grads_untouched():
    model = _model("rhn", state_dropout=0.5)
    model.train()
    x = torch.randn(5, 2, 3, dtype=torch.float64)
    s0 = torch.randn(1, 2, 5, dtype=torch.float64)
    with torch.no_grad():
        a = gradient_norms(model, x, state=s0)
    assert model.training
    assert all(p.grad is None for p in model.parameters())
    assert not torch.allclose(a, gradient_norms(model, x))  # the state matters
    torch.testing.assert_close(a, gradient_norms(model, x, state=s0))  # no dropout
    # after a training step: existing parameter gradients stay as they were
    model(x)[0].sum().backward()
    before = [p.grad.clone() for p in model.parameters()]
    gradient_norms(model, x)
    for p, g in zip(model.parameters(), before, strict=True):
        torch.testing.assert_close(p.grad, g, rtol=0, atol=0)


def test_projection_is_seeded_and_unit():
    v = projection(10, seed=3)
    torch.testing.assert_close(v.norm(), torch.tensor(1.0))
    torch.testing.assert_close(v, projection(10, seed=3))
    assert not torch.allclose(v, projection(10, seed=4))


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"model": nn.LSTM(3, 5)}, TypeError, ["model", "rhn.RHN", "LSTM"]),
        ({"method": "fd"}, ValueError, ["method", "autograd", "'fd'"]),
        ({"lstm_state": "x"}, ValueError, ["lstm_state", "'x'"]),
        ({"reduction": "sum"}, ValueError, ["reduction", "'sum'"]),
        ({"ord": 0}, ValueError, ["ord", "> 0"]),
        ({"layer": 2}, ValueError, ["layer", "num_layers=1", "2"]),
        ({"loss_fn": 3}, TypeError, ["loss_fn", "callable", "int"]),
        ({"loss_fn": lambda out: out}, ValueError, ["loss_fn", "scalar", "(4, 2, 5)"]),
        ({"x": torch.ones(4, 2, 7)}, ValueError, ["x", "3 features"]),
        ({"x": torch.ones(4, 2, 3)}, TypeError, ["x", "float64", "float32"]),
    ],
)
def test_bad_arguments(kwargs, error, words):
    args = {"model": _model("lstm"), "x": torch.ones(4, 2, 3, dtype=torch.float64)}
    args.update(kwargs)
    with pytest.raises(error) as info:
        gradient_norms(args.pop("model"), args.pop("x"), **args)
    for word in words:
        assert word in str(info.value)


def test_layer_gradient_norms_of_a_linear_chain():
    # z_{l+1} = a_l z_l: the gradient at the input of layer l is prod_{m>=l} a_m
    scales = [0.5, 2.0, 3.0, 0.25]
    layers = []
    for a in scales:
        lin = nn.Linear(4, 4, bias=False).double()
        with torch.no_grad():
            lin.weight.copy_(a * torch.eye(4))
        layers.append(lin)
    x = torch.randn(6, 4, dtype=torch.float64)
    got = layer_gradient_norms(layers, x)
    expected = torch.tensor([0.75, 1.5, 0.75, 0.25], dtype=torch.float64)
    torch.testing.assert_close(got, expected)


def test_layer_gradient_norms_of_closed_highway_layers():
    # gate bias -60: every layer carries its input, the gradient is unchanged
    layers = [rhn.Highway(8, transform_bias=-60.0).double() for _ in range(30)]
    x = torch.randn(5, 8, dtype=torch.float64)
    norms = layer_gradient_norms(layers, x, reduction="none")
    assert norms.shape == (30, 5)
    torch.testing.assert_close(norms, torch.ones(30, 5, dtype=torch.float64))
    with pytest.raises(TypeError, match="layers"):
        layer_gradient_norms([], x)
    with pytest.raises(ValueError, match=r"x must have shape \(B, F\)"):
        layer_gradient_norms(layers, x[0])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", NAMES)
def test_cuda_matches_cpu(name):
    model = _model(name, num_layers=2)
    x = torch.randn(8, 3, 3, dtype=torch.float64)
    cpu = gradient_norms(model, x)
    gpu = gradient_norms(model.cuda(), x.cuda())
    assert gpu.device.type == "cuda"
    torch.testing.assert_close(gpu.cpu(), cpu)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("every_step", [False, True])
def test_jacobian_products_agree_with_autograd(name, every_step):
    kw = {"depth": 3, "transform_bias": -1.0} if name == "rhn" else {}
    model = _model(name, H=6, **kw)
    x = torch.randn(15, 4, 3, dtype=torch.float64)
    w = torch.randn(15, 1, 6, dtype=torch.float64)
    loss_fn = (lambda out: (w * out).sum()) if every_step else None
    for part in ["h", "c", "hc"] if name == "lstm" else ["h"]:
        kwargs = {"loss_fn": loss_fn, "lstm_state": part, "reduction": "none"}
        auto = gradient_norms(model, x, **kwargs)
        jac = gradient_norms(model, x, method="jacobian", **kwargs)
        torch.testing.assert_close(jac, auto, rtol=1e-10, atol=1e-14)


def test_jacobian_method_needs_one_layer():
    model = _model("gru", num_layers=2)
    with pytest.raises(ValueError, match="single-layer.*num_layers=2"):
        gradient_norms(
            model, torch.ones(3, 2, 3, dtype=torch.float64), method="jacobian"
        )


@pytest.mark.parametrize("depth, bias", [(1, -2.0), (3, -4.0), (10, -3.0)])
def test_factor_per_step_is_the_carry_for_small_weights(depth, bias):
    # eq. (eq-gradflow-carry): with weights -> 0 the step Jacobian is
    # prod_k diag(1 - t_k), t_k = sigm(b_T), so the norm shrinks by (1-sigm(b))^D
    model = _model("rhn", H=8, depth=depth, transform_bias=bias, init_scale=1e-6)
    norms = gradient_norms(model, torch.randn(20, 4, 3, dtype=torch.float64))
    carry = (1 - torch.sigmoid(torch.tensor(bias, dtype=torch.float64))) ** depth
    torch.testing.assert_close(
        norms[1:] / norms[:-1], carry.expand(19), rtol=1e-4, atol=0
    )
    torch.testing.assert_close(norms[0], carry, rtol=1e-4, atol=0)


def test_factor_per_step_reads_lags_not_indices():
    # a curve q^n: entry n - 1 holds lag n, and any two lags give q back
    q = 0.8
    curve = q ** torch.arange(1, 31, dtype=torch.float64)
    assert factor_per_step(curve, 6, 30) == pytest.approx(q, rel=1e-12)
    assert factor_per_step(curve, 1, 2) == pytest.approx(q, rel=1e-12)
    # a curve whose step ratio changes: only the two named lags count
    bent = torch.tensor([1.0, 0.5, 0.5, 0.125], dtype=torch.float64)
    assert factor_per_step(bent, 2, 4) == pytest.approx(0.5, rel=1e-12)
    assert factor_per_step(bent, 1, 3) == pytest.approx(0.5**0.5, rel=1e-12)
    # a NumPy array or a list reads the same
    assert factor_per_step(bent.numpy(), 2, 4) == pytest.approx(0.5, rel=1e-12)
    assert factor_per_step(bent.tolist(), 2, 4) == pytest.approx(0.5, rel=1e-12)
    # an integer tensor reads as numbers; a norm of 0 at n1 (an underflow) gives 0
    assert factor_per_step(torch.tensor([4, 2, 1]), 1, 3) == pytest.approx(0.5)
    assert factor_per_step([1.0, 0.0], 1, 2) == 0.0
    # on a measured curve it is the carry of small weights
    model = _model("rhn", H=8, depth=2, transform_bias=-3.0, init_scale=1e-6)
    norms = gradient_norms(model, torch.randn(20, 4, 3, dtype=torch.float64))
    carry = (1 - torch.sigmoid(torch.tensor(-3.0, dtype=torch.float64))) ** 2
    assert factor_per_step(norms, 6, 20) == pytest.approx(carry.item(), rel=1e-4)


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((torch.ones(5), 3, 3), ValueError, "n0 < n1"),
        ((torch.ones(5), 2, 6), ValueError, "len(curve) = 5"),
        ((torch.ones(5), 0, 3), ValueError, "n0 must be an int >= 1"),
        ((torch.ones(5), 1.0, 3), TypeError, "n0 must be an int"),
        ((torch.ones(2, 5), 1, 3), ValueError, "1-D tensor"),
        ((torch.tensor([0.0, 1.0]), 1, 2), ValueError, "n0=1 must be a positive"),
        (([float("inf"), 1.0], 1, 2), ValueError, "positive finite norm"),
        (([1.0, -0.5], 1, 2), ValueError, "n1=2 must be a finite norm >= 0"),
        (([1.0, float("nan")], 1, 2), ValueError, "got nan"),
        (([1.0, float("inf")], 1, 2), ValueError, "got inf"),
        (("norms", 1, 2), TypeError, "curve must be a 1-D tensor, array or"),
    ],
)
def test_factor_per_step_bad_arguments(args, error, words):
    with pytest.raises(error, match=re.escape(words)):
        factor_per_step(*args)


@pytest.mark.parametrize("name", NAMES)
def test_one_norm_is_bounded_by_the_gershgorin_disc_edges(name):
    # ch. 8, box "The discs as a bound": ||u_n||_1 <= ||v||_1 prod_t max_i sum_j |J_ij|
    from rhn import analysis

    model = _model(name, H=6, **({"depth": 2} if name == "rhn" else {}))
    T, B = 12, 3
    x = torch.randn(T, B, 3, dtype=torch.float64)
    u1 = gradient_norms(model, x, ord=1, lstm_state="hc", reduction="none")
    h = c = torch.zeros(B, 6, dtype=torch.float64)
    edges = []
    with torch.no_grad():
        for t in range(T):
            if name == "lstm":
                J = analysis.lstm_temporal_jacobian(model, x[t], h, c)
                _, (h, c) = model(x[t : t + 1], (h[None], c[None]))
                h, c = h[0], c[0]
            else:
                fn = {
                    "rhn": lambda x_, s_: analysis.temporal_jacobian(
                        model.cells[0], x_, s_
                    ),
                    "rnn": lambda x_, s_: analysis.rnn_temporal_jacobian(model, x_, s_),
                    "gru": lambda x_, s_: analysis.gru_temporal_jacobian(model, x_, s_),
                }[name]
                J = fn(x[t], h)
                _, h = model(x[t : t + 1], h[None])
                h = h[0]
            centres, radii = analysis.gershgorin_discs(J)
            edges.append((centres.abs() + radii).amax(-1))  # (B,)
    edges = torch.stack(edges)  # (T, B)
    v1 = projection(6, dtype=torch.float64).abs().sum()
    bound = v1 * edges.flip(0).cumprod(0)  # entry n - 1, lag n: steps T-n+1..T
    assert torch.all(u1 <= bound * (1 + 1e-12))
    assert torch.all(u1 > 0)


def test_plot_gradient_norms():
    import matplotlib

    matplotlib.use("Agg")
    from rhn.plots import COLORS, plot_gradient_norms

    ax = plot_gradient_norms(
        {"LSTM": torch.tensor([1.0, 0.1, 0.0]), "mine": [1.0, 2.0, 3.0]},
        styles={"mine": "--"},
    )
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["LSTM", "mine"]
    assert lines[0].get_color() == COLORS["lstm"] and lines[1].get_linestyle() == "--"
    assert ax.get_yscale() == "log"
    assert torch.isnan(torch.tensor(lines[0].get_ydata()[2]))  # an underflow is a gap
    with pytest.raises(ValueError, match="1-D"):
        plot_gradient_norms({"a": torch.ones(2, 2)})
    with pytest.raises(TypeError, match="non-empty dict"):
        plot_gradient_norms({})


@pytest.mark.parametrize("name", ["rhn", "dtrnn"])
def test_micro_layer_norms_end_of_step_column_is_gradient_norms(name):
    from rhn.gradflow import _micro_states, micro_layer_gradient_norms

    torch.manual_seed(4)
    model = rhn.build_model(name, 2, 7, depth=3).double()
    x = torch.randn(9, 5, 2, dtype=torch.float64)
    heat = micro_layer_gradient_norms(model, x)
    assert heat.shape == (9, 3)
    lags = rhn.gradflow.gradient_norms(model, x)  # entry i: lag i + 1, s^[T-1-i]
    torch.testing.assert_close(heat[:-1, -1], lags[:-1].flip(0), rtol=1e-12, atol=0)
    # the output of the last step: d/dy <v, y> = v, a unit vector
    torch.testing.assert_close(heat[-1, -1], torch.tensor(1.0, dtype=torch.float64))
    # the micro-layer states end where the cell's own step ends
    cell = model.cells[0]
    s = torch.randn(5, 7, dtype=torch.float64)
    x_proj = x[0] @ cell.weight_ih.T
    torch.testing.assert_close(_micro_states(cell, x_proj, s)[-1], cell.step(x_proj, s))


def test_micro_layer_norms_inside_a_step_match_jacobian_products():
    from rhn.gradflow import micro_layer_gradient_norms, projection

    torch.manual_seed(5)
    model = rhn.DTRNN(2, 6, depth=4).double()
    x = torch.randn(3, 1, 2, dtype=torch.float64)  # one sequence
    heat = micro_layer_gradient_norms(model, x)
    cell = model.cells[0]
    with torch.no_grad():
        s = model(x[:-1])[1][0, 0]  # state entering the last step
    Js = rhn.analysis.dtrnn_micro_layer_jacobians(cell, x[-1, 0], s)
    g = projection(6, dtype=torch.float64)  # dL/ds_{D-1} of the last step
    for k in range(3, -1, -1):
        torch.testing.assert_close(heat[-1, k], g.norm(), rtol=1e-12, atol=0)
        g = Js[k].T @ g  # back through micro-layer k


def test_micro_layer_norms_reject_other_models():
    from rhn.gradflow import micro_layer_gradient_norms

    with pytest.raises(TypeError, match="RHN or rhn.DTRNN"):
        micro_layer_gradient_norms(rhn.GRU(2, 4), torch.randn(3, 1, 2))
    with pytest.raises(ValueError, match="num_layers"):
        micro_layer_gradient_norms(rhn.RHN(2, 4, 2, num_layers=2), torch.randn(3, 1, 2))


@pytest.mark.parametrize(
    "dtype, factor",
    [
        (torch.float32, 1e-25),  # squares 1e-50: below float32's smallest number
        (torch.float32, 1e25),  # squares 1e50: above float32's largest
        (torch.float64, 1e-170),  # the same for float64
        (torch.float64, 1e170),
    ],
)
@pytest.mark.parametrize("ord", [2.0, 3.0])  # powers that underflow
def test_norms_of_tiny_and_huge_gradients_do_not_underflow(dtype, factor, ord):
    # the norm is homogeneous: a loss scaled by `factor` scales every gradient,
    # and so every norm, by `factor`, as long as the gradient itself is
    # representable (vector_norm in the tensor's dtype gives 0 or inf here)
    torch.manual_seed(6)
    model = rhn.RHN(3, 5, depth=2).to(dtype)
    x = torch.randn(6, 4, 3, dtype=dtype)
    v = projection(5, dtype=dtype)

    def scaled(output):  # (T, B, H) -> factor * sum_b <v, y_b^[T]>
        return ((factor * output[-1]) @ v).sum()

    plain = gradient_norms(model, x, ord=ord, reduction="none")
    got = gradient_norms(model, x, loss_fn=scaled, ord=ord, reduction="none")
    assert got.dtype == dtype and got.shape == (6, 4)
    assert torch.all(torch.isfinite(got)) and torch.all(got > 0)
    rtol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(got / factor, plain, rtol=rtol, atol=0)
    # the same for the feed-forward and the micro-layer norms
    layers = [rhn.Highway(4).to(dtype) for _ in range(3)]
    z = torch.randn(5, 4, dtype=dtype)
    w = projection(4, dtype=dtype)
    torch.testing.assert_close(
        rhn.gradflow.layer_gradient_norms(
            layers, z, loss_fn=lambda out: ((factor * out) @ w).sum(), ord=ord
        )
        / factor,
        rhn.gradflow.layer_gradient_norms(layers, z, ord=ord),
        rtol=rtol,
        atol=0,
    )
    heat = rhn.gradflow.micro_layer_gradient_norms(model, x, loss_fn=scaled, ord=ord)
    torch.testing.assert_close(
        heat / factor,
        rhn.gradflow.micro_layer_gradient_norms(model, x, ord=ord),
        rtol=rtol,
        atol=0,
    )


def test_float32_norms_of_vanished_gradients_match_float64():
    # an RHN whose gradient has vanished to ~1e-25: the float32 norms agree
    # with those of the same model in float64 instead of reading 0
    torch.manual_seed(7)
    model = rhn.RHN(3, 6, depth=1, transform_bias=40.0, init_scale=0.05).double()
    x = torch.randn(30, 4, 3, dtype=torch.float64)
    ref = gradient_norms(model, x)
    lags = (ref > 1e-36) & (ref < 1e-22)  # representable, but squares underflow
    assert lags.sum() >= 3
    got = gradient_norms(model.float(), x.float())
    assert got.dtype == torch.float32
    torch.testing.assert_close(got[lags].double(), ref[lags], rtol=1e-3, atol=0)
