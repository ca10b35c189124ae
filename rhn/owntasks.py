r"""Your own data in the trainer: a :class:`rhn.tasks.Task` from tensors or a factory.

:func:`rhn.train.train` trains any :class:`rhn.tasks.Task`, with everything
the built-in tasks get (checkpoints and bit-identical resume, early stopping,
sweeps, mixed precision, metrics and a baseline). Two ways to make one:

- write a :class:`~rhn.tasks.Task` whose ``generate`` draws sequences from a
  ``torch.Generator`` (the toy tasks of :mod:`rhn.tasks` are examples);
- hand a fixed data set of sequences with targets to :func:`tensor_task`
  (time- or batch-first, one target or ``K`` per sequence or per step, a
  mask that leaves steps out of the loss), or the ``DataLoader`` objects that
  yield it to :func:`loader_task`.

A ``DataLoader`` of your own is not a second way to train: the trainer draws
each batch from a generator its checkpoint saves, which is what makes a
resume exact, and a loader's position and shuffling are not saved.
:func:`loader_task` reads your loaders once, whole, into the tensors of a
:func:`tensor_task` (so the data must fit in memory), and the run then
trains on them like any :func:`tensor_task`.

On the command line, ``python -m rhn train --task module:function`` imports
``module`` and calls ``function()`` for the task (:func:`task_from_spec`).

Example::

    >>> import torch
    >>> from rhn.owntasks import tensor_task
    >>> from rhn.train import TrainConfig, train
    >>> g = torch.Generator().manual_seed(0)
    >>> x = torch.randn(20, 300, 1, generator=g)  # (T, N, I)
    >>> y = x[:5].sum(0).squeeze(-1)  # (N,): the sum of the first five steps
    >>> task = tensor_task(x, y, name="sum5")
    >>> config = TrainConfig(task=task, steps=20, eval_every=10, progress=False,
    ...                      device="cpu", hidden_size=16)
    >>> result = train(config)
    >>> sorted(k for k in result.metrics if k.endswith("loss"))
    ['test_loss', 'valid_loss']
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import types
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from . import _checks, _io
from .tasks import TASKS, Task

__all__ = ["tensor_task", "loader_task", "task_from_spec"]


def _tensors(name: str, value: object) -> tuple[torch.Tensor, torch.Tensor, Any]:
    """``(inputs, targets)`` or ``(inputs, targets, mask)``: the split ``name``."""
    if not _checks.is_batch(value):
        raise TypeError(
            f"{name} must be a pair of tensors (inputs, targets) or a triple "
            f"(inputs, targets, mask), got {_what(value)}"
        )
    mask = value[2] if len(value) == 3 else None
    for what, t in zip(("inputs", "targets", "mask"), value, strict=False):
        if not isinstance(t, torch.Tensor):
            continue  # a mask of another kind: its own check names it
        what = what if name == "inputs, targets" else f"{name}: the {what}"
        if t.layout != torch.strided:
            raise ValueError(
                f"{what} must be a dense tensor, got a {t.layout} "
                "tensor; make it dense with .to_dense()"
            )
        if t.device.type == "meta":
            raise ValueError(
                f"{what} are on the meta device (shapes without "
                "data); give tensors that hold the data, e.g. on the CPU"
            )
    return value[0], value[1], mask


def _split_layout(batch_first: bool, readout: str | None, K: int | None) -> str:
    """The targets' shape in words, e.g. ``(N, T, K)``."""
    if readout == "last":
        return "(N, K)" if K else "(N,)"
    steps = "(N, T" if batch_first else "(T, N"
    return steps + (", K)" if K else ")")


def _check_split(
    name: str,
    data: tuple[torch.Tensor, torch.Tensor, Any],
    *,
    classify: bool,
    batch_first: bool,
    readout: str | None = None,
    K: int | None = None,
    step_mask: torch.Tensor | None = None,
    train: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, str, int | None]:
    """Check one split and return it time-first on the CPU.

    Returns ``(x (T, N, I), y, mask (T, N) or None, readout, K)``. The
    training split (``train=True``) decides the readout (unless given) and
    ``K`` from its targets; the other splits must agree. ``step_mask``: the training
    data's mask of shape ``(T,)``, which applies to a split given without one.
    """
    x, y, m = data
    layout = "(N, T, I)" if batch_first else "(T, N, I)"
    if x.dim() != 3 or not x.is_floating_point():
        raise ValueError(
            f"{name} inputs must be a float tensor {layout}, got {x.dtype} of shape "
            f"{tuple(x.shape)}"
        )
    given = tuple(x.shape)  # as the caller passed it, before any transpose
    if batch_first:
        x = x.transpose(0, 1)
    T, N = x.shape[0], x.shape[1]
    if N == 0 or T == 0:
        raise ValueError(f"{name} must hold sequences, got inputs {layout} = {given}")
    steps = (N, T) if batch_first else (T, N)
    shape = tuple(y.shape)
    if train:  # the training data: the targets say what they are
        readout, K = _infer_readout(
            name,
            shape,
            steps,
            N,
            classify,
            readout,
            "(N, T)" if batch_first else "(T, N)",
            m is not None,
        )
    if readout == "last":
        expected = (N, K) if K else (N,)
    else:
        expected = (*steps, K) if K else steps
    if shape != expected:
        raise ValueError(
            f"{name} targets must have shape {_split_layout(batch_first, readout, K)}"
            f" = {tuple(expected)}"
            + (
                ""
                if K
                else f" for one target per sequence, or "
                f"{_split_layout(batch_first, 'all', None)} = {steps} for one "
                f"per step, or with K outputs a last axis K"
                if readout == "last"
                else " for one target per step, or with K outputs per step a "
                "last axis K"
            )
            + f", got {tuple(shape)}"
            + _layout_hint(given, shape, batch_first, train)
        )
    if y.dtype == torch.bool:  # bincount and the losses take no bool
        raise TypeError(
            f"{name} targets must be class indices (int) or floats, got bool: "
            "give targets.long() for two classes, or targets.float() for regression"
        )
    if classify and (y.is_floating_point() or y.is_complex()):
        raise TypeError(f"{name} targets must be class indices (int) for cross_entropy")
    if not classify and not y.is_floating_point():  # a held-out split's
        raise TypeError(
            f"{name} targets must be floats, as the training data's are (a "
            f"regression), got {y.dtype}; pass them as floats"
        )
    if classify and K:
        raise ValueError(
            f"{name} targets of shape {tuple(shape)} hold K = {K} outputs "
            "per sequence or step: that is regression (float targets); class "
            f"targets are {_split_layout(batch_first, readout, None)}"
        )
    if classify and y.dtype != torch.long:  # int32 or uint8 labels: what the loss takes
        y = y.long()
    if readout == "all" and batch_first:
        y = y.transpose(0, 1)
    if m is None and step_mask is not None:
        m = step_mask if step_mask.shape[0] == T else None
        if m is None:
            raise ValueError(
                f"{name}: the mask (T,) = ({step_mask.shape[0]},) of the training "
                f"data does not fit its {T} steps; give its own mask as a third "
                "element (inputs, targets, mask)"
            )
    if m is not None:
        m = _check_mask(name, m, readout, batch_first, T, N)
    keep = m if m is None or y.dim() == 2 else m.unsqueeze(-1).expand_as(y)
    picked = y if keep is None else y[keep]
    if not torch.isfinite(x).all() or (
        y.is_floating_point() and not torch.isfinite(picked).all()
    ):
        raise ValueError(f"{name} holds NaN or infinite values")
    for part, t in (("inputs", x), ("targets", picked)):
        if t.is_floating_point() and not torch.isfinite(t.float()).all():
            big = float(t.abs().max())
            raise ValueError(
                f"{name} {part} overflow float32, the precision training uses "
                f"(largest magnitude {big:.3g}, float32 stops at 3.4e+38): "
                "rescale them"
            )
    if keep is not None:  # what the mask leaves out is never read: zero it
        y = torch.where(keep, y, torch.zeros((), dtype=y.dtype))
    # copies, never views of the caller's tensors: data changed in place after
    # the task is made would be trained on under the old fingerprint
    x = x.detach().cpu().clone(memory_format=torch.contiguous_format)
    y = y.detach().cpu().clone(memory_format=torch.contiguous_format)
    return x, y, m, readout, K


