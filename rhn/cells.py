r"""The RHN cell, the multi-layer RHN, the gate-free DT-RNN and the Highway layer.

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
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks, fast

__all__ = ["RHNCell", "RHN", "DTRNNCell", "DTRNN", "Highway"]


class RHNCell(nn.Module):
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
            micro-layers applied per time step.
        coupled: if ``True`` (default) the carry gate is ``c = 1 - t``, as in
            every experiment of the paper; if ``False`` it has its own weights.
        transform_bias: initial value of the transform-gate biases
            :math:`b_{T,k}` (default ``-2.0``). Negative values start the cell
            close to carrying its state unchanged, which keeps gradients alive
            through time. With ``coupled=False`` the carry-gate biases start at
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
        depth: int,
        *,
        coupled: bool = True,
        transform_bias: float = -2.0,
        init_scale: float | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        self.coupled = _checks.boolean("coupled", coupled)
        factory = _checks.factory(device, dtype)
        self.transform_bias = _checks.representable(
            "transform_bias",
            _checks.real("transform_bias", transform_bias),
            factory["dtype"],
        )
        self.init_scale = _checks.init_scale(init_scale, factory["dtype"])
        self.gates = 2 if coupled else 3
        rows = self.gates * self.hidden_size
        self.weight_ih = nn.Parameter(torch.empty(rows, self.input_size, **factory))
        for k in range(self.depth):
            self.register_parameter(
                f"weight_hh_d{k}",
                nn.Parameter(torch.empty(rows, self.hidden_size, **factory)),
            )
            self.register_parameter(
                f"bias_hh_d{k}", nn.Parameter(torch.empty(rows, **factory))
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

    def recurrent_weight(self, k: int) -> torch.Tensor:
        """The recurrent weight ``weight_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"weight_hh_d{k}")

    def recurrent_bias(self, k: int) -> torch.Tensor:
        """The bias ``bias_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"bias_hh_d{k}")

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

    def forward(self, x: torch.Tensor, s: torch.Tensor | None = None) -> torch.Tensor:
        return _cell_forward(self, x, s)

    def extra_repr(self) -> str:
        return (
            f"{self.input_size}, {self.hidden_size}, depth={self.depth}, "
            f"coupled={self.coupled}, transform_bias={self.transform_bias}"
        )


def _cell_forward(
    cell: RHNCell | DTRNNCell, x: torch.Tensor, s: torch.Tensor | None
) -> torch.Tensor:
    """One step of ``cell`` (an :class:`RHNCell` or a :class:`DTRNNCell`).

    Checks ``x`` and ``s``, projects the input with ``weight_ih`` and runs the
    cell's micro-layers (``cell.step``); unbatched in, unbatched out.
    """
    x = _checks.float_tensor("x", x)
    if x.dim() not in (1, 2) or x.shape[-1] != cell.input_size:
        raise ValueError(
            f"x must have shape (B, I) or unbatched (I,) with I = "
            f"{cell.input_size}, got {_checks.shape_str(x.shape)}"
        )
    _checks.same_dtype("x", x, cell.weight_ih)
    unbatched = x.dim() == 1
    if unbatched:
        x = x.unsqueeze(0)
    if s is None:
        s = x.new_zeros(x.shape[0], cell.hidden_size)
    else:
        s = _check_cell_state(s, x, unbatched, cell.hidden_size)
    s = cell.step(F.linear(x, cell.weight_ih), s)
    return s.squeeze(0) if unbatched else s


def _check_cell_state(
    s: object, x: torch.Tensor, unbatched: bool, hidden_size: int
) -> torch.Tensor:
    """Check the state handed to a cell's ``forward``; return it ``(B, H)``."""
    s = _checks.float_tensor("s", s)
    expected = (hidden_size,) if unbatched else (x.shape[0], hidden_size)
    if tuple(s.shape) != expected:
        legend = "(H,)" if unbatched else "(B, H)"
        raise ValueError(
            f"s must have shape {legend} = {_checks.shape_str(expected)} for "
            f"this input, got {_checks.shape_str(s.shape)}"
        )
    _checks.same_dtype("s", s, x)
    return s.unsqueeze(0) if unbatched else s


