"""The RHN cell and network against an independent float64 implementation."""

import math

import numpy as np
import pytest
import torch

import rhn


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def reference_step(cell, x, s):
    """Eqs. (6)-(9) of the paper in NumPy, reading the cell's weights by block."""
    H, G = cell.hidden_size, cell.gates
    W = cell.weight_ih.detach().numpy()
    blocks = [W[g * H : (g + 1) * H] for g in range(G)]  # W_H, W_T (, W_C)
    for k in range(cell.depth):
        R = cell.recurrent_weight(k).detach().numpy()
        b = cell.recurrent_bias(k).detach().numpy()
        pre = []
        for g in range(G):
            a = s @ R[g * H : (g + 1) * H].T + b[g * H : (g + 1) * H]
            if k == 0:
                a = a + x @ blocks[g].T
            pre.append(a)
        h = np.tanh(pre[0])
        t = sigmoid(pre[1])
        c = 1.0 - t if cell.coupled else sigmoid(pre[2])
        s = h * t + s * c
    return s


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_cell_matches_reference(coupled, depth):
    cell = rhn.RHNCell(3, 6, depth, coupled=coupled, transform_bias=-1.0).double()
    with torch.no_grad():  # random biases so every block matters
        for k in range(depth):
            cell.recurrent_bias(k).normal_()
    x = torch.randn(4, 3, dtype=torch.float64)
    s = torch.randn(4, 6, dtype=torch.float64)
    got = cell(x, s).detach().numpy()
    want = reference_step(cell, x.numpy(), s.numpy())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


def test_cell_default_state_is_zero_and_unbatched_matches_batched():
    cell = rhn.RHNCell(3, 5, 2).double()
    x = torch.randn(3, dtype=torch.float64)
    torch.testing.assert_close(cell(x), cell(x, torch.zeros(5, dtype=torch.float64)))
    torch.testing.assert_close(cell(x), cell(x[None])[0])


def test_parameter_names_shapes_and_counts():
    I, H, D = 4, 7, 3
    coupled = rhn.RHNCell(I, H, D)
    names = {n: tuple(p.shape) for n, p in coupled.named_parameters()}
    expected = {"weight_ih": (2 * H, I)}
    for k in range(D):
        expected[f"weight_hh_d{k}"] = (2 * H, H)
        expected[f"bias_hh_d{k}"] = (2 * H,)
    assert names == expected
    assert rhn.count_parameters(coupled) == 2 * H * I + D * (2 * H * H + 2 * H)
    free = rhn.RHNCell(I, H, D, coupled=False)
    assert rhn.count_parameters(free) == 3 * H * I + D * (3 * H * H + 3 * H)
    net = rhn.RHN(I, H, D, num_layers=2)
    per_layer = D * (2 * H * H + 2 * H)
    assert rhn.count_parameters(net) == 2 * H * I + 2 * H * H + 2 * per_layer


@pytest.mark.parametrize("bias", [-2.0, -4.0, 0.5])
def test_transform_bias_initialisation(bias):
    H = 5
    for coupled in (True, False):
        cell = rhn.RHNCell(2, H, 3, coupled=coupled, transform_bias=bias)
        for k in range(3):
            b = cell.recurrent_bias(k).detach()
            assert torch.all(b[:H] == 0)
            assert torch.all(b[H : 2 * H] == bias)
            if not coupled:
                assert torch.all(b[2 * H :] == -bias)


def test_init_scale_bounds_weights():
    cell = rhn.RHNCell(10, 20, 2, init_scale=0.04)
    for p in (cell.weight_ih, cell.weight_hh_d0, cell.weight_hh_d1):
        assert p.abs().max() <= 0.04
        assert p.abs().max() > 0.03  # drawn from the whole range
    default = rhn.RHNCell(10, 16, 1)
    assert default.weight_hh_d0.abs().max() <= 1 / math.sqrt(16)


def test_closed_transform_gate_carries_state():
    # With a very negative transform bias t ~ 0 and c = 1 - t ~ 1: s_new ~ s.
    cell = rhn.RHNCell(3, 4, 3, transform_bias=-40.0).double()
    s = torch.randn(2, 4, dtype=torch.float64)
    torch.testing.assert_close(cell(torch.randn(2, 3).double(), s), s)


def test_rhn_equals_loop_over_its_cells():
    net = rhn.RHN(3, 5, 2, num_layers=2).double()
    x = torch.randn(7, 4, 3, dtype=torch.float64)
    out, state = net(x)
    s = [torch.zeros(4, 5, dtype=torch.float64) for _ in range(2)]
    outs = []
    for x_t in x:
        s[0] = net.cells[0](x_t, s[0])
        s[1] = net.cells[1](s[0], s[1])
        outs.append(s[1])
    torch.testing.assert_close(out, torch.stack(outs))
    torch.testing.assert_close(state, torch.stack(s))


@pytest.mark.parametrize("num_layers", [1, 3])
def test_state_continuation(num_layers):
    net = rhn.RHN(3, 6, 2, num_layers=num_layers).double()
    x = torch.randn(9, 2, 3, dtype=torch.float64)
    out, state = net(x)
    out1, state1 = net(x[:4])
    out2, state2 = net(x[4:], state1)
    torch.testing.assert_close(torch.cat([out1, out2]), out)
    torch.testing.assert_close(state2, state)


