r"""What :class:`rhn.RHN` and :class:`rhn.DTRNN` share: layers, checks, dropout.

Both are stacks of cells with micro-layers (:mod:`rhn.cells`); they differ only
in the cell and in how one layer runs over the sequence. Here are the parts
written once for both: the constructor's arguments and checks
(:class:`StackedRecurrence`), the cell's parameter layout
(:class:`MicroLayerParameters`), one cell step with its input checks
(:func:`cell_forward`), the variational-dropout masks
(:class:`DropoutMasks`) and the stacked forward (:func:`stacked_forward`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks

RunLayer = Callable[
    [nn.Module, torch.Tensor, torch.Tensor, torch.Tensor | None],
    tuple[torch.Tensor, torch.Tensor],
]
"""``run(cell, x, s, state_mask) -> (output, final)``: one layer over a sequence."""


class MicroLayerParameters(nn.Module):
    """The parameter layout of a cell with ``depth`` micro-layers.

    ``weight_ih`` ``(rows, I)`` and, per micro-layer ``k``, ``weight_hh_d{k}``
    ``(rows, H)`` and ``bias_hh_d{k}`` ``(rows,)``; ``rows`` is ``G*H``.
    """

    def _init_parameters(
        self,
        input_size: int,
        hidden_size: int,
        depth: int,
        gates: int,
        init_scale: float | None,
        device: torch.device | str | None,
        dtype: torch.dtype | None,
    ) -> dict:
        """Check the sizes, create the (empty) parameters; return the factory."""
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        factory = _checks.factory(device, dtype)
        self.init_scale = _checks.init_scale(init_scale, factory["dtype"])
        rows = gates * self.hidden_size
        self.weight_ih = nn.Parameter(torch.empty(rows, self.input_size, **factory))
        for k in range(self.depth):
            self.register_parameter(
                f"weight_hh_d{k}",
                nn.Parameter(torch.empty(rows, self.hidden_size, **factory)),
            )
            self.register_parameter(
                f"bias_hh_d{k}", nn.Parameter(torch.empty(rows, **factory))
            )
        return factory

    def recurrent_weight(self, k: int) -> torch.Tensor:
        """The recurrent weight ``weight_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"weight_hh_d{k}")

    def recurrent_bias(self, k: int) -> torch.Tensor:
        """The bias ``bias_hh_d{k}`` of micro-layer ``k``."""
        return getattr(self, f"bias_hh_d{k}")

    def forward(self, x: torch.Tensor, s: torch.Tensor | None = None) -> torch.Tensor:
        """One time step: the state after reading ``x`` from state ``s``.

        Args:
            x: the input of this step, ``(B, I)`` or unbatched ``(I,)``.
            s: the incoming state, ``(B, H)`` or ``(H,)``; ``None``: zeros.

        Returns:
            The new state, ``(B, H)`` (or ``(H,)``), after all ``depth``
            micro-layers (see the class docstring for the equations).
        """
        return cell_forward(self, x, s)


def cell_forward(
    cell: nn.Module, x: torch.Tensor, s: torch.Tensor | None
) -> torch.Tensor:
    """One step of ``cell`` (an :class:`rhn.RHNCell` or a :class:`rhn.DTRNNCell`).

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
    """A mask of 0 and ``1/(1-p)`` entries."""
    return like.new_empty(shape).bernoulli_(1.0 - p).div_(1.0 - p)


@dataclass(frozen=True)
class DropoutMasks:
    r"""The variational-dropout masks of one batch of sequences.

    Made by :meth:`rhn.RHN.dropout_masks` (or :meth:`rhn.DTRNN.dropout_masks`)
    and passed to ``forward(..., masks=masks)`` to reuse the same masks over
    several calls, e.g. over the windows of truncated backpropagation through
    time. Each entry is ``None`` where its rate is 0.

    Attributes:
        input: per layer, the mask on the layer's input, ``(B, I)`` for layer
            0 and ``(B, H)`` above.
        state: per layer, the mask on the state where it enters the recurrent
            weights, ``(B, H)``.
        output: the mask on the network's output, ``(B, H)``.
    """

    input: tuple[torch.Tensor | None, ...]
    state: tuple[torch.Tensor | None, ...]
    output: torch.Tensor | None

    @property
    def batch_size(self) -> int | None:
        """``B``, or ``None`` when every rate is 0 (no masks at all)."""
        for mask in (*self.input, *self.state, self.output):
            if mask is not None:
                return mask.shape[0]
        return None


class StackedRecurrence(nn.Module):
    """The constructor arguments, dropout and forward shared by RHN and DTRNN.

    Subclasses build ``self.cells`` and implement :meth:`_layer_runner`.
    """

    def _init_stack(
        self,
        input_size: int,
        hidden_size: int,
        depth: int,
        num_layers: int,
        batch_first: bool,
    ) -> None:
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.depth = _checks.positive_int("depth", depth)
        self.num_layers = _checks.positive_int("num_layers", num_layers)
        self.batch_first = _checks.boolean("batch_first", batch_first)

    def _init_dropout(
        self, input_dropout: float, state_dropout: float, output_dropout: float
    ) -> None:
        self.input_dropout = _checks.probability("input_dropout", input_dropout)
        self.state_dropout = _checks.probability("state_dropout", state_dropout)
        self.output_dropout = _checks.probability("output_dropout", output_dropout)

    def _layer_runner(self, x: torch.Tensor) -> RunLayer:
        raise NotImplementedError

    def dropout_masks(self, batch_size: int) -> DropoutMasks:
        """Draw one set of variational-dropout masks for ``batch_size`` sequences.

        The masks are drawn from PyTorch's global generator, in the order
        ``forward`` draws them itself, on the device and in the dtype of the
        parameters. Pass them as ``forward(x, state, masks=masks)``.
        """
        B = _checks.positive_int("batch_size", batch_size, minimum=0)
        return self._draw_masks(B, self.cells[0].weight_ih)

    def _draw_masks(self, B: int, like: torch.Tensor) -> DropoutMasks:
        inputs, states = [], []
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.hidden_size
            inputs.append(
                _dropout_mask(self.input_dropout, (B, width), like)
                if self.input_dropout > 0
                else None
            )
            states.append(
                _dropout_mask(self.state_dropout, (B, self.hidden_size), like)
                if self.state_dropout > 0
                else None
            )
        output = None
        if self.output_dropout > 0:
            output = _dropout_mask(self.output_dropout, (B, self.hidden_size), like)
        return DropoutMasks(tuple(inputs), tuple(states), output)

    def forward(
        self,
        x: torch.Tensor,
        state: torch.Tensor | None = None,
        *,
        masks: DropoutMasks | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the whole sequence ``x`` through every layer.

        Args:
            x: ``(T, B, I)``, ``(B, T, I)`` with ``batch_first``, or
                unbatched ``(T, I)``.
            state: the initial state of each layer, ``(N, B, H)`` (``(N, H)``
                unbatched); ``None``: zeros.
            masks: the variational-dropout masks of :meth:`dropout_masks`
                (keyword, training mode only); ``None``: fresh masks at every
                call.

        Returns:
            ``(output, state)``: ``output`` ``(T, B, H)`` (``(B, T, H)`` with
            ``batch_first``), the last layer's state after every step;
            ``state`` ``(N, B, H)``, every layer's final state, which passed
            back in continues the sequence exactly.
        """
        return stacked_forward(self, x, state, masks)

    def _stack_repr(self) -> list[str]:
        parts = [
            f"{self.input_size}, {self.hidden_size}, depth={self.depth}",
            f"num_layers={self.num_layers}",
        ]
        if self.batch_first:
            parts.append("batch_first=True")
        return parts

    def _dropout_repr(self) -> list[str]:
        names = ("input_dropout", "state_dropout", "output_dropout")
        return [f"{n}={getattr(self, n)}" for n in names if getattr(self, n)]


