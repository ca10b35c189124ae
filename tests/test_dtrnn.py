"""The gate-free deep-transition RNN: an independent NumPy loop, its Jacobian."""

import numpy as np
import pytest
import torch

import rhn
from rhn import analysis, gradflow


def numpy_dtrnn(params, x, s0, depth):
    """DT-RNN forward in float64 NumPy, written from the equations only.

    ``params`` maps the parameter names of the documented layout to arrays;
    ``x`` is ``(T, B, I)``, ``s0`` ``(B, H)``.
    """
    W = params["weight_ih"]
    s = s0
    outputs = []
    for x_t in x:
        for k in range(depth):
            pre = s @ params[f"weight_hh_d{k}"].T + params[f"bias_hh_d{k}"]
            if k == 0:
                pre = pre + x_t @ W.T
            s = np.tanh(pre)
        outputs.append(s)
    return np.stack(outputs), s


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_forward_matches_independent_numpy_loop(depth):
    torch.manual_seed(depth)
    model = rhn.build_model("dtrnn", 3, 6, depth=depth).double()
    for k in range(depth):  # non-zero biases so that b_k is exercised
        torch.nn.init.uniform_(model.cells[0].recurrent_bias(k), -0.5, 0.5)
    params = {
        n.split(".", 2)[-1]: p.detach().numpy() for n, p in model.named_parameters()
    }
    x = torch.randn(7, 4, 3, dtype=torch.float64)
    s0 = torch.randn(1, 4, 6, dtype=torch.float64)
    out, state = model(x, s0)
    ref_out, ref_s = numpy_dtrnn(params, x.numpy(), s0[0].numpy(), depth)
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state[0].detach().numpy(), ref_s, rtol=0, atol=1e-12)


def test_parameter_layout_and_count():
    model = rhn.build_model("dtrnn", 3, 5, depth=3)
    shapes = {n: tuple(p.shape) for n, p in model.cells[0].named_parameters()}
    expected = {"weight_ih": (5, 3)}
    for k in range(3):
        expected[f"weight_hh_d{k}"] = (5, 5)
        expected[f"bias_hh_d{k}"] = (5,)
    assert shapes == expected
    # I*H + D*(H*H + H)
    assert rhn.count_parameters(model) == 3 * 5 + 3 * (25 + 5)


def test_depth_one_is_the_elman_rnn():
    torch.manual_seed(0)
    dt = rhn.DTRNN(3, 6, depth=1).double()
    rnn = rhn.RNN(3, 6).double()
    with torch.no_grad():
        rnn.rnn.weight_ih_l0.copy_(dt.cells[0].weight_ih)
        rnn.rnn.weight_hh_l0.copy_(dt.cells[0].weight_hh_d0)
        rnn.rnn.bias_hh_l0.copy_(dt.cells[0].bias_hh_d0)
        rnn.rnn.bias_ih_l0.zero_()
    x = torch.randn(9, 2, 3, dtype=torch.float64)
    torch.testing.assert_close(dt(x)[0], rnn(x)[0])


@pytest.mark.parametrize("batch_first", [False, True])
def test_same_interface_as_the_other_models(batch_first):
    model = rhn.build_model(
        "dtrnn", 3, 8, depth=2, num_layers=2, batch_first=batch_first
    )
    x = torch.randn(4, 6, 3) if batch_first else torch.randn(6, 4, 3)
    out, state = model(x)
    assert out.shape == ((4, 6, 8) if batch_first else (6, 4, 8))
    assert state.shape == (2, 4, 8)
    time = 1 if batch_first else 0
    first, second = x.split([2, 4], dim=time)
    out1, state1 = model(first)
    out2, _ = model(second, state1)
    torch.testing.assert_close(torch.cat([out1, out2], dim=time), out)
    out_u, state_u = model(x.select(1 - time, 0))
    assert out_u.shape == (6, 8) and state_u.shape == (2, 8)


def test_matched_hidden_size_works():
    target = rhn.count_parameters(rhn.RHN(2, 32, depth=4))
    h = rhn.matched_hidden_size("dtrnn", 2, target, depth=4)
    size = rhn.count_parameters(rhn.DTRNN(2, h, depth=4))
    assert abs(size - target) / target < 0.05
    # the RHN has two row blocks per weight: about sqrt(2) times the units
    assert 1.3 < h / 32 < 1.5


