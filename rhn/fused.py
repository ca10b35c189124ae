r"""An RHN layer whose element-wise work is one Triton kernel per micro-layer.

The fast path (:mod:`rhn.fast`) issues a matrix product and three or four
element-wise operations per micro-layer and step, each a kernel launch on a
GPU. Here the element-wise work of a micro-layer is *one* kernel, written in
Triton, forward and backward; the matrix products stay with PyTorch (cuBLAS):

- forward, per micro-layer ``k`` and step: ``p = s_in R_k^T`` (one product),
  then ``_micro_forward_kernel`` adds the input projection or bias,
  computes :math:`h = \tanh(a_H)`, :math:`t = \sigma(a_T)`, :math:`c`, the new
  state :math:`s' = h t + s c`, saves ``[h; t (; c)]`` for the backward, and
  writes the masked state ``s' m`` that the next product reads, already in
  that product's dtype;
- backward, per micro-layer and step: ``back = z R_k`` (one product), then
  ``_micro_backward_kernel`` finishes the state gradient
  :math:`g = g_c + m \odot \text{back}` (plus the output gradient at a step
  boundary), forms the pre-activation gradient ``z`` and the carry product
  :math:`g_c = g \odot c` for the next micro-layer down.

The weight gradients are one large product per micro-layer over all steps,
as in :mod:`rhn.fast`. Two launches per micro-layer and step, in each
direction, against four or five in the fast path's forward and three or four
in its backward (more with a state mask or under autocast).

The kernels compute in the dtype of the state and the parameters, whatever
the dtype of the products they read, except that 16-bit values (a model in
bfloat16 or float16) are computed in float32 (Triton's ``sigmoid`` takes
float32 and float64 only, and sums are steadier so) and cast to each buffer's
dtype on store. Under ``torch.autocast`` the products run in the autocast
dtype and the kernels in float32, reading and writing both dtypes; the state
and the saved buffers stay float32 (as in :mod:`rhn.fast`). Double backward
recomputes the layer with :func:`rhn.fast.reference_layer`.

Triton is an optional dependency (``pip install "rhn[triton]"``). The kernels
run on CUDA tensors; with the environment variable ``TRITON_INTERPRET=1`` set
*before* Triton is imported, Triton's interpreter runs them on CPU tensors
(slowly), which is how the tests check them without a GPU.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import torch

from . import devices, fast

try:
    import triton
    import triton.language as tl
except ImportError:  # the optional dependency is missing
    triton = None

__all__ = ["available", "interpreted", "TritonLayerFunction", "rhn_layer"]

BLOCK = 1024
"""Elements of the ``(B, H)`` block handled by one Triton program."""


def available() -> bool:
    """Whether Triton can be imported (without importing it)."""
    return triton is not None or importlib.util.find_spec("triton") is not None


def interpreted() -> bool:
    """Whether the kernels run in Triton's interpreter (``TRITON_INTERPRET=1``).

    Fixed when this module is first imported, as Triton decides it when a
    kernel is defined.
    """
    return _INTERPRETED


_INTERPRETED = triton is not None and os.environ.get("TRITON_INTERPRET", "0") in (
    "1",
    "true",
    "True",
)


if triton is not None:

    @triton.jit
    def _wide(x):
        # 16-bit values compute in float32 (the dtype test is made at compile time)
        if x.dtype.primitive_bitwidth < 32:
            x = x.to(tl.float32)
        return x

    @triton.jit
    def _micro_forward_kernel(
        p_ptr,  # (B, G*H): s_in R_k^T, any float dtype
        base_ptr,  # (B, G*H) x_proj of this step, or (G*H,) bias
        base_row,  # row stride of base: G*H, or 0 for a bias
        s_ptr,  # (B, H) state entering the micro-layer
        mask_ptr,  # (B, H) state mask (read only with HAS_MASK)
        s_out_ptr,  # (B, H) state leaving the micro-layer
        s_in_ptr,  # (B, H) s_out * mask, in the dtype of the next product
        y_ptr,  # (B, G*H) saved [h; t (; c)] (written only with SAVE)
        n,  # B * H
        H,
        G: tl.constexpr,
        COUPLED: tl.constexpr,
        HAS_MASK: tl.constexpr,
        SAVE: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        valid = offs < n
        b = offs // H
        row = b * (G * H) + offs % H  # the H block of this element's row
        brow = b * base_row + offs % H
        s = _wide(tl.load(s_ptr + offs, mask=valid, other=0.0))
        # the pre-activation, in the state's dtype (float32 under autocast or
        # for a 16-bit state)
        a_h = tl.load(p_ptr + row, mask=valid, other=0.0).to(s.dtype)
        a_h += tl.load(base_ptr + brow, mask=valid, other=0.0).to(s.dtype)
        a_t = tl.load(p_ptr + row + H, mask=valid, other=0.0).to(s.dtype)
        a_t += tl.load(base_ptr + brow + H, mask=valid, other=0.0).to(s.dtype)
        h = 2.0 * tl.sigmoid(2.0 * a_h) - 1.0  # tanh
        t = tl.sigmoid(a_t)
        if COUPLED:
            c = 1.0 - t
        else:
            a_c = tl.load(p_ptr + row + 2 * H, mask=valid, other=0.0).to(s.dtype)
            a_c += tl.load(base_ptr + brow + 2 * H, mask=valid, other=0.0).to(s.dtype)
            c = tl.sigmoid(a_c)
        s_new = h * t + s * c
        tl.store(s_out_ptr + offs, s_new.to(s_out_ptr.dtype.element_ty), mask=valid)
        s_in = s_new
        if HAS_MASK:
            s_in = s_new * _wide(tl.load(mask_ptr + offs, mask=valid, other=0.0))
        tl.store(s_in_ptr + offs, s_in.to(s_in_ptr.dtype.element_ty), mask=valid)
        if SAVE:
            ydt = y_ptr.dtype.element_ty
            tl.store(y_ptr + row, h.to(ydt), mask=valid)
            tl.store(y_ptr + row + H, t.to(ydt), mask=valid)
            if not COUPLED:
                tl.store(y_ptr + row + 2 * H, c.to(ydt), mask=valid)

    @triton.jit
    def _micro_backward_kernel(
        gc_ptr,  # (B, H) in: g c of the micro-layer above; out: g c of this one
        back_ptr,  # (B, H) z R of the micro-layer above (read with HAS_BACK)
        go_ptr,  # (B, H) gradient of this step's output (read with HAS_GO)
        mask_ptr,  # (B, H) state mask (read with HAS_MASK)
        y_ptr,  # (B, G*H) saved [h; t (; c)]
        s_ptr,  # (B, H) state that entered the micro-layer
        z_ptr,  # (B, G*H) out: gradient of the pre-activation
        n,
        H,
        G: tl.constexpr,
        COUPLED: tl.constexpr,
        HAS_BACK: tl.constexpr,
        HAS_GO: tl.constexpr,
        HAS_MASK: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        valid = offs < n
        row = (offs // H) * (G * H) + offs % H
        # g: the gradient of the state leaving this micro-layer
        g = _wide(tl.load(gc_ptr + offs, mask=valid, other=0.0))
        if HAS_BACK:
            back = tl.load(back_ptr + offs, mask=valid, other=0.0).to(g.dtype)
            if HAS_MASK:
                back = back * _wide(tl.load(mask_ptr + offs, mask=valid, other=0.0))
            g += back
        if HAS_GO:
            g += tl.load(go_ptr + offs, mask=valid, other=0.0).to(g.dtype)
        h = _wide(tl.load(y_ptr + row, mask=valid, other=0.0))
        t = _wide(tl.load(y_ptr + row + H, mask=valid, other=0.0))
        s = _wide(tl.load(s_ptr + offs, mask=valid, other=0.0))
        zdt = z_ptr.dtype.element_ty
        tl.store(z_ptr + row, (g * t * (1.0 - h * h)).to(zdt), mask=valid)
        if COUPLED:
            c = 1.0 - t
            tl.store(z_ptr + row + H, (g * (h - s) * t * c).to(zdt), mask=valid)
        else:
            c = _wide(tl.load(y_ptr + row + 2 * H, mask=valid, other=0.0))
            tl.store(z_ptr + row + H, (g * h * t * (1.0 - t)).to(zdt), mask=valid)
            tl.store(z_ptr + row + 2 * H, (g * s * c * (1.0 - c)).to(zdt), mask=valid)
        tl.store(gc_ptr + offs, (g * c).to(gc_ptr.dtype.element_ty), mask=valid)


def _grid(n: int) -> tuple[int]:
    return (max(1, -(-n // BLOCK)),)


def _layer_forward(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    keep: bool,
    low: torch.dtype | None,
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The forward loop: one product and one kernel per micro-layer and step.

    Returns ``S`` (``S[k]`` ``(T+1, B, H)``, the state entering micro-layer
    ``k``; ``S[0][t+1]`` is the output of step ``t``) and ``Y`` (``Y[k]``
    ``(T, B, G*H)``, the saved ``[h; t (; c)]``). Without ``keep`` only
    ``S[0]`` is a full buffer and ``Y`` is empty.
    """
    T, B, GH = x_proj.shape
    H = s0.shape[-1]
    D = len(weights)
    G = GH // H
    work = {"dtype": weights[0].dtype, "device": x_proj.device}
    mm = low or weights[0].dtype  # the dtype of the matrix products
    w_t = [w.t().to(mm) for w in weights]  # (H, G*H) each
    x_proj = x_proj.contiguous()  # rows of B * G*H, as the kernel reads them
    S = [torch.empty(T + 1, B, H, **work)]
    S += [torch.empty(T + 1, B, H, **work) for _ in range(D - 1)] if keep else []
    Y = [torch.empty(T, B, GH, **work) for _ in range(D)] if keep else []
    scratch = [torch.empty(B, H, **work), torch.empty(B, H, **work)]
    y_dummy = torch.empty(1, **work)
    s_in = torch.empty(B, H, dtype=mm, device=x_proj.device)
    p = torch.empty(B, GH, dtype=mm, device=x_proj.device)
    S[0][0].copy_(s0)
    s_in.copy_(s0 if mask is None else s0 * mask)
    n = B * H
    for t in range(T):
        for k in range(D):
            if k == 0:
                s = S[0][t]
            else:
                s = S[k][t] if keep else scratch[k % 2]
            if k < D - 1:
                s_out = S[k + 1][t] if keep else scratch[(k + 1) % 2]
            else:
                s_out = S[0][t + 1]
            torch.mm(s_in, w_t[k], out=p)
            base, base_row = (x_proj[t], GH) if k == 0 else (biases[k - 1], 0)
            _micro_forward_kernel[_grid(n)](
                p, base, base_row, s, s if mask is None else mask, s_out, s_in,
                Y[k][t] if keep else y_dummy, n, H,
                G=G, COUPLED=coupled, HAS_MASK=mask is not None, SAVE=keep,
                BLOCK=BLOCK,
            )  # fmt: skip
    return S, Y


