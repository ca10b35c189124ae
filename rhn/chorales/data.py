r"""The chorale data: piano rolls built from music21, shipped, loaded and padded.

What the data are, how a score becomes a piano roll (``score_to_roll``), the
voices, pitches, duplicates and the fixed split are described in the
documentation of :mod:`rhn.chorales`. ``build`` parses music21's corpus,
``save`` writes the shipped file ``rhn/_data/chorales.npz`` and ``load``
reads it (without music21). A chorale is a ``(T, P)`` 0/1 tensor; ``pad``
stacks several into ``(T_max, B, P)`` with a ``(T_max, B)`` boolean mask,
time-first like the models of :mod:`rhn`. All are importable from
:mod:`rhn.chorales` and documented there.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import _checks, _io

__all__ = [
    "LOWEST",
    "HIGHEST",
    "SPLITS",
    "Chorales",
    "load",
    "pad",
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
"""The three splits, by chorale (the ``split`` argument of ``load``)."""
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
        lowest: MIDI number of column 0 (:data:`~rhn.chorales.data.LOWEST`).
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


_KEYS = {"rolls", "lengths", "names", "riemenschneider", "split", "num_pitches"}


def _check_out(path: str, overwrite: bool) -> None:
    """Refuse an ``--out`` that would replace a file: any file without
    ``overwrite``, and with it anything but a chorales file (a run's
    metrics.json or a sweep record must never become an .npz)."""
    real = Path(os.path.realpath(path))
    if not real.is_file():  # new, or a folder: _cli.writable_file says which
        return
    if not overwrite:
        raise ValueError(
            f"--out: {path!r} exists; pass --overwrite to replace it (a chorales "
            "file only), or give another path"
        )
    try:
        with np.load(real, allow_pickle=False) as found:
            ours = _KEYS <= set(found.files)
    except Exception:  # not an .npz at all: a JSON record, a checkpoint, ...
        ours = False
    if not ours:
        raise ValueError(
            f"--out: {path!r} is not a chorales file this command wrote; "
            "--overwrite replaces only one: give another path, or delete it"
        )


def data_main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn data chorales``: rebuild the chorale file from music21."""
    import time

    from .. import _cli

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
        "--overwrite",
        action="store_true",
        help="replace an existing --out file, if it is a chorales file this "
        "command wrote (never another file)",
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
        if args.out is not None:
            _check_out(args.out, args.overwrite)
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