def _layout_hint(
    given: tuple[int, ...], shape: tuple[int, ...], batch_first: bool, train: bool
) -> str:
    """A hint when the targets fit the inputs read in the other layout."""
    other_n = given[0] if not batch_first else given[1]
    if not shape or other_n == (given[1] if not batch_first else given[0]):
        return ""
    if shape[0] == other_n or tuple(shape[:2]) == (given[1], given[0]):
        layout = "(N, T, I)" if not batch_first else "(T, N, I)"
        if not train:  # batch_first is the training data's: this split differs
            ours = "(T, N, I)" if not batch_first else "(N, T, I)"
            return (
                f" (inputs {layout}, N = {other_n} sequences? give this split "
                f"laid out as the training data, {ours})"
            )
        flag = "batch_first=True" if not batch_first else "batch_first=False"
        return f" (inputs {layout}, N = {other_n} sequences? pass {flag})"
    return ""


def _infer_readout(
    name: str,
    shape: tuple[int, ...],
    steps: tuple[int, int],
    N: int,
    classify: bool,
    readout: str | None,
    steps_name: str,
    masked: bool,
) -> tuple[str, int | None]:
    """The readout and the outputs ``K`` (``None``: no last axis) of targets of
    ``shape``; ``steps`` is ``(T, N)`` or ``(N, T)``."""
    if readout == "last":
        return readout, shape[1] if len(shape) == 2 else None
    if readout == "all":
        return readout, shape[2] if len(shape) == 3 else None
    if len(shape) == 3:
        return "all", shape[2]
    if len(shape) != 2:
        return "last", None  # (N,), or a shape the check then refuses
    per_step = shape == steps
    # (N, K) is regression only: class labels of that shape are per step
    # and a mask is only for targets per step
    per_sequence = shape[0] == N and not ((classify or masked) and per_step)
    if per_step and per_sequence:
        raise ValueError(
            f"{name} targets of shape {tuple(shape)} could be one per "
            f"step {steps_name} or K = {shape[1]} per sequence (N, K): pass "
            "readout='all' or readout='last'"
        )
    if per_step:
        return "all", None
    batch_first_steps = steps_name == "(T, N)" and shape == (N, steps[0])
    if per_sequence and batch_first_steps and not classify:
        # (N, T) beside time-first inputs: the batch-first layout of targets
        # per step, or K = T outputs per sequence; either is a guess
        raise ValueError(
            f"{name} targets of shape {tuple(shape)} could be K = {shape[1]} per "
            f"sequence (N, K) or one per step laid out batch-first (N, T) "
            f"while the inputs are time-first (T, N, I) with T = {steps[0]}: "
            "pass readout='last' for K outputs at the last step, or give "
            "targets per step as (T, N) (or inputs as (N, T, I) with "
            "batch_first=True)"
        )
    return ("last", shape[1]) if per_sequence else ("last", None)


def _check_mask(
    name: str, m: object, readout: str, batch_first: bool, T: int, N: int
) -> torch.Tensor:
    """A split's mask as a ``(T, N)`` bool tensor: ``True`` where the loss counts."""
    steps = "(N, T)" if batch_first else "(T, N)"
    if not isinstance(m, torch.Tensor) or m.dtype != torch.bool:
        what = f"{m.dtype} tensor" if isinstance(m, torch.Tensor) else _what(m)
        raise TypeError(
            f"{name} mask must be a bool tensor (True where the loss counts), got "
            f"{what}"
        )
    if readout == "last":
        raise ValueError(
            f"{name} mask is for targets per step: with one target per sequence "
            "every sequence counts once (leave a sequence out of the data instead)"
        )
    if m.shape == (T,):
        m = m.unsqueeze(1).expand(T, N)
    elif m.shape == ((N, T) if batch_first else (T, N)):
        m = m.transpose(0, 1) if batch_first else m
    else:
        raise ValueError(
            f"{name} mask must have shape (T,) = ({T},) or {steps} = "
            f"{(N, T) if batch_first else (T, N)}, got {tuple(m.shape)}"
        )
    if not m.any():
        raise ValueError(f"{name} mask is False everywhere: no target would count")
    return m.detach().cpu().clone(memory_format=torch.contiguous_format)


