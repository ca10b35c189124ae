"""Formulas derived in chapters 2, 3 and 4, each checked a second way in float64.

Chapter 2 (ch-shapes): the stacked tanh recurrence and the parameter counts.
Chapter 3 (ch-bptt): the temporal Jacobian, the BPTT product and recursion,
the weight gradient, the norm bound, the spectral-radius inequalities and the
one-step factor of an orthogonal RNN.
Chapter 4 (ch-gershgorin) and its appendix (ch-disc-bounds): the disc reach as
the infinity norm bounding one step, transient growth with every eigenvalue
inside, the mean disc radius, and the exercises on diagonal dominance and on
row and column discs together.
The references are PyTorch itself, autograd and finite differences; nothing
here uses the chapter's code.
"""

import pytest
import torch

import rhn

DT = torch.float64


def stacked_tanh_rnn(x, layers, s0):
    """Eq. (eq-shapes-stacked): layer l reads the output sequence of layer l-1."""
    finals, seq = [], x
    for (W, R, b_ih, b_hh), s in zip(layers, s0, strict=True):
        out = []
        for x_t in seq:
            s = torch.tanh(x_t @ W.T + b_ih + s @ R.T + b_hh)
            out.append(s)
        seq = torch.stack(out)
        finals.append(s)
    return seq, torch.stack(finals)


@pytest.mark.parametrize("num_layers", [1, 3])
def test_stacked_recurrence_is_nn_rnn(num_layers):
    rnn = torch.nn.RNN(3, 5, num_layers, dtype=DT)
    layers = [
        tuple(
            getattr(rnn, f"{n}_l{k}")
            for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )
        for k in range(num_layers)
    ]
    x = torch.randn(9, 4, 3, dtype=DT)
    s0 = torch.randn(num_layers, 4, 5, dtype=DT)
    torch.testing.assert_close(
        stacked_tanh_rnn(x, layers, s0), rnn(x, s0), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    ("name", "blocks"), [("rnn", 1), ("gru", 3), ("lstm", 4), ("rhn", None)]
)
@pytest.mark.parametrize(("I", "H", "N"), [(1, 1, 1), (7, 12, 1), (5, 9, 3)])
def test_parameter_count_formula(name, blocks, I, H, N):
    """Eq. (eq-shapes-params), summed over layers; the RHN at depth 4."""
    D = 4
    expected = 0
    for layer in range(N):
        fan_in = I if layer == 0 else H
        if name == "rhn":
            expected += 2 * H * fan_in + D * (2 * H * H + 2 * H)
        else:
            expected += blocks * (H * fan_in + H * H + 2 * H)
    kw = {"depth": D} if name == "rhn" else {}
    model = rhn.build_model(name, I, H, num_layers=N, **kw)
    assert rhn.count_parameters(model) == expected


def _tanh_rnn(H=6, I=3, gain=2.0):
    model = rhn.RNN(I, H, dtype=DT)
    with torch.no_grad():
        model.rnn.weight_hh_l0.mul_(gain)
        model.rnn.bias_hh_l0.normal_()
    return model


def _fprime(model, x_t, s_prev):
    """tanh'(a_t) for the pre-activation a_t of eq. (eq-bptt-rnn)."""
    r = model.rnn
    a = r.weight_ih_l0 @ x_t + r.bias_ih_l0 + r.weight_hh_l0 @ s_prev + r.bias_hh_l0
    return 1 - torch.tanh(a) ** 2


def _jacobian(model, x_t, s_prev):
    """Eq. (eq-bptt-jacobian) written out: diag(f'(a_t)) R."""
    return torch.diag(_fprime(model, x_t, s_prev)) @ model.rnn.weight_hh_l0


def _trajectory(model, x, s0):
    out, _ = model(x, s0.unsqueeze(0))
    return [s0, *out]  # s_0, ..., s_T


def _final_state(model, x, s, start):
    """s_T as a function of s_start."""
    _, state = model(x[start:], s.reshape(1, -1))
    return state.reshape(-1)


@pytest.mark.parametrize("k", [0, 4, 9])
def test_bptt_jacobian_product_matches_autograd_and_finite_differences(k):
    torch.manual_seed(k)
    T, H = 10, 6
    model = _tanh_rnn(H)
    x = torch.randn(T, 3, dtype=DT)
    states = _trajectory(model, x, torch.randn(H, dtype=DT))
    product = torch.eye(H, dtype=DT)  # eq. (eq-bptt-chain): J_T ... J_{k+1}
    for t in range(T, k, -1):
        product = product @ _jacobian(model, x[t - 1], states[t - 1])
    with torch.no_grad():
        f = lambda s: _final_state(model, x, s, k)  # noqa: E731
        auto = torch.autograd.functional.jacobian(f, states[k].detach())
        eps = 1e-6
        fd = torch.stack(
            [
                (f(states[k] + eps * e) - f(states[k] - eps * e)) / (2 * eps)
                for e in torch.eye(H, dtype=DT)
            ],
            dim=1,
        )
    torch.testing.assert_close(auto, product.detach(), rtol=0, atol=1e-12)
    torch.testing.assert_close(fd, product.detach(), rtol=0, atol=1e-8)


