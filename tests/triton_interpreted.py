"""The Triton kernels of rhn.fused against the loop, in Triton's interpreter.

Run by ``tests/test_fused.py`` in a subprocess with ``TRITON_INTERPRET=1``
set before Triton is imported (Triton decides between compiling and
interpreting when a kernel is defined, so the variable must not leak into the
main test process). Collected directly, without the variable, it skips.
"""

import os

import pytest
import torch

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "runs in a subprocess with TRITON_INTERPRET=1 (tests/test_fused.py)",
        allow_module_level=True,
    )
pytest.importorskip("triton")

import rhn  # noqa: E402
from rhn import fast, fused  # noqa: E402

TOL64 = {"rtol": 1e-10, "atol": 1e-12}


def layer_args(coupled, masked, T=4, B=2, H=3, D=3):
    G = 2 if coupled else 3
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, B, G * H, **dt, requires_grad=True)
    s0 = torch.randn(B, H, **dt, requires_grad=True)
    weights = [torch.randn(G * H, H, **dt).mul(0.5).requires_grad_() for _ in range(D)]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.tensor([[0.0, 2.0, 2.0], [2.0, 2.0, 0.0]], **dt) if masked else None
    return (x_proj, s0, weights, biases), mask


def test_runs_interpreted():
    assert fused.interpreted()


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("masked", [False, True])
def test_layer_matches_reference_float64(coupled, masked):
    args, mask = layer_args(coupled, masked)
    inputs = [args[0], args[1], *args[2], *args[3]]
    results = []
    for layer in (fused.rhn_layer, fast.reference_layer):
        out, final = layer(*args, coupled=coupled, state_mask=mask)
        loss = out.pow(2).sum() + final.sum()
        results.append([out, final, *torch.autograd.grad(loss, inputs)])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, **TOL64)
    with torch.no_grad():  # the inference path keeps no buffers
        out, final = fused.rhn_layer(*args, coupled=coupled, state_mask=mask)
    torch.testing.assert_close(out, results[1][0], **TOL64)


def pair(**kwargs):
    torch.manual_seed(0)
    loop = rhn.RHN(impl="loop", **kwargs)
    with torch.no_grad():
        for cell in loop.cells:
            for k in range(cell.depth):
                cell.recurrent_bias(k).normal_()
    tri = rhn.RHN(impl="triton", **kwargs)
    tri.load_state_dict(loop.state_dict())
    return loop, tri


def run(net, x, state):
    torch.manual_seed(1)  # the same dropout masks
    out, final = net(x, state)
    loss = out.pow(2).sum() + final.sum()
    grads = torch.autograd.grad(loss, [x, state, *net.parameters()])
    return [out, final, *grads]


def rel_err(a, b):
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


@pytest.mark.parametrize("coupled", [True, False])
def test_network_with_dropout_matches_loop(coupled):
    loop, tri = pair(
        input_size=3,
        hidden_size=5,
        depth=2,
        num_layers=2,
        coupled=coupled,
        input_dropout=0.2,
        state_dropout=0.3,
        output_dropout=0.1,
    )
    x = torch.randn(5, 3, 3, requires_grad=True)
    s0 = torch.randn(2, 3, 5, requires_grad=True)
    want, got = run(loop, x, s0), run(tri, x, s0)
    assert (want[0] == 0).any()  # the masks were applied
    for a, b in zip(got, want, strict=True):
        # float32 with a different order of operations (the float64 test
        # above pins the arithmetic to 1e-10)
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # under bfloat16 autocast: float32 state, gradients within 4 eps (see
    # tests/test_fast.py for the tolerance)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want_low, got_low = run(loop, x, s0), run(tri, x, s0)
    eps = torch.finfo(torch.bfloat16).eps
    for a, b in zip(got_low, want_low, strict=True):
        assert a.dtype == torch.float32
        assert rel_err(a, b) < 4 * eps


def test_continuation_double_backward_and_empty_batch():
    loop, tri = pair(input_size=2, hidden_size=4, depth=2, coupled=False)
    x = torch.randn(6, 2, 2, requires_grad=True)
    out, state = tri(x)
    out1, state1 = tri(x[:2])
    out2, state2 = tri(x[2:], state1)
    torch.testing.assert_close(torch.cat([out1, out2]), out)
    torch.testing.assert_close(state2, state)
    # a gradient penalty: second-order gradients equal the loop's
    results = []
    for net in (loop, tri):
        out, final = net(x)
        gx, *gp = torch.autograd.grad(
            out.pow(2).sum(), [x, *net.parameters()], create_graph=True
        )
        penalty = gx.pow(2).sum() + sum(g.pow(2).sum() for g in gp)
        results.append(torch.autograd.grad(penalty, [x, *net.parameters()]))
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="batch size 0"):  # as every path
        tri(torch.randn(6, 0, 2))
    # an empty batch (rhn.RHN rejects it; the layer stays correct)
    (x_proj, s0, weights, biases), _ = layer_args(True, False, B=0)
    out, final = fused.rhn_layer(x_proj, s0, weights, biases)
    assert out.shape == (4, 0, 3) and final.shape == (0, 3)
    # (the zero term keeps every weight in the graph: each gradient is a tensor)
    loss = out.sum() + final.sum() + sum(w.sum() for w in weights) * 0
    grads = torch.autograd.grad(loss, [x_proj, s0, *weights, *biases])
    assert all(not g.any() for g in grads)