def tensor_task(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    batch_first: bool = False,
    readout: str | None = None,
    valid: tuple[torch.Tensor, ...] | None = None,
    test: tuple[torch.Tensor, ...] | None = None,
    valid_fraction: float | None = None,
    test_fraction: float = 0.0,
    loss: str | None = None,
    num_classes: int | None = None,
    name: str = "tensors",
    defaults: Mapping[str, Any] | None = None,
) -> Task:
    r"""A :class:`rhn.tasks.Task` on a fixed data set of sequences with targets.

    Training batches are drawn with replacement from the training split by
    the run's seeded generator (so a resumed run draws the same batches); the
    evaluations score the whole validation split and the final ``test_loss``
    the whole test split, at the weights with the best validation loss when
    ``patience`` is set (as for the chorales). Without a test split (neither
    ``test`` nor ``test_fraction`` given) the final ``test_loss`` is ``None``
    and ``metrics["test_loss_reason"]`` says why: the validation split is the
    only held-out data, and ``valid_loss`` its loss. The sequences are the data:
    the config's ``seq_len`` defaults to their length ``T`` and any other
    value is refused when the run starts; ``eval_samples`` is ignored (the
    held-out splits are scored whole). The task holds copies of the tensors
    given: changing them in place afterwards changes neither the task nor its
    fingerprint.

    Args:
        inputs: ``(T, N, I)`` float, the ``N`` training sequences (time
            first; ``N`` counts sequences here, not layers), or
            ``(N, T, I)`` with ``batch_first=True``.
        targets: one target per sequence, ``(N,)``, read at the last step;
            one per step, ``(T, N)`` (``(N, T)`` with ``batch_first``); or
            either with a last axis of ``K`` outputs, ``(N, K)`` or
            ``(T, N, K)`` (regression only; ``K = 1`` is the same as none).
            Float targets: regression with mean squared error; integer
            targets: classes with cross-entropy.
        mask: ``None`` (every target counts), or, for targets per step, a
            bool tensor, ``True`` where the loss counts: ``(T,)`` for the same
            steps in every sequence (e.g. ``False`` on warm-up steps), or
            ``(T, N)`` (``(N, T)`` with ``batch_first``) per sequence. Targets
            it leaves out are never read (they may be NaN). A ``(T,)`` mask
            applies to every split; a per-sequence one to the training data
            and the splits ``valid_fraction`` and ``test_fraction`` hold out
            (``valid`` and ``test`` given apart then need their own).
        batch_first: ``True`` if ``inputs``, ``targets``, ``mask`` and the
            splits put the sequences first (default ``False``: time first, as
            the models of :mod:`rhn` take them).
        readout: ``"last"`` or ``"all"``, needed only where float 2-D
            targets without a mask could be either ``(N, K)`` or one per step
            (batch-first ``(N, T)``, or ``T = N = K``); default: from the
            shapes.
        valid: ``(inputs, targets)`` or ``(inputs, targets, mask)`` of the
            validation split. Default: the last ``valid_fraction`` of the
            sequences given, held out.
        test: the test split, like ``valid``, scored once at the end. Default:
            the last ``test_fraction`` of the sequences given, or, if that
            is 0, no test split.
        valid_fraction: share of ``inputs`` held out for validation when
            ``valid`` is not given (default ``None``: 0.2); refused with
            ``valid``.
        test_fraction: share of ``inputs`` held out for the test when
            ``test`` is not given (default 0: none). The sequences are split
            in order: training first, then validation, then test.
        loss: ``"mse"`` or ``"cross_entropy"`` (default: from the targets'
            dtype).
        num_classes: classes of a classification task (default: the largest
            label in any split, plus one; more than 1,024 classes and ten per
            labelled target are refused unless given here).
        name: the task's name in records and metrics (default ``"tensors"``;
            not a built-in task's name).
        defaults: :class:`rhn.train.TrainConfig` settings for
            :meth:`~rhn.train.TrainConfig.for_task` (default none; ``seq_len``
            is always ``T``).

    Returns:
        A :class:`~rhn.tasks.Task` with ``held_out=("valid", "test")``
        (``("valid", None)`` without a test split), whose ``baseline`` is the
        loss of the best memoryless predictor fitted on the training split:
        the training mean of each output (MSE) or the training class
        frequencies (cross-entropy), scored on the test split (on the
        validation split if there is none; where the mask counts). With a
        mask, its batches are ``(inputs, targets, mask)``, and the loss
        averages over the targets the mask keeps. The trainer feeds the model
        time-first batches ``(T, B, I)``; the model that ``train(...).model``
        and :func:`~rhn.train.load_model` give back takes the layout of the
        data given here (``(B, T, I)`` with ``batch_first=True``).
    """
    batch_first = _checks.boolean("batch_first", batch_first)
    if readout is not None:
        readout = _checks.choice("readout", readout, ["last", "all"])
    for what, value in (("inputs", inputs), ("targets", targets)):
        if not isinstance(value, torch.Tensor):  # a list, a generator, an array
            raise TypeError(
                f"{what} must be a tensor, got {_what(value)}; make one with "
                "torch.as_tensor (or torch.stack of a list of tensors)"
            )
    x, y, m = _tensors("inputs, targets", (inputs, targets, mask))
    if isinstance(name, str) and name.strip().lower() in TASKS:
        raise ValueError(
            f"name must not be a built-in task's ({', '.join(sorted(TASKS))}): "
            f"records and resumes tell tasks apart by name, got {name!r}"
        )
    if loss is None:
        loss = "mse" if y.is_floating_point() else "cross_entropy"
    loss = _checks.choice("loss", loss, ["mse", "cross_entropy"])
    classify = loss == "cross_entropy"
    if not classify and not (y.is_floating_point() or y.dtype == torch.bool):
        raise TypeError(
            f"targets: loss='mse' is a regression on float targets, got {y.dtype} "
            "targets; pass targets.float(), or leave loss out for class labels"
        )
    layout = {"classify": classify, "batch_first": batch_first}
    x, y, m, readout, K = _check_split(
        "the data", (x, y, m), readout=readout, train=True, **layout
    )
    if K == 1:  # one output: the same as none
        y, K = y.squeeze(-1), None
    per_step = readout == "all"
    step_mask = None
    if mask is not None and isinstance(mask, torch.Tensor) and mask.dim() == 1:
        step_mask = mask
    N = x.shape[1]
    test_fraction = _checks.real("test_fraction", test_fraction)
    if test is not None and test_fraction != 0:
        raise ValueError(
            f"give test or test_fraction, not both (got test_fraction="
            f"{test_fraction}); leave test_fraction out to use the test given"
        )
    k_test = math.ceil(test_fraction * N) if test is None else 0
    if not 0 <= test_fraction < 1 or k_test >= N:
        raise ValueError(
            f"test_fraction must be in [0, 1) and leave sequences to train on of "
            f"the {N} given, got {test_fraction}"
        )
    k_valid = 0
    if valid is not None and valid_fraction is not None:
        raise ValueError(
            f"give valid or valid_fraction, not both (got valid_fraction="
            f"{valid_fraction}); leave valid_fraction out to use the valid given"
        )
    if valid is None:
        if valid_fraction is None:
            valid_fraction = 0.2
        fraction = _checks.real("valid_fraction", valid_fraction)
        k_valid = math.ceil(fraction * N)
        if not 0 < fraction < 1 or not 1 <= k_valid < N - k_test:
            raise ValueError(
                f"valid_fraction must leave at least one sequence in each split of "
                f"the {N} given, got {valid_fraction}"
                + (f" (with test_fraction={test_fraction})" if k_test else "")
            )
    n_train = N - k_valid - k_test  # in order: train, valid, test
    splits = {"train": _take((x, y, m), slice(0, n_train), per_step)}
    if valid is None:
        splits["valid"] = _take((x, y, m), slice(n_train, N - k_test), per_step)
    else:
        splits["valid"] = _other_split(
            "valid", valid, readout, K, step_mask, m, x.shape[0], **layout
        )
    if test is not None:
        splits["test"] = _other_split(
            "test", test, readout, K, step_mask, m, x.shape[0], **layout
        )
    elif k_test:
        splits["test"] = _take((x, y, m), slice(N - k_test, N), per_step)
    has_test = "test" in splits
    for split, (_, _, ms) in splits.items():
        if ms is not None and not ms.any():  # its loss would be 0, its baseline NaN
            n = splits[split][0].shape[1]
            if split == "valid" and valid is None:
                where = "the last " if not k_test else "the "
                held = f"valid_fraction: {where}{n} sequences, held out for validation,"
            elif split == "test" and test is None:
                held = f"test_fraction: the last {n} sequences, held out for the test,"
            else:
                held = f"the {split} split:"
            raise ValueError(
                f"{held} have no target the mask keeps; order the data so that "
                "every split keeps one, or give valid= and test="
            )
    I = x.shape[2]
    for split, (xs, _, _) in splits.items():
        if xs.shape[2] != I:
            raise ValueError(
                f"{split} must have {I} input features like the training data, got "
                f"inputs {tuple(xs.shape)}"
            )
    if classify:
        labels = [_kept(ys, ms, None) for _, ys, ms in splits.values()]
        largest = max(int(ys.max()) for ys in labels)
        lowest = min(int(ys.min()) for ys in labels)
        if lowest < 0:
            hint = (
                "PyTorch's ignore_index? leave those targets out with mask="
                if lowest == -100
                else "targets of a regression? pass them as floats, targets.float()"
            )
            raise ValueError(
                f"targets: class labels must be >= 0, got {lowest} ({hint})"
            )
        C = (
            largest + 1
            if num_classes is None
            else _checks.positive_int("num_classes", num_classes)
        )
        if largest >= C:
            raise ValueError(f"num_classes is {C}, but a target is {largest}")
        distinct = torch.cat([ys.reshape(-1) for ys in labels]).unique()
        if distinct.numel() < 2:
            raise ValueError(
                f"targets hold one class only (every label is {int(distinct[0])}); "
                "a classification needs two classes or more: check the labels, or "
                "give targets.float() for regression"
            )
        held = labels[1:]  # the labels of the held-out splits
        _warn_unseen_classes(dict(zip(splits, labels, strict=True)))
        count = sum(int(ys.numel()) for ys in held)
        if num_classes is None and C > max(_MAX_PLAIN_CLASSES, 10 * count):
            distinct = int(torch.cat([ys.reshape(-1) for ys in held]).unique().numel())
            raise ValueError(
                f"targets: the largest label is {largest}, so {C} classes would be "
                f"inferred for {count} labelled targets ({distinct} distinct): a "
                f"stray code? fix the labels, or pass num_classes={C}"
            )
        output_size = C
    else:
        output_size = K or 1
    baseline = _memoryless_loss(
        splits["train"],
        splits["test" if has_test else "valid"],
        classify,
        output_size,
        K,
    )
    if not classify and baseline == 0:
        value = float(_kept(*splits["train"][1:], K).reshape(-1)[0])
        raise ValueError(
            f"targets must vary, got every target equal to {value:g}: the baseline "
            "(the loss of predicting a constant) is 0, there is nothing to learn"
        )
    if not classify:
        given = _kept(*splits["train"][1:], K).reshape(-1)
        kept = given.float()
        if bool((given == given[0]).all()):  # the training split alone is constant
            raise ValueError(
                f"targets: every target of the training split is "
                f"{float(given[0]):g} ({given.numel()} kept), so training has "
                "nothing to learn from; give the training split varied targets "
                "(more sequences, or another valid_fraction/test_fraction)"
            )
        if bool((kept == kept[0]).all()):  # they vary only beyond float32
            raise ValueError(
                f"targets must vary in float32, the precision training uses: "
                f"every target rounds to {float(kept[0]):g} (they differ by "
                "less than float32 resolves); rescale them"
            )
    _warn_reused_training_data(splits)
    masked = any(ms is not None for _, _, ms in splits.values())
    # the fingerprint hashes train, valid and test; without a test split the
    # validation split fills its place, as the test split it once stood for,
    # so that a run on such a task made before keeps its fingerprint
    hashed = [splits["train"], splits["valid"], splits.get("test", splits["valid"])]
    parts: list[Any] = [t for xs, ys, _ in hashed for t in (xs, ys)]
    if masked:  # a task without a mask keeps the fingerprint it always had
        parts += ["mask", *(ms for _, _, ms in hashed)]
    fingerprint = _io.fingerprint(loss, output_size, *parts)
    T = x.shape[0]
    defaults = dict(defaults or {})
    if defaults.setdefault("seq_len", T) != T:
        raise ValueError(
            f"defaults: seq_len is the data's length T = {T}, got "
            f"seq_len={defaults['seq_len']!r}"
        )

    def generate(
        num_samples: int,
        seq_len: int | None = None,
        *,
        seed: int = 0,
        generator: torch.Generator | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
        split: str = "train",
    ) -> tuple[torch.Tensor, ...]:
        """A training batch (``split="train"``) or a whole held-out split."""
        split = _checks.choice("split", split, list(splits))
        if seq_len is not None and seq_len != T:
            raise ValueError(
                f"seq_len: task {name!r} holds sequences of T = {T} steps (its "
                f"data), got seq_len={seq_len}; leave seq_len out (None) for {T}"
            )
        xs, ys, ms = splits[split]
        if split == "train":
            B = _checks.positive_int("num_samples", num_samples)
            if generator is None:
                generator = torch.Generator().manual_seed(_checks.seed("seed", seed))
            index = torch.randint(0, xs.shape[1], (B,), generator=generator)
            xs, ys, ms = _take((xs, ys, ms), index, per_step)
        else:  # the split itself: a copy, which the caller may change
            xs, ys = xs.clone(), ys.clone()
            ms = None if ms is None else ms.clone()
        ys = ys.to(device, dtype) if ys.is_floating_point() else ys.to(device)
        if not masked:
            return xs.to(device, dtype), ys
        if ms is None:  # a split without a mask: every target counts
            ms = torch.ones(xs.shape[:2], dtype=torch.bool)
        return xs.to(device, dtype), ys, ms.to(device)

    return Task(
        name=name,
        generate=generate,
        input_size=I,
        output_size=output_size,
        loss=loss,
        readout=readout,
        baseline=lambda seq_len: baseline,
        defaults=defaults,
        held_out=("valid", "test" if has_test else None),
        fingerprint=fingerprint,
        batch_first=batch_first,
    )


