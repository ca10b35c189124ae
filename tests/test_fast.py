"""The fast RHN layer against the plain per-step loop and against gradcheck."""

import pytest
import torch

import rhn
from rhn import fast


def pair(dtype=torch.float64, **kwargs):
    """A fast RHN and a loop RHN with the same random weights and biases."""
    torch.manual_seed(0)
    loop = rhn.RHN(impl="loop", **kwargs).to(dtype)
    with torch.no_grad():  # random biases, so that every block matters
        for cell in loop.cells:
            for k in range(cell.depth):
                cell.recurrent_bias(k).normal_()
    quick = rhn.RHN(impl="fast", **kwargs).to(dtype)
    quick.load_state_dict(loop.state_dict())
    return loop, quick


def outputs_and_grads(net, x, state, seed=1):
    """Output, final state and the gradients of a random linear loss."""
    torch.manual_seed(seed)  # same dropout masks for both implementations
    out, final = net(x, state)
    g = torch.Generator().manual_seed(2)
    w_out = torch.randn(out.shape, generator=g, dtype=out.dtype)
    w_fin = torch.randn(final.shape, generator=g, dtype=out.dtype)
    loss = (out * w_out).sum() + (final * w_fin).sum()
    inputs = [x, *([state] if state is not None else []), *net.parameters()]
    return [out, final, *torch.autograd.grad(loss, inputs)]


TOL = {torch.float64: {"rtol": 1e-10, "atol": 1e-12}, torch.float32: {}}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("depth", [1, 3])
def test_fast_matches_loop(dtype, coupled, depth):
    loop, quick = pair(dtype, input_size=3, hidden_size=5, depth=depth, coupled=coupled)
    x = torch.randn(9, 4, 3, dtype=dtype, requires_grad=True)
    s0 = torch.randn(1, 4, 5, dtype=dtype, requires_grad=True)
    want = outputs_and_grads(loop, x, s0)
    got = outputs_and_grads(quick, x, s0)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("coupled", [True, False])
def test_fast_matches_loop_with_dropout_and_layers(dtype, coupled):
    rates = {"input_dropout": 0.3, "state_dropout": 0.4, "output_dropout": 0.2}
    loop, quick = pair(
        dtype,
        input_size=3,
        hidden_size=6,
        depth=2,
        num_layers=3,
        coupled=coupled,
        **rates,
    )
    x = torch.randn(8, 5, 3, dtype=dtype, requires_grad=True)
    want = outputs_and_grads(loop, x, None)
    got = outputs_and_grads(quick, x, None)
    assert (want[0] == 0).any()  # the masks were really applied
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, **TOL[dtype])


def test_batch_first_unbatched_and_continuation():
    loop, quick = pair(input_size=2, hidden_size=4, depth=2, num_layers=2)
    x = torch.randn(7, 3, 2, dtype=torch.float64)
    out, state = quick(x)
    torch.testing.assert_close(out, loop(x)[0], **TOL[torch.float64])
    # continuing from the returned state gives the same sequence
    out1, state1 = quick(x[:3])
    out2, state2 = quick(x[3:], state1)
    torch.testing.assert_close(torch.cat([out1, out2]), out)
    torch.testing.assert_close(state2, state)
    # unbatched (T, I) and batch_first (B, T, I)
    out_u, state_u = quick(x[:, 1])
    torch.testing.assert_close(out_u, out[:, 1])
    torch.testing.assert_close(state_u, state[:, 1])
    bf = rhn.RHN(2, 4, 2, num_layers=2, batch_first=True).double()
    bf.load_state_dict(quick.state_dict())
    torch.testing.assert_close(bf(x.transpose(0, 1))[0], out.transpose(0, 1))


def test_gradient_reaches_the_initial_state_through_both_outputs():
    # only the final state in the loss, then only the output sequence
    loop, quick = pair(input_size=2, hidden_size=4, depth=3, num_layers=2)
    x = torch.randn(6, 2, 2, dtype=torch.float64)
    for pick in (lambda o, s: s.sum(), lambda o, s: o.pow(2).sum()):
        grads = []
        for net in (loop, quick):
            s0 = torch.linspace(-1, 1, 16, dtype=torch.float64).view(2, 2, 4)
            s0.requires_grad_()
            grads.append(torch.autograd.grad(pick(*net(x, s0)), s0)[0])
        torch.testing.assert_close(grads[1], grads[0], **TOL[torch.float64])


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("masked", [False, True])
def test_gradcheck_layer(coupled, masked):
    G, H, D = (2 if coupled else 3), 3, 3
    T, B = 5, 2
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, B, G * H, **dt, requires_grad=True)
    s0 = torch.randn(B, H, **dt, requires_grad=True)
    weights = [torch.randn(G * H, H, **dt).mul(0.5).requires_grad_() for _ in range(D)]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.tensor([[0.0, 2.0, 2.0], [2.0, 2.0, 0.0]], **dt) if masked else None

    def f(x_proj, s0, *params):
        return fast.rhn_layer(
            x_proj,
            s0,
            list(params[:D]),
            list(params[D:]),
            coupled=coupled,
            state_mask=mask,
        )

    assert torch.autograd.gradcheck(f, (x_proj, s0, *weights, *biases))


