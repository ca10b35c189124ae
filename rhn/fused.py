r"""An RHN layer as two Triton kernels: one launch forward, one backward.

The fast path (:mod:`rhn.fast`) issues one matrix product and a few
element-wise operations per micro-layer and step: about ``5 T D`` kernel
launches forward and as many backward. On a GPU, at the book's sizes, the
time goes to launching them, not to arithmetic. Here a whole layer runs as
**one** Triton kernel forward and **one** backward, whatever ``T`` and ``D``:

- **Rows are independent.** Batch rows never interact through the
  recurrence, so each Triton program owns a block of ``BM`` rows and runs the
  whole sequence for them, with no synchronisation between programs. Its
  state :math:`s` (``BM x H``) lives in registers, in float32; once per
  micro-layer it is written to memory (``S[k][t]``, or a scratch slab in
  inference) and read back in tiles as the product's operand, between two
  barriers of the program's threads, a round trip through the GPU's cache.
- **Per micro-layer, one product.** The pre-activation
  :math:`a = R_k\,(s \odot m) + (W x_t + b_0 \text{ or } b_k)` is accumulated
  with ``tl.dot`` over tiles of ``BK`` columns of :math:`s` and of ``R_k``,
  read from memory (the GPU's L2 cache keeps ``R_k`` close) in the dtype of
  the products; the input projection :math:`W x_t + b_0` of every step is one
  large product before the kernel. Then the gates and the state update,
  :math:`s' = h \odot t + s \odot c`, in registers.
- **Saved, not recomputed.** The forward writes the state entering every
  micro-layer, ``S[k][t]``, and the activations :math:`[h; t (; c)]`,
  ``Y[k][t]``; these are what the backward reads (saving measured cheaper on
  a GPU than recomputing, which would stream every ``R_k`` again).
- **The backward** runs the reverse recurrence the same way: from the
  gradient :math:`g` of the state leaving micro-layer ``k`` it writes the
  pre-activation gradient :math:`z` of every step and micro-layer into
  ``Z[k][t]`` and carries :math:`g \leftarrow g \odot c + m \odot (z R_k)`
  down. The weight gradients are then one batched product over all steps,
  :math:`\partial R_k = \sum_t z_{k,t}^\top (s_{k,t} \odot m)`, and
  ``Z[0]`` is the gradient of the input projection.

**Precision.** State, gates, sums and every saved buffer are float32 (float64
for a float64 model; a 16-bit model keeps 16-bit buffers and computes in
float32). The products run in the dtype ``torch.autocast`` asks for (bfloat16
or float16) with float32 accumulation; without autocast, float32 products
follow torch's own setting, :func:`torch.get_float32_matmul_precision`
(``"highest"``: IEEE float32, as on the CPU; ``"high"`` or ``"medium"``:
TF32 tensor cores, as cuDNN's LSTM uses by default).

**Limits.** Hidden sizes up to :data:`MAX_HIDDEN` (the state and three
accumulators must fit in registers); beyond that :func:`rhn_layer` hands the
layer to :func:`rhn.fast.rhn_layer` and :func:`problem` says why. Double
backward recomputes the layer with :func:`rhn.fast.reference_layer`, as the
fast path does.

Triton is an optional dependency (``pip install "rhn[triton]"``). The kernels
run on CUDA tensors of GPUs of compute capability 8.0 or newer; with the
environment variable ``TRITON_INTERPRET=1`` set *before* Triton is imported,
Triton's interpreter runs them on CPU tensors (slowly), which is how the tests
check them without a GPU. The interpreter's bfloat16 ``tl.dot`` is wrong
(it multiplies the raw bits), so there 16-bit products are emulated: the
operands are rounded to 16 bits and multiplied in float32, which is what a
tensor core computes.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

import torch

from . import devices, fast

try:
    import triton
    import triton.language as tl
except ImportError:  # the optional dependency is missing
    triton = None

__all__ = [
    "MAX_HIDDEN",
    "Config",
    "TritonLayerFunction",
    "available",
    "config_for",
    "interpreted",
    "padded_size",
    "problem",
    "rhn_layer",
    "triton_next_power_of_2",
]

MAX_HIDDEN = 512
"""The largest hidden size the kernels take; larger layers use the fast path."""


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


@dataclass(frozen=True)
class Config:
    """How the kernels are launched for one layer size and products' dtype.

    Attributes:
        block_rows: batch rows per program (``BM``); ``tl.dot`` needs 16.
        block_hidden: the hidden size rounded up to a power of two (``BH``).
        block_k: columns of ``R_k`` per ``tl.dot`` tile (``BK``).
        num_warps: warps per program.
        num_stages: software-pipelining depth of the tile loop.
    """

    block_rows: int
    block_hidden: int
    block_k: int
    num_warps: int
    num_stages: int


def config_for(hidden_size: int, gates: int, product_dtype: torch.dtype) -> Config:
    """The launch configuration for a layer of ``hidden_size`` and ``gates``.

    The tile sizes, warps and stages are those that measured fastest on an
    H100 at ``H = 256``, ``D = 5``, ``B = 32`` (``benchmarks/gpu_kernel.py
    sweep``; the record is ``rhn/_data/results/gpu-sweep-*.json``), kept
    within the shared memory of an A100 (sm_80, 163 KB per program): the
    tests compile every configuration this can return for sm_80 and sm_90 and
    check the shared memory the compiler reports.
    """
    bh = padded_size(hidden_size)
    size = torch.empty((), dtype=product_dtype).element_size()
    # K-tiles of 128 bytes of a row of R_k (64 bfloat16, 32 float32), fewer
    # where one tile of every gate block would take over 100 KB
    bk = min(bh, max(16, 128 // size))
    while bk > 16 and gates * bk * bh * size > 100_000:
        bk //= 2
    tile = gates * bk * bh * size
    # pipelining the tile loop: three stages for 16-bit products where they
    # fit, else two, else one
    stages = 3 if size == 2 and 3 * tile <= 200_000 else 2 if 2 * tile <= 200_000 else 1
    # 8 warps: the fewest registers per thread and no spills at H <= 256
    return Config(16, bh, bk, 8, stages)


def triton_next_power_of_2(n: int) -> int:
    """The smallest power of two that is at least ``n`` (``n >= 1``)."""
    return 1 << max(0, int(n) - 1).bit_length()


def problem(hidden_size: int, dtype: torch.dtype) -> str | None:
    """Why the kernels cannot take a layer, or ``None`` if they can.

    ``dtype`` is the parameters' dtype.
    """
    if hidden_size > MAX_HIDDEN:
        return (
            f"the Triton kernels take hidden sizes up to {MAX_HIDDEN} (the state "
            f"and the gates' accumulators live in registers), got {hidden_size}"
        )
    if dtype not in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        return f"the Triton kernels take floating dtypes, got {dtype}"
    return None


if triton is not None:

    @triton.jit
    def _dot(a, w, acc, PREC: tl.constexpr, EMULATE: tl.constexpr):
        """``acc + a @ w``; with ``EMULATE`` 16-bit operands multiply in float32."""
        if EMULATE:  # the interpreter: exact float32 product of rounded operands
            a, w = a.to(tl.float32), w.to(tl.float32)
            return tl.dot(a, w, acc, input_precision="ieee", out_dtype=acc.dtype)
        return tl.dot(a, w, acc, input_precision=PREC, out_dtype=acc.dtype)

    @triton.jit
    def _valid(idx, N: tl.constexpr, BN: tl.constexpr):
        """``idx < N``; a constant when the block ``BN`` is exactly ``N``.

        A constant mask lets the compiler vectorise the loads along the row
        (16 bytes at a time); ``idx < N`` would make every element's mask its
        own and every load a scalar one.
        """
        if N == BN:
            return tl.full(idx.shape, 1, tl.int1)
        return idx < N

    @triton.jit
    def _block(
        B, H: tl.constexpr, GH: tl.constexpr, BM: tl.constexpr, BH: tl.constexpr
    ):
        """This program's rows and columns, their masks and offsets.

        Returns ``rows``, ``cols``, ``rmask``, ``cmask``, the ``(BM, BH)`` mask
        ``m2``, the offsets ``st`` of the block in a ``(B, H)`` slab and ``gt``
        of its ``H`` block in a ``(B, G*H)`` slab, and the elements of one such
        slab, ``bh_`` and ``bg_`` (int64: slabs are counted over all steps).
        """
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.arange(0, BH)
        rmask = rows < B
        cmask = _valid(cols, H, BH)
        m2 = rmask[:, None] & cmask[None, :]
        st = rows[:, None] * H + cols[None, :]
        gt = rows[:, None] * GH + cols[None, :]
        bh_ = tl.cast(B, tl.int64) * H
        bg_ = tl.cast(B, tl.int64) * GH
        return rows, cols, rmask, cmask, m2, st, gt, bh_, bg_

    # sizes of 1 stay tensors (not specialised); H is a compile-time constant,
    # so that strides and masks are known and loads are vectorised
    _SIZES = ["T", "B", "D"]

    @triton.jit(do_not_specialize=_SIZES)
    def _forward_kernel(
        x_ptr,  # (T, B, G*H): W x + b_0 of every step, any float dtype
        s0_ptr,  # (B, H): the initial state
        mask_ptr,  # (B, H): the state mask (read with HAS_MASK)
        w_ptr,  # (D, H, G*H): R_k transposed, in the products' dtype
        b_ptr,  # (D, G*H): the biases; row 0 is zeros (b_0 is in x)
        s_ptr,  # KEEP: (D, T+1, B, H) the state entering (k, t); else (T+2, B, H)
        y_ptr,  # (D, T, B, G*H): the saved [h; t (; c)] (written with KEEP)
        T,
        B,
        H: tl.constexpr,
        D,
        G: tl.constexpr,
        COUPLED: tl.constexpr,
        HAS_MASK: tl.constexpr,
        KEEP: tl.constexpr,
        BM: tl.constexpr,
        BH: tl.constexpr,
        BK: tl.constexpr,
        PREC: tl.constexpr,
        EMULATE: tl.constexpr,
        ACC: tl.constexpr,
    ):
        GH = G * H
        rows, cols, rmask, cmask, m2, st, gt, bh_, bg_ = _block(B, H, GH, BM, BH)
        s = tl.load(s0_ptr + st, mask=m2, other=0.0).to(ACC)
        for t in range(T):
            for k in range(D):
                # where the state entering (k, t) goes: S[k][t]; without KEEP,
                # S[0][t] for k = 0 (the outputs) and one scratch slab else
                if KEEP:
                    slot = k * (T + 1) + t
                elif k == 0:
                    slot = t
                else:
                    slot = T + 1
                s_here = s_ptr + tl.cast(slot, tl.int64) * bh_
                tl.debug_barrier()  # every thread is done reading the slab
                tl.store(s_here + st, s.to(s_ptr.dtype.element_ty), mask=m2)
                tl.debug_barrier()  # ... and sees it written
                acc_h = tl.zeros([BM, BH], dtype=ACC)
                acc_t = tl.zeros([BM, BH], dtype=ACC)
                acc_c = tl.zeros([BM, BH], dtype=ACC)
                w_k = w_ptr + tl.cast(k, tl.int64) * H * GH
                for k0 in range(0, BH, BK):
                    kk = k0 + tl.arange(0, BK)
                    kmask = _valid(kk, H, BH)
                    am = rmask[:, None] & kmask[None, :]
                    a = tl.load(
                        s_here + rows[:, None] * H + kk[None, :], mask=am, other=0.0
                    )
                    if HAS_MASK:
                        # s m in float32 (a 16-bit model's state is 16-bit)
                        a = a.to(ACC) * tl.load(
                            mask_ptr + rows[:, None] * H + kk[None, :],
                            mask=am,
                            other=0.0,
                        ).to(ACC)
                    a = a.to(w_ptr.dtype.element_ty)
                    w_at = w_k + kk[:, None] * GH + cols[None, :]
                    wm = kmask[:, None] & cmask[None, :]
                    acc_h = _dot(
                        a, tl.load(w_at, mask=wm, other=0.0), acc_h, PREC, EMULATE
                    )
                    acc_t = _dot(
                        a, tl.load(w_at + H, mask=wm, other=0.0), acc_t, PREC, EMULATE
                    )
                    if not COUPLED:
                        acc_c = _dot(
                            a,
                            tl.load(w_at + 2 * H, mask=wm, other=0.0),
                            acc_c,
                            PREC,
                            EMULATE,
                        )
                # the input projection at micro-layer 0, the bias b_k after it
                x_at = x_ptr + tl.cast(t, tl.int64) * bg_ + gt
                xm = m2 & (k == 0)
                b_at = b_ptr + k * GH + cols
                a_h = acc_h + tl.load(x_at, mask=xm, other=0.0).to(ACC)
                a_h += tl.load(b_at, mask=cmask, other=0.0).to(ACC)[None, :]
                a_t = acc_t + tl.load(x_at + H, mask=xm, other=0.0).to(ACC)
                a_t += tl.load(b_at + H, mask=cmask, other=0.0).to(ACC)[None, :]
                h = 2.0 * tl.sigmoid(2.0 * a_h) - 1.0  # tanh
                tg = tl.sigmoid(a_t)
                if COUPLED:
                    c = 1.0 - tg
                else:
                    a_c = acc_c + tl.load(x_at + 2 * H, mask=xm, other=0.0).to(ACC)
                    a_c += tl.load(b_at + 2 * H, mask=cmask, other=0.0).to(ACC)[None, :]
                    c = tl.sigmoid(a_c)
                if KEEP:
                    y_at = y_ptr + (tl.cast(k, tl.int64) * T + t) * bg_ + gt
                    ydt = y_ptr.dtype.element_ty
                    tl.store(y_at, h.to(ydt), mask=m2)
                    tl.store(y_at + H, tg.to(ydt), mask=m2)
                    if not COUPLED:
                        tl.store(y_at + 2 * H, c.to(ydt), mask=m2)
                s = h * tg + s * c
        # the output of the last step: S[0][T]
        tl.store(
            s_ptr + tl.cast(T, tl.int64) * bh_ + st,
            s.to(s_ptr.dtype.element_ty),
            mask=m2,
        )

    @triton.jit(do_not_specialize=_SIZES)
    def _backward_kernel(
        go_ptr,  # (T, B, H): the gradient of every step's output
        gf_ptr,  # (B, H): the gradient of the final state
        mask_ptr,  # (B, H): the state mask (read with HAS_MASK)
        w_ptr,  # (D, G*H, H): R_k, in the products' dtype
        s_ptr,  # (D, T+1, B, H): the saved states entering (k, t)
        y_ptr,  # (D, T, B, G*H): the saved [h; t (; c)]
        z_ptr,  # (D, T, B, G*H): out, the pre-activation gradients
        gs0_ptr,  # (B, H): out, the gradient of the initial state
        T,
        B,
        H: tl.constexpr,
        D,
        G: tl.constexpr,
        COUPLED: tl.constexpr,
        HAS_MASK: tl.constexpr,
        BM: tl.constexpr,
        BH: tl.constexpr,
        BK: tl.constexpr,
        PREC: tl.constexpr,
        EMULATE: tl.constexpr,
        ACC: tl.constexpr,
    ):
        GH = G * H
        rows, cols, rmask, cmask, m2, st, gt, bh_, bg_ = _block(B, H, GH, BM, BH)
        zdt = z_ptr.dtype.element_ty
        # g: the gradient of the state leaving the current micro-layer
        g = tl.load(gf_ptr + st, mask=m2, other=0.0).to(ACC)
        if HAS_MASK:
            m = tl.load(mask_ptr + st, mask=m2, other=0.0).to(ACC)
        for i in range(T):
            t = T - 1 - i
            g += tl.load(
                go_ptr + tl.cast(t, tl.int64) * bh_ + st, mask=m2, other=0.0
            ).to(ACC)
            for j in range(D):
                k = D - 1 - j
                s = tl.load(
                    s_ptr + (tl.cast(k, tl.int64) * (T + 1) + t) * bh_ + st,
                    mask=m2,
                    other=0.0,
                )
                s = s.to(ACC)
                y_at = y_ptr + (tl.cast(k, tl.int64) * T + t) * bg_ + gt
                h = tl.load(y_at, mask=m2, other=0.0).to(ACC)
                tg = tl.load(y_at + H, mask=m2, other=0.0).to(ACC)
                z_at = z_ptr + (tl.cast(k, tl.int64) * T + t) * bg_ + gt
                tl.debug_barrier()
                tl.store(z_at, (g * tg * (1.0 - h * h)).to(zdt), mask=m2)
                if COUPLED:
                    c = 1.0 - tg
                    tl.store(z_at + H, (g * (h - s) * tg * c).to(zdt), mask=m2)
                else:
                    c = tl.load(y_at + 2 * H, mask=m2, other=0.0).to(ACC)
                    tl.store(z_at + H, (g * h * tg * (1.0 - tg)).to(zdt), mask=m2)
                    tl.store(z_at + 2 * H, (g * s * c * (1.0 - c)).to(zdt), mask=m2)
                tl.debug_barrier()  # z of this micro-layer is written: z R_k
                back = tl.zeros([BM, BH], dtype=ACC)
                z_rows = (
                    z_ptr + (tl.cast(k, tl.int64) * T + t) * bg_ + rows[:, None] * GH
                )
                w_k = w_ptr + tl.cast(k, tl.int64) * GH * H
                for gate in tl.static_range(G):
                    for k0 in range(0, BH, BK):
                        jj = k0 + tl.arange(0, BK)
                        jmask = _valid(jj, H, BH)
                        a = tl.load(
                            z_rows + gate * H + jj[None, :],
                            mask=rmask[:, None] & jmask[None, :],
                            other=0.0,
                        )
                        w = tl.load(
                            w_k + (gate * H + jj)[:, None] * H + cols[None, :],
                            mask=jmask[:, None] & cmask[None, :],
                            other=0.0,
                        )
                        back = _dot(a, w, back, PREC, EMULATE)
                if HAS_MASK:
                    back = back * m
                g = g * c + back
        tl.store(gs0_ptr + st, g.to(gs0_ptr.dtype.element_ty), mask=m2)


def _precision(product_dtype: torch.dtype) -> str:
    """``tl.dot``'s input precision: torch's float32 setting for float32."""
    if product_dtype == torch.float32:
        high = torch.get_float32_matmul_precision() in ("high", "medium")
        return "tf32" if high and not _INTERPRETED else "ieee"
    return "ieee"


def _emulate(product_dtype: torch.dtype) -> bool:
    return _INTERPRETED and product_dtype in (torch.bfloat16, torch.float16)


def _launch_args(cfg: Config, mm: torch.dtype, work: torch.dtype) -> dict[str, Any]:
    return {
        "ACC": tl.float64 if work == torch.float64 else tl.float32,
        "BM": cfg.block_rows,
        "BH": cfg.block_hidden,
        "BK": cfg.block_k,
        "PREC": _precision(mm),
        "EMULATE": _emulate(mm),
        "num_warps": cfg.num_warps,
        "num_stages": cfg.num_stages,
    }


def padded_size(hidden_size: int) -> int:
    r"""The hidden size the kernels run at: a power of two, at least 16.

    A layer of another size is padded with zeros (state, weights, biases,
    input projection): the padded units start at zero, see a zero
    pre-activation, and so stay zero (:math:`s' = 0 \cdot t + 0 \cdot c`),
    and their gradients are zero too, so the padding changes nothing. In
    exchange every load is aligned and unmasked (16 bytes at a time). The
    cost: the products grow with the square of the padded size (65 units run
    at 128, about 3.9 times the arithmetic), the saved buffers in proportion.
    """
    return max(16, triton_next_power_of_2(hidden_size))


def _pad_gates(x: torch.Tensor, gates: int, size: int) -> torch.Tensor:
    """Pad each of the ``gates`` blocks of the last dimension to ``size``."""
    h = x.shape[-1] // gates
    if h == size:
        return x
    blocks = x.reshape(*x.shape[:-1], gates, h)
    out = blocks.new_zeros(*x.shape[:-1], gates, size)
    out[..., :h] = blocks
    return out.reshape(*x.shape[:-1], gates * size)


def _pad_last(x: torch.Tensor, size: int) -> torch.Tensor:
    if x.shape[-1] == size:
        return x
    return torch.nn.functional.pad(x, (0, size - x.shape[-1]))


def _pad_weight(w: torch.Tensor, gates: int, size: int) -> torch.Tensor:
    """A ``(G*H, H)`` recurrent weight padded to ``(G*size, size)`` with zeros."""
    return _pad_gates(_pad_last(w, size).t(), gates, size).t()


def _unpad_gates(x: torch.Tensor, gates: int, h: int) -> torch.Tensor:
    """The inverse of :func:`_pad_gates`: the first ``h`` of every block."""
    size = x.shape[-1] // gates
    if h == size:
        return x
    return x.reshape(*x.shape[:-1], gates, size)[..., :h].reshape(
        *x.shape[:-1], gates * h
    )


def _layer_forward(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    keep: bool,
    low: torch.dtype | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The forward of a padded layer (``H`` a power of two): one launch.

    Returns ``S`` and ``Y``. With ``keep``: ``S`` ``(D, T+1, B, H)``, the
    state entering micro-layer ``k`` at step ``t`` (``S[0, t+1]`` is the
    output of step ``t``), and ``Y`` ``(D, T, B, G*H)``, the saved
    ``[h; t (; c)]``. Without: ``S`` ``(T+2, B, H)`` (``S[:T+1]`` as
    ``S[0]`` above, then one scratch slab) and an empty ``Y``.
    """
    T, B, GH = x_proj.shape
    H = s0.shape[-1]
    D = len(weights)
    G = GH // H
    work = {"dtype": weights[0].dtype, "device": x_proj.device}
    mm = low or weights[0].dtype  # the dtype of the matrix products
    w_t = torch.stack([w.t() for w in weights]).to(mm).contiguous()  # (D, H, G*H)
    b = torch.stack([weights[0].new_zeros(GH), *biases])  # (D, G*H)
    x = x_proj.contiguous()
    if keep:
        S = torch.empty(D, T + 1, B, H, **work)
        Y = torch.empty(D, T, B, GH, **work)
    else:
        S = torch.empty(T + 2, B, H, **work)  # the outputs and one scratch slab
        Y = torch.empty(0, **work)
    s0 = s0.contiguous()
    if B == 0:
        pass
    elif T == 0:
        (S[0, 0] if keep else S[0]).copy_(s0)
    else:
        cfg = config_for(H, G, mm)
        _forward_kernel[(triton.cdiv(B, cfg.block_rows),)](
            x, s0, s0 if mask is None else mask, w_t, b, S, Y, T, B, H, D,
            G=G, COUPLED=coupled, HAS_MASK=mask is not None, KEEP=keep,
            **_launch_args(cfg, mm, work["dtype"]),
        )  # fmt: skip
    return S, Y