def _take(
    split: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None],
    index: slice | torch.Tensor,
    per_step: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The sequences ``index`` of a time-first split (the batch is axis 1 of
    inputs and masks, and of targets per step; axis 0 of targets per sequence)."""
    x, y, m = split
    y = y[:, index] if per_step else y[index]
    return x[:, index], y, None if m is None else m[:, index]


def _other_split(
    name: str,
    value: object,
    readout: str,
    K: int | None,
    step_mask: torch.Tensor | None,
    train_mask: torch.Tensor | None,
    train_steps: int | None = None,
    **layout: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``valid`` or ``test`` given apart, checked against the training data
    (``train_steps``: its sequences' length, which a held-out split in the
    other layout shows as its number of sequences)."""
    data = _tensors(name, value)
    if data[2] is None and train_mask is not None and step_mask is None:
        raise ValueError(
            f"{name}: the training data has a mask per sequence, so {name} needs "
            "its own: give (inputs, targets, mask)"
        )
    if K is None and readout == "last" and data[1].dim() == 2:
        K = 1  # (N, 1) targets, like the training data's
    x, y, m, _, K = _check_split(
        name, data, readout=readout, K=K, step_mask=step_mask, **layout
    )
    steps, count = x.shape[0], x.shape[1]
    if train_steps is not None and steps != train_steps and count == train_steps:
        # read as `count` sequences of `steps` steps: the training data's
        # length on the sequence axis, the other layout's doing
        # a warning, not an error: held-out sequences may be longer, and
        # there may be as many of them as the training ones have steps
        order = "(N, T, I)" if layout.get("batch_first") else "(T, N, I)"
        _warn(
            f"{name} inputs read as {count} sequences of {steps} steps, but the "
            f"training sequences have {train_steps}: the other layout? give "
            f"{name} in the training data's layout, {order}"
        )
    return x, (y.squeeze(-1) if K == 1 else y), m