def test_output_can_be_modified_in_place():
    # as with the loop, whose output is not needed by its backward
    loop, quick = pair(input_size=2, hidden_size=3, depth=2)
    x = torch.randn(4, 2, 2, dtype=torch.float64, requires_grad=True)
    grads = []
    for net in (loop, quick):
        out, _ = net(x)
        out.mul_(2.0)
        grads.append(torch.autograd.grad(out.sum(), x)[0])
    torch.testing.assert_close(grads[1], grads[0], **TOL[torch.float64])


def test_several_backward_chunks(monkeypatch):
    # the backward walks the steps in chunks; force several, uneven ones
    monkeypatch.setattr(fast, "_chunk_steps", lambda batch, steps: 3)
    loop, quick = pair(input_size=2, hidden_size=4, depth=2, state_dropout=0.5)
    x = torch.randn(10, 3, 2, dtype=torch.float64, requires_grad=True)
    want = outputs_and_grads(loop, x, None)
    got = outputs_and_grads(quick, x, None)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, **TOL[torch.float64])


def test_inference_path_and_frozen_weights():
    loop, quick = pair(input_size=3, hidden_size=5, depth=3, coupled=False)
    x = torch.randn(6, 2, 3, dtype=torch.float64)
    with torch.no_grad():  # no buffers kept: a different code path
        torch.testing.assert_close(quick(x)[0], loop(x)[0], **TOL[torch.float64])
    for net in (loop, quick):
        net.requires_grad_(False)
    x.requires_grad_()
    gx = [torch.autograd.grad(net(x)[0].sum(), x)[0] for net in (loop, quick)]
    torch.testing.assert_close(gx[1], gx[0], **TOL[torch.float64])


def test_torch_func_falls_back_to_the_loop():
    _, quick = pair(input_size=2, hidden_size=3, depth=2)
    x = torch.randn(4, 2, 2, dtype=torch.float64)
    assert fast.supported()
    seen = []
    torch.func.vmap(lambda v: seen.append(fast.supported()) or v)(torch.zeros(2))
    assert seen == [False]
    jac = torch.func.jacrev(lambda v: quick(v)[0])(x)  # would fail without fallback
    assert jac.shape == (4, 2, 3, 4, 2, 2)


def test_impl_is_checked():
    with pytest.raises(ValueError, match="impl"):
        rhn.RHN(2, 3, 1, impl="cuda")
    with pytest.raises(TypeError, match="impl"):
        rhn.RHN(2, 3, 1, impl=1)
    assert "impl='loop'" in repr(rhn.RHN(2, 3, 1, impl="loop"))


def test_bench_run_and_table():
    import rhn.bench

    result = rhn.bench.run(
        (1, 2), steps=3, input_size=2, hidden_size=4, depth=2, repeats=2, warmup=1
    )
    assert [r["model"] for r in result["results"]] == list(rhn.bench.MODELS) * 2
    assert set(result["ratios"]) == {"1", "2"}
    assert {"loop/fast", "fast/lstm-matched"} <= set(result["ratios"]["1"])
    params = rhn.count_parameters(rhn.RHN(2, 4, 2))
    assert result["params"]["rhn-fast"] == params
    assert result["hidden"]["lstm-matched"] == rhn.matched_hidden_size(
        "lstm", 2, params
    )
    assert result["meta"]["threads"] == torch.get_num_threads()
    assert all(r["median_ms"] > 0 and r["runs"] == 2 for r in result["results"])
    assert "rhn-fast" in rhn.bench.format_table(result)
    with pytest.raises(ValueError, match="models"):
        rhn.bench.run((1,), steps=2, repeats=1, models=("rhn-slow",))


