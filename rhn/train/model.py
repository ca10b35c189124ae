"""The model a run trains and how it is scored: a core with a linear head."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import _checks, chorales
from ..baselines import build_model, count_parameters, matched_hidden_size
from ..tasks import Task, get_task
from .config import TrainConfig

__all__ = ["SequenceModel", "make_model"]


class SequenceModel(nn.Module):
    r"""A recurrent core with a linear head: sequence in, prediction out.

    Args:
        core: any model of :mod:`rhn`
            (``forward(x, state=None) -> (output (T, B, H), state)``)
            with a ``hidden_size`` attribute.
        out_features: outputs of the head: 1 for regression, the number of
            classes for classification.
        readout: ``"last"`` (default) scores the output of the last time step
            only; ``"all"`` applies the head at every step.
        batch_first: ``False`` (default): inputs ``(T, B, I)``, time first, as
            training feeds them; ``True``: ``(B, T, I)``, and per-step outputs
            ``(B, T, ...)``, as data kept sequence by sequence are.

    Inputs: x, state
        - **x** of shape ``(T, B, I)`` (``(B, T, I)`` with ``batch_first``),
          or ``(T, I)`` for one sequence, whose outputs then have no batch
          axis.
        - **state** (optional): the core's state to start from, as a call
          with ``return_state=True`` returned it; ``None`` (default) starts
          from zeros. It keeps the core's own layout whatever ``batch_first``
          says (for an RHN ``(N, B, H)``; a batch of 1 for one sequence).

    Outputs: y, or (y, state) with ``return_state=True``
        - ``readout="last"``: ``(B,)`` if ``out_features == 1``, else
          ``(B, out_features)``.
        - ``readout="all"``: ``(T, B)`` or ``(T, B, out_features)``
          (``(B, T)`` or ``(B, T, out_features)`` with ``batch_first``).
        - **state**: the core's state after the last step. Passing it to the
          next call continues the sequences, so a model in eval mode (as
          :func:`rhn.train.load_model` returns it) can be run one step at a
          time, each step with a time axis of length 1 (``x[:, t:t+1]`` batch
          first), and give what one call over the whole sequence gives; in
          training mode dropout draws new masks on every call.
    """

    def __init__(
        self,
        core: nn.Module,
        out_features: int,
        *,
        readout: str = "last",
        batch_first: bool = False,
    ):
        super().__init__()
        self.core = core
        self.out_features = _checks.positive_int("out_features", out_features)
        self.readout = _checks.choice("readout", readout, ["last", "all"])
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first must be True or False, got {type(batch_first).__name__}"
            )
        self.batch_first = batch_first
        self.head = nn.Linear(core.hidden_size, self.out_features)
        # Build the head with the core's dtype and device.
        ref = next(core.parameters())
        self.head.to(device=ref.device, dtype=ref.dtype)

    def forward(
        self, x: torch.Tensor, state: Any = None, *, return_state: bool = False
    ) -> Any:
        """The prediction for the sequences ``x`` of shape ``(T, B, I)``
        (``(B, T, I)`` with ``batch_first``).

        Returns ``(B,)`` or ``(B, out_features)`` with ``readout="last"``,
        ``(T, B)`` or ``(T, B, out_features)`` with ``readout="all"``
        (``out_features == 1`` is squeezed; ``(B, T, ...)`` with
        ``batch_first``). One sequence ``(T, I)`` gives the same without
        the batch axis. ``state`` starts the core from a state a call with
        ``return_state=True`` returned, which then returns ``(y, state)``.
        """
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a tensor, got {type(x).__name__}")
        if not isinstance(return_state, bool):
            raise TypeError(
                f"return_state must be True or False, got {type(return_state).__name__}"
            )
        one = x.dim() == 2  # a single sequence (T, I), either layout
        if one:
            inputs = getattr(self.core, "input_size", None)
            if inputs is not None and x.shape[-1] != inputs:
                layout = "(B, T" if self.batch_first else "(T, B"
                raise ValueError(
                    f"x must be one sequence (T, {inputs}) or a batch "
                    f"{layout}, {inputs}), got shape {tuple(x.shape)}"
                )
            y, state = self.forward(
                x.unsqueeze(0 if self.batch_first else 1), state, return_state=True
            )
            y = y[0] if self.readout == "last" or self.batch_first else y[:, 0]
            return (y, state) if return_state else y
        if self.batch_first:
            inputs = getattr(self.core, "input_size", None)
            if x.dim() != 3 or (inputs is not None and x.shape[-1] != inputs):
                size = "I" if inputs is None else inputs
                raise ValueError(
                    f"x must be a 3-D tensor (B, T, {size}) (batch_first=True) "
                    f"or one sequence (T, {size}), got shape {tuple(x.shape)}"
                )
            x = x.transpose(0, 1)
        output, state = self.core(x, state)  # (T, B, H)
        if self.readout == "last":
            output = output[-1]  # (B, H)
        y = self.head(output)  # (..., out_features)
        y = y.squeeze(-1) if self.out_features == 1 else y
        if self.batch_first and self.readout == "all":
            y = y.transpose(0, 1)
        return (y, state) if return_state else y

    def extra_repr(self) -> str:
        first = ", batch_first=True" if self.batch_first else ""
        return f"readout={self.readout!r}{first}"


def make_model(
    config: TrainConfig, device: torch.device | str | None = None
) -> nn.Module:
    """Build the :class:`SequenceModel` that ``config`` describes.

    The hidden size is ``config.hidden_size``, or, if that is ``None``, the one
    whose core has closest to ``config.num_params`` parameters
    (:func:`rhn.matched_hidden_size`); the head adds ``(H + 1) * outputs``.
    """
    task = get_task(config.task)
    model = build_sequence_model(
        {k: getattr(config, k) for k in _MODEL_FIELDS},
        model_io(task),
        task_name=task.name,
        device=device,
    )
    if task.init_head is not None:
        task.init_head(model.head)
    return model


# The fields of TrainConfig that shape the model, and the sizes of a task it
# needs: together they rebuild a trained model without the task's data.
_MODEL_FIELDS = (
    "model",
    "num_layers",
    "depth",
    "transform_bias",
    "forget_bias",
    "dropout",
    "hidden_size",
    "num_params",
)


LAYOUTS = {True: "batch-first (B, T, I)", False: "time-first (T, B, I)"}
"""How a message names a data layout, by its ``batch_first``."""


def model_io(task: Task) -> dict[str, Any]:
    """What a model needs of ``task``: its sizes, read-out and data layout (a
    checkpoint keeps them, so that :func:`rhn.train.load_model` needs no own
    task)."""
    return {
        "input_size": task.input_size,
        "output_size": task.output_size,
        "readout": task.readout,
        "batch_first": task.batch_first,
    }


def build_sequence_model(
    fields: dict[str, Any],
    io: dict[str, Any],
    *,
    task_name: str,
    device: torch.device | str | None = None,
    batch_first: bool = False,
) -> SequenceModel:
    """The untrained :class:`SequenceModel` of the config ``fields``
    (:data:`_MODEL_FIELDS`) for a task of sizes ``io`` (:func:`model_io`)."""
    kwargs = _core_options(fields)
    kind = fields["model"]
    inputs = io["input_size"]
    H = _hidden_size(fields, kwargs, inputs, task_name)
    core = build_model(kind, inputs, H, device=device, **kwargs)
    return SequenceModel(
        core, io["output_size"], readout=io["readout"], batch_first=batch_first
    )


def _core_options(fields: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the core's constructor that ``fields`` give."""
    kwargs: dict[str, Any] = {"num_layers": fields["num_layers"]}
    kind = fields["model"]
    if kind == "rhn":
        kwargs.update(depth=fields["depth"], transform_bias=fields["transform_bias"])
    if kind == "dtrnn":
        kwargs.update(depth=fields["depth"])
    if kind == "lstm":
        kwargs.update(forget_bias=fields["forget_bias"])
    if kind == "rhn" and fields["dropout"] > 0:
        rate = fields["dropout"]
        kwargs.update(input_dropout=rate, state_dropout=rate, output_dropout=rate)
    return kwargs


