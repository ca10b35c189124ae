r"""Bach chorales as binary piano rolls, for next-step prediction of real music.

The data are the four-part chorale harmonisations of J. S. Bach bundled with
music21 (Cuthbert and Ariza, 2010), as listed by
``music21.corpus.chorales.Iterator()`` (Riemenschneider numbers 1-371). They
are shipped inside the package as a small compressed file,
``rhn/_data/chorales.npz``, so that loading them needs neither music21 nor a
network; ``python -m rhn data chorales`` (:func:`build`, :func:`save`)
regenerates the file from music21's corpus.

How a score becomes a piano roll (:func:`score_to_roll`):

- **Time step: one quarter note.** The roll samples the score on the beat:
  frame ``t`` holds the pitches that sound at offset ``phase + t`` quarter
  notes, where ``phase`` aligns the grid with the bar lines (0 for all but one
  chorale, which starts with an eighth-note pickup). Notes that begin and end
  between beats (eighth-note passing tones) are therefore dropped. The JSB
  chorales benchmark (Boulanger-Lewandowski et al., 2012) is also sampled at
  the quarter note.
- **Voices:** the vocal parts (names containing soprano, alto, tenor or bass;
  every part of the three scores whose parts have no names). Instrumental
  descants (horns, trumpets, violins, timpani) of the cantata settings are left
  out.
- **Ties, repeated notes:** a binary roll has no onsets, so a note held (or
  tied) across beats and a note struck again look the same.
- **Rests** are silent frames for that voice; **fermatas** are ignored (the
  notated duration is kept); **pickup bars** are kept: the roll starts at the
  first beat of the score.
- **Pitches:** MIDI numbers from :data:`LOWEST` (36, C2) to 81 (A5), the range
  that occurs, so ``P = 46`` columns. No transposition.
- **Duplicates:** Riemenschneider's collection lists some chorales twice: 21
  of its 371 numbers point at a score already listed, and 2 more at a second
  file with the same music. A chorale whose file or roll equals an earlier one
  is dropped and its number kept with the first, which leaves 348 chorales.

The split is by chorale and fixed: in the order of the (first) Riemenschneider
number, chorale ``i`` (counting from 0) is in ``test`` if ``i % 5 == 4``, in
``valid`` if ``i % 5 == 3`` and in ``train`` otherwise: 210, 69 and 69
chorales of 11659, 3673 and 3579 frames (60/20/20 like the JSB split, but not
the same chorales nor the same pitch range).

Licence: music21 is BSD-licensed; its corpus is distributed with the
encoders' permission (``music21/corpus/license.txt``), and the chorales
themselves, composed before 1750, are in the public domain.

Shapes: a chorale is a ``(T, P)`` 0/1 tensor; :func:`pad` stacks several into
``(T_max, B, P)`` with a ``(T_max, B)`` boolean mask, time-first like the
models of :mod:`rhn`. :func:`next_step` turns that into inputs and targets,
:func:`frame_nll` is the loss and :func:`baseline_nll` the memoryless baseline.

Example::

    >>> train = load("train")
    >>> len(train), train.num_pitches
    (210, 46)
    >>> roll, mask = pad(train.rolls[:3])
    >>> roll.shape[1:], mask.shape == roll.shape[:2]
    (torch.Size([3, 46]), True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from . import _checks, _io

__all__ = [
    "LOWEST",
    "HIGHEST",
    "SPLITS",
    "Chorales",
    "load",
    "pad",
    "next_step",
    "frame_nll",
    "pitch_frequencies",
    "baseline_nll",
    "batches",
    "generate",
    "task_loss",
    "init_head",
    "sample_continuation",
    "synthesize",
    "score_to_roll",
    "build",
    "save",
    "DATA_FILE",
    "data_main",
]

LOWEST = 36
"""MIDI number of pitch column 0 (C2, the lowest bass note of the corpus)."""
HIGHEST = 81
"""MIDI number of the last pitch column (A5, the highest soprano note)."""
SPLITS = ("train", "valid", "test")
"""The three splits, by chorale (the ``split`` argument of :func:`load`)."""
STEP = 1.0  # frame length in quarter notes
DATA_FILE = "chorales.npz"  # in rhn/_data
_VOICES = ("soprano", "alto", "tenor", "bass")
_EPS = 1e-6  # tolerance when comparing offsets (music21 may hand out Fractions)


def _data_path() -> Path:
    return Path(str(resources.files("rhn") / "_data" / DATA_FILE))


@dataclass(frozen=True)
class Chorales:
    """One split of the chorales: a list of piano rolls and where they come from.

    Attributes:
        rolls: one ``(T_i, P)`` float tensor of 0s and 1s per chorale;
            column ``p`` is MIDI pitch ``lowest + p``.
        names: music21 corpus names, e.g. ``"bwv269"``.
        riemenschneider: the Riemenschneider number(s) of each chorale, as a
            tuple (two or more where the collection lists it twice).
        split: ``"train"``, ``"valid"``, ``"test"`` or ``"all"``.
        lowest: MIDI number of column 0 (:data:`LOWEST`).
        step: frame length in quarter notes (1.0).
    """

    rolls: tuple[torch.Tensor, ...]
    names: tuple[str, ...]
    riemenschneider: tuple[tuple[int, ...], ...]
    split: str
    lowest: int = LOWEST
    step: float = STEP

    def __len__(self) -> int:
        return len(self.rolls)

    @property
    def num_pitches(self) -> int:
        """``P``, the number of pitch columns."""
        return int(self.rolls[0].shape[1])

    @property
    def lengths(self) -> torch.Tensor:
        """``(B,)`` int64: the number of frames of each chorale."""
        return torch.tensor([r.shape[0] for r in self.rolls])

    @property
    def num_frames(self) -> int:
        """Total number of frames, the count the per-frame NLL averages over."""
        return int(sum(r.shape[0] for r in self.rolls))

    def padded(
        self, indices: Sequence[int] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:func:`pad` of the chorales at ``indices`` (default all)."""
        rolls = self.rolls if indices is None else [self.rolls[i] for i in indices]
        return pad(rolls)