def test_bptt_recursion_gives_state_and_weight_gradients():
    """Eqs. (eq-bptt-grad) and (eq-bptt-weights) against loss.backward()."""
    torch.manual_seed(1)
    T, H = 8, 5
    model = _tanh_rnn(H)
    x = torch.randn(T, 3, dtype=DT)
    s0 = torch.randn(H, dtype=DT, requires_grad=True)
    v = torch.randn(H, dtype=DT)
    out, _ = model(x, s0.unsqueeze(0))
    (out[-1] @ v).backward()
    r = model.rnn
    with torch.no_grad():
        states = [s0.detach(), *out.detach()]
        g = v.clone()  # grad w.r.t. s_T
        grads = {"R": 0, "W": 0, "b": 0}
        for t in range(T, 0, -1):
            delta = _fprime(model, x[t - 1], states[t - 1]) * g  # grad at a_t
            grads["R"] = grads["R"] + torch.outer(delta, states[t - 1])
            grads["W"] = grads["W"] + torch.outer(delta, x[t - 1])
            grads["b"] = grads["b"] + delta
            g = _jacobian(model, x[t - 1], states[t - 1]).T @ g
    torch.testing.assert_close(g, s0.grad, rtol=0, atol=1e-10)
    torch.testing.assert_close(grads["R"], r.weight_hh_l0.grad, rtol=0, atol=1e-10)
    torch.testing.assert_close(grads["W"], r.weight_ih_l0.grad, rtol=0, atol=1e-10)
    torch.testing.assert_close(grads["b"], r.bias_hh_l0.grad, rtol=0, atol=1e-10)
    torch.testing.assert_close(grads["b"], r.bias_ih_l0.grad, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("fprime", "gamma"),
    [
        (lambda a: 1 - torch.tanh(a) ** 2, 1.0),
        (lambda a: torch.sigmoid(a) * (1 - torch.sigmoid(a)), 0.25),
    ],
    ids=["tanh", "sigmoid"],
)
def test_jacobian_norm_bound(fprime, gamma):
    """Eqs. (eq-bptt-bound), (eq-bptt-product-bound) for random R and states."""
    torch.manual_seed(2)
    n, H, steps = 100, 8, 6
    R = torch.randn(n, H, H, dtype=DT) * torch.rand(n, 1, 1, dtype=DT) * 2
    a = torch.randn(n, steps, H, dtype=DT) * 3
    sigma = torch.linalg.matrix_norm(R, ord=2)  # (n,)
    J = fprime(a).unsqueeze(-1) * R.unsqueeze(1)  # (n, steps, H, H)
    norms = torch.linalg.matrix_norm(J, ord=2)  # (n, steps)
    assert (norms <= gamma * sigma[:, None] * (1 + 1e-12)).all()
    # the bound is attained: f'(0) = gamma and J = gamma R at a = 0
    at_zero = fprime(torch.zeros(H, dtype=DT)).unsqueeze(-1) * R
    torch.testing.assert_close(torch.linalg.matrix_norm(at_zero, ord=2), gamma * sigma)
    product = J[:, 0]
    for t in range(1, steps):
        product = J[:, t] @ product
    pn = torch.linalg.matrix_norm(product, ord=2)
    assert (pn <= norms.prod(dim=1) * (1 + 1e-10)).all()
    assert (pn <= (gamma * sigma) ** steps * (1 + 1e-10)).all()


def test_spectral_radius_bounds():
    """Eq. (eq-bptt-spectral): rho(M)^n <= ||M^n|| <= ||M||^n."""
    torch.manual_seed(3)
    M = torch.randn(200, 7, 7, dtype=DT) * torch.rand(200, 1, 1, dtype=DT) * 2
    rho = torch.linalg.eigvals(M).abs().amax(dim=-1)
    sigma = torch.linalg.matrix_norm(M, ord=2)
    for n in (1, 2, 3, 6):
        Mn = torch.linalg.matrix_power(M, n)
        norm_n = torch.linalg.matrix_norm(Mn, ord=2)
        assert (rho**n <= norm_n * (1 + 1e-9)).all()
        assert (norm_n <= sigma**n * (1 + 1e-9)).all()
    # Gelfand: ||M^n||^(1/n) -> rho, so a matrix with rho > 1 makes M^n explode
    big = torch.linalg.matrix_power(M, 200)
    grows = rho > 1.05
    assert grows.any()
    assert (torch.linalg.matrix_norm(big[grows], ord=2) > 1e4).all()


