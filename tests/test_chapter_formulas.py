"""Formulas derived in chapters 1 and 6 (text and exercises), checked a second way."""

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