def load(
    split: str = "train",
    *,
    path: str | Path | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Chorales:
    r"""Load one split of the shipped chorales (no music21 needed).

    Args:
        split: ``"train"`` (210 chorales), ``"valid"`` (69), ``"test"`` (69)
            or ``"all"`` (default ``"train"``).
        path: an ``.npz`` file written by :func:`save` (default: the file
            shipped in the package).
        device: where to put the rolls (default the CPU).
        dtype: floating-point dtype of the rolls (default float32).

    Returns:
        A :class:`Chorales` with one ``(T_i, P)`` roll per chorale, ``P = 46``.
    """
    split = _checks.choice("split", split, [*SPLITS, "all"])
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    data = _read(path)
    rolls = np.split(data["rolls"], np.cumsum(data["lengths"])[:-1])
    keep = [i for i, s in enumerate(data["split"]) if split in ("all", s)]
    return Chorales(
        rolls=tuple(
            torch.from_numpy(rolls[i].astype(np.float32)).to(device, dtype)
            for i in keep
        ),
        names=tuple(str(data["names"][i]) for i in keep),
        riemenschneider=tuple(
            tuple(int(n) for n in str(data["riemenschneider"][i]).split()) for i in keep
        ),
        split=split,
        lowest=int(data["lowest"]),
        step=float(data["step"]),
    )


def _read(path: str | Path | None) -> dict[str, Any]:
    """The arrays of a chorale file, rolls unpacked to ``(sum T_i, P)`` uint8."""
    file = _data_path() if path is None else Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"path: no chorale file at {str(file)!r}")
    expected = "a chorale file written by rhn.chorales.save"
    try:
        with np.load(file, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except Exception as err:  # empty, truncated, not a zip, pickled objects
        reason = (str(err).strip().splitlines() or [""])[0][:120]
        size = file.stat().st_size
        raise ValueError(
            f"path: {str(file)!r} ({size} bytes) is not a readable .npz file "
            f"({type(err).__name__}: {reason}); expected {expected}"
        ) from err
    missing = [k for k in _FILE_KEYS if k not in data]
    if missing:
        raise ValueError(f"path: {str(file)!r} lacks {missing}; expected {expected}")
    P = int(data["num_pitches"])
    data["rolls"] = np.unpackbits(data["rolls"], axis=1, count=P)
    if len(data["rolls"]) != int(data["lengths"].sum()):
        raise ValueError(
            f"path: {str(file)!r} is inconsistent: {len(data['rolls'])} frames, but "
            f"the lengths add up to {int(data['lengths'].sum())}; expected {expected}"
        )
    return data


# The arrays every chorale file holds (see build).
_FILE_KEYS = (
    "rolls",
    "lengths",
    "names",
    "riemenschneider",
    "split",
    "lowest",
    "num_pitches",
    "step",
)


def pad(rolls: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Stack rolls of different lengths, time-first, with a mask.

    Args:
        rolls: ``B`` tensors of shape ``(T_i, P)``.

    Returns:
        ``(roll, mask)``: ``roll`` of shape ``(T_max, B, P)``, zero after each
        chorale's end, and ``mask`` of shape ``(T_max, B)``, ``True`` on the
        frames that exist.

    >>> roll, mask = pad([torch.ones(3, 2), torch.ones(1, 2)])
    >>> roll.shape, mask.sum(0).tolist()
    (torch.Size([3, 2, 2]), [3, 1])
    """
    if not isinstance(rolls, Sequence) or len(rolls) == 0:
        raise ValueError(
            f"rolls must be a non-empty sequence of (T, P) tensors, got {rolls!r}"
        )
    for i, r in enumerate(rolls):
        _checks.float_tensor(f"rolls[{i}]", r)
        if r.dim() != 2 or r.shape[1] != rolls[0].shape[1] or r.shape[0] == 0:
            raise ValueError(
                f"rolls[{i}] must have shape (T, P) with T >= 1 and "
                f"P = {rolls[0].shape[1]}, got {_checks.shape_str(r.shape)}"
            )
    lengths = torch.tensor([r.shape[0] for r in rolls], device=rolls[0].device)
    roll = torch.nn.utils.rnn.pad_sequence(list(rolls))  # (T_max, B, P)
    steps = torch.arange(roll.shape[0], device=roll.device)
    mask = steps[:, None] < lengths[None, :]  # (T_max, B)
    return roll, mask


def next_step(
    roll: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Inputs and targets for predicting every frame from the frames before it.

    The input at step ``t`` is frame ``t - 1`` (an all-silent frame at
    ``t = 0``) and the target is frame ``t``, so each of a chorale's ``T_i``
    frames is predicted once, the first one from silence.

    Args:
        roll: ``(T, B, P)`` from :func:`pad`.
        mask: ``(T, B)`` boolean.

    Returns:
        ``(inputs, targets, mask)`` of shapes ``(T, B, P)``, ``(T, B, P)`` and
        ``(T, B)``; ``targets`` is ``roll`` and ``mask`` is unchanged.
    """
    roll = _checks.float_tensor("roll", roll)
    if roll.dim() != 3 or tuple(mask.shape) != tuple(roll.shape[:2]):
        raise ValueError(
            "roll must be (T, B, P) and mask (T, B), got "
            f"{_checks.shape_str(roll.shape)} and {_checks.shape_str(mask.shape)}"
        )
    inputs = torch.cat([torch.zeros_like(roll[:1]), roll[:-1]])  # (T, B, P)
    return inputs, roll, mask


def frame_nll(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""Frame-level negative log-likelihood of a piano roll, in nats.

    Each pitch is an independent Bernoulli variable with probability
    :math:`\sigma(z_p)` given the past; the NLL of a frame :math:`y` is the sum
    of the binary cross-entropies over the ``P`` pitches,

    .. math::
        \mathcal{L}(z, y) = -\sum_{p=1}^{P} \bigl[y_p \log \sigma(z_p)
        + (1 - y_p) \log (1 - \sigma(z_p))\bigr],

    and the loss is its mean over the frames where ``mask`` is true (every
    frame counts the same, so long chorales weigh more), the convention of the
    polyphonic-music benchmarks (Boulanger-Lewandowski et al., 2012).

    Args:
        logits: ``(T, B, P)`` (any leading shape) scores :math:`z`.
        targets: 0/1 frames :math:`y` of the same shape.
        mask: boolean of the leading shape (default all true).
        reduction: ``"mean"`` (per frame, default) or ``"sum"`` (total).

    Returns:
        A scalar tensor.
    """
    logits = _checks.float_tensor("logits", logits)
    if targets.shape != logits.shape:
        raise ValueError(
            f"targets must have the shape of logits {_checks.shape_str(logits.shape)}"
            f", got {_checks.shape_str(targets.shape)}"
        )
    reduction = _checks.choice("reduction", reduction, ["mean", "sum"])
    per_frame = F.binary_cross_entropy_with_logits(
        logits, targets.to(logits.dtype), reduction="none"
    ).sum(-1)  # (T, B)
    if mask is None:
        total, count = per_frame.sum(), per_frame.numel()
    else:
        if tuple(mask.shape) != tuple(logits.shape[:-1]):
            raise ValueError(
                f"mask must have shape {_checks.shape_str(logits.shape[:-1])}, got "
                f"{_checks.shape_str(mask.shape)}"
            )
        total = per_frame.masked_fill(~mask, 0.0).sum()
        count = int(mask.sum())
    return total if reduction == "sum" else total / max(count, 1)


def pitch_frequencies(chorales: Chorales) -> torch.Tensor:
    r"""How often each pitch sounds in a set of chorales, smoothed.

    Laplace's rule, :math:`f_p = (n_p + 1) / (N + 2)` with :math:`n_p` the
    frames in which pitch :math:`p` sounds out of :math:`N` frames, so that no
    pitch gets probability 0 or 1.

    Returns:
        ``(P,)`` float64 probabilities.
    """
    if not isinstance(chorales, Chorales):
        raise TypeError(f"chorales must be Chorales, got {type(chorales).__name__}")
    counts = torch.stack([r.double().sum(0) for r in chorales.rolls]).sum(0)
    return (counts + 1.0) / (chorales.num_frames + 2.0)


def baseline_nll(chorales: Chorales, train: Chorales | None = None) -> float:
    r"""NLL per frame of the memoryless model on ``chorales``.

    The memoryless model predicts every frame with the pitch frequencies of
    ``train`` (:func:`pitch_frequencies`; default the shipped training
    split), whatever came before. On the training split no constant
    prediction does better (up to the smoothing, under 1e-3 nats); a model
    that beats it on held-out chorales does so by using the past.
    """
    if train is None:
        train = load("train")
    f = pitch_frequencies(train)
    logits = torch.log(f) - torch.log1p(-f)  # (P,) the logits of f
    total = 0.0
    for r in chorales.rolls:
        total += frame_nll(
            logits.expand(r.shape[0], -1), r.double(), reduction="sum"
        ).item()
    return total / chorales.num_frames


def batches(
    chorales: Chorales, batch_size: int, *, generator: torch.Generator
) -> Iterable[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Endless shuffled minibatches: ``(inputs, targets, mask)`` of :func:`next_step`.

    Each pass over ``chorales`` visits every chorale once, in an order drawn
    from ``generator``; a pass ends with a smaller batch when ``batch_size``
    does not divide the number of chorales.
    """
    batch_size = _checks.positive_int("batch_size", batch_size)
    while True:
        order = torch.randperm(len(chorales), generator=generator).tolist()
        for start in range(0, len(order), batch_size):
            yield next_step(*chorales.padded(order[start : start + batch_size]))


@functools.lru_cache(maxsize=8)
def _cached(split: str) -> Chorales:
    return load(split)


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
    r"""The chorales in the interface of :mod:`rhn.tasks`: inputs and targets.

    With ``split="train"``, a minibatch of ``num_samples`` different training
    chorales drawn from ``generator`` (or a fresh one seeded with ``seed``);
    with ``"valid"`` or ``"test"``, the whole split in its stored order
    (``num_samples``, ``seed`` and ``generator`` are then ignored). Whole
    chorales are used; ``seq_len`` is ignored.

    Args:
        num_samples: batch size ``B`` for the training split (>= 1).
        seq_len: ignored (the task's sequences are the chorales).
        seed, generator, device: as in :func:`rhn.tasks.adding_problem`.
        dtype: floating-point dtype of inputs and targets (default float32).
        split: ``"train"`` (default), ``"valid"`` or ``"test"``.

    Returns:
        ``(inputs, targets)``, both ``(T_max, B, P)``: the inputs of
        :func:`next_step` and the target frames, which are ``-1`` on padding so
        that the targets carry the mask (``targets[..., 0] >= 0``);
        :func:`frame_nll` with that mask is the task's loss.

    >>> x, y = generate(4, seed=0)
    >>> x.shape == y.shape, x.shape[1:], bool((y[..., 0] >= 0).any(1).all())
    (True, torch.Size([4, 46]), True)
    """
    split = _checks.choice("split", split, list(SPLITS))
    data = _cached(split)
    if split == "train":
        B = _checks.positive_int("num_samples", num_samples)
        if B > len(data):
            raise ValueError(
                f"num_samples (the batch size, --batch-size) must be at most "
                f"{len(data)}, the number of training chorales, got {B}"
            )
        if generator is None:
            seed = _checks.positive_int("seed", seed, minimum=0)
            generator = torch.Generator().manual_seed(seed)
        indices = torch.randperm(len(data), generator=generator)[:B].tolist()
    else:
        indices = list(range(len(data)))
    inputs, targets, mask = next_step(*data.padded(indices))
    targets = targets.masked_fill(~mask[..., None], -1.0)
    return inputs.to(device, dtype), targets.to(device, dtype)


def task_loss(prediction: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """:func:`frame_nll` of targets from :func:`generate` (``-1`` marks padding)."""
    mask = targets[..., 0] >= 0  # (T, B)
    return frame_nll(prediction, targets.clamp(min=0.0), mask)


@torch.no_grad()
def init_head(head: torch.nn.Linear) -> None:
    r"""Start an output layer at the memoryless baseline.

    Sets the bias to the log-odds :math:`\log f_p - \log(1 - f_p)` of the
    training frequencies (:func:`pitch_frequencies`) and the weights to zero,
    so the untrained model predicts exactly like :func:`baseline_nll`'s model;
    whatever it gains below the baseline it learns from the past.
    """
    if not isinstance(head, torch.nn.Linear):
        raise TypeError(f"head must be an nn.Linear, got {type(head).__name__}")
    f = pitch_frequencies(_cached("train"))
    if head.out_features != f.numel():
        raise ValueError(
            f"head must have {f.numel()} outputs (one per pitch), got "
            f"{head.out_features}"
        )
    head.weight.zero_()
    head.bias.copy_(torch.log(f) - torch.log1p(-f))


@torch.no_grad()
def sample_continuation(
    model: torch.nn.Module,
    prime: torch.Tensor,
    steps: int,
    *,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Continue a piano roll by sampling the model one frame at a time.

    The model reads ``prime`` (after an all-silent start frame, as in
    training); then each new frame is drawn pitch by pitch from the Bernoulli
    probabilities :math:`\sigma(z_p)` the model gives and fed back as the next
    input.

    Args:
        model: a :class:`rhn.train.SequenceModel` with ``readout="all"`` (a
            recurrent ``core`` that takes and returns a state, and a ``head``).
        prime: ``(T0, P)`` the beginning to continue (``T0 >= 1``).
        steps: how many frames to sample.
        generator: CPU generator for the draws (default a fresh one, seed 0).

    Returns:
        ``(steps, P)`` tensor of 0s and 1s, on ``prime``'s device.
    """
    prime = _checks.float_tensor("prime", prime)
    if prime.dim() != 2 or prime.shape[0] == 0:
        raise ValueError(
            f"prime must have shape (T0, P) with T0 >= 1, got "
            f"{_checks.shape_str(prime.shape)}"
        )
    steps = _checks.positive_int("steps", steps)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    was_training = model.training
    model.eval()
    x = torch.cat([torch.zeros_like(prime[:1]), prime])[:, None]  # (T0+1, 1, P)
    output, state = model.core(x)
    frames = []
    for _ in range(steps):
        p = torch.sigmoid(model.head(output[-1]))  # (1, P)
        u = torch.rand(p.shape, generator=g, dtype=p.dtype).to(p.device)
        frame = (u < p).to(prime.dtype)  # (1, P)
        frames.append(frame[0])
        output, state = model.core(frame[None], state)
    model.train(was_training)
    return torch.stack(frames)


def synthesize(
    roll: torch.Tensor | np.ndarray,
    *,
    lowest: int = LOWEST,
    rate: int = 8000,
    seconds_per_step: float = 0.5,
) -> np.ndarray:
    r"""Render a piano roll as audio: a soft organ-like tone per sounding pitch.

    A pitch that sounds over consecutive frames is one held note (the roll
    has no onsets), with a 10 ms fade in and out against clicks. Each note is
    a sine at its equal-tempered frequency :math:`440 \cdot 2^{(m - 69)/12}` Hz
    plus a quieter octave; the sum is scaled into ``[-1, 1]``.

    Args:
        roll: ``(T, P)`` 0/1 frames.
        lowest: MIDI number of column 0 (default :data:`LOWEST`).
        rate: samples per second (default 8000, enough for pitches up to A5).
        seconds_per_step: duration of one frame (default 0.5: a quarter note at
            120 beats per minute).

    Returns:
        ``(T * seconds_per_step * rate,)`` float32 samples, for
        ``IPython.display.Audio(samples, rate=rate)``.
    """
    frames = np.asarray(roll.cpu() if isinstance(roll, torch.Tensor) else roll)
    if frames.ndim != 2:
        raise ValueError(f"roll must have shape (T, P), got {frames.shape}")
    rate = _checks.positive_int("rate", rate)
    n = round(_checks.real("seconds_per_step", seconds_per_step) * rate)
    if n < 1:
        raise ValueError(f"seconds_per_step must be > 0, got {seconds_per_step}")
    T, P = frames.shape
    audio = np.zeros(T * n)
    t = np.arange(T * n) / rate
    fade = max(1, round(0.01 * rate))
    on = np.asarray(frames) > 0.5
    for p in range(P):
        padded = np.concatenate([[False], on[:, p], [False]])
        edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            a, b = start * n, stop * n
            env = np.ones(b - a)
            ramp = np.linspace(0.0, 1.0, min(fade, (b - a) // 2) + 1)[1:]
            env[: len(ramp)] = ramp
            env[len(env) - len(ramp) :] = np.minimum(env[-len(ramp) :], ramp[::-1])
            freq = 440.0 * 2.0 ** ((lowest + p - 69) / 12)
            phase = 2 * math.pi * freq * t[a:b]
            audio[a:b] += env * (np.sin(phase) + 0.3 * np.sin(2 * phase))
    peak = np.abs(audio).max()
    return (audio / peak if peak > 0 else audio).astype(np.float32)


# ---------------------------------------------------------------- regeneration


def _vocal_parts(score: Any) -> list[Any]:
    """The vocal parts of a chorale score (see the module docstring)."""
    parts = list(score.parts)
    names = [(p.partName or "").lower() for p in parts]
    if not any(names):
        return parts
    return [
        p for p, n in zip(parts, names, strict=True) if any(v in n for v in _VOICES)
    ]


def score_to_roll(score: Any, *, step: float = STEP) -> np.ndarray:
    r"""Sample a music21 score on a grid of ``step`` quarter notes.

    Args:
        score: a ``music21.stream.Score`` of a chorale.
        step: frame length in quarter notes (default 1.0).

    Returns:
        ``(T, 128)`` bool array over all MIDI numbers: frame ``t`` holds the
        pitches of the vocal parts that sound at offset ``phase + t * step``,
        where ``phase`` puts a grid point on the first bar line.
    """
    parts = _vocal_parts(score)
    if not parts:
        raise ValueError("score has no vocal parts (soprano, alto, tenor, bass)")
    notes = []  # (start, end, midi)
    for part in parts:
        for n in part.flatten().notes:
            start, length = float(n.offset), float(n.quarterLength)
            notes.extend((start, start + length, p.midi) for p in n.pitches)
    end = max(stop for _, stop, _ in notes)
    measures = [m for m in parts[0].getElementsByClass("Measure") if m.number == 1]
    phase = float(measures[0].offset) % step if measures else 0.0
    T = math.ceil((end - phase) / step - _EPS)
    roll = np.zeros((T, 128), dtype=bool)
    for start, stop, midi in notes:
        # the frames whose time phase + t * step lies in [start, stop)
        first = math.ceil((start - phase) / step - _EPS)
        last = math.ceil((stop - phase) / step - _EPS)  # exclusive
        roll[max(first, 0) : last, midi] = True
    return roll


def build(limit: int | None = None, *, progress: bool = False) -> dict[str, np.ndarray]:
    """Parse the chorales with music21 and return the arrays :func:`save` writes.

    Args:
        limit: parse only the first ``limit`` Riemenschneider numbers (for a
            quick check; the split then follows the same rule on fewer
            chorales). Default all 371.
        progress: show a progress bar.

    Returns:
        ``rolls`` ``(sum T_i, P)`` uint8, ``lengths``, ``names``,
        ``riemenschneider`` (space-separated numbers), ``split``, ``lowest``,
        ``num_pitches`` and ``step``.
    """
    try:
        from music21 import corpus
    except ModuleNotFoundError as err:  # pragma: no cover - depends on the env
        raise ModuleNotFoundError(
            "regenerating the chorales needs music21: pip install music21"
        ) from err
    files = list(corpus.chorales.Iterator(returnType="filename"))
    if limit is not None:
        files = files[: _checks.positive_int("limit", limit)]
    seen: dict[str, int] = {}  # corpus name -> index in chorales
    chorales: list[dict[str, Any]] = []
    for number, name in enumerate(_bar(files, progress), start=1):
        if name in seen:  # the same score under a second number
            chorales[seen[name]]["numbers"].append(number)
            continue
        roll = score_to_roll(corpus.parse(name))
        twin = next((c for c in chorales if np.array_equal(c["roll"], roll)), None)
        if twin is not None:  # a different file with the same music
            twin["numbers"].append(number)
            seen[name] = chorales.index(twin)
            continue
        seen[name] = len(chorales)
        chorales.append(
            {"name": name.split("/")[-1], "roll": roll, "numbers": [number]}
        )
    P = HIGHEST - LOWEST + 1
    for c in chorales:
        used = np.flatnonzero(c["roll"].any(0))  # the MIDI numbers that sound
        if used.min() < LOWEST or used.max() > HIGHEST:
            raise ValueError(
                f"{c['name']} has pitches {used.min()}-{used.max()} outside "
                f"{LOWEST}-{HIGHEST}"
            )
    split = np.array(
        [
            "test" if i % 5 == 4 else "valid" if i % 5 == 3 else "train"
            for i in range(len(chorales))
        ]
    )
    rolls = np.concatenate([c["roll"][:, LOWEST : HIGHEST + 1] for c in chorales])
    return {
        "rolls": rolls.astype(np.uint8),
        "lengths": np.array([len(c["roll"]) for c in chorales], dtype=np.int32),
        "names": np.array([c["name"] for c in chorales]),
        "riemenschneider": np.array(
            [" ".join(map(str, c["numbers"])) for c in chorales]
        ),
        "split": split,
        "lowest": np.array(LOWEST),
        "num_pitches": np.array(P),
        "step": np.array(STEP),
    }


def _bar(items: list[str], progress: bool) -> Iterable[str]:
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc="parsing chorales", unit="chorale")


def save(data: dict[str, np.ndarray], path: str | Path | None = None) -> Path:
    """Write :func:`build`'s arrays, the rolls bit-packed, as a compressed ``.npz``.

    Args:
        data: what :func:`build` returns.
        path: where to write (default the package's own file).

    Returns:
        The path written.
    """
    file = _data_path() if path is None else Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    arrays = dict(data)
    arrays["rolls"] = np.packbits(data["rolls"].astype(bool), axis=1)
    # whole or not at all: a kill never leaves an empty file in its place
    _io.atomic_write(file, lambda f: np.savez_compressed(f, **arrays), name="path")
    return file


def data_main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn data chorales``: rebuild the chorale file from music21."""
    import time

    from . import _cli

    prog = "python -m rhn data"
    p = _cli.Parser(
        prog=prog,
        description="Parse the Bach chorales of music21's corpus into piano rolls "
        "and write them as the compressed file that rhn.chorales.load reads "
        "(needs music21: pip install music21).",
    )
    p.add_argument("name", choices=["chorales"], help="the data set to build")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="where to write (default: the package's own rhn/_data/chorales.npz)",
    )
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="parse only Riemenschneider numbers 1..N (default: all 371); needs "
        "--out, so that a partial file never replaces the shipped one",
    )
    p.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="hide the progress bar (shown by default)",
    )
    args = p.parse_args(argv)
    start = time.perf_counter()
    # checked before the minutes of parsing, not after them
    try:
        if args.limit is not None:
            _checks.positive_int("--limit", args.limit)
            if args.out is None:
                raise ValueError(
                    "--limit needs --out FILE: a partial file would replace the "
                    "package's full rhn/_data/chorales.npz"
                )
        out = _cli.writable_file(
            "--out", _data_path() if args.out is None else args.out
        )
        data = build(args.limit, progress=args.progress)
    except (ModuleNotFoundError, TypeError, ValueError) as err:
        return _cli.fail(prog, err)
    path = save(data, out)
    splits = {s: int((data["split"] == s).sum()) for s in SPLITS}
    print(
        f"wrote {path} ({path.stat().st_size} bytes): {len(data['lengths'])} "
        f"chorales {splits}, {int(data['lengths'].sum())} frames, "
        f"{int(data['num_pitches'])} pitches, in {time.perf_counter() - start:.0f} s"
    )
    return 0