def float64_layer(coupled, T, B, H, D, masked, seed=4):
    torch.manual_seed(seed)
    G = 2 if coupled else 3
    dt = {"dtype": torch.float64}
    x_proj = torch.randn(T, B, G * H, **dt, requires_grad=True)
    s0 = torch.randn(B, H, **dt, requires_grad=True)
    weights = [
        torch.randn(G * H, H, **dt).mul(H**-0.5).requires_grad_() for _ in range(D)
    ]
    biases = [torch.randn(G * H, **dt, requires_grad=True) for _ in range(D - 1)]
    mask = torch.randint(0, 2, (B, H)).to(torch.float64) * 2.0 if masked else None
    return (x_proj, s0, weights, biases), mask


# (coupled, T, B, H, D, masked): batch sizes that leave the last program of
# 16 rows partly empty (17, 33) or nearly empty (1); hidden sizes padded to the
# next power of two (20 -> 32, 70 -> 128, with several K-tiles per product);
# one to five micro-layers; both gates; with and without a dropout mask
SIZES = [
    (True, 3, 17, 20, 1, False),
    (False, 3, 17, 20, 2, True),
    (True, 2, 33, 70, 3, True),
    (False, 2, 1, 70, 4, False),
    (True, 2, 5, 16, 5, True),
    (False, 4, 2, 3, 5, True),
]


@pytest.mark.parametrize(("coupled", "T", "B", "H", "D", "masked"), SIZES)
def test_whole_sequence_kernels_match_the_loop_in_float64(coupled, T, B, H, D, masked):
    # outputs, final state and every gradient of the whole-sequence kernels
    # against the differentiable reference, to 1e-10: a wrong row, column,
    # tile, step or micro-layer offset would show here
    args, mask = float64_layer(coupled, T, B, H, D, masked)
    inputs = [args[0], args[1], *args[2], *args[3]]
    results = []
    for layer in (fused.rhn_layer, fast.reference_layer):
        out, final = layer(*args, coupled=coupled, state_mask=mask)
        loss = out.pow(2).sum() + (final * torch.linspace(-1, 1, H)).sum()
        results.append([out, final, *torch.autograd.grad(loss, inputs)])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, **TOL64)
    with torch.no_grad():  # inference: one scratch slab, no saved buffers
        out, final = fused.rhn_layer(*args, coupled=coupled, state_mask=mask)
    torch.testing.assert_close(out, results[1][0], **TOL64)
    torch.testing.assert_close(final, results[1][1], **TOL64)


def test_padding_is_exact_and_undone():
    # H = 20 runs at 32: the padded units stay zero and the gradients of the
    # real ones are those of the unpadded layer (checked above); here the
    # node's saved state is padded and its visible results are not
    assert [fused.padded_size(h) for h in (1, 16, 17, 20, 64, 65, 256)] == [
        16, 16, 32, 32, 64, 128, 256,
    ]  # fmt: skip
    args, mask = float64_layer(True, 3, 2, 20, 2, True)
    out, final = fused.TritonLayerFunction.apply(
        args[0], args[1], mask, True, None, *args[2], *args[3]
    )
    assert out.shape == (3, 2, 20) and final.shape == (2, 20)
    S = out.grad_fn.saved_tensors[-2]
    # (S[k][T] for k > 0, the state entering a micro-layer of a step that
    # does not exist, is never written)
    assert S.shape == (2, 4, 2, 32)
    assert not S[0, :, :, 20:].any() and not S[1:, :3, :, 20:].any()
    assert S[0, :, :, :20].all()


@pytest.mark.parametrize("coupled", [True, False])
def test_bfloat16_products_are_emulated_like_a_tensor_core(coupled):
    # under bfloat16 autocast the kernels multiply bfloat16 operands with
    # float32 sums (in the interpreter: operands rounded, then float32 dots);
    # the result sits within a few bfloat16 rounding units of the float64 loop,
    # and much closer to the fast path, which rounds at the same places
    loop, tri = pair(input_size=3, hidden_size=20, depth=3, coupled=coupled)
    x = torch.randn(7, 17, 3, requires_grad=True)
    s0 = torch.randn(1, 17, 20, requires_grad=True)
    fast_net = rhn.RHN(impl="fast", input_size=3, hidden_size=20, depth=3,
                       coupled=coupled)  # fmt: skip
    fast_net.load_state_dict(tri.state_dict())
    want = run(loop.double(), x.detach().double().requires_grad_(),
               s0.detach().double().requires_grad_())  # fmt: skip
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, near = run(tri, x, s0), run(fast_net, x, s0)
    eps = torch.finfo(torch.bfloat16).eps
    for a, b, c in zip(got, want, near, strict=True):
        assert a.dtype == torch.float32
        assert rel_err(a, b) < 4 * eps
        assert rel_err(a, c) < eps


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_16_bit_model_computes_in_float32_and_stores_16_bits(dtype):
    # a model cast to 16 bits: its state, saved values and gradients are 16-bit
    # buffers; the kernels compute in float32 and round once per store, so the
    # results stay within a few 16-bit rounding errors of the float64 loop
    loop, tri = pair(input_size=3, hidden_size=5, depth=3, coupled=False)
    tri = tri.to(dtype)
    loop = loop.double()
    loop.load_state_dict(tri.state_dict())  # the same (rounded) weights
    x = torch.randn(6, 2, 3).to(dtype)
    s0 = torch.randn(1, 2, 5).to(dtype)
    got = run(tri, x.requires_grad_(), s0.requires_grad_())
    want = run(
        loop,
        x.detach().double().requires_grad_(),
        s0.detach().double().requires_grad_(),
    )
    eps = torch.finfo(dtype).eps
    assert all(g.dtype == dtype for g in got)
    for a, b in zip(got, want, strict=True):
        assert rel_err(a, b) < 6 * eps  # measured: at most 3.6 eps (bf16)