def _layer_backward(
    grad_out: torch.Tensor,
    grad_final: torch.Tensor,
    S: torch.Tensor,
    Y: torch.Tensor,
    mask: torch.Tensor | None,
    coupled: bool,
    weights: list[torch.Tensor],
    need_weights: bool,
    low: torch.dtype | None,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """The backward of a padded layer: one launch, then one batched product.

    ``Z`` keeps the pre-activation gradients of every step and micro-layer, so
    that the weight gradients of all ``D`` micro-layers are one batched
    ``(G*H, T*B) @ (T*B, H)`` product. Returns ``(grad_x_proj, grad_s0,
    grad_weights, grad_biases)``; ``grad_x_proj`` is ``Z[0]``, in the
    products' dtype.
    """
    D, T, B, GH = Y.shape
    H = S.shape[-1]
    G = GH // H
    dev, wdt = S.device, weights[0].dtype
    mm = low or wdt
    Z = torch.empty(D, T, B, GH, dtype=mm, device=dev)
    grad_s0 = torch.empty(B, H, dtype=S.dtype, device=dev)
    go = grad_out.to(S.dtype).contiguous()
    gf = grad_final.to(S.dtype).contiguous()
    if B > 0 and T > 0:
        w = torch.stack(list(weights)).to(mm).contiguous()  # (D, G*H, H)
        cfg = config_for(H, G, mm)
        _backward_kernel[(triton.cdiv(B, cfg.block_rows),)](
            go, gf, gf if mask is None else mask, w, S, Y, Z, grad_s0,
            T, B, H, D, G=G, COUPLED=coupled, HAS_MASK=mask is not None,
            **_launch_args(cfg, mm, wdt),
        )  # fmt: skip
    else:
        Z.zero_()
        grad_s0.copy_(gf)
    grad_w: list[torch.Tensor] = []
    grad_b: list[torch.Tensor] = []
    if need_weights:
        s_in = S[:, :T]
        if mask is not None:
            s_in = s_in * mask
        # every micro-layer's weight gradient, summed over all steps, at once
        gw = torch.bmm(
            Z.view(D, T * B, GH).transpose(1, 2), s_in.reshape(D, T * B, H).to(mm)
        )
        grad_w = list(gw.to(wdt).unbind(0))
        grad_b = list(Z[1:].sum((1, 2), dtype=wdt).unbind(0))
    return Z[0], grad_s0, grad_w, grad_b


def _padded(
    x_proj: torch.Tensor,
    s0: torch.Tensor,
    mask: torch.Tensor | None,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
) -> tuple[Any, ...]:
    """The layer's tensors padded to :func:`padded_size` (unchanged if it fits)."""
    H = s0.shape[-1]
    G = x_proj.shape[-1] // H
    P = padded_size(H)
    if P == H:
        return x_proj, s0, mask, list(weights), list(biases)
    return (
        _pad_gates(x_proj, G, P),
        _pad_last(s0, P),
        None if mask is None else _pad_last(mask, P),
        [_pad_weight(w, G, P) for w in weights],
        [_pad_gates(b, G, P) for b in biases],
    )


class TritonLayerFunction(torch.autograd.Function):
    """One RHN layer as a single autograd node, with the Triton kernels.

    Same arguments and results as :class:`rhn.fast.RHNLayerFunction`. The node
    pads the layer to :func:`padded_size` for the kernels and keeps the
    padded ``S`` and ``Y`` for the backward.
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
        D = (len(params) + 1) // 2
        H = s0.shape[-1]
        xp, s0p, mp, wp, bp = _padded(
            x_proj, s0, mask, list(params[:D]), list(params[D:])
        )
        with fast._autocast_off(x_proj.device.type):
            S, Y = _layer_forward(xp, s0p, mp, coupled, wp, bp, True, low)
        ctx.coupled, ctx.depth, ctx.low = coupled, D, low
        ctx.save_for_backward(x_proj, s0, mask, *params, S, Y)
        T = x_proj.shape[0]
        # copies: the caller may change the outputs in place
        return S[0, 1:, :, :H].clone(), S[0, T, :, :H].clone()

    @staticmethod
    def backward(
        ctx: Any, grad_out: torch.Tensor, grad_final: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        D = ctx.depth
        x_proj, s0, mask, *rest = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: differentiate the loop
            return fast._double_backward(
                ctx, grad_out, grad_final, x_proj, s0, mask, rest[: 2 * D - 1]
            )
        weights, S, Y = rest[:D], rest[-2], rest[-1]
        H, P = s0.shape[-1], S.shape[-1]
        G = x_proj.shape[-1] // H
        if P != H:
            weights = [_pad_weight(w, G, P) for w in weights]
            mask = None if mask is None else _pad_last(mask, P)
        need_weights = any(ctx.needs_input_grad[5:])
        with fast._autocast_off(x_proj.device.type):
            gx, gs0, gw, gb = _layer_backward(
                _pad_last(grad_out, P),
                _pad_last(grad_final, P),
                S,
                Y,
                mask,
                ctx.coupled,
                list(weights),
                need_weights,
                ctx.low,
            )
        if not need_weights:
            gw, gb = [None] * D, [None] * (D - 1)
        elif P != H:
            gw = [_unpad_gates(w.t(), G, H).t()[:, :H] for w in gw]
            gb = [_unpad_gates(b, G, H) for b in gb]
        return (
            _unpad_gates(gx, G, H).to(x_proj.dtype),
            gs0[:, :H].to(s0.dtype),
            None,
            None,
            None,
            *gw,
            *gb,
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
    """Run one RHN layer over a sequence with the Triton kernels.

    The arguments and results are those of :func:`rhn.fast.rhn_layer`:
    ``x_proj`` ``= W x + b_0`` of every step ``(T, B, G*H)``, the initial
    state ``s0`` ``(B, H)``, the ``D`` recurrent weights ``(G*H, H)``, the
    biases of micro-layers ``1..D-1`` ``(G*H,)``, ``coupled`` and the
    ``(B, H)`` ``state_mask``; it returns the states after every step
    ``(T, B, H)`` and the final state ``(B, H)``. Under ``torch.no_grad()``
    the two are views of one buffer, as on the fast path.

    A layer the kernels cannot take (:func:`problem`: a hidden size above
    :data:`MAX_HIDDEN`) runs on :func:`rhn.fast.rhn_layer` instead, even with
    ``impl="triton"``.

    Raises:
        RuntimeError: if Triton is missing, the tensors are not on a CUDA
            device and Triton's interpreter is off, or the GPU is older than
            compute capability 8.0 (:func:`rhn.devices.check_triton`).
    """
    _check_device(x_proj)
    if problem(s0.shape[-1], weights[0].dtype) is not None:
        return fast.rhn_layer(
            x_proj, s0, weights, biases, coupled=coupled, state_mask=state_mask
        )
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
        H = s0.shape[-1]
        xp, s0p, mp, wp, bp = _padded(x_proj, s0, state_mask, weights, biases)
        S, _ = _layer_forward(xp, s0p, mp, coupled, wp, bp, False, low)
    T = x_proj.shape[0]
    return S[1 : T + 1, :, :H], S[T, :, :H]
