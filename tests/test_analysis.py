"""rhn.analysis: analytic temporal Jacobians against autograd, Geršgorin discs."""

import pytest
import torch
from torch import nn

import rhn
from rhn import analysis

F64 = torch.float64


def random_cell(depth, coupled, H=6, I=3, bias_std=1.0):
    """A float64 cell with random biases, so every gate block matters."""
    cell = rhn.RHNCell(I, H, depth, coupled=coupled).double()
    with torch.no_grad():
        for k in range(depth):
            cell.recurrent_bias(k).normal_(std=bias_std)
    return cell


# ---------------------------------------------------------------------------
# RHN: analytic == autograd
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("batched", [False, True])
def test_rhn_jacobian_matches_autograd(depth, coupled, batched):
    cell = random_cell(depth, coupled)
    shape = (4,) if batched else ()
    x = torch.randn(*shape, 3, dtype=F64)
    s = torch.randn(*shape, 6, dtype=F64)
    J = analysis.temporal_jacobian(cell, x, s)
    expected_shape = (4, 6, 6) if batched else (6, 6)
    assert J.shape == expected_shape
    J_ref = analysis.temporal_jacobian_autograd(cell, x, s)
    assert J_ref.shape == expected_shape
    torch.testing.assert_close(J, J_ref, rtol=0, atol=1e-10)


def test_rhn_jacobian_matches_finite_differences():
    # a third, autograd-free check: central differences in float64
    cell = random_cell(3, True)
    x, s = torch.randn(3, dtype=F64), torch.randn(6, dtype=F64)
    J = analysis.temporal_jacobian(cell, x, s)
    eps = 1e-6
    with torch.no_grad():
        cols = [
            (cell(x, s + eps * e) - cell(x, s - eps * e)) / (2 * eps)
            for e in torch.eye(6, dtype=F64)
        ]
    torch.testing.assert_close(J, torch.stack(cols, dim=1), rtol=0, atol=1e-8)


def test_batched_rows_equal_unbatched_calls():
    cell = random_cell(2, False)
    x, s = torch.randn(5, 3, dtype=F64), torch.randn(5, 6, dtype=F64)
    J = analysis.temporal_jacobian(cell, x, s)
    for b in range(5):
        torch.testing.assert_close(
            J[b], analysis.temporal_jacobian(cell, x[b], s[b]), rtol=0, atol=1e-14
        )


def test_step_jacobian_is_product_of_micro_layers_in_order():
    cell = random_cell(3, True)
    x, s = torch.randn(3, dtype=F64), torch.randn(6, dtype=F64)
    J0, J1, J2 = analysis.micro_layer_jacobians(cell, x, s)
    J = analysis.temporal_jacobian(cell, x, s)
    torch.testing.assert_close(J, J2 @ J1 @ J0, rtol=0, atol=1e-14)
    # the order matters: these matrices do not commute
    assert (J - J0 @ J1 @ J2).abs().max() > 1e-6


def test_float32_works_and_keeps_dtype():
    cell = rhn.RHNCell(3, 6, 2)
    J = analysis.temporal_jacobian(cell, torch.randn(3), torch.randn(6))
    assert J.dtype == torch.float32
    J_ref = analysis.temporal_jacobian_autograd(cell, torch.randn(3), torch.randn(6))
    assert J_ref.dtype == torch.float32


# ---------------------------------------------------------------------------
# RHN: the limits of eq. (15)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 4])
def test_closed_transform_gate_gives_identity(depth):
    # t = 0, c = 1 - t = 1: the step carries the state, J = I (eq. 15)
    cell = random_cell(depth, True)
    with torch.no_grad():
        for k in range(depth):
            cell.recurrent_bias(k)[6:12] = -60.0
    x, s = torch.randn(2, 3, dtype=F64), torch.randn(2, 6, dtype=F64)
    J = analysis.temporal_jacobian(cell, x, s)
    eye = torch.eye(6, dtype=F64).expand(2, 6, 6)
    torch.testing.assert_close(J, eye, rtol=0, atol=1e-12)
    lam = analysis.eigenvalues(J)
    torch.testing.assert_close(lam, torch.ones_like(lam), rtol=0, atol=1e-12)


