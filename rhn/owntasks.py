r"""Your own data in the trainer: a :class:`rhn.tasks.Task` from tensors or a factory.

:func:`rhn.train.train` trains any :class:`rhn.tasks.Task`, with everything
the built-in tasks get (checkpoints and bit-identical resume, early stopping,
sweeps, mixed precision, metrics and a baseline). Two ways to make one:

- write a :class:`~rhn.tasks.Task` whose ``generate`` draws sequences from a
  ``torch.Generator`` (the toy tasks of :mod:`rhn.tasks` are examples);
- hand a fixed data set of sequences with targets to :func:`tensor_task`.

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
import types
from collections.abc import Mapping
from typing import Any

import torch

from . import _checks, _io
from .tasks import Task

__all__ = ["tensor_task", "task_from_spec"]


def _pair(name: str, pair: object) -> tuple[torch.Tensor, torch.Tensor]:
    if (
        not isinstance(pair, (tuple, list))
        or len(pair) != 2
        or not all(isinstance(t, torch.Tensor) for t in pair)
    ):
        raise TypeError(f"{name} must be a pair of tensors (inputs, targets)")
    return pair[0], pair[1]


def _check_split(
    name: str, x: torch.Tensor, y: torch.Tensor, classify: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Check one split's shapes and dtypes; return it on the CPU."""
    if x.dim() != 3 or not x.is_floating_point():
        raise ValueError(
            f"{name} inputs must be a float tensor (T, N, I), got "
            f"{x.dtype} of shape {_checks.shape_str(x.shape)}"
        )
    T, N = x.shape[0], x.shape[1]
    if N == 0 or T == 0:
        raise ValueError(f"{name} must hold sequences, got inputs {tuple(x.shape)}")
    if y.shape not in ((N,), (T, N)):
        raise ValueError(
            f"{name} targets must have shape (N,) = ({N},) for one target per "
            f"sequence or (T, N) = ({T}, {N}) for one per step, got "
            f"{_checks.shape_str(y.shape)}"
        )
    if classify and (y.is_floating_point() or y.is_complex()):
        raise TypeError(f"{name} targets must be class indices (int) for cross_entropy")
    if not torch.isfinite(x).all() or (
        y.is_floating_point() and not torch.isfinite(y).all()
    ):
        raise ValueError(f"{name} holds NaN or infinite values")
    return x.detach().cpu(), y.detach().cpu()


