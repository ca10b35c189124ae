"""Formulas derived in chapters 1 and 5-8 (text and exercises), checked a second way."""

import math

import pytest
import torch

import rhn


def longest_path(N: int, T: int, D: int) -> int:
    """Longest monotone path on an N x T grid whose nodes cost D steps each."""
    L = [[0] * T for _ in range(N)]
    for t in range(T):
        for layer in range(N):
            below = L[layer - 1][t] if layer > 0 else 0
            before = L[layer][t - 1] if t > 0 else 0
            L[layer][t] = max(below, before) + D
    return L[N - 1][T - 1]


@pytest.mark.parametrize(
    "N, T, D", [(1, 1, 1), (1, 12, 1), (4, 9, 1), (1, 8, 6), (3, 5, 4)]
)
def test_credit_assignment_path_lengths(N, T, D):
    # ch. 1: stacked N + T - 1, deep transition D * T, both D (N + T - 1)
    assert longest_path(N, T, D) == D * (N + T - 1)


@pytest.mark.parametrize("D, expected", [(1, 66), (10, 7)])
def test_gradient_reach_under_a_constant_factor(D, expected):
    # ch. 1, exercise 2: smallest T with 0.9 ** (D T) < 1e-3, by direct search
    T = next(T for T in range(1, 1000) if 0.9 ** (D * T) < 1e-3)
    assert T == expected == math.floor(math.log(1e-3) / (D * math.log(0.9))) + 1


@pytest.mark.parametrize("coupled, G", [(True, 2), (False, 3)])
@pytest.mark.parametrize("I, H, D", [(1, 1, 1), (5, 3, 4), (64, 256, 5)])
def test_rhn_parameter_count(coupled, G, I, H, D):
    # ch. 6, eq. (eq-rhn-params) and exercise 1: P = G H I + D (G H^2 + G H)
    model = rhn.RHN(I, H, D, coupled=coupled, device="meta")
    assert rhn.count_parameters(model) == G * H * I + D * (G * H * H + G * H)


@pytest.mark.parametrize("H, g", [(32, 0.3), (64, 1 / math.sqrt(3)), (256, 1.7)])
def test_init_scale_to_weight_scale(H, g):
    # ch. 6, eq. (eq-rhn-init-scale): a = g sqrt(3/H) draws weights in U(-a, a)
    # whose standard deviation times sqrt(H) is g; the default a = 1/sqrt(H)
    # is g = 1/sqrt(3). Every recurrent weight of a depth-3 cell: 6 H^2 draws.
    a = g * math.sqrt(3 / H)
    torch.manual_seed(0)
    cell = rhn.RHNCell(2, H, 3, init_scale=a).double()
    w = torch.cat([cell.recurrent_weight(k).flatten() for k in range(3)])
    assert w.abs().max() <= a
    assert w.std().item() * math.sqrt(H) == pytest.approx(g, rel=0.03)
    default = rhn.RHNCell(2, H, 3).double()
    w0 = torch.cat([default.recurrent_weight(k).flatten() for k in range(3)])
    assert w0.std().item() * math.sqrt(H) == pytest.approx(3**-0.5, rel=0.03)


def test_coupled_state_stays_inside_the_unit_interval():
    # ch. 6, exercise 2: a convex combination of tanh candidates stays in (-1, 1)
    torch.manual_seed(3)
    net = rhn.RHN(3, 16, 4, transform_bias=6.0, init_scale=2.0).double()
    out, _ = net(20 * torch.randn(60, 5, 3, dtype=torch.float64))
    assert out.abs().max() < 1
    free = rhn.RHN(3, 16, 4, coupled=False, transform_bias=6.0, init_scale=2.0)
    free = free.double()
    with torch.no_grad():
        for k in range(4):
            free.cells[0].recurrent_bias(k)[32:] = 6.0  # carry gates open too
        out_free, _ = free(20 * torch.randn(60, 5, 3, dtype=torch.float64))
    assert out_free.abs().max() > 2


@pytest.mark.parametrize("b_T, D, T", [(-2.0, 3, 7), (-7.27, 10, 100), (0.5, 2, 4)])
def test_zero_weight_cell_decays_by_one_minus_sigmoid_bias(b_T, D, T):
    # ch. 6, exercise 3: with zero weights, T steps scale s by (1 - sigma(b_T))^(D T)
    cell = rhn.RHNCell(2, 4, D, transform_bias=b_T).double()
    with torch.no_grad():
        cell.weight_ih.zero_()
        for k in range(D):
            cell.recurrent_weight(k).zero_()
    s0 = torch.randn(3, 4, dtype=torch.float64)
    s = s0
    for _ in range(T):
        s = cell(torch.randn(3, 2, dtype=torch.float64), s)  # inputs are ignored
    factor = (1 - 1 / (1 + math.exp(-b_T))) ** (D * T)
    torch.testing.assert_close(s, factor * s0)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("bias", [0.0, -2.0])