def test_scaled_orthogonal_has_equal_radius_and_norm():
    torch.manual_seed(4)
    Q, _ = torch.linalg.qr(torch.randn(30, 30, dtype=DT))
    for g in (0.5, 1.0, 2.0):
        R = g * Q
        rho = torch.linalg.eigvals(R).abs()
        torch.testing.assert_close(rho, torch.full_like(rho, g))
        torch.testing.assert_close(
            torch.linalg.svdvals(R), torch.full((30,), g, dtype=DT)
        )
        # diag(d) g Q has singular values g |d_i|, so ||J|| = g max |f'|
        d = torch.rand(30, dtype=DT)
        torch.testing.assert_close(
            torch.linalg.svdvals(torch.diag(d) @ R), g * d.sort(descending=True).values
        )


def test_orthogonal_step_multiplies_the_gradient_by_g_times_an_rms_of_fprime():
    """Eq. (eq-bptt-orthogonal-step): one step back with R = g Q, against autograd."""
    torch.manual_seed(5)
    H = 12
    Q, _ = torch.linalg.qr(torch.randn(H, H, dtype=DT))
    for g in (0.5, 1.0, 2.0):
        model = rhn.RNN(3, H, dtype=DT)
        with torch.no_grad():
            model.rnn.weight_hh_l0.copy_(g * Q)
        x_t = torch.randn(3, dtype=DT)
        s_prev = torch.randn(H, dtype=DT).tanh().requires_grad_(True)
        s_t = model(x_t.reshape(1, 1, 3), s_prev.reshape(1, 1, H))[0].reshape(H)
        u = torch.randn(H, dtype=DT)  # the gradient arriving at s^[t]
        (back,) = torch.autograd.grad(s_t @ u, s_prev)  # J^T u
        fp = _fprime(model, x_t, s_prev.detach())
        factor = g * ((fp**2 * u**2).sum() / (u**2).sum()).sqrt()
        torch.testing.assert_close(back.norm() / u.norm(), factor)
        J = _jacobian(model, x_t, s_prev.detach())
        torch.testing.assert_close(torch.linalg.matrix_norm(J, ord=2), g * fp.max())


def test_disc_reach_is_the_infinity_norm_and_bounds_one_step():
    """Appendix (ch-disc-bounds), eq. (eq-gersh-one-step):
    ||J^T u||_1 <= ||J||_inf ||u||_1 and ||J v||_inf <= ||J||_inf ||v||_inf for
    the Jacobian of a tanh RNN step, with J^T u and J v from autograd (vjp and
    jvp), and ||J||_inf <= ||R||_inf."""
    from rhn import analysis

    torch.manual_seed(6)
    H = 10
    for gain in (0.1, 1.0, 3.0):
        model = _tanh_rnn(H, gain=gain)
        x_t = torch.randn(3, dtype=DT)
        s_prev = torch.randn(H, dtype=DT).tanh()
        cell = torch.nn.RNNCell(3, H, dtype=DT)
        cell.load_state_dict({k[:-3]: v for k, v in model.rnn.state_dict().items()})
        step = lambda s, cell=cell, x_t=x_t: cell(x_t, s)  # noqa: E731
        centres, radii = analysis.gershgorin_discs(
            analysis.rnn_temporal_jacobian(model, x_t, s_prev)
        )
        reach = (centres.abs() + radii).max()
        J_auto = torch.autograd.functional.jacobian(step, s_prev)
        torch.testing.assert_close(
            reach, torch.linalg.matrix_norm(J_auto, ord=float("inf"))
        )
        R_inf = torch.linalg.matrix_norm(model.rnn.weight_hh_l0, ord=float("inf"))
        assert reach <= R_inf * (1 + 1e-12)
        for _ in range(20):
            u, v = torch.randn(H, dtype=DT), torch.randn(H, dtype=DT)
            _, back = torch.autograd.functional.vjp(step, s_prev, u)  # J^T u
            _, fwd = torch.autograd.functional.jvp(step, s_prev, v)  # J v
            assert back.abs().sum() <= reach * u.abs().sum() * (1 + 1e-12)
            assert fwd.abs().max() <= reach * v.abs().max() * (1 + 1e-12)
        # attained by the unit vector of the row with the largest absolute sum
        e = torch.zeros(H, dtype=DT)
        e[J_auto.abs().sum(1).argmax()] = 1.0
        _, back = torch.autograd.functional.vjp(step, s_prev, e)
        torch.testing.assert_close(back.abs().sum(), reach)