def _kept(y: torch.Tensor, m: torch.Tensor | None, K: int | None) -> torch.Tensor:
    """The targets the mask keeps, one row per kept position: ``(M,)`` or ``(M, K)``."""
    if m is not None:
        return y[m]
    return y.reshape(-1) if K is None else y.reshape(-1, K)


def _memoryless_loss(
    train: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None],
    test: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None],
    classify: bool,
    classes: int,
    K: int | None,
) -> float:
    """The test loss of the best input-ignoring predictor fitted on ``train``:
    the mean of each output (MSE) or the class frequencies, where masks count."""
    fit, score = _kept(*train[1:], K), _kept(*test[1:], K)
    if not classify:
        mean = fit.double().mean(0)  # (K,) or a number
        return float(((score.double() - mean) ** 2).mean())
    # add-one smoothed class frequencies, (count + 1) / (M + classes), from the
    # labels seen (never a table of every class: there may be very many)
    seen, counts = torch.unique(fit, return_counts=True)
    at = torch.searchsorted(seen, score).clamp(max=seen.numel() - 1)
    count = torch.where(seen[at] == score, counts[at], 0).double()
    return float(-((count + 1.0) / (fit.numel() + classes)).log().mean())


# More classes than this and than ten per labelled target are not inferred
# from the largest label without num_classes: a stray label such as 10**8
# would ask for a head of 10**8 outputs.
_MAX_PLAIN_CLASSES = 1024

# Modules whose functions are never a task: the command line itself.
_NOT_TASKS = ("rhn.__main__", "rhn._cli", "__main__")


