r"""The RHN cell, the multi-layer RHN and the gate-free DT-RNN.

Notation follows the book (see :mod:`rhn`): ``T`` time steps, ``B`` batch,
``I`` input size, ``H`` hidden size, ``D`` recurrence depth (the paper's
``L``), ``N`` stacked layers. One RHN time step applies ``D`` highway
micro-layers to the state; the input enters micro-layer 0 only:

.. math::
    h_k &= \tanh(W_H x\,[k=0] + R_{H,k}\, s_{k-1} + b_{H,k}) \\
    t_k &= \sigma(W_T x\,[k=0] + R_{T,k}\, s_{k-1} + b_{T,k}) \\
    c_k &= 1 - t_k \quad\text{(coupled) or}\quad
          \sigma(W_C x\,[k=0] + R_{C,k}\, s_{k-1} + b_{C,k}) \\
    s_k &= h_k \odot t_k + s_{k-1} \odot c_k

What the RHN and the DT-RNN share (arguments, checks, variational dropout,
the stacked forward) is in ``rhn/_stack.py``; the layer kernels
(:mod:`rhn.fast`, :mod:`rhn.fused`) take tensors, never a cell.
:class:`rhn.Highway` lives in :mod:`rhn.highway` (importable from here too).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks, devices, fast
from ._stack import (
    MicroLayerParameters,
    RunLayer,
    StackedRecurrence,
)
from .defaults import DEPTH, TRANSFORM_BIAS
from .highway import Highway

__all__ = ["RHNCell", "RHN", "DTRNNCell", "DTRNN", "Highway"]


class RHNCell(MicroLayerParameters):
    r"""One time step of a Recurrent Highway Network, eqs. (6)-(9) of Zilly et al.

    For micro-layer :math:`k = 0, \dots, D-1`, starting from the incoming state
    :math:`s_{-1} = s^{[t-1]}`:

    .. math::
        a_k &= W x\,[k = 0] + R_k\, s_{k-1} + b_k \\
        h_k &= \tanh(a_k^{H}), \quad t_k = \sigma(a_k^{T}), \quad
        c_k = 1 - t_k \ \text{(coupled) or } \sigma(a_k^{C}) \\
        s_k &= h_k \odot t_k + s_{k-1} \odot c_k

    and the new state is :math:`s^{[t]} = s_{D-1}`. :math:`a_k^{H}`,
    :math:`a_k^{T}`, :math:`a_k^{C}` are the row blocks of :math:`a_k`.

    Args:
        input_size: number of input features ``I``.
        hidden_size: number of state features ``H``.
        depth: recurrence depth ``D`` (the paper's ``L``), the number of highway
            micro-layers applied per time step (default 2,
            :data:`rhn.defaults.DEPTH`).
        coupled: if ``True`` (default) the carry gate is ``c = 1 - t``, as in
            every experiment of the paper; if ``False`` it has its own weights.
        transform_bias: initial value of the transform-gate biases
            :math:`b_{T,k}` (default ``-3.0``, :data:`rhn.defaults.TRANSFORM_BIAS`,
            the bias chapter 11 trains with). Negative values start the cell
            close to carrying its state unchanged, which keeps gradients alive
            through time; a deeper cell needs a more negative bias to keep the
            same memory per step (:func:`rhn.defaults.matched_transform_bias`).
            With ``coupled=False`` the carry-gate biases start at
            ``-transform_bias`` so that ``c`` is close to ``1 - t`` at
            initialisation.
        init_scale: weights are drawn from :math:`U(-a, a)` with ``a =
            init_scale``; the default ``None`` uses :math:`a = 1/\sqrt{H}` like
            ``torch.nn.LSTM``. The paper's language models use ``0.04``.
        device, dtype: where and in what precision to create the parameters.

    Inputs: x, s
        - **x** of shape ``(B, I)`` or unbatched ``(I,)``.
        - **s** of shape ``(B, H)`` or unbatched ``(H,)``: the incoming state.
          Defaults to zeros.

    Outputs: s_new
        - **s_new** of shape ``(B, H)`` (or ``(H,)``): the state after one time
          step.

    Attributes:
        weight_ih: input weights of shape ``(G*H, I)``, used by micro-layer 0
            only. ``G = 2`` row blocks ``[W_H; W_T]`` when coupled, ``G = 3``
            blocks ``[W_H; W_T; W_C]`` when not.
        weight_hh_d{k}: recurrent weights of micro-layer ``k`` of shape
            ``(G*H, H)``, blocks ``[R_H; R_T]`` or ``[R_H; R_T; R_C]``.
        bias_hh_d{k}: biases of micro-layer ``k`` of shape ``(G*H,)``, in the
            same block order.

    Example::

        >>> cell = RHNCell(3, 8, depth=2)
        >>> x = torch.randn(5, 4, 3)               # (T, B, I)
        >>> s = torch.zeros(4, 8)                  # (B, H)
        >>> for x_t in x.unbind(0):                # equivalent to RHN(3, 8, 2)
        ...     s = cell(x_t, s)
        >>> s.shape
        torch.Size([4, 8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        depth: int = DEPTH,
        *,
        coupled: bool = True,
        transform_bias: float = TRANSFORM_BIAS,
        init_scale: float | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.coupled = _checks.boolean("coupled", coupled)
        self.gates = 2 if coupled else 3
        factory = self._init_parameters(
            input_size, hidden_size, depth, self.gates, init_scale, device, dtype
        )
        self.transform_bias = _checks.representable(
            "transform_bias",
            _checks.real("transform_bias", transform_bias),
            factory["dtype"],
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights and set the gate biases as described in the class doc."""
        scale = self.init_scale or 1.0 / math.sqrt(self.hidden_size)
        H = self.hidden_size
        with torch.no_grad():
            self.weight_ih.uniform_(-scale, scale)
            for k in range(self.depth):
                self.recurrent_weight(k).uniform_(-scale, scale)
                bias = self.recurrent_bias(k)
                bias.zero_()
                bias[H : 2 * H] = self.transform_bias
                if not self.coupled:
                    bias[2 * H :] = -self.transform_bias

    def gate_values(
        self, k: int, s: torch.Tensor, x_proj: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""The candidate ``h`` and the gates ``t``, ``c`` of micro-layer ``k``.

        Args:
            k: micro-layer index, ``0 <= k < depth``.
            s: the state entering the micro-layer, ``(B, H)``.
            x_proj: ``x @ weight_ih.T`` of shape ``(B, G*H)``; added in
                micro-layer 0 only (pass ``None`` for ``k > 0``).

        Returns:
            ``(h, t, c)``, each ``(B, H)``.
        """
        a = F.linear(s, self.recurrent_weight(k), self.recurrent_bias(k))  # (B, G*H)
        if x_proj is not None:
            a = a + x_proj
        H = self.hidden_size
        h = torch.tanh(a[..., :H])
        t = torch.sigmoid(a[..., H : 2 * H])
        c = 1.0 - t if self.coupled else torch.sigmoid(a[..., 2 * H :])
        return h, t, c

    def step(
        self,
        x_proj: torch.Tensor,
        s: torch.Tensor,
        state_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Advance the state one time step from a precomputed input projection.

        This is the loop body of :class:`RHN`; ``forward`` checks its inputs and
        calls it. ``x_proj`` is ``x @ weight_ih.T`` of shape ``(B, G*H)``.
        ``state_mask`` (``(B, H)`` or ``None``) is a variational-dropout mask
        applied to the state where it enters the recurrent weights of every
        micro-layer; the carry path ``s * c`` sees the undropped state.
        """
        for k in range(self.depth):
            s_in = s if state_mask is None else s * state_mask
            h, t, c = self.gate_values(k, s_in, x_proj if k == 0 else None)
            s = h * t + s * c  # (B, H)
        return s

    def extra_repr(self) -> str:
        return (
            f"{self.input_size}, {self.hidden_size}, depth={self.depth}, "
            f"coupled={self.coupled}, transform_bias={self.transform_bias}"
        )


class RHN(StackedRecurrence):
    r"""A multi-layer Recurrent Highway Network with variational dropout.

    Layer ``l`` runs an :class:`RHNCell` over the sequence; its outputs (the
    state after every time step) are the inputs of layer ``l + 1``. The output
    of the network is the state sequence of the last layer.

    Dropout is *variational* (Gal and Ghahramani, 2016): each mask is reused at
    every time step and every micro-layer, so the recurrence sees the same
    thinned network throughout. Masks are only applied in training mode;
    ``eval()`` turns them off. By default each call of ``forward`` draws new
    masks: one set per sequence when a call sees whole sequences, but one set
    per *window* under truncated backpropagation through time, where a long
    sequence is fed in windows with the state carried over. To keep one set
    of masks over all the windows of a sequence, draw them once with
    :meth:`dropout_masks` and pass them to every call::

        masks = model.dropout_masks(batch_size)    # once per batch of streams
        state = None
        for window in stream.split(W):             # (W, B, I) each
            output, state = model(window, state, masks=masks)
            ...
            state = state.detach()

    With the same masks, the windows compute exactly what one call over the
    whole sequence computes with them.

    Args:
        input_size: number of input features ``I``.
        hidden_size: number of state features ``H`` of every layer.
        depth: recurrence depth ``D`` of every layer (default 2,
            :data:`rhn.defaults.DEPTH`; see the README's "Choosing depth and
            transform bias").
        num_layers: number of stacked layers ``N`` (default 1).
        batch_first: if ``True``, ``x`` and ``output`` are ``(B, T, .)``
            instead of ``(T, B, .)`` (default ``False``). The state stays
            ``(N, B, H)``.
        coupled: coupled carry gate ``c = 1 - t`` (default ``True``).
        transform_bias: initial transform-gate bias (default ``-3.0``,
            :data:`rhn.defaults.TRANSFORM_BIAS`); see :class:`RHNCell`.
        input_dropout: rate of the mask on each layer's input (default 0).
        state_dropout: rate of the mask on the recurrent state where it enters
            the recurrent weights (default 0).
        output_dropout: rate of the mask on the network's output (default 0).
        init_scale: see :class:`RHNCell`.
        impl: how each layer runs. ``"fast"`` uses :func:`rhn.fast.rhn_layer`,
            one autograd node per layer with a hand-written backward, in plain
            PyTorch; ``"triton"`` uses :func:`rhn.fused.rhn_layer`, the same
            with one Triton kernel per layer and direction for the whole
            sequence (needs the optional ``triton`` package and CUDA
            tensors of a GPU of compute capability 8.0 or newer);
            ``"loop"`` runs the plain per-step loop over
            :meth:`RHNCell.step` (the reference); ``"auto"`` (default) picks
            ``"triton"`` on such a GPU when Triton is installed and
            ``"fast"`` everywhere else. All give the same outputs and gradients, of
            any order, to float rounding; under ``torch.autocast`` all train,
            the fast and Triton paths keeping their state in float32 (see
            :mod:`rhn.fast`). Inside ``torch.func`` transforms ``"fast"`` and
            ``"triton"`` fall back to the loop.
        device, dtype: where and in what precision to create the parameters.

    Inputs: x, state, masks
        - **x** of shape ``(T, B, I)``, ``(B, T, I)`` with ``batch_first``, or
          unbatched ``(T, I)``.
        - **state** of shape ``(N, B, H)`` (``(N, H)`` unbatched): the initial
          state of each layer. Defaults to zeros.
        - **masks** (keyword): :class:`rhn.DropoutMasks` from
          :meth:`dropout_masks`, used instead of fresh masks (training mode
          only). Defaults to ``None``: new masks at every call.

    Outputs: output, state
        - **output** of shape ``(T, B, H)`` (``(B, T, H)`` with
          ``batch_first``, ``(T, H)`` unbatched): the last layer's state after
          every time step.
        - **state** of shape ``(N, B, H)`` (``(N, H)`` unbatched): every
          layer's final state. Passing it back in continues the sequence
          exactly.

    Attributes:
        cells: ``nn.ModuleList`` of the ``N`` :class:`RHNCell` layers.

    Example::

        >>> model = RHN(3, 16, depth=3, num_layers=2)
        >>> x = torch.randn(50, 8, 3)      # (T, B, I)
        >>> out, state = model(x)
        >>> out.shape, state.shape
        (torch.Size([50, 8, 16]), torch.Size([2, 8, 16]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        depth: int = DEPTH,
        num_layers: int = 1,
        *,
        batch_first: bool = False,
        coupled: bool = True,
        transform_bias: float = TRANSFORM_BIAS,
        input_dropout: float = 0.0,
        state_dropout: float = 0.0,
        output_dropout: float = 0.0,
        init_scale: float | None = None,
        impl: str = "auto",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self._init_stack(input_size, hidden_size, depth, num_layers, batch_first)
        self._init_dropout(input_dropout, state_dropout, output_dropout)
        self.impl = _checks.choice("impl", impl, IMPLS)
        if self.impl == "triton" and not _fused_available():
            raise ValueError(
                "impl='triton' needs the optional package triton, which is not "
                "installed: pip install 'rhn[triton]', or use impl='fast'"
            )
        with _allocating(self, 2 if coupled else 3):
            self.cells = nn.ModuleList(
                RHNCell(
                    self.input_size if layer == 0 else self.hidden_size,
                    self.hidden_size,
                    self.depth,
                    coupled=coupled,
                    transform_bias=transform_bias,
                    init_scale=init_scale,
                    device=device,
                    dtype=dtype,
                )
                for layer in range(self.num_layers)
            )

    # defined on the shared base; named here so the API page lists it with RHN
    dropout_masks = StackedRecurrence.dropout_masks

    @property
    def coupled(self) -> bool:
        return self.cells[0].coupled

    @property
    def transform_bias(self) -> float:
        return self.cells[0].transform_bias

    def _layer_runner(self, x: torch.Tensor) -> RunLayer:
        kernel = _select_run_layer(self.impl, x)
        if kernel is None:
            return _loop_layer

        def run(
            cell: RHNCell,
            x: torch.Tensor,
            s: torch.Tensor,
            state_mask: torch.Tensor | None,
        ) -> tuple[torch.Tensor, torch.Tensor]:
            # the kernels take tensors: the input projection of all steps,
            # with micro-layer 0's bias, then the weights and other biases
            x_proj = F.linear(x, cell.weight_ih, cell.recurrent_bias(0))  # (T, B, G*H)
            return kernel(
                x_proj,
                s,
                [cell.recurrent_weight(k) for k in range(cell.depth)],
                [cell.recurrent_bias(k) for k in range(1, cell.depth)],
                coupled=cell.coupled,
                state_mask=state_mask,
            )

        return run

    def extra_repr(self) -> str:
        parts = self._stack_repr()
        if self.impl != "auto":
            parts.append(f"impl={self.impl!r}")
        return ", ".join(parts + self._dropout_repr())


def _loop_layer(
    cell: RHNCell | DTRNNCell,
    x: torch.Tensor,
    s: torch.Tensor,
    state_mask: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run one layer over the sequence: the plain per-step loop (``impl="loop"``)."""
    x_proj = F.linear(x, cell.weight_ih)  # (T, B, G*H): one matmul for all steps
    outputs = []
    for x_t in x_proj.unbind(0):
        s = cell.step(x_t, s, state_mask)
        outputs.append(s)
    return torch.stack(outputs), s  # (T, B, H), (B, H)


IMPLS = ["auto", "fast", "triton", "loop"]
"""The values of ``RHN(impl=...)``."""


def _fused_available() -> bool:
    return importlib.util.find_spec("triton") is not None


def _select_run_layer(impl: str, x: torch.Tensor) -> Callable[..., object] | None:
    """The kernel's layer function for ``impl`` and input ``x``; ``None``: the loop."""
    if impl == "loop" or not fast.supported() or _tracing():
        # torch.func, torch.export and torch.compile trace the loop: plain,
        # differentiable operations (the other paths write into buffers)
        return None
    if impl == "triton" or (impl == "auto" and _triton_suits(x.device)):
        from . import fused  # imports triton: only when asked for or on a GPU

        return fused.rhn_layer
    return fast.rhn_layer  # same result as the loop, see rhn/fast.py


@contextlib.contextmanager
def _allocating(stack: StackedRecurrence, gates: int) -> Iterator[None]:
    """Turn the allocator's error for a model too large into one line."""
    try:
        yield
    except RuntimeError as err:
        # "can't allocate memory", "out of memory"; torch 2.11 says "Storage
        # size calculation overflowed" for a size beyond 2**63 bytes
        words = ("alloc", "memory", "overflow")
        if not any(w in str(err).lower() for w in words):
            raise
        H, I, D, N = stack.hidden_size, stack.input_size, stack.depth, stack.num_layers
        per_layer = [gates * H * (i + D * (H + 1)) for i in [I] + [H] * (N - 1)]
        raise MemoryError(
            f"{type(stack).__name__}(input_size={I}, hidden_size={H}, depth={D}, "
            f"num_layers={N}) has about {sum(per_layer):,} parameters, more than "
            "this machine could allocate; use a smaller hidden_size"
        ) from None


def _tracing() -> bool:
    """Whether torch.compile or torch.export is tracing this call."""
    compiler = getattr(torch, "compiler", None)
    is_compiling = getattr(compiler, "is_compiling", None)
    return bool(is_compiling is not None and is_compiling())


def _triton_suits(device: torch.device) -> bool:
    """Whether ``impl="auto"`` runs the Triton kernels on ``device``.

    On a CUDA GPU of compute capability 8.0 or newer with Triton installed:
    there the whole-sequence kernels launch twice per layer where the fast
    path launches thousands of small kernels (see :mod:`rhn.fused`). Measured
    on an H100 (chapter 15): faster eager in every precision, and faster in a
    CUDA graph with bfloat16 or TF32 products (the trainer's default is
    bfloat16); with IEEE float32 products in a CUDA graph the fast path is
    faster, and ``impl="fast"`` picks it.
    """
    return (
        device.type == "cuda"
        and _fused_available()
        and devices.triton_problem(device) is None
    )


class DTRNNCell(MicroLayerParameters):
    r"""One time step of a deep-transition RNN without gates.

    The deep transition of Pascanu et al., 2013 (*How to construct deep
    recurrent neural networks*), and the gate-free counterpart of
    :class:`RHNCell`: the network the RHN paper's optimisation study (Zilly
    et al., 2017, section 5.1) compares against. For
    micro-layer :math:`k = 0, \dots, D-1`, starting from the incoming state
    :math:`s_{-1} = s^{[t-1]}`:

    .. math::
        s_k = \tanh\bigl(W x\,[k = 0] + R_k\, s_{k-1} + b_k\bigr)

    and the new state is :math:`s^{[t]} = s_{D-1}`. With ``D = 1`` this is
    the Elman RNN of :class:`rhn.RNN`. There is no carry path: every
    micro-layer rewrites the whole state.

    Args:
        input_size: number of input features ``I``.
        hidden_size: number of state features ``H``.
        depth: recurrence depth ``D``, the number of tanh micro-layers per
            time step.
        init_scale: weights are drawn from :math:`U(-a, a)` with ``a =
            init_scale``; the default ``None`` uses :math:`a = 1/\sqrt{H}`, the
            same default as :class:`RHNCell`. Biases start at zero.
        device, dtype: where and in what precision to create the parameters.

    Inputs: x, s
        - **x** of shape ``(B, I)`` or unbatched ``(I,)``.
        - **s** of shape ``(B, H)`` or unbatched ``(H,)``: the incoming state.
          Defaults to zeros.

    Outputs: s_new
        - **s_new** of shape ``(B, H)`` (or ``(H,)``).

    Attributes:
        weight_ih: input weights :math:`W` of shape ``(H, I)``, used by
            micro-layer 0 only.
        weight_hh_d{k}: recurrent weights :math:`R_k` of micro-layer ``k``,
            ``(H, H)``.
        bias_hh_d{k}: biases :math:`b_k` of micro-layer ``k``, ``(H,)``.

    Example::

        >>> cell = DTRNNCell(3, 8, depth=2)
        >>> cell(torch.randn(4, 3)).shape           # (B, I) -> (B, H)
        torch.Size([4, 8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        depth: int,
        *,
        init_scale: float | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self._init_parameters(
            input_size, hidden_size, depth, 1, init_scale, device, dtype
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weights uniform in ``±init_scale`` (default ``1/sqrt(H)``), biases 0."""
        scale = self.init_scale or 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            self.weight_ih.uniform_(-scale, scale)
            for k in range(self.depth):
                self.recurrent_weight(k).uniform_(-scale, scale)
                self.recurrent_bias(k).zero_()

    def step(
        self,
        x_proj: torch.Tensor,
        s: torch.Tensor,
        state_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Advance the state one time step from ``x_proj = x @ weight_ih.T``.

        ``state_mask`` (``(B, H)`` or ``None``) is a variational-dropout mask
        applied to the state where it enters each micro-layer's recurrent
        weights, as in :meth:`RHNCell.step`.
        """
        for k in range(self.depth):
            s_in = s if state_mask is None else s * state_mask
            a = F.linear(s_in, self.recurrent_weight(k), self.recurrent_bias(k))
            if k == 0:
                a = a + x_proj
            s = torch.tanh(a)  # (B, H)
        return s

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, depth={self.depth}"


class DTRNN(StackedRecurrence):
    r"""A multi-layer deep-transition RNN without gates, with the RHN interface.

    Layer ``l`` runs a :class:`DTRNNCell` over the sequence; the output is the
    last layer's state after every time step. Everything but the cell is as in
    :class:`RHN`: the same arguments (without the gate options), the same
    shapes, and the same variational dropout (new masks at every call, or one
    set over several calls from :meth:`dropout_masks`).

    Args:
        input_size, hidden_size, depth, num_layers, batch_first: as in
            :class:`RHN`.
        input_dropout, state_dropout, output_dropout: as in :class:`RHN`.
        init_scale: see :class:`DTRNNCell`.
        device, dtype: where and in what precision to create the parameters.

    Inputs and outputs: as :class:`RHN`; ``state`` is ``(N, B, H)``.

    Attributes:
        cells: ``nn.ModuleList`` of the ``N`` :class:`DTRNNCell` layers.

    Example::

        >>> model = DTRNN(3, 16, depth=4)
        >>> out, state = model(torch.randn(50, 8, 3))   # (T, B, I)
        >>> out.shape, state.shape
        (torch.Size([50, 8, 16]), torch.Size([1, 8, 16]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        depth: int,
        num_layers: int = 1,
        *,
        batch_first: bool = False,
        input_dropout: float = 0.0,
        state_dropout: float = 0.0,
        output_dropout: float = 0.0,
        init_scale: float | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self._init_stack(input_size, hidden_size, depth, num_layers, batch_first)
        self._init_dropout(input_dropout, state_dropout, output_dropout)
        self.cells = nn.ModuleList(
            DTRNNCell(
                self.input_size if layer == 0 else self.hidden_size,
                self.hidden_size,
                self.depth,
                init_scale=init_scale,
                device=device,
                dtype=dtype,
            )
            for layer in range(self.num_layers)
        )

    dropout_masks = StackedRecurrence.dropout_masks  # listed with the class

    def _layer_runner(self, x: torch.Tensor) -> RunLayer:
        return _loop_layer

    def extra_repr(self) -> str:
        return ", ".join(self._stack_repr() + self._dropout_repr())