def _dropout_mask(p: float, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """A mask of 0 and ``1/(1-p)`` entries, drawn once per sequence."""
    return like.new_empty(shape).bernoulli_(1.0 - p).div_(1.0 - p)


class RHN(nn.Module):
    r"""A multi-layer Recurrent Highway Network with variational dropout.

    Layer ``l`` runs an :class:`RHNCell` over the sequence; its outputs (the
    state after every time step) are the inputs of layer ``l + 1``. The output
    of the network is the state sequence of the last layer.

    Dropout is *variational* (Gal and Ghahramani, 2016): each mask is drawn once
    per sequence and reused at every time step and every micro-layer, so the
    recurrence sees the same thinned network throughout. Masks are only applied
    in training mode; ``eval()`` turns them off.

    Args:
        input_size: number of input features ``I``.
        hidden_size: number of state features ``H`` of every layer.
        depth: recurrence depth ``D`` of every layer.
        num_layers: number of stacked layers ``N`` (default 1).
        batch_first: if ``True``, ``x`` and ``output`` are ``(B, T, .)``
            instead of ``(T, B, .)`` (default ``False``). The state stays
            ``(N, B, H)``.
        coupled: coupled carry gate ``c = 1 - t`` (default ``True``).
        transform_bias: initial transform-gate bias (default ``-2.0``).
        input_dropout: rate of the mask on each layer's input (default 0).
        state_dropout: rate of the mask on the recurrent state where it enters
            the recurrent weights (default 0).
        output_dropout: rate of the mask on the network's output (default 0).
        init_scale: see :class:`RHNCell`.
        impl: how each layer runs. ``"fast"`` uses :func:`rhn.fast.run_layer`,
            one autograd node per layer with a hand-written backward, in plain
            PyTorch; ``"triton"`` uses :func:`rhn.fused.run_layer`, the same
            with one fused Triton kernel for the element-wise work of each
            micro-layer (needs the optional ``triton`` package and CUDA
            tensors); ``"loop"`` runs the plain per-step loop over
            :meth:`RHNCell.step` (the reference); ``"auto"`` (default) picks
            ``"fast"``. The Triton kernels are tested in Triton's interpreter
            on the CPU but have not yet run on a GPU, so ``"auto"`` chooses
            them only once that has been measured; ask for ``"triton"`` to
            use them now. All give the same outputs and gradients, of
            any order, to float rounding; under ``torch.autocast`` all train,
            the fast and Triton paths keeping their state in float32 (see
            :mod:`rhn.fast`). Inside ``torch.func`` transforms ``"fast"`` and
            ``"triton"`` fall back to the loop.
        device, dtype: where and in what precision to create the parameters.

    Inputs: x, state
        - **x** of shape ``(T, B, I)``, ``(B, T, I)`` with ``batch_first``, or
          unbatched ``(T, I)``.
        - **state** of shape ``(N, B, H)`` (``(N, H)`` unbatched): the initial
          state of each layer. Defaults to zeros.

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
        depth: int,
        num_layers: int = 1,
        *,
        batch_first: bool = False,
        coupled: bool = True,
        transform_bias: float = -2.0,
        input_dropout: float = 0.0,
        state_dropout: float = 0.0,
        output_dropout: float = 0.0,
        init_scale: float | None = None,
        impl: str = "auto",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        self.num_layers = _checks.positive_int("num_layers", num_layers)
        self.batch_first = _checks.boolean("batch_first", batch_first)
        self.input_dropout = _checks.probability("input_dropout", input_dropout)
        self.state_dropout = _checks.probability("state_dropout", state_dropout)
        self.output_dropout = _checks.probability("output_dropout", output_dropout)
        self.impl = _checks.choice("impl", impl, IMPLS)
        if self.impl == "triton" and not _fused_available():
            raise ValueError(
                "impl='triton' needs the optional package triton, which is not "
                "installed: pip install 'rhn[triton]', or use impl='fast'"
            )
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

    @property
    def coupled(self) -> bool:
        return self.cells[0].coupled

    @property
    def transform_bias(self) -> float:
        return self.cells[0].transform_bias

    def forward(
        self, x: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return _stacked_forward(
            self, x, state, lambda x: _select_run_layer(self.impl, x) or RHN._run_layer
        )

    @staticmethod
    def _run_layer(
        cell: RHNCell | DTRNNCell,
        x: torch.Tensor,
        s: torch.Tensor,
        state_mask: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run one layer over the sequence: the plain per-step loop."""
        x_proj = F.linear(x, cell.weight_ih)  # (T, B, G*H): one matmul for all steps
        outputs = []
        for x_t in x_proj.unbind(0):
            s = cell.step(x_t, s, state_mask)
            outputs.append(s)
        return torch.stack(outputs), s  # (T, B, H), (B, H)

    def extra_repr(self) -> str:
        parts = [
            f"{self.input_size}, {self.hidden_size}, depth={self.depth}",
            f"num_layers={self.num_layers}",
        ]
        if self.batch_first:
            parts.append("batch_first=True")
        if self.impl != "auto":
            parts.append(f"impl={self.impl!r}")
        for name in ("input_dropout", "state_dropout", "output_dropout"):
            if getattr(self, name):
                parts.append(f"{name}={getattr(self, name)}")
        return ", ".join(parts)


IMPLS = ["auto", "fast", "triton", "loop"]
"""The values of ``RHN(impl=...)``."""


def _fused_available() -> bool:
    return importlib.util.find_spec("triton") is not None


def _select_run_layer(impl: str, x: torch.Tensor) -> Callable[..., object] | None:
    """The layer function for ``impl`` and input ``x``; ``None`` for the loop."""
    if impl == "loop" or not fast.supported():  # torch.func: the loop traces
        return None
    if impl == "triton":
        from . import fused  # imports triton: only when asked for

        return fused.run_layer
    return fast.run_layer  # same result as the loop, see rhn/fast.py


def _stacked_forward(
    model: RHN | DTRNN,
    x: torch.Tensor,
    state: torch.Tensor | None,
    pick_run_layer: Callable[[torch.Tensor], Callable[..., object]],
) -> tuple[torch.Tensor, torch.Tensor]:
    """The forward of :class:`RHN` and :class:`DTRNN`: checks, layers, dropout.

    ``pick_run_layer(x)`` returns the function that runs one layer over the
    sequence (the plain loop, or the fast or Triton path for the RHN).
    """
    x, unbatched = _checks.sequence(x, model.input_size, model.batch_first)
    _checks.same_dtype("x", x, model.cells[0].weight_ih)
    T, B, _ = x.shape
    H = model.hidden_size
    if state is None:
        state = x.new_zeros(model.num_layers, B, H)
    else:
        state = _checks.state(state, model.num_layers, B, H, unbatched, x)
    drop = model.training
    layer_input = x  # (T, B, I) for layer 0, then (T, B, H)
    finals = []
    run_layer = pick_run_layer(x)
    for layer, cell in enumerate(model.cells):
        if drop and model.input_dropout > 0:
            mask = _dropout_mask(model.input_dropout, layer_input.shape[1:], x)
            layer_input = layer_input * mask  # same mask at every step
        state_mask = None
        if drop and model.state_dropout > 0:
            state_mask = _dropout_mask(model.state_dropout, (B, H), x)
        layer_input, s = run_layer(cell, layer_input, state[layer], state_mask)
        finals.append(s)
    output = layer_input  # (T, B, H)
    if drop and model.output_dropout > 0:
        output = output * _dropout_mask(model.output_dropout, (B, H), x)
    state = torch.stack(finals)  # (N, B, H)
    if unbatched:
        return output.squeeze(1), state.squeeze(1)
    if model.batch_first:
        output = output.transpose(0, 1)
    return output, state


class DTRNNCell(nn.Module):
    r"""One time step of a deep-transition RNN without gates (Pascanu et al., 2013).

    The gate-free counterpart of :class:`RHNCell`, the network the RHN paper's
    optimisation study (Zilly et al., 2017, section 5.1) compares against. For
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
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        factory = _checks.factory(device, dtype)
        self.init_scale = _checks.init_scale(init_scale, factory["dtype"])
        H = self.hidden_size
        self.weight_ih = nn.Parameter(torch.empty(H, self.input_size, **factory))
        for k in range(self.depth):
            self.register_parameter(
                f"weight_hh_d{k}", nn.Parameter(torch.empty(H, H, **factory))
            )
            self.register_parameter(
                f"bias_hh_d{k}", nn.Parameter(torch.empty(H, **factory))
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

    def recurrent_weight(self, k: int) -> torch.Tensor:
        """The recurrent weight ``weight_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"weight_hh_d{k}")

    def recurrent_bias(self, k: int) -> torch.Tensor:
        """The bias ``bias_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"bias_hh_d{k}")

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

    def forward(self, x: torch.Tensor, s: torch.Tensor | None = None) -> torch.Tensor:
        return _cell_forward(self, x, s)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, depth={self.depth}"


class DTRNN(nn.Module):
    r"""A multi-layer deep-transition RNN without gates, with the RHN interface.

    Layer ``l`` runs a :class:`DTRNNCell` over the sequence; the output is the
    last layer's state after every time step. Everything but the cell is as in
    :class:`RHN`: the same arguments (without the gate options), the same
    shapes, and the same variational dropout (one mask per sequence).

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
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        self.num_layers = _checks.positive_int("num_layers", num_layers)
        self.batch_first = _checks.boolean("batch_first", batch_first)
        self.input_dropout = _checks.probability("input_dropout", input_dropout)
        self.state_dropout = _checks.probability("state_dropout", state_dropout)
        self.output_dropout = _checks.probability("output_dropout", output_dropout)
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

    def forward(
        self, x: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return _stacked_forward(self, x, state, lambda x: RHN._run_layer)

    def extra_repr(self) -> str:
        parts = [
            f"{self.input_size}, {self.hidden_size}, depth={self.depth}",
            f"num_layers={self.num_layers}",
        ]
        if self.batch_first:
            parts.append("batch_first=True")
        for name in ("input_dropout", "state_dropout", "output_dropout"):
            if getattr(self, name):
                parts.append(f"{name}={getattr(self, name)}")
        return ", ".join(parts)


_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "identity": lambda a: a,
}