def _hidden_size(
    fields: dict[str, Any], kwargs: dict[str, Any], inputs: int, task_name: str
) -> int:
    """``hidden_size``, or the one whose core is closest to ``num_params``."""
    kind = fields["model"]
    if fields["hidden_size"] is not None:
        return int(fields["hidden_size"])
    smallest = count_parameters(build_model(kind, inputs, 1, device="meta", **kwargs))
    if fields["num_params"] < smallest:  # hidden size 1 is over the budget
        raise ValueError(
            f"num_params must be at least {smallest}, the core of the smallest "
            f"{kind} (hidden size 1) on task {task_name!r} "
            f"({inputs} inputs), got {fields['num_params']}"
        )
    return matched_hidden_size(kind, inputs, fields["num_params"], **kwargs)


def hidden_size(config: TrainConfig) -> int:
    """The hidden size the model of ``config`` gets (``num_params`` resolved)."""
    task = get_task(config.task)
    fields = {k: getattr(config, k) for k in _MODEL_FIELDS}
    return _hidden_size(
        fields, _core_options(fields), model_io(task)["input_size"], task.name
    )


def loss(
    task: Task,
    prediction: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The task's loss of a batch; with a ``mask`` (``(T, B)`` bool, targets per
    step), the mean over the targets it keeps."""
    prediction = prediction.float()  # the loss in float32 even under autocast
    if task.loss == "frame_nll":  # piano rolls, padding marked in the targets
        return chorales.task_loss(prediction, target)
    expected = prediction.shape if task.loss == "mse" else prediction.shape[:-1]
    if target.shape != expected:  # MSE would broadcast (B, 1) against (B,)
        raise ValueError(
            f"task {task.name!r}: its targets have shape {tuple(target.shape)}, "
            f"expected {tuple(expected)} to match the model's predictions "
            f"{tuple(prediction.shape)} ({task.loss}, readout={task.readout!r}); "
            "give one target per sequence (B,) or per step (T, B)"
        )
    if mask is not None:
        return _masked_loss(task, prediction, target, mask)
    if task.loss == "mse":
        return F.mse_loss(prediction, target.float())
    return F.cross_entropy(prediction.reshape(-1, task.output_size), target.reshape(-1))


def _masked_loss(
    task: Task, prediction: torch.Tensor, target: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    steps = tuple(prediction.shape[:2])
    if task.readout != "all" or mask.dtype != torch.bool or mask.shape != steps:
        raise ValueError(
            f"task {task.name!r}: its mask must be a bool tensor (T, B) = {steps} "
            f"beside targets per step (readout='all'), got a {mask.dtype} mask of "
            f"shape {tuple(mask.shape)} with readout={task.readout!r}"
        )
    count = mask.sum().clamp(min=1)
    if task.loss == "mse":
        error = (prediction - target.float()) ** 2  # (T, B) or (T, B, K)
        keep = mask if error.dim() == 2 else mask.unsqueeze(-1).expand_as(error)
        count = count * (1 if error.dim() == 2 else error.shape[-1])
        return torch.where(keep, error, 0.0).sum() / count
    per_target = F.cross_entropy(
        prediction.reshape(-1, task.output_size),
        torch.where(mask, target, 0).reshape(-1),  # left-out labels are never read
        reduction="none",
    )
    return torch.where(mask.reshape(-1), per_target, 0.0).sum() / count


@torch.no_grad()
def evaluate(
    model: nn.Module,
    task: Task,
    data: tuple[torch.Tensor, ...],
    autocast: Callable[[], contextlib.AbstractContextManager],
    chunk: int = 1024,
) -> dict[str, float]:
    """Held-out loss (and accuracy for class labels), by chunks.

    ``data`` is ``(inputs, targets)`` or ``(inputs, targets, mask)``; with a
    mask the loss and the accuracy are means over the targets it keeps, over
    all chunks. The accuracy of labels per step counts every kept step.
    """
    was_training = model.training
    model.eval()
    x, y = data[0], data[1]
    mask = data[2] if len(data) > 2 else None
    if task.loss == "frame_nll":  # a whole split at once: NLL per frame
        with autocast():
            pred = model(x)
        model.train(was_training)
        return {"test_loss": loss(task, pred, y).item()}
    axis = 0 if task.readout == "last" else 1  # the batch axis of the targets
    B = y.shape[axis]
    total, correct, weight, counted = 0.0, 0, 0, 0
    for start in range(0, B, chunk):
        xb, yb = (
            x[:, start : start + chunk],
            y.narrow(axis, start, min(chunk, B - start)),
        )
        with autocast():
            pred = model(xb)
        if mask is None:
            n = yb.shape[axis]
            total += loss(task, pred, yb).item() * n
        else:
            mb = mask[:, start : start + chunk]
            n = int(mb.sum())
            total += loss(task, pred, yb, mb).item() * n
        weight += n
        if task.loss == "cross_entropy":
            hits = pred.argmax(-1) == yb
            if mask is not None:
                hits = hits & mask[:, start : start + chunk].bool()
            correct += int(hits.sum())
            # every label scored: one per sequence, or one per (kept) step
            counted += n if mask is not None else hits.numel()
    model.train(was_training)
    out = {"test_loss": total / max(weight, 1)}
    if task.loss == "cross_entropy":
        out["test_accuracy"] = correct / max(counted, 1)
    return out


# Parameters per weight row of each model: how many gate blocks it stacks.
_GATE_BLOCKS = {"rhn": 2, "dtrnn": 1, "lstm": 4, "gru": 3, "rnn": 1}
# Bytes per parameter in training: weights, gradient, Adam's two moments
# (float32), plus its own copy for the best weights when patience is on.
_BYTES_PER_PARAMETER = 4 * 5


def estimate_bytes(
    config: TrainConfig,
    input_size: int,
    output_size: int = 1,
    readout: str = "last",
) -> tuple[int, int]:
    """An upper estimate of the memory a run needs: ``(parameters, bytes)``.

    Counted from the sizes alone (nothing is built): the recurrent weights of
    every layer and micro-layer and the head's ``(H + 1) * output_size``, then
    the activations one step keeps for the backward pass, for a batch of
    ``batch_size`` sequences of ``seq_len`` (with the head's outputs, at every
    step for ``readout="all"``, and their gradient).
    """
    G = _GATE_BLOCKS[config.model]
    D = config.depth if config.model in ("rhn", "dtrnn") else 1
    N = config.num_layers
    if config.hidden_size is None:
        params = config.num_params or 0
        H = max(1, int(math.isqrt(max(1, params // max(1, G * (D + N))))))
    else:
        H = config.hidden_size
        per_layer = G * H * (H * D + 2 * D)  # recurrent weights and biases
        params = G * H * input_size + (N - 1) * G * H * H + N * per_layer
    params += (H + 1) * output_size  # the head: one row per class or output
    activations = config.seq_len * config.batch_size * H * N * D * (G + 2)
    read = config.seq_len if readout == "all" else 1
    activations += 2 * read * config.batch_size * output_size
    return params, params * _BYTES_PER_PARAMETER + 4 * activations


def _available_bytes(device: torch.device) -> int | None:
    """Memory a run may use on ``device``: free GPU memory, or the machine's RAM."""
    if device.type == "cuda":
        try:
            return int(torch.cuda.mem_get_info(device)[0])
        except RuntimeError:
            return None
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not on this system
        return None