def test_transient_growth_with_every_eigenvalue_inside():
    """Appendix (ch-disc-bounds): (J^T)^n (1, 0) = (0.95^n, n 0.95^(n-1)) for
    J = [[0.95, 1], [0, 0.95]], which grows for 19 steps although rho(J) = 0.95;
    and two Jacobians with rho = 0.5 each whose product has
    rho = (4.5 + sqrt(20)) / 2."""
    J = torch.tensor([[0.95, 1.0], [0.0, 0.95]], dtype=DT)
    assert torch.linalg.eigvals(J).abs().max().item() == pytest.approx(0.95)
    u = torch.tensor([1.0, 0.0], dtype=DT)
    norms = [1.0]
    for n in range(1, 201):
        u = J.T @ u
        torch.testing.assert_close(
            u, torch.tensor([0.95**n, n * 0.95 ** (n - 1)], dtype=DT)
        )
        norms.append(u.abs().sum().item())
    growing = [b > a for a, b in zip(norms, norms[1:], strict=False)]
    assert all(growing[:19]) and not any(growing[19:])
    assert max(norms) > 7.5 and norms[-1] < 1e-2
    J_a = torch.tensor([[0.5, 2.0], [0.0, 0.5]], dtype=DT)
    rho_ab = torch.linalg.eigvals(J_a @ J_a.T).abs().max()
    torch.testing.assert_close(rho_ab, torch.tensor((4.5 + 20**0.5) / 2, dtype=DT))


def test_mean_gershgorin_radius_of_a_gaussian_matrix():
    """Ch. 4, exercise 2: E r_i = (n - 1) g sqrt(2 / (pi n)), entries N(0, g^2 / n)."""
    gen = torch.Generator().manual_seed(7)
    n, g = 32, 0.7
    R = g / n**0.5 * torch.randn(2000, n, n, generator=gen, dtype=DT)
    radii = R.abs().sum(-1) - torch.diagonal(R, dim1=-2, dim2=-1).abs()
    expected = (n - 1) * g * (2 / (torch.pi * n)) ** 0.5
    assert abs(radii.mean().item() / expected - 1) < 0.005


def test_strictly_diagonally_dominant_matrices_are_invertible():
    """Ch. 4, exercise 1: every eigenvalue has |lambda| >= min_i (|J_ii| - r_i) > 0."""
    gen = torch.Generator().manual_seed(8)
    for n in (2, 5, 17):
        M = torch.randn(500, n, n, generator=gen, dtype=DT)
        radii = M.abs().sum(-1) - torch.diagonal(M, dim1=-2, dim2=-1).abs()
        sign = torch.where(torch.rand(500, n, generator=gen, dtype=DT) < 0.5, -1, 1)
        margin = torch.rand(500, n, generator=gen, dtype=DT) * 0.1 + 1e-3
        diag = sign * (radii + margin)  # |J_ii| > r_i, complex-free, both signs
        M = (
            M
            - torch.diag_embed(torch.diagonal(M, dim1=-2, dim2=-1))
            + torch.diag_embed(diag)
        )
        smallest = torch.linalg.eigvals(M).abs().amin(-1)
        assert (smallest >= margin.amin(-1) * (1 - 1e-9)).all()
        assert (torch.linalg.det(M) != 0).all()


def test_eigenvalues_lie_in_both_unions_of_discs():
    """Appendix (ch-disc-bounds), exercise 1: the example's eigenvalues are
    1 +- sqrt(1.3), and every eigenvalue of a random matrix lies in the row union
    and the column union."""
    J = torch.tensor([[0.0, 3.0], [0.1, 2.0]], dtype=DT)
    lam = torch.linalg.eigvals(J)
    torch.testing.assert_close(
        lam.real.sort().values, torch.tensor([1 - 1.3**0.5, 1 + 1.3**0.5], dtype=DT)
    )
    gen = torch.Generator().manual_seed(9)
    M = torch.randn(300, 6, 6, generator=gen, dtype=DT)
    lam = torch.linalg.eigvals(M)  # (300, 6)
    centres = torch.diagonal(M, dim1=-2, dim2=-1)  # (300, 6)
    for absolute in (M.abs().sum(-1), M.abs().sum(-2)):  # row, then column sums
        radii = absolute - centres.abs()
        dist = (lam[:, :, None] - centres[:, None, :]).abs()  # (300, eig, disc)
        assert (dist <= radii[:, None, :] * (1 + 1e-12) + 1e-12).any(-1).all()
