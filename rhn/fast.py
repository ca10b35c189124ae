r"""A fast RHN layer: the same function as the plain loop, with less overhead.

:meth:`rhn.RHN._run_layer` runs one layer as the equations read: for every time
step and every micro-layer, a matrix product, a ``tanh``, a ``sigmoid`` and a few
element-wise products, each recorded by autograd. At the sizes of the book
(``B <= 128``, ``H = 256``) most of the time goes to *overhead*, not arithmetic:
launching many small operations, recording the autograd graph for each, and
running its many small backward nodes. :func:`run_layer` computes the same
outputs and gradients (to float rounding) with a few changes, each measured in
the chapter "Making it fast":

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

Limitations: the backward is not itself differentiable (it is
``once_differentiable``), so higher-order gradients and ``torch.func``
transforms need ``RHN(..., impl="loop")``; :func:`supported` says when
:class:`rhn.RHN` falls back to the loop by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

if TYPE_CHECKING:  # the cell type only; cells.py imports this module
    from .cells import RHNCell

__all__ = ["RHNLayerFunction", "rhn_layer", "run_layer", "supported"]


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
    """
    T, B, GH = x_proj.shape
    H = s0.shape[-1]
    D = len(weights)
    G = GH // H
    # Scale the rows of the H block by 2 so that one sigmoid gives
    # sigmoid(2 a_H) = (tanh(a_H) + 1) / 2 next to the gates.
    scale = _gate_scale(H, G, 2.0, x_proj)
    w_t = [(w * scale[:, None]).t() for w in weights]  # (H, G*H) each
    b_s = [b * scale for b in biases]
    # One buffer per micro-layer, contiguous over (T, B): the rows that the
    # backward stacks into one weight-gradient product are adjacent in memory.
    S = [x_proj.new_empty(T + 1, B, H)]
    # micro-layer 0 starts from the input projection; out= keeps the buffer
    # contiguous even when x_proj is not (batch_first inputs)
    Y = [torch.mul(x_proj, scale, out=x_proj.new_empty(T, B, GH))]
    if keep:
        S += [x_proj.new_empty(T + 1, B, H) for _ in range(D - 1)]
        # the biases of all steps in one operation each, so that every step
        # adds its product in place
        Y += [b.expand(T, B, GH).contiguous() for b in b_s]
        s_views = [x.unbind(0) for x in S]
        y_steps = Y
    else:
        # two scratch states, alternating, so that no update reads its output
        scratch = [x_proj.new_empty(B, H), x_proj.new_empty(B, H)]
        s_views = [S[0].unbind(0)] + [[scratch[k % 2]] * T for k in range(1, D)]
        y_steps = Y + [x_proj.new_empty(B, GH).expand(T, B, GH)] * (D - 1)
    # views of every step and gate block, made once (cheaper than slicing)
    y_views = [y.unbind(0) for y in y_steps]
    yh_views = [y[..., :H].unbind(0) for y in y_steps]
    yt_views = [y[..., H : 2 * H].unbind(0) for y in y_steps]
    yc_views = [y[..., 2 * H :].unbind(0) for y in y_steps]
    s_views[0][0].copy_(s0)
    minus_one = x_proj.new_full((B, H), -1.0)
    h = x_proj.new_empty(B, H)  # scratch: the backward recomputes h from Y
    s_in = x_proj.new_empty(B, H)
    out_views = s_views[0][1:]  # the state after step t is the input of step t+1
    for t in range(T):
        for k in range(D):
            s = s_views[k][t]
            si = s if mask is None else torch.mul(s, mask, out=s_in)
            y = y_views[k][t]  # (B, G*H)
            if keep or k == 0:  # input projection or bias already in place
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
    """Steps per chunk of the backward: about 2048 stacked rows per product."""
    return max(1, min(steps, -(-2048 // batch)))


def _backward(
    grad_out: torch.Tensor | None,
    grad_final: torch.Tensor | None,
    S: list[torch.Tensor],
    Y: list[torch.Tensor],
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    need_weights: bool,
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
    """
    D = len(Y)
    T, B, GH = Y[0].shape
    H = S[0].shape[-1]
    G = GH // H
    bscale = _gate_scale(H, G, 4.0, Y[0])
    w_b = [w * bscale[:, None] for w in weights]  # (G*H, H): z @ w_b = da @ R
    g = grad_final.clone() if grad_final is not None else S[0].new_zeros(B, H)
    back = g.new_empty(B, H)
    n = _chunk_steps(B, T)
    # z of micro-layer 0 is the gradient of x_proj: it gets a full buffer
    grad_x_proj = Y[0].new_empty(T, B, GH)
    z_ring = [grad_x_proj] + [Y[0].new_empty(n, B, GH) for _ in range(D - 1)]
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
                if mask is None:
                    g.addmm_(z, w_b[k])
                else:
                    g.addcmul_(torch.mm(z, w_b[k], out=back), mask)
        if need_weights:
            for k in range(D):
                rows = (z_ring[k][start:stop] if k == 0 else z_ring[k][:m]).view(
                    m * B, GH
                )
                s_in = S[k][start:stop]
                if mask is not None:
                    s_in = s_in * mask
                # all steps of the chunk in one (G*H, rows) @ (rows, H) product
                grad_w[k].addmm_(rows.t(), s_in.reshape(m * B, H))
                if k > 0:  # b_0 is folded into x_proj
                    grad_b[k - 1].add_(rows.sum(0))
    for gw in grad_w:
        gw.mul_(bscale[:, None])
    for gb in grad_b:
        gb.mul_(bscale)
    return grad_x_proj.mul_(bscale), g, grad_w, grad_b


class RHNLayerFunction(torch.autograd.Function):
    r"""One RHN layer over a whole sequence as a single autograd node.

    ``apply(x_proj, s0, mask, coupled, *weights, *biases)`` with ``x_proj``
    ``= W x + b_0`` of shape ``(T, B, G*H)``, ``s0`` ``(B, H)``, ``mask``
    ``(B, H)`` or ``None``, the ``D`` recurrent weights ``(G*H, H)`` and the
    ``D - 1`` biases of micro-layers ``1..D-1``. Returns ``(output, final)``:
    the states after every step ``(T, B, H)`` and the last one ``(B, H)``.
    """

    @staticmethod
    def forward(
        ctx: Any,
        x_proj: torch.Tensor,
        s0: torch.Tensor,
        mask: torch.Tensor | None,
        coupled: bool,
        *params: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        D = (len(params) + 1) // 2
        weights, biases = list(params[:D]), list(params[D:])
        S, Y = _forward(x_proj, s0, mask, coupled, weights, biases, keep=True)
        ctx.coupled = coupled
        ctx.depth = D
        ctx.save_for_backward(mask, *weights, *S, *Y)
        # The output is a slab of the saved state buffer S[0]; a copy (cheap
        # next to the loop) lets the caller modify it in place, as with the
        # plain loop, without corrupting what the backward reads.
        return S[0][1:].clone(), S[0][-1].clone()

    @staticmethod
    @once_differentiable
    def backward(
        ctx: Any, grad_out: torch.Tensor, grad_final: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        D = ctx.depth
        mask, *rest = ctx.saved_tensors
        weights, S, Y = (rest[i * D : (i + 1) * D] for i in range(3))
        need_weights = any(ctx.needs_input_grad[4:])
        grad_x_proj, grad_s0, grad_w, grad_b = _backward(
            grad_out, grad_final, S, Y, mask, ctx.coupled, weights, need_weights
        )
        if not need_weights:
            grad_w, grad_b = [None] * D, [None] * (D - 1)
        return (grad_x_proj, grad_s0, None, None, *grad_w, *grad_b)


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
        final state ``(B, H)``. Differentiable with respect to ``x_proj``,
        ``s0``, ``weights`` and ``biases``.
    """
    tensors = [x_proj, s0, *weights, *biases]
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        output, final = RHNLayerFunction.apply(
            x_proj, s0, state_mask, coupled, *weights, *biases
        )
        return output, final
    with torch.no_grad():
        S, _ = _forward(x_proj, s0, state_mask, coupled, weights, biases, keep=False)
    return S[0][1:], S[0][-1]


def run_layer(
    cell: RHNCell,
    x: torch.Tensor,
    s: torch.Tensor,
    state_mask: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The fast drop-in for :meth:`rhn.RHN._run_layer`: same arguments, same result.

    ``x`` is the layer input ``(T, B, I)``, ``s`` the initial state ``(B, H)``.
    The input projection of all steps, with micro-layer 0's bias, is one
    matrix product recorded by autograd; the recurrence is
    :func:`rhn_layer`.
    """
    depth = cell.depth
    x_proj = F.linear(x, cell.weight_ih, cell.recurrent_bias(0))  # (T, B, G*H)
    weights = [cell.recurrent_weight(k) for k in range(depth)]
    biases = [cell.recurrent_bias(k) for k in range(1, depth)]
    return rhn_layer(
        x_proj, s, weights, biases, coupled=cell.coupled, state_mask=state_mask
    )
