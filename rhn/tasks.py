r"""Seeded toy sequence tasks for long-range credit assignment.

Every task is generated on the fly (nothing is downloaded) from a
``torch.Generator``, so the same ``seed`` gives the same data on every machine
and generating data never disturbs the global random number generator. The data
are drawn on the CPU and then moved to ``device``, so a GPU run sees exactly the
numbers a CPU run sees.

Inputs are time-first, ``(T, B, I)``, like the models of :mod:`rhn`.

====================  =========================  =====================  ==============
task                  inputs                     targets                loss, baseline
====================  =========================  =====================  ==============
``adding``            ``(T, B, 2)`` float        ``(B,)`` float         MSE, 1/6
``copy``              ``(T+20, B, 10)`` one-hot  ``(T+20, B)`` int64    cross-entropy,
                                                                        10 ln 8/(T+20)
``temporal_order``    ``(T, B, 8)`` one-hot      ``(B,)`` int64         cross-entropy,
                                                                        ln 4
``sine_memory``       ``(T, B, 1)`` float        ``(B,)`` int64         cross-entropy,
                                                                        ln 4
``chorales``          ``(T, B, 46)`` 0/1 frames  ``(T, B, 46)``, -1 on  frame NLL,
                                                 padding                memoryless
====================  =========================  =====================  ==============

The last task is real music on a fixed data set shipped with the package
(:mod:`rhn.chorales`): training batches are drawn from its training split and
the held-out scores come from its validation and test splits.

:data:`TASKS` collects the five by name, each with its loss, its input and
output sizes, its baseline and the training settings that let an RHN solve it
(used by ``python -m rhn train``). Beside them, :func:`marked_recall` is the
adding problem without its second, late marker: the target is the first
marked value alone (the chapter "When to use an RHN"; not in :data:`TASKS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import torch

from . import _checks, chorales

__all__ = [
    "adding_problem",
    "copy_memory",
    "temporal_order",
    "adding_baseline",
    "copy_baseline",
    "temporal_order_baseline",
    "sine_memory",
    "sine_memory_baseline",
    "marked_recall",
    "marked_recall_baseline",
    "Task",
    "TASKS",
    "get_task",
]


def _generator(seed: object, generator: object) -> torch.Generator:
    """The generator to draw from: ``generator`` if given, else a fresh one."""
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(
                "generator must be a torch.Generator or None, got "
                f"{type(generator).__name__}"
            )
        if generator.device.type != "cpu":
            raise ValueError(
                "generator must be a CPU torch.Generator (data are drawn on the "
                f"CPU, then moved), got one on {generator.device}"
            )
        return generator
    return torch.Generator().manual_seed(_checks.seed("seed", seed))


def _float_dtype(dtype: object) -> torch.dtype:
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"dtype must be a floating-point torch.dtype (e.g. torch.float32), got "
            f"{dtype!r}"
        )
    return dtype


def _uniform_int(
    low: torch.Tensor | int, high: torch.Tensor | int, n: int, g: torch.Generator
) -> torch.Tensor:
    """``n`` integers uniform in ``[low, high)`` (bounds may be tensors)."""
    u = torch.rand(n, generator=g, dtype=torch.float64)
    return (low + (u * (torch.as_tensor(high) - low)).floor()).long()


def adding_problem(
    num_samples: int,
    seq_len: int,
    *,
    first_within: int | None = None,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The adding problem (Hochreiter and Schmidhuber, 1997; Arjovsky et al., 2016).

    Each sequence has two channels: values :math:`u_t \sim U[0, 1]` and a
    marker channel that is 1 at exactly two steps, one in each half of the
    sequence, and 0 elsewhere. The target is the sum of the two marked values,

    .. math::
        y = u_{t_1} + u_{t_2}, \qquad 0 \le t_1 < \lfloor T/2 \rfloor \le t_2 < T.

    Predicting the constant 1 gives the mean squared error
    :math:`\operatorname{Var}(u_1 + u_2) = 1/6` (:func:`adding_baseline`); a
    model that solves the task goes far below, e.g. under 0.01.

    Args:
        num_samples: batch size ``B`` (>= 1).
        seq_len: sequence length ``T`` (>= 2).
        first_within: the first marker lies in the first ``first_within``
            steps, ``1 <= first_within <= T // 2`` (default ``None``: anywhere
            in the first half). With 10 and ``T = 100`` the first value is
            held 90 to 99 steps (the chapter "When to use an RHN").
        seed: seed of a fresh ``torch.Generator`` (default 0); ignored if
            ``generator`` is given.
        generator: a CPU ``torch.Generator`` to draw from (default ``None``);
            the training loop passes one to draw a new batch at every step.
        device: where to put the tensors (default ``None``: the CPU).
        dtype: floating-point dtype of inputs and targets (default float32).

    Returns:
        ``(inputs, targets)``: ``inputs`` of shape ``(T, B, 2)`` (channel 0 the
        values, channel 1 the markers) and ``targets`` of shape ``(B,)``.

    Example::

        >>> x, y = adding_problem(4, 10, seed=0)
        >>> x.shape, y.shape
        (torch.Size([10, 4, 2]), torch.Size([4]))
        >>> bool(((x[..., 0] * x[..., 1]).sum(0) == y).all())
        True
    """
    return _marked_values(
        num_samples, seq_len, first_within, True, seed, generator, device, dtype
    )