def _check_masks(masks: object, model: StackedRecurrence, B: int) -> DropoutMasks:
    if not isinstance(masks, DropoutMasks):
        raise TypeError(
            "masks must be the DropoutMasks of model.dropout_masks(batch_size), "
            f"got {type(masks).__name__}"
        )
    if len(masks.input) != model.num_layers or len(masks.state) != model.num_layers:
        raise ValueError(
            f"masks must have one input and one state mask per layer "
            f"(num_layers={model.num_layers}), got {len(masks.input)} and "
            f"{len(masks.state)}"
        )
    drawn = masks.batch_size
    if drawn is not None and drawn != B:
        raise ValueError(
            f"masks were drawn for batch size {drawn}, but x has batch size {B}"
        )
    # each mask's width: the layer's input (I below, H above) or its state
    H = model.hidden_size
    widths = [
        (f"input[{n}]", m, model.input_size if n == 0 else H)
        for n, m in enumerate(masks.input)
    ]
    widths += [(f"state[{n}]", m, H) for n, m in enumerate(masks.state)]
    widths.append(("output", masks.output, H))
    for where, mask, width in widths:
        if mask is not None and int(mask.shape[-1]) != width:
            raise ValueError(
                f"masks.{where} has width {int(mask.shape[-1])}, but this model "
                f"needs {width} (input_size={model.input_size}, "
                f"hidden_size={H}): draw the masks with this model's "
                "dropout_masks(batch_size)"
            )
    return masks


def stacked_forward(
    model: StackedRecurrence,
    x: torch.Tensor,
    state: torch.Tensor | None,
    masks: DropoutMasks | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The forward of :class:`rhn.RHN` and :class:`rhn.DTRNN`: checks, layers, dropout.

    ``model._layer_runner(x)`` returns the function that runs one layer over
    the sequence (the plain loop, or the fast or Triton path for the RHN).
    Without ``masks``, training mode draws fresh masks at every call.
    """
    x, unbatched = _checks.sequence(x, model.input_size, model.batch_first)
    _checks.same_dtype("x", x, model.cells[0].weight_ih)
    T, B, _ = x.shape
    H = model.hidden_size
    if state is None:
        state = x.new_zeros(model.num_layers, B, H)
    else:
        state = _checks.state(state, model.num_layers, B, H, unbatched, x)
    if masks is not None:
        masks = _check_masks(masks, model, B)
    drop = model.training
    if drop and masks is None:
        masks = model._draw_masks(B, x)  # one set per call, the same at every step
    layer_input = x  # (T, B, I) for layer 0, then (T, B, H)
    finals = []
    run_layer = model._layer_runner(x)
    for layer, cell in enumerate(model.cells):
        state_mask = None
        if drop:
            if masks.input[layer] is not None:
                layer_input = layer_input * masks.input[layer]
            state_mask = masks.state[layer]
        layer_input, s = run_layer(cell, layer_input, state[layer], state_mask)
        finals.append(s)
    output = layer_input  # (T, B, H)
    if drop and masks.output is not None:
        output = output * masks.output
    state = torch.stack(finals)  # (N, B, H)
    if unbatched:
        return output.squeeze(1), state.squeeze(1)
    if model.batch_first:
        output = output.transpose(0, 1)
    return output, state