def task_from_spec(spec: str, *, name: str = "--task") -> Task:
    """The task ``"module:function"`` names: imports ``module``, calls ``function()``.

    ``function`` must be a plain Python function (``def``, not a class, a
    builtin such as ``sys.exit`` or a function of the command line itself)
    that takes no arguments and returns a :class:`~rhn.tasks.Task`; it may
    also name a :class:`~rhn.tasks.Task` itself. The module is imported as
    Python imports any other (the current directory is on the path of
    ``python -m``), so its top-level code runs. Anything that fails, in the
    import or in the call, is a ``ValueError`` of one line naming ``name``.
    """
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(f"{name} must be a task name or module:function, got {spec!r}")
    module_name, function = (part.strip() for part in spec.split(":"))
    if not module_name or not function:
        raise ValueError(f"{name} must be a task name or module:function, got {spec!r}")
    dotted = module_name.split(".")
    if not all(part.isidentifier() for part in dotted) or dotted[-1] == "py":
        raise ValueError(
            f"{name} {spec}: expected a module name before the colon (dotted, as "
            f"Python imports it: mytasks or pkg.mytasks, without a path, ./ or "
            f".py), got {module_name!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        where = (
            f"; Python looks for it in the current directory ({os.getcwd()}) "
            "and on PYTHONPATH: run from the directory that holds it, or add "
            "that directory to PYTHONPATH"
            if isinstance(err, ModuleNotFoundError) and err.name == dotted[0]
            else ""
        )
        raise ValueError(
            f"{name} {spec}: cannot import {module_name!r} ({err}){where}"
        ) from None
    except SyntaxError as err:
        raise ValueError(
            f"{name} {spec}: {module_name!r} has a syntax error ({err.msg}, "
            f"{err.filename}, line {err.lineno})"
        ) from None
    except KeyboardInterrupt:  # Ctrl-C during a slow import: an interrupt
        raise KeyboardInterrupt(
            f"{name} {spec}: interrupted while importing {module_name!r}; "
            "nothing was trained"
        ) from None
    except BaseException as err:  # its top-level code raised, or called exit()
        raise ValueError(
            f"{name} {spec}: importing {module_name!r} raised "
            f"{type(err).__name__}: {_io.one_line(err)[:200]}"
        ) from None
    if not hasattr(module, function):
        raise ValueError(f"{name} {spec}: module {module_name!r} has no {function!r}")
    factory = getattr(module, function)
    if isinstance(factory, Task):
        return factory
    defined_in = getattr(factory, "__module__", None)
    if not isinstance(factory, types.FunctionType) or defined_in in _NOT_TASKS:
        raise ValueError(
            f"{name} {spec}: expected a Python function returning an "
            f"rhn.tasks.Task (it is imported and called), got "
            f"{_what(factory)}"
        )
    needed = [
        p.name
        for p in inspect.signature(factory).parameters.values()
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if needed:
        raise ValueError(
            f"{name} {spec}: the function is called without arguments, but it "
            f"needs the argument{'s' if len(needed) > 1 else ''} "
            f"{', '.join(repr(n) for n in needed)}: give them defaults, or wrap "
            "it in a function without arguments"
        )
    try:
        task = factory()
    except BaseException as err:  # the factory's own mistake, or sys.exit()
        if isinstance(err, KeyboardInterrupt):
            raise KeyboardInterrupt(
                f"{name} {spec}: interrupted while calling {function}(); "
                "nothing was trained"
            ) from None
        raise ValueError(
            f"{name} {spec}: calling {function}() raised {type(err).__name__}: "
            f"{_io.one_line(err)[:300]}"
        ) from None
    if not isinstance(task, Task):
        raise ValueError(
            f"{name} {spec}: expected {function}() to return an rhn.tasks.Task, "
            f"got {_what(task)}"
        )
    return task


def _warn(message: str) -> None:
    """A ``UserWarning`` pointed at the user's line, the first caller outside
    the package (a held-out split that looks wrong, not an error)."""
    import warnings

    from .train.config import _outside_the_package

    warnings.warn(message, stacklevel=_outside_the_package())


def _warn_reused_training_data(splits: dict[str, tuple[Any, ...]]) -> None:
    """Warn where a tenth or more of a held-out split's sequences are training
    sequences (one loader or tensor passed as train and as valid or test, or
    a test split that holds all the data), or of the test split's are
    validation sequences: their loss is not a held-out one, and patience
    would choose the best step on the data it then scores."""

    def signatures(seqs: torch.Tensor) -> torch.Tensor:
        # one number per sequence (T, N, I) -> (N,), equal for equal sequences
        g = torch.Generator().manual_seed(0)
        shape = (seqs.shape[0], 1, seqs.shape[2])
        weights = torch.rand(shape, generator=g, dtype=torch.float64) + 0.5
        return (seqs.detach().cpu().double() * weights).sum((0, 2))

    signed: dict[str, torch.Tensor] = {}  # each split's, once

    def signed_as(split: str) -> torch.Tensor:
        if split not in signed:
            signed[split] = signatures(splits[split][0])
        return signed[split]

    pairs = [("valid", "train"), ("test", "train"), ("test", "valid")]
    for split, other in pairs:
        if split not in splits or other not in splits:
            continue
        held, xs = splits[split][0], splits[other][0]
        if held.shape[0] != xs.shape[0] or held.shape[2] != xs.shape[2]:
            continue  # another length: not the same sequences
        shared = int(torch.isin(signed_as(split), signed_as(other)).sum())
        if shared and shared >= 0.1 * held.shape[1]:
            what = (
                "training sequences, so its loss is partly a training loss, not "
                "a held-out one"
                if other == "train"
                else "validation sequences, which chose the settings (and, with "
                "patience, the best step): its loss is not an independent test"
            )
            _warn(
                f"{split}: {shared} of the {held.shape[1]} sequences of the {split} "
                f"split are {what}; give other sequences, or leave {split} out "
                f"and pass {split}_fraction to hold out a share"
            )
            if split == "test":
                return  # one word on the test split is enough


def _warn_unseen_classes(labels: dict[str, torch.Tensor]) -> None:
    """Warn where a tenth or more of a held-out split's targets are of classes
    the training split never shows: data sorted by label and split in order
    (the last sequences held out) trains on some classes and scores on
    others, with nothing else to say so."""
    seen = labels["train"].unique()
    for split, ys in labels.items():
        if split == "train" or ys.numel() == 0:
            continue
        missing = ~torch.isin(ys.reshape(-1), seen)
        # rare classes only in held-out data are normal (a large vocabulary);
        # a tenth of the split's targets or more is the sign of sorted data
        if float(missing.float().mean()) < 0.1:
            continue
        unseen = sorted(ys.reshape(-1)[missing].unique().tolist())
        shown = ", ".join(map(str, unseen[:5])) + (", ..." if len(unseen) > 5 else "")
        _warn(
            f"targets: {float(missing.float().mean()):.0%} of the {split} split's "
            f"targets are of class(es) {shown}, which no training target has, so "
            "the model cannot learn them: data sorted by label? shuffle the "
            "sequences before splitting, or give valid= and test= splits of "
            "your own"
        )


def _dropped_by(loader: Any) -> int:
    """How many sequences a loader's ``drop_last=True`` leaves out: 0 for
    none, -1 for some where the number is unknown (no length)."""
    from torch.utils.data import BatchSampler

    batches = getattr(loader, "batch_sampler", None)
    if not isinstance(batches, BatchSampler) or not batches.drop_last:
        return 0
    try:
        return len(batches.sampler) % batches.batch_size
    except TypeError:
        return -1


def _full_first_batch(loader: Any, size: int) -> bool:
    """Whether a ``DataLoader``'s first batch holds ``size`` sequences: its
    sampler has at least that many (unknown, for a sampler without a length:
    then no layout is inferred from the batch size)."""
    try:
        return len(loader.sampler) >= size
    except (AttributeError, TypeError):
        return False


def loader_task(
    train: Iterable[Any],
    valid: Iterable[Any] | None = None,
    test: Iterable[Any] | None = None,
    *,
    batch_first: bool = True,
    name: str = "loader",
    **options: Any,
) -> Task:
    """A :func:`tensor_task` on the data your ``torch.utils.data.DataLoader``
    objects (or any iterables of batches) yield, read once, whole.

    Each batch is ``(inputs, targets)`` or ``(inputs, targets, mask)``, as
    :func:`tensor_task` takes its data; the batches of a loader are
    concatenated along the sequence axis (the first with ``batch_first``,
    the default, which is how a ``DataLoader`` stacks samples of shape
    ``(T, I)``: ``(B, T, I)``). A mask in the batches is per sequence; a
    mask for every step, ``(T,)``, goes in ``mask=``.

    What a loader decides and the run does not use: its batch size (the
    config's ``batch_size`` draws the training batches, with replacement,
    from a generator the checkpoint saves) and its order (the run draws
    from all of it). Random transforms are frozen at the one pass. The
    data's fingerprint covers the values in the order the loader gave them,
    so a resume with other data is refused. A loader that shuffles
    (``shuffle=True`` without a seeded ``generator``), or draws with another
    of torch's random samplers without one (``SubsetRandomSampler``,
    ``WeightedRandomSampler``, also inside a ``BatchSampler``), is refused at
    once: each process would read other data or another order, so two runs
    of one seed would differ and none could resume; build the loader with
    ``shuffle=False``, or seed the sampler's generator. A loader with
    ``drop_last=True`` that would leave sequences out is refused too.

    Args:
        train: the training batches.
        valid: the validation batches; ``None``: the last ``valid_fraction``
            of ``train`` is held out (see :func:`tensor_task`).
        test: the test batches, scored once at the end; ``None``: none, or
            ``test_fraction`` of ``train``.
        batch_first: ``True`` (default) if the batches put the sequences
            first, ``(B, T, I)``; ``False`` for ``(T, B, I)``.
        name: the task's name in records (default ``"loader"``).
        **options: any other argument of :func:`tensor_task` (``mask``,
            ``readout``, ``loss``, ``num_classes``, ``valid_fraction``,
            ``test_fraction``, ``defaults``).

    Returns:
        The :class:`~rhn.tasks.Task` of :func:`tensor_task`.
    """
    batch_first = _checks.boolean("batch_first", batch_first)
    unknown = sorted(set(options) - _LOADER_OPTIONS)
    if unknown:
        raise TypeError(
            f"loader_task got unknown argument(s) {unknown}; it takes "
            f"{sorted(_LOADER_OPTIONS)} besides train, valid, test, batch_first "
            "and name"
        )
    readout = options.get("readout")
    if readout is not None:
        readout = options["readout"] = _checks.choice(
            "readout", readout, ["last", "all"]
        )
    splits = {}
    for what, loader in (("train", train), ("valid", valid), ("test", test)):
        if loader is not None:
            splits[what] = _read_loader(
                what, loader, batch_first, readout, options.get("mask") is not None
            )
    x, y, m = splits.pop("train")
    if m is not None and options.get("mask") is not None:
        raise ValueError(
            "mask: the train batches carry a mask of their own; give mask= "
            "only for batches of (inputs, targets)"
        )
    if m is not None:
        options["mask"] = m
    held = {k: tuple(t for t in v if t is not None) for k, v in splits.items()}
    return tensor_task(x, y, batch_first=batch_first, name=name, **held, **options)


_LOADER_OPTIONS = frozenset(
    {"mask", "readout", "loss", "num_classes", "valid_fraction", "test_fraction"}
    | {"defaults"}
)


def _read_loader(
    what: str,
    loader: Iterable[Any],
    batch_first: bool,
    readout: str | None = None,
    masked: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The batches of ``loader`` concatenated: ``(inputs, targets, mask)``,
    each split's sequences along the batch axis; a wrong batch is a one-line
    ``ValueError`` naming the split and the batch. ``readout`` (given or
    ``None``) and ``masked`` (a step mask given) say where time-first targets
    keep their sequences."""
    if isinstance(loader, (torch.Tensor, str, bytes, Mapping)) or not isinstance(
        loader, Iterable
    ):
        raise TypeError(
            f"{what} must be a DataLoader (or another iterable of batches), got "
            f"{_what(loader)}; for tensors use tensor_task"
        )
    from torch.utils.data import (
        BatchSampler,
        RandomSampler,
        SubsetRandomSampler,
        WeightedRandomSampler,
    )

    random_kinds = (RandomSampler, SubsetRandomSampler, WeightedRandomSampler)
    samplers = [getattr(loader, "sampler", None)]
    batches = getattr(loader, "batch_sampler", None)
    if isinstance(batches, BatchSampler):
        samplers.append(batches.sampler)
    for sampler in samplers:
        if isinstance(sampler, random_kinds) and sampler.generator is None:
            how = (
                "shuffles (shuffle=True"
                if isinstance(sampler, RandomSampler)
                else f"draws its samples at random ({type(sampler).__name__}"
            )
            raise ValueError(
                f"{what}: the loader {how} without a seeded generator), so every "
                "process reads other data or another order: the run's data "
                "would differ from run to run and it could not be resumed; "
                "build the loader with shuffle=False, or give the sampler a "
                "seeded generator=torch.Generator().manual_seed(...)"
            )
    dropped = _dropped_by(loader)
    if dropped:
        count = "its last partial batch" if dropped < 0 else f"its last {dropped}"
        raise ValueError(
            f"{what}: the loader drops {count} (drop_last=True), but a task "
            "reads its loader whole, every sequence once; build the loader "
            "with drop_last=False"
        )
    parts: list[tuple[torch.Tensor, ...]] = []
    layout = "(B, T, I)" if batch_first else "(T, B, I)"
    for i, batch in enumerate(loader):
        if (
            not isinstance(batch, (tuple, list))
            or len(batch) not in (2, 3)
            or not all(isinstance(t, torch.Tensor) for t in batch)
        ):
            raise ValueError(
                f"{what}: batch {i} of the loader must be (inputs, targets) or "
                f"(inputs, targets, mask) tensors, got {_batch_what(batch)}"
            )
        if any(t.is_meta for t in batch):
            raise ValueError(
                f"{what}: batch {i} of the loader holds meta tensors, which have "
                "no data; give tensors on the CPU or a GPU"
            )
        batch = tuple(t.detach().cpu() for t in batch)
        size = getattr(loader, "batch_size", None)  # a DataLoader's
        if (
            i == 0
            and batch[0].dim() == 3
            and isinstance(size, int)
            and size > 1
            and _full_first_batch(loader, size)
        ):
            # the axis that holds batch_size sequences is the batch axis
            given, other = (1, 0) if batch_first else (0, 1)
            if batch[0].shape[given] == size != batch[0].shape[other]:
                found, fix = (
                    ("time-first (T, B, I)", "batch_first=False")
                    if batch_first
                    else ("batch-first (B, T, I)", "batch_first=True")
                )
                axis = "second" if batch_first else "first"
                raise ValueError(
                    f"{what}: the loader's batch_size, {size}, is the {axis} axis "
                    f"of its inputs {tuple(batch[0].shape)}: the batches are "
                    f"{found}; pass {fix}"
                )
        if batch[0].dim() != 3:
            raise ValueError(
                f"{what}: batch {i} has inputs of shape {tuple(batch[0].shape)}; "
                f"expected {layout} (batch_first={batch_first})"
            )
        if batch[1].dim() >= 1:  # inputs and targets of as many sequences
            n_x = batch[0].shape[0 if batch_first else 1]
            axis = _batch_axis(1, batch, batch_first, readout, masked, what)
            n_y = batch[1].shape[axis]
            if n_x != n_y:
                raise ValueError(
                    f"{what}: batch {i} of the loader has inputs of {n_x} "
                    f"sequences {tuple(batch[0].shape)} but targets of {n_y} "
                    f"{tuple(batch[1].shape)}; every batch must pair each "
                    "sequence with its targets"
                )
        if parts:
            first = parts[0]
            if len(batch) != len(first):
                raise ValueError(
                    f"{what}: batch {i} has {len(batch)} tensors, batch 0 "
                    f"{len(first)}; every batch must carry a mask or none"
                )
            for k, (a, b) in enumerate(zip(first, batch, strict=True)):
                at = _batch_axis(k, first, batch_first, readout, masked, what)
                if (
                    a.dim() != b.dim()
                    or a.dtype != b.dtype
                    or [n for j, n in enumerate(a.shape) if j != at]
                    != [n for j, n in enumerate(b.shape) if j != at]
                ):
                    part = ("inputs", "targets", "mask")[k]
                    raise ValueError(
                        f"{what}: batch {i} has {part} {b.dtype} of shape "
                        f"{tuple(b.shape)}, batch 0 {a.dtype} of shape "
                        f"{tuple(a.shape)}; every batch must have the same "
                        "sequence length, features and type"
                    )
        parts.append(batch)
    if not parts:
        raise ValueError(f"{what}: the loader yielded no batch; expected at least one")
    axes = [
        _batch_axis(k, parts[0], batch_first, readout, masked, what)
        for k in range(len(parts[0]))
    ]
    cat = [torch.cat([p[k] for p in parts], dim=axes[k]) for k in range(len(axes))]
    return cat[0], cat[1], cat[2] if len(cat) == 3 else None


def _batch_axis(
    k: int,
    batch: tuple[torch.Tensor, ...],
    batch_first: bool,
    readout: str | None = None,
    masked: bool = False,
    what: str = "train",
) -> int:
    """The axis of the sequences in tensor ``k`` of ``batch`` (inputs, targets,
    mask): the first with ``batch_first`` and for targets one per sequence
    (``(B,)``, ``(B, K)``), else the second. Time-first float targets of
    shape ``(T, B)`` with ``T == B`` could be either: ``readout`` decides, and
    without it they are refused, as :func:`tensor_task` refuses them."""
    if batch_first or k == 0:
        return 0 if batch_first else 1
    x, t = batch[0], batch[k]
    per_step = t.dim() >= 2 and tuple(t.shape[:2]) == tuple(x.shape[:2])
    if k == 1 and readout is not None:
        return 1 if readout == "all" else 0
    ambiguous = (
        k == 1
        and per_step
        and t.dim() == 2
        and x.shape[0] == x.shape[1]
        and t.is_floating_point()
        and not masked
        and len(batch) == 2
    )
    if ambiguous:
        raise ValueError(
            f"{what}: batch 0's targets of shape {tuple(t.shape)} could be one "
            f"per step (T, B) or K = {t.shape[1]} per sequence (B, K), since "
            f"T = B = {x.shape[0]}: pass readout='all' or readout='last'"
        )
    return 1 if per_step else 0


def _batch_what(batch: object) -> str:
    if isinstance(batch, Mapping):
        return f"a {type(batch).__name__} with keys {sorted(map(str, batch))[:5]}"
    if isinstance(batch, (tuple, list)):
        kinds = ", ".join(type(t).__name__ for t in batch[:4])
        return f"a {type(batch).__name__} of {len(batch)} ({kinds})"
    return _what(batch)


def _what(obj: object) -> str:
    """A short description of ``obj`` for a message (never a long repr)."""
    kind = type(obj).__name__
    text = repr(obj)
    return f"a {kind}" if len(text) > 60 else f"a {kind} ({text})"