def test_build_model_needs_depth_and_checks_arguments():
    with pytest.raises(ValueError, match="depth"):
        rhn.build_model("dtrnn", 2, 8)
    with pytest.raises(ValueError, match="depth"):
        rhn.DTRNN(2, 8, depth=0)
    with pytest.raises(ValueError, match="init_scale"):
        rhn.DTRNNCell(2, 8, depth=1, init_scale=-1.0)
    with pytest.raises(ValueError, match="features"):
        rhn.DTRNN(2, 8, depth=1)(torch.randn(5, 3, 4))
    with pytest.raises(ValueError, match="state"):
        rhn.DTRNN(2, 8, depth=1)(torch.randn(5, 3, 2), torch.zeros(1, 3, 7))


def test_variational_dropout_masks_are_shared_over_time():
    torch.manual_seed(0)
    model = rhn.DTRNN(2, 16, depth=2, output_dropout=0.5)
    out, _ = model(torch.randn(10, 3, 2))
    zero = out == 0
    assert zero.any()
    assert torch.equal(zero, zero[:1].expand_as(zero))  # same units at every step
    model.eval()
    assert not (model(torch.randn(10, 3, 2))[0] == 0).any()


@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("batched", [False, True])
def test_temporal_jacobian_matches_autograd(depth, batched):
    torch.manual_seed(1)
    cell = rhn.DTRNNCell(3, 7, depth=depth, init_scale=0.8).double()
    for k in range(depth):
        torch.nn.init.uniform_(cell.recurrent_bias(k), -0.3, 0.3)
    shape = (5,) if batched else ()
    x = torch.randn(*shape, 3, dtype=torch.float64)
    s = torch.randn(*shape, 7, dtype=torch.float64).tanh()
    J = analysis.dtrnn_temporal_jacobian(cell, x, s)
    ref = analysis.temporal_jacobian_autograd(cell, x, s)
    torch.testing.assert_close(J, ref, rtol=0, atol=1e-12)
    parts = analysis.dtrnn_micro_layer_jacobians(cell, x, s)
    assert len(parts) == depth
    if depth == 1:
        torch.testing.assert_close(parts[0], J)


def test_temporal_jacobian_matches_finite_differences():
    torch.manual_seed(2)
    cell = rhn.DTRNNCell(2, 5, depth=3, init_scale=1.0).double()
    x = torch.randn(2, dtype=torch.float64)
    s = torch.randn(5, dtype=torch.float64).tanh()
    J = analysis.dtrnn_temporal_jacobian(cell, x, s)
    eps = 1e-6
    cols = []
    for j in range(5):
        e = torch.zeros(5, dtype=torch.float64)
        e[j] = eps
        cols.append((cell(x, s + e) - cell(x, s - e)) / (2 * eps))
    torch.testing.assert_close(J, torch.stack(cols, dim=1), rtol=0, atol=1e-8)


def test_jacobian_rejects_other_cells():
    with pytest.raises(TypeError, match="DTRNNCell"):
        analysis.dtrnn_temporal_jacobian(
            rhn.RHNCell(2, 4, 1), torch.zeros(2), torch.zeros(4)
        )
    with pytest.raises(TypeError, match="model.cells"):
        analysis.dtrnn_temporal_jacobian(
            rhn.DTRNN(2, 4, 1), torch.zeros(2), torch.zeros(4)
        )


@pytest.mark.parametrize("depth", [1, 3])
def test_gradient_norms_by_jacobians_equal_autograd(depth):
    torch.manual_seed(3)
    model = rhn.DTRNN(2, 8, depth=depth).double()
    x = torch.randn(12, 3, 2, dtype=torch.float64)
    a = gradflow.gradient_norms(model, x)
    b = gradflow.gradient_norms(model, x, method="jacobian")
    assert a.shape == (12,)
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-14)


def test_make_model_passes_depth_to_the_dtrnn():
    from rhn.train import TrainConfig, make_model

    config = TrainConfig(model="dtrnn", depth=3, hidden_size=8, progress=False)
    model = make_model(config)
    assert isinstance(model.core, rhn.DTRNN) and model.core.depth == 3
