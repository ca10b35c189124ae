r"""A fast RHN layer: the same function as the plain loop, with less overhead.

The plain loop (``RHN(impl="loop")``) runs one layer as the equations read:
for every time step and every micro-layer, a matrix product, a ``tanh``, a
``sigmoid`` and a few element-wise products, each recorded by autograd. At the
sizes of the book (``B <= 128``, ``H = 256``) most of the time goes to
*overhead*, not arithmetic: launching many small operations, recording the
autograd graph for each, and running its many small backward nodes.
:func:`rhn_layer` computes the same outputs and gradients (to float rounding)
with a few changes, each measured in the chapter "Making it fast":

1. **One autograd node per layer.** :class:`RHNLayerFunction` is a
   :class:`torch.autograd.Function`. Its forward runs the loop with autograd
   off and keeps only what the backward needs, in preallocated contiguous
   buffers, one per micro-layer ``k``: the states ``S[k]`` (``(T+1, B, H)``)
   and the sigmoid activations ``Y[k]`` (``(T, B, G*H)``).
2. **A hand-written backward with deferred weight gradients.** The reverse
   loop computes only what must be sequential, the gradient of the state
   (one small matrix product per micro-layer and step). The pre-activation
   gradients are kept, and the weight gradients are formed from them by a
   few large matrix products over stacked ``(steps * B)`` rows (chunks of
   about 2048 rows), instead of ``T`` small ones. The element-wise factors
   of a whole chunk are also computed up front, so that each micro-layer
   step is three operations: ``z = g q``, ``g c`` and ``g += z R``.
3. **Cheap, contiguous element-wise work.** ``tanh(a) = 2 sigmoid(2a) - 1``:
   the rows of the ``H`` block of the weights are scaled by 2 once per call, so
   a single in-place ``sigmoid`` over the contiguous ``(B, G*H)`` block gives
   every gate; ``torch.lerp`` makes the coupled update
   ``s + t (h - s)`` one operation; results go straight into the buffers with
   ``out=`` and in-place operations, so the loop allocates almost nothing.

Everything is plain PyTorch, so the same code runs on CUDA (where launch
overhead matters even more; there is no CUDA-specific kernel here).

**Mixed precision.** Under ``torch.autocast`` (float16 or bfloat16) with
float32 parameters, the matrix products run in the low dtype, as they do in the
plain loop under autocast: the input projection ``W x + b_0`` (autocast's own
``F.linear``), every recurrent product ``R_k s`` and, in the backward, the
state-gradient and weight-gradient products. Everything else stays float32:
the pre-activations (a low-precision product is added into a float32 buffer),
the gates, the state update, the carried state and the returned outputs, the
saved buffers, the state gradient and the sums of the weight gradients. The
plain loop also runs its gates and rounds its gradients in the low dtype, so
the two agree to a few rounding units of the low dtype, not bit for bit
(``tests/test_fast.py`` says how close).

**Higher-order gradients.** The hand-written backward is a sequence of
in-place operations that autograd cannot differentiate. When a backward is
asked to build a graph (``create_graph=True``, e.g. for a gradient penalty),
the layer is recomputed with the differentiable :func:`reference_layer` and
differentiated by autograd, so gradients of every order are exact (and as
slow as the loop). ``torch.func`` transforms cannot trace the custom
backward: :func:`supported` says when :class:`rhn.RHN` falls back to the loop
by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from ._amp import autocast_dtype
from ._amp import autocast_off as _autocast_off

__all__ = [
    "RHNLayerFunction",
    "autocast_dtype",
    "reference_layer",
    "rhn_layer",
    "supported",
]


def supported() -> bool:
    """Whether the fast path can run now.

    ``False`` inside ``torch.func`` transforms (``vmap``, ``jacrev``, ...),
    which cannot trace through the hand-written backward; :class:`rhn.RHN`
    then uses the plain loop, which gives the same values.
    """
    active = getattr(torch._C._functorch, "_are_functorch_transforms_active", None)
    if active is None:  # older torch: the check lives elsewhere
        active = getattr(torch._C, "_are_functorch_transforms_active", None)
    return not (active is not None and active())


def _gate_scale(
    hidden_size: int, gates: int, h_factor: float, like: torch.Tensor
) -> torch.Tensor:
    """A ``(G*H,)`` vector that is ``h_factor`` on the ``H`` block and 1 elsewhere."""
    scale = like.new_ones(gates * hidden_size)
    scale[:hidden_size] = h_factor
    return scale


def _forward(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    keep: bool,
    low: torch.dtype | None = None,
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The forward loop without autograd.

    ``x_proj`` already holds ``W x + b_0`` for every step, ``(T, B, G*H)``;
    ``biases`` are those of micro-layers ``1..D-1``. Returns the lists ``S``
    and ``Y`` of per-micro-layer buffers: ``S[k]`` ``(T+1, B, H)`` holds the
    state entering micro-layer ``k`` at every step (``S[0][t+1]`` is the
    output of step ``t``, ``S[0][0]`` the initial state) and ``Y[k]``
    ``(T, B, G*H)`` the activations ``[sigmoid(2 a_H); t (; c)]``. Without
    ``keep`` (inference) only ``S[0]`` is a full buffer; every other
    micro-layer reuses one scratch block and ``Y`` is empty.

    ``low`` (``None`` or a 16-bit dtype, under autocast) is the precision of
    the recurrent matrix products; the buffers, the element-wise work and the
    carried state keep the dtype of ``weights`` (see :func:`rhn_layer`).
    """
    T, B, GH = x_proj.shape
    H = s0.shape[-1]
    D = len(weights)
    G = GH // H
    work = {"dtype": weights[0].dtype, "device": x_proj.device}
    # Scale the rows of the H block by 2 so that one sigmoid gives
    # sigmoid(2 a_H) = (tanh(a_H) + 1) / 2 next to the gates.
    scale = _gate_scale(H, G, 2.0, weights[0])
    w_t = [(w * scale[:, None]).t() for w in weights]  # (H, G*H) each
    if low is not None:  # rounded once per call, as autocast's weight cache does
        w_t = [w.to(low) for w in w_t]
        s_low = torch.empty(B, H, dtype=low, device=x_proj.device)
        p_low = torch.empty(B, GH, dtype=low, device=x_proj.device)
    b_s = [b * scale for b in biases]
    # One buffer per micro-layer, contiguous over (T, B): the rows that the
    # backward stacks into one weight-gradient product are adjacent in memory.
    S = [torch.empty(T + 1, B, H, **work)]
    # micro-layer 0 starts from the input projection; out= keeps the buffer
    # contiguous even when x_proj is not (batch_first inputs), and widens a
    # low-precision projection to the working dtype
    Y = [torch.mul(x_proj, scale, out=torch.empty(T, B, GH, **work))]
    if keep:
        S += [torch.empty(T + 1, B, H, **work) for _ in range(D - 1)]
        # the biases of all steps in one operation each, so that every step
        # adds its product in place
        Y += [b.expand(T, B, GH).contiguous() for b in b_s]
        s_views = [x.unbind(0) for x in S]
        y_steps = Y
    else:
        # two scratch states, alternating, so that no update reads its output
        scratch = [torch.empty(B, H, **work), torch.empty(B, H, **work)]
        s_views = [S[0].unbind(0)] + [[scratch[k % 2]] * T for k in range(1, D)]
        y_steps = Y + [torch.empty(B, GH, **work).expand(T, B, GH)] * (D - 1)
    # views of every step and gate block, made once (cheaper than slicing)
    y_views = [y.unbind(0) for y in y_steps]
    yh_views = [y[..., :H].unbind(0) for y in y_steps]
    yt_views = [y[..., H : 2 * H].unbind(0) for y in y_steps]
    yc_views = [y[..., 2 * H :].unbind(0) for y in y_steps]
    s_views[0][0].copy_(s0)
    minus_one = torch.full((B, H), -1.0, **work)
    h = torch.empty(B, H, **work)  # scratch: the backward recomputes h from Y
    s_in = torch.empty(B, H, **work)
    out_views = s_views[0][1:]  # the state after step t is the input of step t+1
    for t in range(T):
        for k in range(D):
            s = s_views[k][t]
            y = y_views[k][t]  # (B, G*H)
            in_place = keep or k == 0  # input projection or bias already in y
            if low is not None:
                # round the (masked) state to the low dtype in one operation,
                # multiply in low precision, add into the full-precision y
                if mask is None:
                    s_low.copy_(s)
                else:
                    torch.mul(s, mask, out=s_low)
                torch.mm(s_low, w_t[k], out=p_low)
                if in_place:
                    y.add_(p_low)
                else:
                    torch.add(b_s[k - 1], p_low, out=y)
            else:
                si = s if mask is None else torch.mul(s, mask, out=s_in)
                if in_place:
                    y.addmm_(si, w_t[k])
                else:
                    torch.addmm(b_s[k - 1], si, w_t[k], out=y)
            y.sigmoid_()  # one contiguous block: [sigmoid(2 a_H); t (; c)]
            torch.add(minus_one, yh_views[k][t], alpha=2.0, out=h)  # tanh(a_H)
            s_next = s_views[k + 1][t] if k < D - 1 else out_views[t]
            if coupled:  # s + t (h - s)
                torch.lerp(s, h, yt_views[k][t], out=s_next)
            else:  # h t + s c
                torch.mul(h, yt_views[k][t], out=s_next).addcmul_(s, yc_views[k][t])
    if keep:
        return S, Y
    return S[:1], []