def tensor_task(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    valid: tuple[torch.Tensor, torch.Tensor] | None = None,
    test: tuple[torch.Tensor, torch.Tensor] | None = None,
    valid_fraction: float = 0.2,
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
    ``patience`` is set (as for the chorales). ``seq_len`` and
    ``eval_samples`` of the config are ignored: the sequences are the data.

    Args:
        inputs: ``(T, N, I)`` float, the training sequences (time first).
        targets: ``(N,)`` (one target per sequence, read at the last step) or
            ``(T, N)`` (one per step). Float targets: regression with mean
            squared error; integer targets: classes with cross-entropy.
        valid: ``(inputs, targets)`` of the validation split. Default: the
            last ``valid_fraction`` of the sequences given, held out.
        test: ``(inputs, targets)`` of the test split. Default: the
            validation split (then the final test loss is not independent of
            the choice of weights: say so when reporting it).
        valid_fraction: share of ``inputs`` held out when ``valid`` is not
            given (default 0.2).
        loss: ``"mse"`` or ``"cross_entropy"`` (default: from the targets'
            dtype).
        num_classes: classes of a classification task (default: the largest
            label in any split, plus one).
        name: the task's name in records and metrics (default ``"tensors"``).
        defaults: :class:`rhn.train.TrainConfig` settings for
            :meth:`~rhn.train.TrainConfig.for_task` (default none).

    Returns:
        A :class:`~rhn.tasks.Task` with ``held_out=("valid", "test")``, whose
        ``baseline`` is the loss of the best memoryless predictor fitted on
        the training split: the training mean (MSE) or the training class
        frequencies (cross-entropy), scored on the test split.
    """
    inputs, targets = _pair("inputs, targets", (inputs, targets))
    if loss is None:
        loss = "mse" if targets.is_floating_point() else "cross_entropy"
    loss = _checks.choice("loss", loss, ["mse", "cross_entropy"])
    classify = loss == "cross_entropy"
    x, y = _check_split("the data", inputs, targets, classify)
    if valid is None:
        fraction = _checks.real("valid_fraction", valid_fraction)
        N = x.shape[1]
        k = math.ceil(fraction * N)
        if not 0 < fraction < 1 or not 1 <= k < N:
            raise ValueError(
                f"valid_fraction must leave at least one sequence in each split of "
                f"the {N} given, got {valid_fraction}"
            )
        splits = {
            "train": (x[:, : N - k], y[..., : N - k]),
            "valid": (x[:, N - k :], y[..., N - k :]),
        }
    else:
        splits = {
            "train": (x, y),
            "valid": _check_split("valid", *_pair("valid", valid), classify),
        }
    splits["test"] = (
        splits["valid"]
        if test is None
        else _check_split("test", *_pair("test", test), classify)
    )
    I, per_step = x.shape[2], y.dim() == 2
    for split, (xs, ys) in splits.items():
        if xs.shape[2] != I or (ys.dim() == 2) != per_step:
            raise ValueError(
                f"{split} must have {I} input features and "
                f"{'(T, N)' if per_step else '(N,)'} targets like the training data, "
                f"got inputs {tuple(xs.shape)} and targets {tuple(ys.shape)}"
            )
    if classify:
        largest = max(int(ys.max()) for _, ys in splits.values())
        if min(int(ys.min()) for _, ys in splits.values()) < 0:
            raise ValueError("class targets must be >= 0")
        C = (
            largest + 1
            if num_classes is None
            else _checks.positive_int("num_classes", num_classes)
        )
        if largest >= C:
            raise ValueError(f"num_classes is {C}, but a target is {largest}")
        output_size = C
    else:
        output_size = 1
    baseline = _memoryless_loss(
        splits["train"][1], splits["test"][1], classify, output_size
    )
    if not classify and baseline == 0:
        value = float(splits["train"][1].reshape(-1)[0])
        raise ValueError(
            f"targets must vary, got every target equal to {value:g}: the baseline "
            "(the loss of predicting a constant) is 0, there is nothing to learn"
        )
    fingerprint = _io.fingerprint(
        loss, output_size, *(t for pair in splits.values() for t in pair)
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
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A training batch (``split="train"``) or a whole held-out split."""
        split = _checks.choice("split", split, list(splits))
        xs, ys = splits[split]
        if split == "train":
            B = _checks.positive_int("num_samples", num_samples)
            if generator is None:
                generator = torch.Generator().manual_seed(_checks.seed("seed", seed))
            index = torch.randint(0, xs.shape[1], (B,), generator=generator)
            xs, ys = xs[:, index], ys[..., index]
        ys = ys.to(device, dtype) if ys.is_floating_point() else ys.to(device)
        return xs.to(device, dtype), ys

    return Task(
        name=name,
        generate=generate,
        input_size=I,
        output_size=output_size,
        loss=loss,
        readout="all" if per_step else "last",
        baseline=lambda seq_len: baseline,
        defaults=dict(defaults or {}),
        held_out=("valid", "test"),
        fingerprint=fingerprint,
    )


def _memoryless_loss(
    train: torch.Tensor, test: torch.Tensor, classify: bool, classes: int
) -> float:
    """The test loss of the best input-ignoring predictor fitted on ``train``."""
    if not classify:
        mean = train.double().mean()
        return float(((test.double() - mean) ** 2).mean())
    counts = torch.bincount(train.reshape(-1), minlength=classes).double() + 1.0
    log_p = (counts / counts.sum()).log()  # add-one smoothed class frequencies
    return float(-log_p[test.reshape(-1)].mean())


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
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(
            f"{name} {spec}: cannot import {module_name!r} ({err})"
        ) from None
    except SyntaxError as err:
        raise ValueError(
            f"{name} {spec}: {module_name!r} has a syntax error ({err.msg}, "
            f"{err.filename}, line {err.lineno})"
        ) from None
    except BaseException as err:  # its top-level code raised, or called exit()
        raise ValueError(
            f"{name} {spec}: importing {module_name!r} raised "
            f"{type(err).__name__}: {_io.one_line(err)[:200]}"
        ) from None
    factory = getattr(module, function, None)
    if factory is None:
        raise ValueError(f"{name} {spec}: module {module_name!r} has no {function!r}")
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
            f"needs {', '.join(needed)}"
        )
    try:
        task = factory()
    except BaseException as err:  # the factory's own mistake, or sys.exit()
        if isinstance(err, KeyboardInterrupt):
            raise
        raise ValueError(
            f"{name} {spec}: calling {function}() raised {type(err).__name__}: "
            f"{_io.one_line(err)[:200]}"
        ) from None
    if not isinstance(task, Task):
        raise ValueError(
            f"{name} {spec}: expected {function}() to return an rhn.tasks.Task, "
            f"got {_what(task)}"
        )
    return task


def _what(obj: object) -> str:
    """A short description of ``obj`` for a message (never a long repr)."""
    kind = type(obj).__name__
    text = repr(obj)
    return f"a {kind}" if len(text) > 60 else f"a {kind} ({text})"