def test_batch_first_and_unbatched_agree():
    torch.manual_seed(1)
    net = rhn.RHN(3, 5, 2, num_layers=2).double()
    bf = rhn.RHN(3, 5, 2, num_layers=2, batch_first=True).double()
    bf.load_state_dict(net.state_dict())
    x = torch.randn(6, 4, 3, dtype=torch.float64)  # (T, B, I)
    out, state = net(x)
    out_bf, state_bf = bf(x.transpose(0, 1))
    torch.testing.assert_close(out_bf, out.transpose(0, 1))
    torch.testing.assert_close(state_bf, state)
    out_u, state_u = net(x[:, 1])  # (T, I)
    torch.testing.assert_close(out_u, out[:, 1])
    torch.testing.assert_close(state_u, state[:, 1])
    h0 = torch.randn(2, 5, dtype=torch.float64)
    out_u, _ = net(x[:, 1], h0)
    out_b, _ = net(x[:, 1:2], h0[:, None])
    torch.testing.assert_close(out_u, out_b[:, 0])


@pytest.mark.parametrize("coupled", [True, False])
def test_gradcheck(coupled):
    net = rhn.RHN(2, 3, 2, num_layers=2, coupled=coupled).double()
    x = torch.randn(4, 2, 2, dtype=torch.float64, requires_grad=True)
    s0 = torch.randn(2, 2, 3, dtype=torch.float64, requires_grad=True)
    params = tuple(net.parameters())

    names = [n for n, _ in net.named_parameters()]

    def f(x, s0, *ps):
        return torch.func.functional_call(
            net, dict(zip(names, ps, strict=True)), (x, s0)
        )

    assert torch.autograd.gradcheck(f, (x, s0, *params))


class TestVariationalDropout:
    def make(self, **rates):
        torch.manual_seed(0)
        return rhn.RHN(4, 6, 2, num_layers=2, **rates).double()

    def test_output_mask_is_constant_over_time(self):
        net = self.make(output_dropout=0.5)
        x = torch.randn(20, 3, 4, dtype=torch.float64)
        out, _ = net(x)
        zero = out == 0  # (T, B, H)
        assert zero.any()
        assert torch.equal(zero, zero[:1].expand_as(zero))

    def test_input_mask_is_drawn_once_per_sequence(self):
        net = rhn.RHN(4, 6, 2, input_dropout=0.5).double()
        x = torch.randn(12, 3, 4, dtype=torch.float64)
        torch.manual_seed(5)
        out, _ = net(x)
        torch.manual_seed(5)
        mask = torch.empty(3, 4, dtype=torch.float64).bernoulli_(0.5).div_(0.5)
        net.eval()
        torch.testing.assert_close(out, net(x * mask)[0])

    def test_state_mask_is_drawn_once_per_sequence(self):
        net = rhn.RHN(4, 6, 3, state_dropout=0.5).double()
        x = torch.randn(10, 3, 4, dtype=torch.float64)
        torch.manual_seed(7)
        out, _ = net(x)
        torch.manual_seed(7)
        mask = torch.empty(3, 6, dtype=torch.float64).bernoulli_(0.5).div_(0.5)
        s = torch.zeros(3, 6, dtype=torch.float64)
        cell = net.cells[0]
        outs = []
        for x_t in x:
            s = cell.step(x_t @ cell.weight_ih.T, s, mask)
            outs.append(s)
        torch.testing.assert_close(out, torch.stack(outs))

    def test_eval_turns_dropout_off(self):
        net = self.make(input_dropout=0.3, state_dropout=0.3, output_dropout=0.3)
        x = torch.randn(8, 2, 4, dtype=torch.float64)
        net.eval()
        out_a, _ = net(x)
        out_b, _ = net(x)
        torch.testing.assert_close(out_a, out_b)
        plain = rhn.RHN(4, 6, 2, num_layers=2).double()
        plain.load_state_dict(net.state_dict())
        torch.testing.assert_close(out_a, plain(x)[0])
        net.train()
        assert not torch.allclose(net(x)[0], out_a)

    def test_masks_differ_between_sequences(self):
        net = self.make(output_dropout=0.5)
        x = torch.randn(5, 2, 4, dtype=torch.float64)
        assert not torch.equal(net(x)[0] == 0, net(x)[0] == 0)


def test_highway_layer():
    layer = rhn.Highway(5, activation="tanh", transform_bias=-3.0).double()
    assert torch.all(layer.bias[5:] == -3.0)
    x = torch.randn(4, 2, 5, dtype=torch.float64)
    W, b = layer.weight.detach(), layer.bias.detach()
    h = torch.tanh(x @ W[:5].T + b[:5])
    t = torch.sigmoid(x @ W[5:].T + b[5:])
    torch.testing.assert_close(layer(x), h * t + (1 - t) * x)
    torch.testing.assert_close(layer.gate(x), t)
    closed = rhn.Highway(5, transform_bias=-50.0).double()
    torch.testing.assert_close(closed(x), x)