def _marked_values(
    num_samples: object,
    seq_len: object,
    first_within: object,
    second_counts: bool,
    seed: object,
    generator: object,
    device: object,
    dtype: object,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The adding problem's sequences; without ``second_counts``, the second
    marker is removed and the target is the first marked value alone (the same
    random draws either way, so the two tasks share their sequences)."""
    B = _checks.positive_int("num_samples", num_samples)
    device = _checks.device("device", device)
    T = _checks.positive_int("seq_len", seq_len, minimum=2)
    dtype = _float_dtype(dtype)
    half = T // 2
    name = "first_within" if second_counts else "within"
    if first_within is not None:
        first_within = _checks.positive_int(name, first_within)
        if first_within > half:
            raise ValueError(
                f"{name} must be at most seq_len // 2 = {half} (the first half), "
                f"got {first_within}"
            )
    g = _generator(seed, generator)
    values = torch.rand(T, B, generator=g, dtype=torch.float64)  # (T, B)
    first = _uniform_int(0, first_within or half, B, g)  # (B,) early enough
    second = _uniform_int(half, T, B, g)  # (B,) in the second half
    markers = torch.zeros(T, B, dtype=torch.float64)
    batch = torch.arange(B)
    markers[first, batch] = 1.0
    targets = values[first, batch]  # (B,)
    if second_counts:
        markers[second, batch] = 1.0
        targets = targets + values[second, batch]
    inputs = torch.stack([values, markers], dim=-1)  # (T, B, 2)
    return inputs.to(device=device, dtype=dtype), targets.to(device=device, dtype=dtype)


def marked_recall(
    num_samples: int,
    seq_len: int,
    *,
    within: int = 10,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Recall one marked value: the adding problem without its second marker.

    The inputs are those of :func:`adding_problem` with ``first_within=within``
    drawn from the same seed, except that only the first marker is kept
    (channel 1 is 1 at one step, in the first ``within`` steps); the target is
    the value marked there, :math:`y = u_{t_1}`. The sequences are the same,
    so the two tasks differ only in the second, late marked value: the adding
    problem's target also depends on the last steps, this one's does not.
    Predicting the constant :math:`1/2` gives the mean squared error
    :math:`1/12` (:func:`marked_recall_baseline`).

    Args:
        num_samples, seq_len, seed, generator, device, dtype: as in
            :func:`adding_problem`.
        within: the marker lies in the first ``within`` steps,
            ``1 <= within <= T // 2`` (default 10; ``None``: anywhere in the
            first half).

    Returns:
        ``(inputs, targets)``: ``inputs`` of shape ``(T, B, 2)`` and
        ``targets`` of shape ``(B,)``.

    Example::

        >>> x, y = marked_recall(4, 20, within=5, seed=0)
        >>> int(x[..., 1].sum()), bool(((x[..., 0] * x[..., 1]).sum(0) == y).all())
        (4, True)
    """
    return _marked_values(
        num_samples, seq_len, within, False, seed, generator, device, dtype
    )


def marked_recall_baseline() -> float:
    r"""MSE of always predicting 1/2 on :func:`marked_recall`: :math:`1/12`.

    The target is one :math:`U[0, 1]` value, of mean 1/2 and variance 1/12;
    no constant does better.
    """
    return 1.0 / 12.0


def adding_baseline() -> float:
    r"""MSE of always predicting 1 on the adding problem: :math:`1/6`.

    The target is the sum of two independent :math:`U[0, 1]` values, so its
    mean is 1 and its variance :math:`2 \cdot 1/12 = 1/6`; no constant does
    better.
    """
    return 1.0 / 6.0


# Copy memory: class 0 is the blank, 1..alphabet_size the symbols, and the
# delimiter (input only) is alphabet_size + 1.
def copy_memory(
    num_samples: int,
    seq_len: int,
    *,
    num_symbols: int = 10,
    alphabet_size: int = 8,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The copy-memory task of Arjovsky et al. (2016).

    The input shows ``num_symbols`` symbols drawn uniformly from an alphabet of
    ``alphabet_size``, then ``seq_len - 1`` blanks, a delimiter and
    ``num_symbols`` more blanks. The target is blank for the first
    ``seq_len + num_symbols`` steps and then repeats the symbols in order: the
    network must remember them across ``seq_len`` steps. Total length
    ``seq_len + 2 * num_symbols``.

    Classes: 0 is the blank, ``1..alphabet_size`` are the symbols, and
    ``alphabet_size + 1`` is the delimiter (it appears in inputs only).

    Args:
        num_samples: batch size ``B`` (>= 1).
        seq_len: the delay ``T`` between the last symbol shown and the
            delimiter, plus one (>= 1).
        num_symbols: how many symbols to remember (default 10).
        alphabet_size: number of distinct symbols (default 8).
        seed, generator, device: as in :func:`adding_problem`.
        dtype: floating-point dtype of the one-hot inputs (default float32).

    Returns:
        ``(inputs, targets)``: one-hot ``inputs`` of shape
        ``(T + 2S, B, A + 2)`` and class-index ``targets`` (int64) of shape
        ``(T + 2S, B)`` with values in ``[0, A]``, where ``S = num_symbols``
        and ``A = alphabet_size``. Defaults: ``(T + 20, B, 10)`` and
        ``(T + 20, B)``; a model has ``A + 1 = 9`` output classes.
    """
    B = _checks.positive_int("num_samples", num_samples)
    device = _checks.device("device", device)
    T = _checks.positive_int("seq_len", seq_len)
    S = _checks.positive_int("num_symbols", num_symbols)
    A = _checks.positive_int("alphabet_size", alphabet_size, minimum=2)
    dtype = _float_dtype(dtype)
    g = _generator(seed, generator)
    symbols = torch.randint(1, A + 1, (S, B), generator=g)  # (S, B)
    length = T + 2 * S
    codes = torch.zeros(length, B, dtype=torch.long)
    codes[:S] = symbols
    codes[S + T - 1] = A + 1  # the delimiter: "now repeat them"
    targets = torch.zeros(length, B, dtype=torch.long)
    targets[T + S :] = symbols
    inputs = torch.nn.functional.one_hot(codes, A + 2).to(dtype)  # (T+2S, B, A+2)
    return inputs.to(device), targets.to(device)


def copy_baseline(seq_len: int, num_symbols: int = 10, alphabet_size: int = 8) -> float:
    r"""Cross-entropy of the best memoryless strategy on :func:`copy_memory`.

    Predict the blank with certainty for the first ``T + S`` steps (loss 0) and
    a uniform guess over the ``A`` symbols for the last ``S`` steps (loss
    :math:`\ln A` each), averaged over all ``T + 2S`` steps:

    .. math::
        \frac{S \ln A}{T + 2S} \quad\Bigl(= \frac{10 \ln 8}{T + 20}
        \text{ with the defaults}\Bigr).
    """
    T = _checks.positive_int("seq_len", seq_len)
    S = _checks.positive_int("num_symbols", num_symbols)
    A = _checks.positive_int("alphabet_size", alphabet_size, minimum=2)
    return S * math.log(A) / (T + 2 * S)


# Temporal order: symbols as in Hochreiter and Schmidhuber (1997), task 6a.
_ORDER_SYMBOLS = ("a", "b", "c", "d", "B", "E", "X", "Y")


def temporal_order(
    num_samples: int,
    seq_len: int = 100,
    *,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The temporal-order task (Hochreiter and Schmidhuber, 1997, task 6a).

    A sequence starts with ``B`` and ends with ``E``; in between are random
    distractors ``a``-``d`` except at two positions, one in
    :math:`[0.1 T, 0.2 T]` and one in :math:`[0.5 T, 0.6 T]` (for ``T = 100``:
    steps 10-20 and 50-60), which hold ``X`` or ``Y``. The class is the order of
    the two: ``XX`` = 0, ``XY`` = 1, ``YX`` = 2, ``YY`` = 3. Guessing gives the
    cross-entropy :math:`\ln 4` (:func:`temporal_order_baseline`).

    Args:
        num_samples: batch size ``B`` (>= 1).
        seq_len: sequence length ``T`` (>= 10, default 100).
        seed, generator, device: as in :func:`adding_problem`.
        dtype: floating-point dtype of the one-hot inputs (default float32).

    Returns:
        ``(inputs, targets)``: one-hot ``inputs`` of shape ``(T, B, 8)`` over
        the symbols ``a b c d B E X Y`` (in that order) and class-index
        ``targets`` (int64) of shape ``(B,)`` with values in ``{0, 1, 2, 3}``.
    """
    B = _checks.positive_int("num_samples", num_samples)
    device = _checks.device("device", device)
    try:
        T = _checks.positive_int("seq_len", seq_len, minimum=10)
    except ValueError as err:  # the task needs its two symbols and the room
        raise ValueError(f"task 'temporal_order': {err}") from None
    dtype = _float_dtype(dtype)
    g = _generator(seed, generator)
    codes = torch.randint(0, 4, (T, B), generator=g)  # distractors a-d
    codes[0], codes[-1] = 4, 5  # B ... E
    batch = torch.arange(B)
    first = _uniform_int(round(0.1 * T), round(0.2 * T) + 1, B, g)
    second = _uniform_int(round(0.5 * T), round(0.6 * T) + 1, B, g)
    which = torch.randint(0, 2, (2, B), generator=g)  # 0 = X, 1 = Y
    codes[first, batch] = 6 + which[0]
    codes[second, batch] = 6 + which[1]
    targets = 2 * which[0] + which[1]  # XX, XY, YX, YY -> 0, 1, 2, 3
    inputs = torch.nn.functional.one_hot(codes, len(_ORDER_SYMBOLS)).to(dtype)
    return inputs.to(device), targets.to(device)


def temporal_order_baseline() -> float:
    r"""Cross-entropy of a uniform guess over the 4 classes: :math:`\ln 4`."""
    return math.log(4.0)


def sine_memory(
    num_samples: int,
    seq_len: int = 60,
    *,
    num_classes: int = 4,
    signal_len: int = 10,
    noise: float = 0.5,
    random_phase: bool = False,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Long memory under noise: which sine opened the sequence?

    One input channel. The first ``signal_len`` steps (:math:`S`) hold a noisy
    sine at one of ``num_classes`` (:math:`K`) frequencies; every later step
    is pure noise, until the end, where the class :math:`k` must be named:

    .. math::
        x_t = \sin\Bigl(2\pi \frac{k + 1}{2S}\, t + \varphi\Bigr)\,
        \mathbb{1}\{t < S\} + \sigma \varepsilon_t, \qquad
        \varepsilon_t \sim \mathcal{N}(0, 1),

    with :math:`k` uniform in :math:`\{0, \dots, K - 1\}` and
    :math:`\sigma` = ``noise`` and phase :math:`\varphi = 0` (or
    :math:`\varphi \sim U[0, 2\pi)` with ``random_phase``): class :math:`k`
    makes :math:`(k + 1)/2` cycles in the :math:`S` informative steps.
    Nothing marks where the signal ends; a model must store the class in its
    state and keep it through :math:`T - S` steps of input that carry no
    information and only disturb the state. Guessing gives the cross-entropy
    :math:`\ln K` (:func:`sine_memory_baseline`) and the accuracy :math:`1/K`; with the
    defaults the best possible classifier of the first :math:`S` steps (nearest
    mean) is right about 99.8 % of the time.

    Args:
        num_samples: batch size ``B`` (>= 1).
        seq_len: sequence length ``T`` (>= ``signal_len``, default 60).
        num_classes: number of frequencies ``K`` (>= 2 and < ``signal_len``,
            so that every frequency is below the Nyquist limit; default 4).
        signal_len: informative steps ``S`` at the start (>= 3, default 10).
        noise: standard deviation :math:`\sigma` of the Gaussian noise added at
            every step (>= 0, default 0.5).
        random_phase: start each sine at a random phase (default ``False``:
            phase 0), which makes the class harder to read from the signal.
        seed, generator, device: as in :func:`adding_problem`.
        dtype: floating-point dtype of the inputs (default float32).

    Returns:
        ``(inputs, targets)``: ``inputs`` of shape ``(T, B, 1)`` and
        class-index ``targets`` (int64) of shape ``(B,)`` with values in
        ``[0, K)``.

    Example::

        >>> x, y = sine_memory(4, 30, seed=0)
        >>> x.shape, y.shape
        (torch.Size([30, 4, 1]), torch.Size([4]))
        >>> x0, _ = sine_memory(4, 30, noise=0.0, seed=0)
        >>> bool((x0[10:] == 0).all())   # without noise, silence after the sine
        True
    """
    B = _checks.positive_int("num_samples", num_samples)
    device = _checks.device("device", device)
    S = _checks.positive_int("signal_len", signal_len, minimum=3)
    T = _checks.positive_int("seq_len", seq_len, minimum=S)
    K = _checks.positive_int("num_classes", num_classes, minimum=2)
    if K >= S:
        raise ValueError(
            f"num_classes must be < signal_len (= {S}), so that the highest "
            f"frequency, num_classes / (2 signal_len) cycles per step, stays below "
            f"the Nyquist limit of 1/2; got num_classes={K}"
        )
    sigma = _checks.real("noise", noise)
    if sigma < 0:
        raise ValueError(f"noise must be a standard deviation >= 0, got {sigma}")
    random_phase = _checks.boolean("random_phase", random_phase)
    dtype = _float_dtype(dtype)
    g = _generator(seed, generator)
    classes = torch.randint(0, K, (B,), generator=g)  # (B,)
    phase = 2 * math.pi * torch.rand(B, generator=g, dtype=torch.float64)  # (B,)
    if not random_phase:
        phase = torch.zeros_like(phase)
    eps = torch.randn(T, B, generator=g, dtype=torch.float64)  # (T, B)
    freq = (classes.double() + 1) / (2 * S)  # cycles per step, (B,)
    t = torch.arange(S, dtype=torch.float64)[:, None]  # (S, 1)
    values = sigma * eps
    values[:S] += torch.sin(2 * math.pi * freq * t + phase)  # (S, B)
    inputs = values.unsqueeze(-1)  # (T, B, 1)
    return inputs.to(device=device, dtype=dtype), classes.to(device)


def sine_memory_baseline(num_classes: int = 4) -> float:
    r"""Cross-entropy of a uniform guess over the classes of :func:`sine_memory`.

    :math:`\ln K`; the accuracy of guessing is :math:`1/K`.
    """
    return math.log(_checks.positive_int("num_classes", num_classes, minimum=2))


@dataclass(frozen=True)
class Task:
    """A toy task, everything the training loop needs to know about it.

    Attributes:
        name: the task's name in :data:`TASKS` and on the command line.
        generate: ``generate(num_samples, seq_len, *, seed, generator, device,
            dtype) -> (inputs, targets)``, or ``(inputs, targets, mask)``
            with a bool ``mask`` of shape ``(T, B)`` beside targets per step:
            the loss then averages over the targets where it is ``True``
            (:func:`rhn.owntasks.tensor_task` makes such a task).
        input_size: features per time step of the inputs.
        output_size: outputs of the model's head: 1 for regression, the
            number of classes for classification.
        loss: ``"mse"`` (targets ``(B,)`` float), ``"cross_entropy"``
            (targets class indices) or ``"frame_nll"`` (targets ``(T, B, P)``
            0/1 frames, ``-1`` on padding; :func:`rhn.chorales.task_loss`).
        readout: ``"last"`` if only the last step's output is scored (targets
            ``(B,)``), ``"all"`` if every step is (targets ``(T', B)``).
        baseline: ``baseline(seq_len) -> float``, the loss of the best
            input-ignoring (memoryless) predictor; solving the task means going
            far below it. On a task with a test split, scored on the test
            split (training judges divergence by the test loss against it);
            with a validation split only, on that split.
        defaults: training settings (field names of
            :class:`rhn.train.TrainConfig`) with which an RHN solves the task.
        held_out: ``None`` for a task generated afresh at every step; for a
            task on a fixed data set, the names of its validation and test
            splits, ``(valid, test)``: ``generate(..., split=name)`` returns a
            whole split, training batches come from ``split="train"``, the
            evaluations during training score the validation split (the
            history's ``valid_loss``, repeated in its ``test_loss``), and the
            final ``test_loss`` is the test split at the weights with the best
            validation loss. A task without a test split names it ``None``,
            ``(valid, None)``: its final ``test_loss`` is then ``None``, and
            the metrics' ``test_loss_reason`` says so.
        init_head: ``None``, or ``init_head(head)`` sets up the model's output
            layer (an ``nn.Linear``) before training, e.g. so that the untrained
            model already predicts like the baseline.
        fingerprint: ``None``, or a short hash of the task's data
            (:func:`rhn.owntasks.tensor_task` sets it). A run records it, so
            that a resume on other data is refused; a task without one is
            fingerprinted by a few sequences it generates.
        length: ``None`` if ``generate(B, seq_len)`` returns inputs of
            ``seq_len`` steps, else ``length(seq_len)``, the number of steps it
            returns (the copy task adds its symbols and their recall). The
            training loop refuses a batch of another length; a task with
            ``held_out`` splits (whole pieces of any length) is not checked.
        batch_first: the layout the task's data were given in
            (:func:`rhn.owntasks.tensor_task`'s ``batch_first``): a model
            loaded back by :func:`rhn.train.load_model` takes inputs laid out
            so. Batches are generated time-first either way.
        reads_seq_len: ``False`` for a task whose sequences have lengths of
            their own that ``generate`` keeps whatever ``seq_len`` it is given
            (the chorales: whole pieces). A ``TrainConfig`` then refuses a
            ``seq_len`` other than the task's default, which a run would
            record but not use.
    """

    name: str
    generate: Callable[..., tuple[torch.Tensor, torch.Tensor]]
    input_size: int
    output_size: int
    loss: str
    readout: str
    baseline: Callable[[int], float]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    held_out: tuple[str, str | None] | None = None
    init_head: Callable[[torch.nn.Linear], None] | None = None
    fingerprint: str | None = None
    length: Callable[[int], int] | None = None
    batch_first: bool = False
    reads_seq_len: bool = True

    def __post_init__(self) -> None:
        # A task of the user's own is checked here, not deep inside a run.
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"Task.name must be a non-empty string, got {self.name!r}")
        for attr in ("generate", "baseline"):
            if not callable(getattr(self, attr)):
                raise TypeError(
                    f"Task.{attr} must be callable, got {getattr(self, attr)!r}"
                )
        _checks.positive_int("Task.input_size", self.input_size)
        _checks.positive_int("Task.output_size", self.output_size)
        _checks.choice("Task.loss", self.loss, ["mse", "cross_entropy", "frame_nll"])
        _checks.choice("Task.readout", self.readout, ["last", "all"])
        if self.held_out is not None and (
            not isinstance(self.held_out, tuple)
            or len(self.held_out) != 2
            or not isinstance(self.held_out[0], str)
            or not isinstance(self.held_out[1], (str, type(None)))
        ):
            raise ValueError(
                "Task.held_out must be None or a pair of split names (valid, test), "
                f"test None if there is no test split, got {self.held_out!r}"
            )
        if self.length is not None and not callable(self.length):
            raise TypeError(
                f"Task.length must be callable or None, got {self.length!r}"
            )
        if not isinstance(self.batch_first, bool):
            raise TypeError(
                f"Task.batch_first must be True or False, got {self.batch_first!r}"
            )
        if self.init_head is not None and not callable(self.init_head):
            raise TypeError(
                f"Task.init_head must be callable or None, got {self.init_head!r}"
            )
        # Read-only, so that no caller can change a registered task's defaults.
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))


TASKS: dict[str, Task] = {
    "adding": Task(
        name="adding",
        generate=adding_problem,
        input_size=2,
        output_size=1,
        loss="mse",
        readout="last",
        baseline=lambda seq_len: adding_baseline(),
        defaults={"seq_len": 100},  # TrainConfig's own defaults are for adding
    ),
    "copy": Task(
        name="copy",
        generate=copy_memory,
        input_size=10,
        output_size=9,
        loss="cross_entropy",
        readout="all",
        baseline=copy_baseline,
        length=lambda seq_len: seq_len + 2 * 10,  # copy_memory's num_symbols
        # Storing 10 symbols needs a wide state that is written to readily;
        # the memory is short, so one micro-layer and a mild bias do.
        defaults={
            "seq_len": 10,
            "hidden_size": 128,
            "depth": 1,
            "transform_bias": -1.0,
            "lr": 3e-3,
            "steps": 5000,
            "eval_every": 250,
        },
    ),
    "temporal_order": Task(
        name="temporal_order",
        generate=temporal_order,
        input_size=8,
        output_size=4,
        loss="cross_entropy",
        readout="last",
        baseline=lambda seq_len: temporal_order_baseline(),
        defaults={"seq_len": 50, "depth": 2, "steps": 600},
    ),
    # Long memory under noise (the chapter "When to use an RHN"): a short
    # noisy sine, then only noise; the class must survive the noise.
    "sine_memory": Task(
        name="sine_memory",
        generate=sine_memory,
        input_size=1,
        output_size=4,
        loss="cross_entropy",
        readout="last",
        baseline=lambda seq_len: sine_memory_baseline(),
        # the RHN of the study behind the chapter (rhn.studies.memory), which
        # solved it in 5 of 5 seeds
        defaults={
            "seq_len": 60,
            "hidden_size": None,
            "num_params": 4480,
            "steps": 2500,
            "batch_size": 32,
            "lr": 1e-2,
            "eval_every": 100,
            "eval_samples": 500,
        },
    ),
    # Real music, a fixed data set (rhn.chorales): next-step prediction of
    # piano rolls, every model at the same parameter budget by default.
    "chorales": Task(
        name="chorales",
        generate=chorales.generate,
        input_size=chorales.HIGHEST - chorales.LOWEST + 1,
        output_size=chorales.HIGHEST - chorales.LOWEST + 1,
        loss="frame_nll",
        readout="all",
        baseline=lambda seq_len: chorales.baseline_nll(chorales.load("test")),
        defaults={
            "hidden_size": None,
            "num_params": 40_000,
            "steps": 500,
            "batch_size": 16,
            "lr": 3e-3,
            "eval_every": 25,
            "patience": 6,
        },
        held_out=("valid", "test"),
        init_head=chorales.init_head,
        reads_seq_len=False,  # whole chorales, whatever seq_len says
    ),
}
"""The five tasks by name, ``"adding"``, ``"copy"``, ``"temporal_order"``,
``"sine_memory"`` and ``"chorales"``, each a :class:`Task`; its ``defaults``
are settings of :class:`rhn.train.TrainConfig`.

:meta hide-value:
"""


def get_task(name: str | Task) -> Task:
    """Look a task up in :data:`TASKS` by name (a :class:`Task` is returned as is).

    A task of your own is a :class:`Task` (:func:`rhn.owntasks.tensor_task`
    makes one from tensors); :class:`rhn.train.TrainConfig` takes it as ``task``.
    """
    if isinstance(name, Task):
        return name
    return TASKS[_checks.choice("task", name, list(TASKS))]