def test_bench_main_writes_json(tmp_path, capsys):
    import json

    import rhn.bench

    out = tmp_path / "bench.json"
    argv = ["--batch", "1", "--steps", "2", "--input-size", "2", "--hidden-size"]
    argv += ["3", "--depth", "1", "--repeats", "1", "--warmup", "0"]
    argv += ["--models", "rhn-loop", "rhn-fast", "--depths", "1", "2"]
    assert rhn.bench.main([*argv, "--out", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["meta"]["device_type"] == "cpu"
    assert [r["depth"] for r in saved["depth_sweep"]] == [1, 1, 2, 2]
    assert "loop/fast" in capsys.readouterr().out


# --- mixed precision -------------------------------------------------------
#
# Under autocast both implementations round the operands of their matrix
# products to the low dtype (unit roundoff u = eps / 2, eps = 2^-7 for
# bfloat16, which keeps 8 significant bits, and 2^-10 for float16). The loop
# also runs its gates and rounds its gradients in the low dtype; the fast path
# keeps those in float32. So neither is exact: each differs from the float32
# result by a few u in norm (measured: up to 1.9 eps between the two for
# bfloat16 with these sizes), while a wrong or missing term gives a relative
# error of order 1. The tests compare norm-wise relative errors against
# 4 eps: loose enough for rounding, 30 times tighter than any real mistake.


def rel_err(a, b):
    """Norm-wise relative error of ``a`` against ``b``, in float64."""
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def amp_case(low, coupled, seed=0):
    kw = dict(
        input_size=3,
        hidden_size=16,
        depth=3,
        num_layers=2,
        coupled=coupled,
        input_dropout=0.2,
        state_dropout=0.3,
        output_dropout=0.1,
    )
    loop, quick = pair(torch.float32, **kw)
    torch.manual_seed(seed)
    x = torch.randn(12, 4, 3, requires_grad=True)
    s0 = torch.randn(2, 4, 16).mul(0.5).requires_grad_()
    full = outputs_and_grads(loop, x, s0)  # float32 reference
    with torch.autocast("cpu", dtype=low):
        want = outputs_and_grads(loop, x, s0)
        got = outputs_and_grads(quick, x, s0)
    return full, want, got, loop, quick, x, s0


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("coupled", [True, False])
def test_autocast_matches_loop(low, coupled):
    full, want, got, *_ = amp_case(low, coupled)
    eps = torch.finfo(low).eps
    assert (want[0] == 0).any()  # dropout masks were applied
    for a, b, f in zip(got, want, full, strict=True):
        # the carried state, the outputs and every gradient stay float32
        assert a.dtype == torch.float32
        assert rel_err(a, b) < 4 * eps
        assert rel_err(a, f) < 4 * eps and rel_err(b, f) < 4 * eps
    # the low precision really ran in both (no silent float32 fallback)
    assert rel_err(got[0], full[0]) > 1e-2 * eps
    assert rel_err(want[0], full[0]) > 1e-2 * eps


def test_autocast_continuation_and_inference():
    *_, quick, x, s0 = amp_case(torch.bfloat16, True)
    quick.eval()  # no dropout: two halves must give the whole sequence
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, state = quick(x, s0)
        out1, state1 = quick(x[:5], s0)
        out2, state2 = quick(x[5:], state1)
        with torch.no_grad():  # the inference path (no saved buffers)
            out_ng, state_ng = quick(x, s0)
    assert state1.dtype == torch.float32  # the carried state stays float32
    torch.testing.assert_close(torch.cat([out1, out2]), out)
    torch.testing.assert_close(state2, state)
    torch.testing.assert_close(out_ng, out)
    torch.testing.assert_close(state_ng, state)


def test_autocast_layer_gradient_dtypes():
    # x_proj computed under autocast is bfloat16; its gradient must be too
    G, H, D, T, B = 2, 4, 2, 3, 2
    x_proj = torch.randn(T, B, G * H).bfloat16().requires_grad_()
    s0 = torch.randn(B, H, requires_grad=True)
    weights = [torch.randn(G * H, H, requires_grad=True) for _ in range(D)]
    biases = [torch.randn(G * H, requires_grad=True) for _ in range(D - 1)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert fast.autocast_dtype("cpu", torch.float32) == torch.bfloat16
        assert fast.autocast_dtype("cpu", torch.float64) is None  # left alone
        out, final = fast.rhn_layer(x_proj, s0, weights, biases)
    assert fast.autocast_dtype("cpu", torch.float32) is None
    grads = torch.autograd.grad(out.sum() + final.sum(), [x_proj, s0, *weights])
    assert [g.dtype for g in grads] == [torch.bfloat16] + [torch.float32] * (D + 1)


def test_autocast_runs_the_recurrent_products_in_low_precision():
    # with a float32 x_proj only the recurrent products can be rounded
    torch.manual_seed(3)
    G, H, D, T, B = 3, 8, 3, 6, 4
    x_proj = torch.randn(T, B, G * H)
    s0 = torch.randn(B, H)
    weights = [torch.randn(G * H, H) * 0.5 for _ in range(D)]
    biases = [torch.randn(G * H) for _ in range(D - 1)]
    args = (x_proj, s0, weights, biases)
    exact = fast.rhn_layer(*args, coupled=False)[0]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = fast.rhn_layer(*args, coupled=False)[0]
        ref = fast.reference_layer(*args, coupled=False)[0]
    eps = torch.finfo(torch.bfloat16).eps
    assert 1e-2 * eps < rel_err(low, exact) < 4 * eps
    assert rel_err(low, ref) < 4 * eps


# --- double backward and empty batches -------------------------------------


@pytest.mark.parametrize("coupled", [True, False])
def test_gradient_penalty_matches_loop(coupled):
    # d/dtheta of |d loss / d x|^2 + loss: a second-order gradient through
    # the layer, which the hand-written backward alone cannot give
    loop, quick = pair(
        input_size=2,
        hidden_size=4,
        depth=2,
        num_layers=2,
        coupled=coupled,
        state_dropout=0.3,
    )
    x = torch.randn(5, 3, 2, dtype=torch.float64, requires_grad=True)
    results = []
    for net in (loop, quick):
        torch.manual_seed(1)
        out, final = net(x)
        loss = out.pow(2).sum() + final.sum()
        gx, *gp = torch.autograd.grad(loss, [x, *net.parameters()], create_graph=True)
        penalty = gx.pow(2).sum() + sum(g.pow(2).sum() for g in gp) + loss
        results.append(torch.autograd.grad(penalty, [x, *net.parameters()]))
    for a, b in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(a, b, **TOL[torch.float64])


@pytest.mark.parametrize("masked", [False, True])
def test_gradgradcheck_layer(masked):
    G, H, D, T, B = 3, 2, 2, 3, 2
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, B, G * H, **dt, requires_grad=True)
    s0 = torch.randn(B, H, **dt, requires_grad=True)
    weights = [torch.randn(G * H, H, **dt).mul(0.5).requires_grad_() for _ in range(D)]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.tensor([[2.0, 0.0], [2.0, 2.0]], **dt) if masked else None

    def f(x_proj, s0, *params):
        return fast.rhn_layer(
            x_proj,
            s0,
            list(params[:D]),
            list(params[D:]),
            coupled=False,
            state_mask=mask,
        )

    assert torch.autograd.gradgradcheck(f, (x_proj, s0, *weights, *biases))


def test_reference_layer_is_the_loop():
    loop, _ = pair(input_size=3, hidden_size=4, depth=3, coupled=False)
    cell = loop.cells[0]
    x = torch.randn(5, 2, 3, dtype=torch.float64)
    s0 = torch.randn(2, 4, dtype=torch.float64)
    x_proj = torch.nn.functional.linear(x, cell.weight_ih, cell.recurrent_bias(0))
    weights = [cell.recurrent_weight(k) for k in range(3)]
    biases = [cell.recurrent_bias(k) for k in range(1, 3)]
    out, final = fast.reference_layer(x_proj, s0, weights, biases, coupled=False)
    want, want_final = loop(x, s0[None])
    torch.testing.assert_close(out, want, **TOL[torch.float64])
    torch.testing.assert_close(final, want_final[0], **TOL[torch.float64])


@pytest.mark.parametrize("impl", ["loop", "fast"])
def test_empty_batch_is_refused_the_same_way_by_every_path(impl):
    # one behaviour for the whole package (rhn._checks.nonempty_batch): a
    # batch of zero sequences is a clear error, never silent empty results
    model = rhn.RHN(3, 4, depth=2, num_layers=2, impl=impl)
    with pytest.raises(ValueError, match="batch size 0"):
        model(torch.randn(6, 0, 3))


@pytest.mark.parametrize("masked", [False, True])
def test_empty_batch_gives_empty_outputs_and_zero_gradients(masked):
    # rhn.RHN rejects B = 0 at its entry (a ValueError); the layer itself
    # stays correct: empty outputs, zero gradients, like the reference loop
    G, H, D, T = 2, 4, 3, 5
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, 0, G * H, **dt, requires_grad=True)
    s0 = torch.randn(0, H, **dt, requires_grad=True)
    weights = [torch.randn(G * H, H, **dt, requires_grad=True) for _ in range(D)]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.ones(0, H, **dt) if masked else None
    inputs = [x_proj, s0, *weights, *biases]
    results = []
    for layer in (fast.rhn_layer, fast.reference_layer):
        out, final = layer(x_proj, s0, weights, biases, state_mask=mask)
        assert out.shape == (T, 0, H) and final.shape == (0, H)
        # (the zero term keeps every weight in the graph: each gradient is a tensor)
        loss = out.sum() + final.sum() + sum(w.sum() for w in weights) * 0
        results.append(torch.autograd.grad(loss, inputs))
    for a, b in zip(*results, strict=True):
        assert a.shape == b.shape and not a.any() and not b.any()
    with torch.no_grad():
        assert fast.rhn_layer(x_proj, s0, weights, biases)[0].shape == (T, 0, H)


def test_bench_gpu_variants_logic():
    # what can be checked without a GPU: names, defaults, ratios, errors
    import importlib.util

    import rhn.bench as bench

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert bench.default_models(cpu) == bench.MODELS
    on_cuda = bench.default_models(cuda)
    assert {"rhn-loop", "rhn-fast", "rhn-graphed", "lstm-matched"} <= set(on_cuda)
    has_triton = importlib.util.find_spec("triton") is not None
    assert ("rhn-triton" in on_cuda) == has_triton
    graphed = bench.build("rhn-graphed", 2, 3, 2, cpu)
    assert graphed.impl == "fast"
    if has_triton:
        assert bench.build("rhn-triton", 2, 3, 2, cpu).impl == "triton"
    with pytest.raises(ValueError, match=r"rhn-graphed.*CUDA only"):
        bench.run((1,), steps=2, repeats=1, models=("rhn-graphed",))
    with pytest.raises(RuntimeError, match="CUDA"):
        bench._step_fn("rhn-graphed", graphed, torch.randn(2, 1, 2))()
    median = {"rhn-loop": 12.0, "rhn-fast": 4.0, "rhn-triton": 2.0}
    median |= {"rhn-graphed": 1.0, "lstm-matched": 0.5}
    ratios = bench._ratios(median)
    assert ratios["loop/fast"] == 3.0 and ratios["loop/graphed"] == 12.0
    assert ratios["fast/triton"] == 2.0 and ratios["graphed/lstm-matched"] == 2.0
    assert ratios["triton/lstm-matched"] == 4.0


def test_bench_cli_rejects_gpu_models_on_the_cpu(capsys):
    import rhn.bench

    argv = ["--models", "rhn-triton", "--batch", "1", "--steps", "2", "--out", "-"]
    assert rhn.bench.main(argv) == 2
    err = capsys.readouterr().err
    assert "CUDA only" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("masked", [False, True])
def test_low_precision_branches_are_exact_without_rounding(coupled, masked):
    # The autocast code path has its own branches (state rounded into a
    # separate buffer, product added into y, products of z in the low dtype,
    # weight gradients summed per chunk). The 4 eps tests above cannot see a
    # term that is wrong by less than that; here the same branches run with
    # float64 as the "low" dtype, so no rounding happens and they must match
    # the reference to float64 precision (and pass gradcheck).
    G, H, D, T, B = (2 if coupled else 3), 3, 3, 5, 2
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, B, G * H, **dt, requires_grad=True)
    s0 = torch.randn(B, H, **dt, requires_grad=True)
    weights = [torch.randn(G * H, H, **dt).mul(0.5).requires_grad_() for _ in range(D)]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.tensor([[0.0, 2.0, 2.0], [2.0, 2.0, 0.0]], **dt) if masked else None

    def low_path(x_proj, s0, *params):
        return fast.RHNLayerFunction.apply(
            x_proj, s0, mask, coupled, torch.float64, *params
        )

    params = (*weights, *biases)
    want = fast.reference_layer(
        x_proj, s0, weights, biases, coupled=coupled, state_mask=mask
    )
    got = low_path(x_proj, s0, *params)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, **TOL[torch.float64])
    assert torch.autograd.gradcheck(low_path, (x_proj, s0, *params))
    with torch.no_grad():  # the inference branch: biases added out of place
        S, _ = fast._forward(
            x_proj, s0, mask, coupled, weights, biases, keep=False, low=torch.float64
        )
    torch.testing.assert_close(S[0][1:], want[0], **TOL[torch.float64])