def test_highway_jacobian_formula(activation, bias):
    # ch. 5, eq. (eq-highway-jacobian):
    # diag(1 - t) + diag(t f'(a_H)) W_H + diag((h - x) t (1 - t)) W_T
    torch.manual_seed(5)
    layer = rhn.Highway(7, activation=activation, transform_bias=bias).double()
    x = torch.randn(7, dtype=torch.float64)
    W, b = layer.weight.detach(), layer.bias.detach()
    a_H = W[:7] @ x + b[:7]
    t = torch.sigmoid(W[7:] @ x + b[7:])
    h = torch.tanh(a_H) if activation == "tanh" else torch.relu(a_H)
    f_prime = 1 - h**2 if activation == "tanh" else (a_H > 0).double()
    J = (
        torch.diag(1 - t)
        + (t * f_prime)[:, None] * W[:7]
        + ((h - x) * t * (1 - t))[:, None] * W[7:]
    )
    torch.testing.assert_close(J, torch.func.jacrev(layer)(x), rtol=0, atol=1e-12)


def test_zero_weight_highway_stack_keeps_half_the_gradient():
    # ch. 5, exercise 1: (1 - sigma(b))^50 = 1/2 at b = logit(1 - 2^(-1/50)) ~ -4.27
    p = 1 - 2 ** (-1 / 50)
    b = math.log(p / (1 - p))
    assert -4.28 < b < -4.26
    layers = [rhn.Highway(3, transform_bias=b).double() for _ in range(50)]
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    y = x
    for layer in layers:
        with torch.no_grad():
            layer.weight.zero_()
        y = layer(y)
    (grad,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(grad, torch.full_like(grad, 0.5))


def _depth_one_cell(seed: int) -> tuple:
    torch.manual_seed(seed)
    cell = rhn.RHNCell(3, 9, 1).double()
    with torch.no_grad():
        cell.recurrent_bias(0).normal_(std=2.0)  # gates anywhere in (0, 1)
    x = torch.randn(3, dtype=torch.float64)
    s = torch.rand(9, dtype=torch.float64) * 2 - 1
    return cell, x, s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_depth_one_disc_centres_and_radii(seed):
    # ch. 7, eq. (eq-rhnjac-discs), against the discs of the autograd Jacobian
    cell, x, s = _depth_one_cell(seed)
    J = torch.func.jacrev(lambda s_: cell(x, s_))(s)  # numerator layout
    H = 9
    W, R = cell.weight_ih.detach(), cell.recurrent_weight(0).detach()
    b = cell.recurrent_bias(0).detach()
    a = W @ x + R @ s + b
    h, t = torch.tanh(a[:H]), torch.sigmoid(a[H:])
    rows = (t * (1 - h**2))[:, None] * R[:H] + ((h - s) * t * (1 - t))[:, None] * R[H:]
    centres = (1 - t) + rows.diagonal()
    radii = rows.abs().sum(1) - rows.diagonal().abs()
    off = ~torch.eye(H, dtype=torch.bool)
    torch.testing.assert_close(J.diagonal(), centres, rtol=0, atol=1e-12)
    torch.testing.assert_close((J * off).abs().sum(1), radii, rtol=0, atol=1e-12)
    # ch. 7, exercise 1: r_i <= t_i (||R_H row||_1 + 2 (1 - t_i) ||R_T row||_1)
    bound = t * ((R[:H] * off).abs().sum(1) + 2 * (1 - t) * (R[H:] * off).abs().sum(1))
    assert torch.all(radii <= bound + 1e-12)


def test_first_order_product_of_near_identity_micro_layers():
    # ch. 7, exercise 2: J_{D-1} ... J_0 = I + sum_k E_k + O(E^2)
    torch.manual_seed(4)
    eye = torch.eye(6, dtype=torch.float64)
    errors = []
    for scale in (1e-2, 1e-3):
        Es = [scale * torch.randn(6, 6, dtype=torch.float64) for _ in range(5)]
        product = eye
        for E in Es:
            product = (eye + E) @ product
        errors.append((product - eye - sum(Es)).abs().max().item())
        assert errors[-1] < 0.1 * sum(Es).abs().max().item()  # much smaller than E
    assert errors[1] < 0.03 * errors[0]  # second order: 10x smaller E, ~100x error


def test_bias_that_matches_the_carry_across_depths():
    # ch. 8, exercise 1: (1 - sigma(b))^10 = 1 - sigma(-2) gives b ~ -4.36,
    # close to b_1 - log D = -2 - log 10
    carry = 1 - 1 / (1 + math.exp(2.0))
    p = 1 - carry ** (1 / 10)
    b = math.log(p / (1 - p))
    assert -4.37 < b < -4.35
    assert (1 - 1 / (1 + math.exp(-b))) ** 10 == pytest.approx(carry, rel=1e-12)
    assert abs(b - (-2 - math.log(10))) < 0.1