class Highway(nn.Module):
    r"""A feed-forward highway layer (Srivastava et al., 2015).

    .. math::
        y = t \odot f(W_H x + b_H) + (1 - t) \odot x, \qquad
        t = \sigma(W_T x + b_T)

    Args:
        size: number of features, the same in and out.
        activation: ``"relu"`` (default), ``"tanh"``, ``"identity"`` or a
            callable applied element-wise to the candidate.
        gate_bias: initial value of :math:`b_T` (default ``-2.0``), negative so
            the layer starts by mostly carrying its input through; deeper
            networks want more negative values.

    Shape:
        - Input: ``(*, size)``. Output: the same shape.

    Attributes:
        weight: ``(2*size, size)``, row blocks ``[W_H; W_T]``.
        bias: ``(2*size,)``, blocks ``[b_H; b_T]``.
    """

    def __init__(
        self,
        size: int,
        *,
        activation: str | Callable[[torch.Tensor], torch.Tensor] = "relu",
        gate_bias: float = -2.0,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.size = _checks.positive_int("size", size)
        if callable(activation):
            self.activation = activation
        else:
            name = _checks.choice("activation", activation, list(_ACTIVATIONS))
            self.activation = _ACTIVATIONS[name]
        factory = _checks.factory(device, dtype)
        self.gate_bias = _checks.representable(
            "gate_bias", _checks.real("gate_bias", gate_bias), factory["dtype"]
        )
        self.weight = nn.Parameter(torch.empty(2 * self.size, self.size, **factory))
        self.bias = nn.Parameter(torch.empty(2 * self.size, **factory))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weights uniform in ``±1/sqrt(size)``; ``b_H = 0``, ``b_T = gate_bias``."""
        scale = 1.0 / math.sqrt(self.size)
        with torch.no_grad():
            self.weight.uniform_(-scale, scale)
            self.bias.zero_()
            self.bias[self.size :] = self.gate_bias

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        """The transform gate ``t`` for input ``x`` (same shape as ``x``)."""
        return torch.sigmoid(
            F.linear(x, self.weight[self.size :], self.bias[self.size :])
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = _checks.float_tensor("x", x)
        if x.dim() == 0 or x.shape[-1] != self.size:
            raise ValueError(
                f"x must have shape (*, {self.size}) (size={self.size}), got "
                f"{_checks.shape_str(x.shape)}"
            )
        _checks.same_dtype("x", x, self.weight)
        a = F.linear(x, self.weight, self.bias)  # (*, 2*size)
        h = self.activation(a[..., : self.size])
        t = torch.sigmoid(a[..., self.size :])
        return h * t + x * (1.0 - t)

    def extra_repr(self) -> str:
        return f"{self.size}, gate_bias={self.gate_bias}"