def test_open_transform_closed_carry_gives_tanh_rnn():
    # uncoupled cell with t = 1, c = 0: s' = tanh(W_H x + R_H s + b_H), a tanh RNN
    H, I = 6, 3
    cell = random_cell(1, False, H=H, I=I)
    with torch.no_grad():
        cell.recurrent_bias(0)[H : 2 * H] = 60.0  # t -> 1
        cell.recurrent_bias(0)[2 * H :] = -60.0  # c -> 0
    rnn_cell = nn.RNNCell(I, H, nonlinearity="tanh").double()
    with torch.no_grad():
        rnn_cell.weight_ih.copy_(cell.weight_ih[:H])
        rnn_cell.weight_hh.copy_(cell.recurrent_weight(0)[:H])
        rnn_cell.bias_ih.copy_(cell.recurrent_bias(0)[:H])
        rnn_cell.bias_hh.zero_()
    x, s = torch.randn(4, I, dtype=F64), torch.randn(4, H, dtype=F64)
    J = analysis.temporal_jacobian(cell, x, s)
    torch.testing.assert_close(
        J, analysis.rnn_temporal_jacobian(rnn_cell, x, s), rtol=0, atol=1e-12
    )
    # and the formula diag(tanh'(a_H)) R_H written out
    R_H = cell.recurrent_weight(0)[:H]
    a_H = x @ cell.weight_ih[:H].T + s @ R_H.T + cell.recurrent_bias(0)[:H]
    expected = (1 - torch.tanh(a_H) ** 2).unsqueeze(-1) * R_H
    torch.testing.assert_close(J, expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------


def _cell_jacobian(step, *state):
    """Jacobian of ``step(*state)`` w.r.t. the concatenated state, by jacrev."""
    sizes = [s.shape[-1] for s in state]

    def flat(z):
        parts = step(*torch.split(z, sizes))
        return torch.cat(parts) if isinstance(parts, tuple) else parts

    return torch.func.jacrev(flat)(torch.cat(state))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("kind", ["wrapper", "module", "cell"])
def test_rnn_jacobian_matches_autograd(nonlinearity, kind):
    I, H = 3, 5
    wrapper = rhn.RNN(I, H, num_layers=2, nonlinearity=nonlinearity, dtype=F64)
    ref = nn.RNNCell(I, H, nonlinearity=nonlinearity, dtype=F64)
    with torch.no_grad():
        ref.weight_ih.copy_(wrapper.rnn.weight_ih_l0)
        ref.weight_hh.copy_(wrapper.rnn.weight_hh_l0)
        ref.bias_ih.copy_(wrapper.rnn.bias_ih_l0)
        ref.bias_hh.copy_(wrapper.rnn.bias_hh_l0)
    model = {"wrapper": wrapper, "module": wrapper.rnn, "cell": ref}[kind]
    x, s = torch.randn(4, I, dtype=F64), torch.randn(4, H, dtype=F64)
    J = analysis.rnn_temporal_jacobian(model, x, s)
    assert J.shape == (4, H, H)
    for b in range(4):
        J_ref = _cell_jacobian(lambda s_, b=b: ref(x[b], s_), s[b])
        torch.testing.assert_close(J[b], J_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(
        analysis.rnn_temporal_jacobian(model, x[0], s[0]), J[0], rtol=0, atol=1e-14
    )


@pytest.mark.parametrize("kind", ["wrapper", "module", "cell"])
def test_lstm_jacobian_matches_autograd(kind):
    I, H = 3, 5
    wrapper = rhn.LSTM(I, H, dtype=F64)
    ref = nn.LSTMCell(I, H, dtype=F64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(ref, name).copy_(getattr(wrapper.rnn, name + "_l0"))
    model = {"wrapper": wrapper, "module": wrapper.rnn, "cell": ref}[kind]
    x = torch.randn(3, I, dtype=F64)
    h, c = torch.randn(3, H, dtype=F64), torch.randn(3, H, dtype=F64)
    J = analysis.lstm_temporal_jacobian(model, x, h, c)
    assert J.shape == (3, 2 * H, 2 * H)
    for b in range(3):
        J_ref = _cell_jacobian(lambda h_, c_, b=b: ref(x[b], (h_, c_)), h[b], c[b])
        torch.testing.assert_close(J[b], J_ref, rtol=0, atol=1e-12)
    J0 = analysis.lstm_temporal_jacobian(model, x[0], h[0], c[0])
    assert J0.shape == (2 * H, 2 * H)
    torch.testing.assert_close(J0, J[0], rtol=0, atol=1e-14)


@pytest.mark.parametrize("kind", ["wrapper", "module", "cell"])
def test_gru_jacobian_matches_autograd(kind):
    I, H = 3, 5
    wrapper = rhn.GRU(I, H, dtype=F64)
    ref = nn.GRUCell(I, H, dtype=F64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(ref, name).copy_(getattr(wrapper.rnn, name + "_l0"))
    model = {"wrapper": wrapper, "module": wrapper.rnn, "cell": ref}[kind]
    x, h = torch.randn(3, I, dtype=F64), torch.randn(3, H, dtype=F64)
    J = analysis.gru_temporal_jacobian(model, x, h)
    assert J.shape == (3, H, H)
    for b in range(3):
        J_ref = _cell_jacobian(lambda h_, b=b: ref(x[b], h_), h[b])
        torch.testing.assert_close(J[b], J_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(
        analysis.gru_temporal_jacobian(model, x[0], h[0]), J[0], rtol=0, atol=1e-14
    )


def test_baselines_without_bias():
    rnn_cell = nn.RNNCell(3, 4, bias=False, dtype=F64)
    x, s = torch.randn(3, dtype=F64), torch.randn(4, dtype=F64)
    J = analysis.rnn_temporal_jacobian(rnn_cell, x, s)
    torch.testing.assert_close(
        J, _cell_jacobian(lambda s_: rnn_cell(x, s_), s), rtol=0, atol=1e-12
    )


# ---------------------------------------------------------------------------
# Geršgorin discs and spectra
# ---------------------------------------------------------------------------


def test_discs_of_a_known_matrix():
    J = torch.tensor([[1.0, -2.0, 0.5], [0.0, -3.0, 1.0], [4.0, 0.25, 2.0]], dtype=F64)
    centres, radii = analysis.gershgorin_discs(J)
    torch.testing.assert_close(centres, torch.tensor([1.0, -3.0, 2.0], dtype=F64))
    torch.testing.assert_close(radii, torch.tensor([2.5, 1.0, 4.25], dtype=F64))
    centres_c, radii_c = analysis.gershgorin_discs(J, columns=True)
    torch.testing.assert_close(centres_c, centres)
    torch.testing.assert_close(radii_c, torch.tensor([4.0, 2.25, 1.5], dtype=F64))


def test_discs_batched_shapes():
    J = torch.randn(2, 3, 5, 5, dtype=F64)
    centres, radii = analysis.gershgorin_discs(J)
    assert centres.shape == radii.shape == (2, 3, 5)
    torch.testing.assert_close(radii[1, 2], analysis.gershgorin_discs(J[1, 2])[1])
    assert (radii >= 0).all()


def test_eigenvalues_inside_discs_random_matrices():
    # many random matrices of varied size, scale and diagonal shift
    for trial in range(300):
        n = 2 + trial % 12
        J = torch.randn(n, n, dtype=F64) * (0.1 + trial % 5)
        J += torch.diag(torch.randn(n, dtype=F64) * 3)
        lam = analysis.eigenvalues(J)
        for columns in (False, True):
            centres, radii = analysis.gershgorin_discs(J, columns=columns)
            assert analysis.in_discs(lam, centres, radii).all(), (trial, columns)


def test_eigenvalues_inside_discs_rhn_jacobians():
    for trial in range(40):
        depth, coupled = 1 + trial % 5, bool(trial % 2)
        cell = random_cell(depth, coupled, H=10, bias_std=2.0)
        x = torch.randn(8, 3, dtype=F64)
        s = torch.randn(8, 10, dtype=F64).tanh()
        J = analysis.temporal_jacobian(cell, x, s)  # (8, 10, 10)
        centres, radii = analysis.gershgorin_discs(J)
        assert analysis.in_discs(analysis.eigenvalues(J), centres, radii).all()


def test_in_discs_detects_points_outside():
    centres = torch.tensor([0.0, 3.0], dtype=F64)
    radii = torch.tensor([1.0, 0.5], dtype=F64)
    points = torch.tensor([0.5 + 0.5j, 3.4 + 0j, 2.0 + 0j, 0.0 + 1.2j])
    assert analysis.in_discs(points, centres, radii).tolist() == [
        True,
        True,
        False,
        False,
    ]


def test_spectral_radius_and_singular_value():
    J = torch.tensor([[0.0, 2.0], [0.0, 0.5]], dtype=F64)  # triangular
    assert analysis.spectral_radius(J).item() == pytest.approx(0.5)
    sigma = torch.linalg.svdvals(J)[0].item()
    assert analysis.max_singular_value(J).item() == pytest.approx(sigma)
    assert sigma > 2.0  # sigma_max >= rho, here far above it
    R = torch.randn(4, 6, 6, dtype=F64)
    rho, smax = analysis.spectral_radius(R), analysis.max_singular_value(R)
    assert rho.shape == smax.shape == (4,)
    assert (rho <= smax + 1e-12).all()
    rot = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=F64)  # eigenvalues +-i
    assert analysis.spectral_radius(rot).item() == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_errors_name_the_argument():
    cell = rhn.RHNCell(3, 6, 2)
    with pytest.raises(TypeError, match="cell must be an rhn.RHNCell.*cells"):
        analysis.temporal_jacobian(rhn.RHN(3, 6, 2), torch.randn(3), torch.randn(6))
    with pytest.raises(ValueError, match="x must have shape"):
        analysis.temporal_jacobian(cell, torch.randn(4), torch.randn(6))
    with pytest.raises(ValueError, match=r"s must have shape \(B, H\)"):
        analysis.temporal_jacobian(cell, torch.randn(2, 3), torch.randn(6))
    with pytest.raises(TypeError, match="x must have dtype"):
        analysis.temporal_jacobian(cell, torch.randn(3, dtype=F64), torch.randn(6))
    with pytest.raises(TypeError, match="s must be a floating-point"):
        analysis.temporal_jacobian(cell, torch.randn(3), torch.ones(6, dtype=int))
    with pytest.raises(ValueError, match="x must have shape"):
        analysis.temporal_jacobian_autograd(cell, torch.randn(2, 2, 3), torch.randn(6))
    with pytest.raises(TypeError, match="rnn must be rhn.RNN or nn.RNN"):
        analysis.rnn_temporal_jacobian(nn.GRU(3, 4), torch.randn(3), torch.randn(4))
    with pytest.raises(TypeError, match="lstm must be"):
        analysis.lstm_temporal_jacobian(
            nn.RNN(3, 4), torch.randn(3), torch.randn(4), torch.randn(4)
        )
    with pytest.raises(ValueError, match="c must have shape"):
        analysis.lstm_temporal_jacobian(
            nn.LSTM(3, 4), torch.randn(3), torch.randn(4), torch.randn(5)
        )
    with pytest.raises(ValueError, match="bidirectional"):
        analysis.gru_temporal_jacobian(
            nn.GRU(3, 4, bidirectional=True), torch.randn(3), torch.randn(4)
        )
    with pytest.raises(ValueError, match="J must be a square matrix"):
        analysis.gershgorin_discs(torch.randn(3, 4))
    with pytest.raises(TypeError, match="J must be a torch.Tensor"):
        analysis.spectral_radius([[1.0]])
    with pytest.raises(TypeError, match="J must be a floating-point"):
        analysis.eigenvalues(torch.eye(3, dtype=torch.int64))