def _layer_backward(
    grad_out: torch.Tensor | None,
    grad_final: torch.Tensor | None,
    S: list[torch.Tensor],
    Y: list[torch.Tensor],
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    need_weights: bool,
    low: torch.dtype | None,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """The reverse loop: one product and one kernel per micro-layer and step.

    ``Z[k]`` keeps the pre-activation gradients of every step, so that each
    weight gradient is a single ``(G*H, T*B) @ (T*B, H)`` product at the end.
    Returns ``(grad_x_proj, grad_s0, grad_weights, grad_biases)``.
    """
    D = len(Y)
    T, B, GH = Y[0].shape
    H = S[0].shape[-1]
    G = GH // H
    dev = S[0].device
    mm = low or weights[0].dtype
    w_mm = [w.to(mm) for w in weights]  # (G*H, H): z @ R
    Z = [torch.empty(T, B, GH, dtype=mm, device=dev) for _ in range(D)]
    gc = S[0].new_zeros(B, H)  # g c, then the state gradient at the end
    if grad_final is not None:
        gc.copy_(grad_final)
    back = torch.empty(B, H, dtype=mm, device=dev)
    zeros = S[0].new_zeros(B, H)
    n = B * H
    first = True
    for t in range(T - 1, -1, -1):
        for k in range(D - 1, -1, -1):
            go = grad_out[t] if grad_out is not None and k == D - 1 else None
            _micro_backward_kernel[_grid(n)](
                gc, back, zeros if go is None else go,
                zeros if mask is None else mask, Y[k][t], S[k][t], Z[k][t], n, H,
                G=G, COUPLED=coupled, HAS_BACK=not first, HAS_GO=go is not None,
                HAS_MASK=mask is not None, BLOCK=BLOCK,
            )  # fmt: skip
            first = False
            torch.mm(Z[k][t], w_mm[k], out=back)
    # the state entering step 0: the last carry product plus the last product
    back = back.to(gc.dtype)
    grad_s0 = gc.add_(back if mask is None else back * mask)
    grad_w, grad_b = [], []
    if need_weights:
        for k in range(D):
            rows = Z[k].view(T * B, GH)
            s_in = S[k][:T] if mask is None else S[k][:T] * mask
            grad_w.append((rows.t() @ s_in.reshape(T * B, H).to(mm)).to(gc.dtype))
            if k > 0:
                grad_b.append(rows.sum(0, dtype=gc.dtype))
    return Z[0], grad_s0, grad_w, grad_b


class TritonLayerFunction(torch.autograd.Function):
    """One RHN layer as a single autograd node, with the Triton kernels.

    Same arguments and results as :class:`rhn.fast.RHNLayerFunction`.
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
        return fast._node_forward(
            ctx, _layer_forward, x_proj, s0, mask, coupled, low, params
        )

    @staticmethod
    def backward(
        ctx: Any, grad_out: torch.Tensor, grad_final: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        # the kernels index the gradient as one contiguous block
        return fast._node_backward(
            ctx, _layer_backward, grad_out.contiguous(), grad_final
        )


def _check_device(x: torch.Tensor) -> None:
    if triton is None:
        raise RuntimeError(
            "impl='triton' needs Triton, which is not installed: "
            "pip install 'rhn[triton]', or use impl='fast'"
        )
    if x.device.type != "cuda" and not _INTERPRETED:
        raise RuntimeError(
            f"impl='triton' runs on CUDA tensors, got a tensor on {x.device} "
            "(on the CPU, set TRITON_INTERPRET=1 before importing triton to run "
            "the kernels in Triton's interpreter, or use impl='fast')"
        )
    if x.device.type == "cuda":  # Triton supports compute capability 8.0+
        devices.check_triton(x.device)


def rhn_layer(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    *,
    coupled: bool = True,
    state_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`rhn.fast.rhn_layer` with the Triton kernels: same arguments, results.

    Raises:
        RuntimeError: if Triton is missing, the tensors are not on a CUDA
            device and Triton's interpreter is off, or the GPU is older than
            compute capability 8.0 (:func:`rhn.devices.check_triton`).
    """
    _check_device(x_proj)
    tensors = [x_proj, s0, *weights, *biases]
    low = fast.autocast_dtype(x_proj.device.type, weights[0].dtype)
    if state_mask is not None:
        state_mask = state_mask.contiguous()
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        output, final = TritonLayerFunction.apply(
            x_proj, s0, state_mask, coupled, low, *weights, *biases
        )
        return output, final
    with torch.no_grad(), fast._autocast_off(x_proj.device.type):
        S, _ = _layer_forward(
            x_proj, s0, state_mask, coupled, weights, biases, False, low
        )
    return S[0][1:], S[0][-1]