def _chunk_steps(batch: int, steps: int) -> int:
    """Steps per chunk of the backward: about 2048 stacked rows per product.

    An empty batch (``batch == 0``) has no rows at all: one chunk of every step.
    """
    return max(1, min(steps, -(-2048 // max(batch, 1))))


def _backward(
    grad_out: torch.Tensor | None,
    grad_final: torch.Tensor | None,
    S: list[torch.Tensor],
    Y: list[torch.Tensor],
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    need_weights: bool,
    low: torch.dtype | None = None,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    r"""The reverse loop, with the weight gradients deferred to large products.

    ``S``, ``Y`` are the per-micro-layer buffers of :func:`_forward`. Let
    :math:`y = \sigma(a')` be the saved activations, with :math:`a'` the
    pre-activations whose ``H`` block is doubled, :math:`h = 2 y_H - 1` and
    :math:`g` the gradient of the loss with respect to the state leaving a
    micro-layer. The loop writes

    .. math::
        z_H = g \odot t \odot y_H (1 - y_H), \quad
        z_T = g \odot (h - s) \odot t (1 - t) \ \text{(coupled)},

    (uncoupled: :math:`z_T = g \odot h \odot t(1-t)`,
    :math:`z_C = g \odot s \odot c(1-c)`), so that the gradient of the true
    pre-activation is :math:`\partial a = z \odot [4; 1 (; 1)]`, since
    :math:`1 - h^2 = 4 y_H (1 - y_H)`. The state gradient passed back is
    :math:`g \odot c + (\partial a\, R)\odot m` (:math:`m` the state mask).

    The steps are processed in chunks of :func:`_chunk_steps`: per chunk, a
    few large operations form :math:`q` with :math:`z = g \odot q` (e.g.
    :math:`q_H = t\, y_H (1 - y_H)`) and the carry gate :math:`c` of all its
    steps, so that each step needs one broadcast product, one in-place
    product and one matrix product; after the chunk the weight gradients grow
    by one ``(G*H, rows) @ (rows, H)`` product per micro-layer. The chunk
    buffers are reused, so the backward touches little fresh memory.

    With ``low`` (under autocast) ``z`` is stored in the low dtype and the
    matrix products (state gradient, weight gradients) run in it, as the
    backward of an autocast matrix product does; the state gradient ``g``, the
    element-wise factors and the sums over chunks stay in the working dtype.
    ``grad_x_proj`` is returned in the low dtype then.
    """
    D = len(Y)
    T, B, GH = Y[0].shape
    H = S[0].shape[-1]
    G = GH // H
    bscale = _gate_scale(H, G, 4.0, Y[0])
    w_b = [w * bscale[:, None] for w in weights]  # (G*H, H): z @ w_b = da @ R
    z_dtype = Y[0].dtype if low is None else low
    if low is not None:
        w_b = [w.to(low) for w in w_b]
    g = S[0].new_zeros(B, H)
    if grad_final is not None:
        g.copy_(grad_final)
    back = torch.empty(B, H, dtype=z_dtype, device=g.device)
    n = _chunk_steps(B, T)
    # z of micro-layer 0 is the gradient of x_proj: it gets a full buffer
    grad_x_proj = torch.empty(T, B, GH, dtype=z_dtype, device=g.device)
    z_ring = [grad_x_proj] + [
        torch.empty(n, B, GH, dtype=z_dtype, device=g.device) for _ in range(D - 1)
    ]
    q_ring = [Y[0].new_empty(n, B, GH) for _ in range(D)]
    c_ring = [Y[0].new_empty(n, B, H) for _ in range(D)] if coupled else []
    grad_w = [w.new_zeros(w.shape) for w in weights] if need_weights else []
    grad_b = [w.new_zeros(w.shape[0]) for w in weights[1:]] if need_weights else []
    go_views = grad_out.unbind(0) if grad_out is not None else None
    g_gates = g.unsqueeze(1)  # (B, 1, H): g against every gate block at once
    for stop in range(T, 0, -n):
        start = max(0, stop - n)
        m = stop - start
        z_views, zg_views, q_views, c_views = [], [], [], []
        for k in range(D):
            # For all steps of the chunk at once, in a few large operations:
            # q = [t y_H(1-y_H); (h - s) t(1-t)] (uncoupled: [t y_H(1-y_H);
            # h t(1-t); s c(1-c)]) and the carry gate c, so that each step
            # below needs only z = g q, g c and one product.
            y_c, s_c = Y[k][start:stop], S[k][start:stop]
            q_c = torch.addcmul(y_c, y_c, y_c, value=-1.0, out=q_ring[k][:m])
            q_c[..., :H].mul_(y_c[..., H : 2 * H])
            h_c = torch.add(y_c[..., :H], y_c[..., :H]).sub_(1.0)  # h = 2 y_H - 1
            if coupled:
                q_c[..., H:].mul_(h_c.sub_(s_c))
                c_c = torch.sub(1.0, y_c[..., H:], out=c_ring[k][:m])
            else:
                q_c[..., H : 2 * H].mul_(h_c)
                q_c[..., 2 * H :].mul_(s_c)
                c_c = y_c[..., 2 * H :]
            z_c = z_ring[k][start:stop] if k == 0 else z_ring[k][:m]
            z_views.append(z_c.unbind(0))  # (B, G*H) per step
            zg_views.append(z_c.view(m, B, G, H).unbind(0))  # (B, G, H)
            q_views.append(q_c.view(m, B, G, H).unbind(0))
            c_views.append(c_c.unbind(0))
        for i in range(m - 1, -1, -1):
            if go_views is not None:
                g.add_(go_views[start + i])
            for k in range(D - 1, -1, -1):
                torch.mul(g_gates, q_views[k][i], out=zg_views[k][i])
                z = z_views[k][i]
                g.mul_(c_views[k][i])  # the carry path
                if mask is not None:
                    g.addcmul_(torch.mm(z, w_b[k], out=back), mask)
                elif low is not None:  # product in low, sum in full precision
                    g.add_(torch.mm(z, w_b[k], out=back))
                else:
                    g.addmm_(z, w_b[k])
        if need_weights:
            for k in range(D):
                rows = (z_ring[k][start:stop] if k == 0 else z_ring[k][:m]).view(
                    m * B, GH
                )
                s_in = S[k][start:stop]
                if mask is not None:
                    s_in = s_in * mask
                s_in = s_in.reshape(m * B, H)
                # all steps of the chunk in one (G*H, rows) @ (rows, H) product
                if low is None:
                    grad_w[k].addmm_(rows.t(), s_in)
                else:  # product in low, the sum over chunks in full precision
                    grad_w[k].add_(rows.t() @ s_in.to(low))
                if k > 0:  # b_0 is folded into x_proj
                    grad_b[k - 1].add_(rows.sum(0, dtype=grad_b[k - 1].dtype))
    for gw in grad_w:
        gw.mul_(bscale[:, None])
    for gb in grad_b:
        gb.mul_(bscale)
    return grad_x_proj.mul_(bscale), g, grad_w, grad_b


def reference_layer(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    *,
    coupled: bool = True,
    state_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`rhn_layer` as plain differentiable operations, step by step.

    The RHN equations (those of the plain loop), on the arguments of
    :func:`rhn_layer`. Every operation is recorded by autograd, so gradients
    of any order exist; the fast path uses it for double backward.
    """
    H = s0.shape[-1]
    s, outputs = s0, []
    for x_t in x_proj.unbind(0):
        for k, w in enumerate(weights):
            s_in = s if state_mask is None else s * state_mask
            a = F.linear(s_in, w, biases[k - 1] if k > 0 else None)
            if k == 0:
                a = a + x_t  # x_proj holds W x + b_0
            h = torch.tanh(a[..., :H])
            t = torch.sigmoid(a[..., H : 2 * H])
            c = 1.0 - t if coupled else torch.sigmoid(a[..., 2 * H :])
            s = h * t + s * c
        outputs.append(s)
    return torch.stack(outputs), s


class RHNLayerFunction(torch.autograd.Function):
    r"""One RHN layer over a whole sequence as a single autograd node.

    ``apply(x_proj, s0, mask, coupled, low, *weights, *biases)`` with
    ``x_proj`` ``= W x + b_0`` of shape ``(T, B, G*H)``, ``s0`` ``(B, H)``,
    ``mask`` ``(B, H)`` or ``None``, ``low`` the autocast dtype or ``None``,
    the ``D`` recurrent weights ``(G*H, H)`` and the ``D - 1`` biases of
    micro-layers ``1..D-1``. Returns ``(output, final)``: the states after
    every step ``(T, B, H)`` and the last one ``(B, H)``.

    Double backward (``create_graph=True``, e.g. a gradient penalty) is
    supported by recomputing the layer with :func:`reference_layer` and
    differentiating that; for this the node keeps ``x_proj`` and the biases
    as well as the buffers of the fast backward.
    """

    @staticmethod
    def forward(
        ctx: Any,
        x_proj: torch.Tensor,
        s0: torch.Tensor,
        mask: torch.Tensor | None,
        coupled: bool,
        low: torch.dtype | None,
        *params: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return _node_forward(ctx, _forward, x_proj, s0, mask, coupled, low, params)

    @staticmethod
    def backward(
        ctx: Any, grad_out: torch.Tensor, grad_final: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        return _node_backward(ctx, _backward, grad_out, grad_final)


def _node_forward(
    ctx: Any,
    run: Callable[..., tuple[list[torch.Tensor], list[torch.Tensor]]],
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    coupled: bool,
    low: torch.dtype | None,
    params: tuple[torch.Tensor, ...],
) -> tuple[torch.Tensor, torch.Tensor]:
    """The forward of a one-layer autograd node around the loop ``run``.

    ``run`` is :func:`_forward` here or its Triton twin in :mod:`rhn.fused`;
    both take and return the same buffers, so the node's bookkeeping is one.
    """
    D = (len(params) + 1) // 2
    weights, biases = list(params[:D]), list(params[D:])
    with _autocast_off(x_proj.device.type):
        S, Y = run(x_proj, s0, mask, coupled, weights, biases, True, low)
    ctx.coupled = coupled
    ctx.depth = D
    ctx.low = low
    ctx.save_for_backward(x_proj, s0, mask, *params, *S, *Y)
    # The output is a slab of the saved state buffer S[0]; a copy (cheap
    # next to the loop) lets the caller modify it in place, as with the
    # plain loop, without corrupting what the backward reads.
    return S[0][1:].clone(), S[0][-1].clone()


def _node_backward(
    ctx: Any,
    run: Callable[..., tuple[Any, ...]],
    grad_out: torch.Tensor,
    grad_final: torch.Tensor,
) -> tuple[torch.Tensor | None, ...]:
    """The backward of the node of :func:`_node_forward`, with the loop ``run``.

    ``run`` is :func:`_backward` or its Triton twin; a backward that builds a
    graph (``create_graph=True``) goes through :func:`_double_backward`.
    """
    D = ctx.depth
    x_proj, s0, mask, *rest = ctx.saved_tensors
    weights = rest[:D]
    S, Y = rest[2 * D - 1 : 3 * D - 1], rest[3 * D - 1 :]
    if torch.is_grad_enabled():  # create_graph=True: see _double_backward
        return _double_backward(ctx, grad_out, grad_final, x_proj, s0, mask, rest)
    need_weights = any(ctx.needs_input_grad[5:])
    with _autocast_off(x_proj.device.type):
        grad_x_proj, grad_s0, grad_w, grad_b = run(
            grad_out,
            grad_final,
            S,
            Y,
            mask,
            ctx.coupled,
            weights,
            need_weights,
            ctx.low,
        )
    if not need_weights:
        grad_w, grad_b = [None] * D, [None] * (D - 1)
    return (
        grad_x_proj.to(x_proj.dtype),
        grad_s0.to(s0.dtype),
        None,
        None,
        None,
        *grad_w,
        *grad_b,
    )


def _double_backward(
    ctx: Any,
    grad_out: torch.Tensor,
    grad_final: torch.Tensor,
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    rest: list[torch.Tensor],
) -> tuple[torch.Tensor | None, ...]:
    """The backward as a differentiable graph, for ``create_graph=True``.

    The hand-written backward is a fixed sequence of in-place operations that
    autograd cannot differentiate; a gradient of it would silently miss the
    dependence on the weights. Instead the layer is recomputed with
    :func:`reference_layer` (under the same autocast as the forward) and
    differentiated by autograd with ``create_graph=True``: slower, but every
    order of gradient is exact.
    """
    D = ctx.depth
    weights, biases = list(rest[:D]), list(rest[D : 2 * D - 1])
    inputs = [x_proj, s0, *weights, *biases]
    needs = [ctx.needs_input_grad[i] for i in (0, 1)]
    needs += list(ctx.needs_input_grad[5:])
    wanted = [x for x, need in zip(inputs, needs, strict=True) if need]
    device = x_proj.device.type
    amp = (
        torch.autocast(device, dtype=ctx.low)
        if ctx.low is not None
        else _autocast_off(device)
    )
    with amp:
        output, final = reference_layer(
            x_proj, s0, weights, biases, coupled=ctx.coupled, state_mask=mask
        )
    grads = iter(
        torch.autograd.grad(
            (output, final),
            wanted,
            (grad_out, grad_final),
            create_graph=True,
            allow_unused=True,
        )
    )
    full = [next(grads) if need else None for need in needs]
    return (full[0], full[1], None, None, None, *full[2:])


def rhn_layer(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    *,
    coupled: bool = True,
    state_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Run one RHN layer over a sequence from its input projection.

    Args:
        x_proj: ``W x + b_0`` for every step, ``(T, B, G*H)``.
        s0: initial state ``(B, H)``.
        weights: the ``D`` recurrent weights ``R_k``, each ``(G*H, H)``.
        biases: the biases of micro-layers ``1..D-1``, each ``(G*H,)``
            (micro-layer 0's bias is part of ``x_proj``).
        coupled: coupled carry gate ``c = 1 - t`` (default ``True``).
        state_mask: variational-dropout mask on the state where it enters the
            recurrent weights, ``(B, H)``, or ``None`` (default).

    Returns:
        ``(output, state)``: the state after every step ``(T, B, H)`` and the
        final state ``(B, H)``, in the dtype of ``weights``. Differentiable
        (to any order) with respect to ``x_proj``, ``s0``, ``weights`` and
        ``biases``.

    Under ``torch.autocast`` with float32 weights (mixed precision), the
    recurrent matrix products ``R_k s`` run in the autocast dtype (bfloat16 or
    float16), forward and backward, like those of the plain loop; the
    pre-activations, gates, state updates, the carried state and its gradient,
    the saved buffers and the sums of weight gradients over chunks stay in
    float32. ``x_proj`` may be low precision (it is when computed under
    autocast); its gradient comes back in its dtype.
    """
    tensors = [x_proj, s0, *weights, *biases]
    low = autocast_dtype(x_proj.device.type, weights[0].dtype)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        output, final = RHNLayerFunction.apply(
            x_proj, s0, state_mask, coupled, low, *weights, *biases
        )
        return output, final
    with torch.no_grad(), _autocast_off(x_proj.device.type):
        S, _ = _forward(
            x_proj, s0, state_mask, coupled, weights, biases, keep=False, low=low
        )
    return S[0][1:], S[0][-1]