def check_memory(config: TrainConfig, task: Task, device: torch.device) -> None:
    """Refuse sizes that cannot fit before anything is allocated (or built: a
    huge ``depth`` would take hours just to construct its layers)."""
    params, need = estimate_bytes(
        config, task.input_size, task.output_size, task.readout
    )
    have = _available_bytes(device)
    if task.held_out is None and have is not None and need <= have:
        # the model fits: then the held-out set, drawn once and kept
        held = config.eval_samples * config.seq_len * (task.input_size + 1) * 4
        if need + held > have:
            raise ValueError(
                f"eval_samples must fit in memory: {config.eval_samples} held-out "
                f"sequences of seq_len={config.seq_len} need about "
                f"{held / 2**30:.3g} GiB, more than the {have / 2**30:.3g} GiB of "
                f"{device.type} (with the model's {need / 2**30:.3g} GiB); lower "
                "--eval-samples or --seq-len"
            )
    if have is None or need <= have:
        return
    size = (
        f"hidden_size={config.hidden_size}"
        if config.hidden_size is not None
        else f"num_params={config.num_params}"
    )
    raise ValueError(
        f"the model is too large for this machine: {size}, depth={config.depth}, "
        f"num_layers={config.num_layers}, batch_size={config.batch_size}, "
        f"seq_len={config.seq_len} need about {need / 2**30:.3g} GiB "
        f"({params:.3g} parameters), more than the {have / 2**30:.3g} GiB of "
        f"{device.type}"
        + (
            f" (its head has {task.output_size} outputs)"
            if task.output_size > 1024
            else ""
        )
        + "; lower --hidden-size/--num-params, --depth, --batch-size or --seq-len"
    )
