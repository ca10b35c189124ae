r"""Multi-seed experiments: a grid of training runs, written to one JSON file.

A chapter that makes a claim about training needs it to hold over several
seeds, and a sweep of that size rarely fits in the time a page may take to
build. :func:`sweep` runs :func:`rhn.train.train` for every combination of a
grid of settings and every seed, and returns (and writes) one JSON-ready
record: how it was made (the call or the command line, the versions of
``rhn``, ``torch`` and Python), and for every run its full config, its final
metrics and its history. A page loads the record with :func:`load_sweep`,
shows it, and asserts on :func:`summarize`, which reduces the runs of each
setting to the mean, standard deviation, minimum and maximum over seeds.

``python -m rhn sweep`` runs the same from a terminal::

    python -m rhn sweep --task adding --grid model=rhn,gru,lstm --grid depth=1,2 \
        --seeds 0,1,2 --steps 500 --out rhn/_data/results/adding.json

Example::

    >>> from rhn.train import TrainConfig
    >>> base = TrainConfig(seq_len=5, hidden_size=8, steps=3, eval_every=3,
    ...                    eval_samples=16, progress=False, device="cpu")
    >>> record = sweep(base, {"model": ["rhn", "gru"]}, seeds=[0, 1])
    >>> [row["model"] for row in summarize(record)]
    ['rhn', 'gru']
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import json
import math
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from . import _checks, _cli, _io, results
from .baselines import MODELS
from .tasks import TASKS, Task, get_task
from .train import TrainConfig, records, resolve_device, train
from .train.config import _DEFAULT_OF, generate, reads_field
from .train.model import check_memory, hidden_size

__all__ = [
    "FORMAT",
    "sweep",
    "load_sweep",
    "select",
    "summarize",
    "steps_to_reach",
    "eval_curve",
    "core_parameters",
    "uses_field",
]

FORMAT = 1
"""Version of the record's layout; :func:`load_sweep` refuses other versions."""

# Config fields that only some models read (rhn.train.config.reads_field). A
# grid over such a field is not swept for the other models: running a GRU at
# depths 1 and 2, or at dropout 0 and 0.5, would train the same network twice.

# Fields that a sweep sets itself, or that make no sense per run.
NOT_IN_GRID = frozenset({"seed", "out", "checkpoint_every", "progress", "log_csv"})

# What load_sweep requires of a record and of each of its runs.
_RECORD_KEYS = ("call", "complete", "runs", "seconds")
_RUN_KEYS = ("setting", "seed", "config", "metrics", "history")

_HISTORY_KEYS = (
    "step",
    "train_loss",
    "eval_step",
    "test_loss",
    "valid_loss",  # tasks on a fixed data set: what the evaluations scored
    "test_accuracy",
    "valid_accuracy",  # and their share right, for class labels
)


# Config fields that hold a name, which TrainConfig reads case-insensitively.
_NAMES = frozenset({"task", "model", "lr_schedule", "device"})


def uses_field(model: str, field: str) -> bool:
    """Whether ``model`` reads the config field ``field``.

    ``depth`` is read by the deep-transition models only, ``transform_bias``
    and ``dropout`` by the RHN and ``forget_bias`` by the LSTM; every other
    field by all models (``rhn.train.config.reads_field``).
    """
    return reads_field(model, field)


def _check_grid(grid: object) -> dict[str, list[Any]]:
    if not isinstance(grid, Mapping):
        raise TypeError(
            f"grid must be a dict of field name -> list of values, got "
            f"{type(grid).__name__}"
        )
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    out: dict[str, list[Any]] = {}
    for name, values in grid.items():
        if name not in fields or name in NOT_IN_GRID:
            allowed = sorted(fields - NOT_IN_GRID)
            seeds = (
                "; seeds go in seeds= (--seeds on the command line)"
                if name == "seed"
                else ""
            )
            raise ValueError(
                f"grid: {name!r} is not a TrainConfig field a sweep can vary; "
                f"choose from {allowed}{seeds}"
            )
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(
                f"grid[{name!r}] must be a list of values, got "
                f"{type(values).__name__} {values!r}"
            )
        if len(values) == 0:
            raise ValueError(f"grid[{name!r}] must hold at least one value, got []")
        if name in _NAMES:  # case-insensitive, as TrainConfig takes them: the
            # rules of uses_field compare model names, so "LSTM" must be "lstm"
            values = [v.strip().lower() if isinstance(v, str) else v for v in values]
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"grid[{name!r}] repeats a value: {list(values)}")
        out[name] = list(values)
    return out


def _refuse_unread(base: TrainConfig, grid: dict[str, list[Any]]) -> None:
    """Refuse a grid field that no model of the sweep reads: its values would
    be dropped (several: all one run) and the record would not say so
    (``forget_bias`` for RHNs)."""
    models = grid.get("model", [base.model])
    if not all(isinstance(m, str) and m in MODELS for m in models):
        return  # a bad model name: TrainConfig says so
    for name, values in grid.items():
        if not any(uses_field(m, name) for m in models):
            readers = sorted(m for m in MODELS if uses_field(m, name))
            who = " or ".join(repr(m) for m in readers)
            what = (
                "its values would all train the same run, and the record would "
                "not say so"
                if len(values) > 1
                else "its value would be dropped unrecorded"
            )
            raise ValueError(
                f"grid[{name!r}]: no model of this sweep ({', '.join(models)}) "
                f"reads {name}, so {what}; only model={who} reads it"
            )


def _check_seeds(seeds: object) -> list[int]:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise TypeError(
            f"seeds must be a list of ints >= 0, got {type(seeds).__name__} {seeds!r}"
        )
    checked = [
        _checks.positive_int(f"seeds[{i}]", s, minimum=0) for i, s in enumerate(seeds)
    ]
    if not checked:
        raise ValueError("seeds must hold at least one seed, got []")
    if len(set(checked)) != len(checked):
        raise ValueError(f"seeds repeats a seed: {checked}")
    return checked


def _settings(base: TrainConfig, grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every distinct combination of grid values, in grid order.

    A field the combination's model does not read is left out of it (the run
    keeps the base value), and the duplicate combinations this makes are
    dropped.
    """
    combos, seen = [], set()
    for values in itertools.product(*grid.values()):
        setting = dict(zip(grid, values, strict=True))
        model = setting.get("model", base.model)
        setting = {k: v for k, v in setting.items() if uses_field(model, k)}
        key = json.dumps(setting, sort_keys=True, default=repr)
        if key not in seen:
            seen.add(key)
            combos.append(setting)
    return combos


def _config(base: TrainConfig, setting: dict[str, Any], seed: int) -> TrainConfig:
    changes = dict(setting, seed=seed, out=None, checkpoint_every=0, log_csv=None)
    # a field only some models read is off for the others: the base's
    # forget_bias (an LSTM's) or dropout (an RHN's) would be refused with them
    model = setting.get("model", base.model)
    if base.forget_bias is not None and not uses_field(model, "forget_bias"):
        changes.setdefault("forget_bias", None)
    if base.dropout and not uses_field(model, "dropout"):
        changes.setdefault("dropout", 0.0)
    # A parameter budget in the grid replaces the base's hidden size.
    if "num_params" in setting and "hidden_size" not in setting:
        changes["hidden_size"] = None
    # another task in the grid brings its defaults to the fields the base was
    # not given (TrainConfig's dataclasses.replace), as `--task` does: the
    # copy task its seq_len 10, depth 1 and b_T = -1, not the adding problem's
    config = dataclasses.replace(base, **changes)
    # the base's depth or b_T, given for the grid's RHNs, is not a GRU's: its
    # record states what a run of that model alone states, the task's default
    from .tasks import get_task

    defaults = get_task(config.task).defaults
    reset = {
        name: defaults.get(name, package)
        for name, package in _DEFAULT_OF.items()
        if name not in setting
        and not uses_field(config.model, name)
        and getattr(config, name) != defaults.get(name, package)
    }
    return dataclasses.replace(config, **reset) if reset else config


def _task_name(task: Any) -> str:
    return task if isinstance(task, str) else getattr(task, "name", str(task))


def _device_key(device: torch.device) -> str:
    """One name per device: ``cpu`` for ``cpu:0``, ``cuda:N`` for ``cuda``."""
    if device.type == "cuda":
        index = torch.cuda.current_device() if device.index is None else device.index
        return f"cuda:{index}"
    return device.type


def _environment() -> dict[str, Any]:
    from . import __version__
    from .studies import machine

    return {
        "rhn_version": __version__,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        # what decides the last bits of a run: CPU, SIMD kernels, variables set
        "machine": machine(),
    }


def _check_writable(path: Path) -> None:
    """Raise a ``ValueError`` naming ``out`` unless ``path`` can be written.

    Missing parent directories are created, as writing the JSON would.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        if err.errno in (errno.ENAMETOOLONG, errno.ENOSPC, errno.EDQUOT):
            raise _io.path_error("out", path, err) from err
        reason = err.strerror or type(err).__name__
        raise ValueError(
            f"out must be a file that can be written, got {_io.short(path)!r} "
            f"({reason})"
        ) from err
    _cli.writable_file("out", path)


def _resumable(
    path: Path, fresh: dict[str, Any], plan: list[tuple[Any, int, TrainConfig]]
) -> dict[str, Any]:
    """The interrupted record in ``path``, checked to be the start of ``plan``."""
    if not path.exists():
        raise ValueError(f"resume: there is no sweep to continue in {str(path)!r}")
    try:
        old = load_sweep(path, allow_incomplete=True)
    except ValueError as err:  # named as the sweep's argument, not load_sweep's
        raise ValueError(f"out: {str(err).removeprefix('path: ')}") from None
    if old["complete"]:
        raise ValueError(
            f"resume: {str(path)!r} holds a finished sweep ({len(old['runs'])} runs); "
            "nothing to continue"
        )
    call = json.loads(json.dumps(fresh["call"]))  # compare as the file stores it
    # the whole config (fields an old record lacks at their defaults), except
    # what does not change the numbers (progress bars, threads, device)
    changed = [
        f"base.{change}"
        for change in records.config_changes(call["base"], old["call"]["base"])
    ]
    changed += [
        f"{part}: {_short_json(old['call'][part])} -> {_short_json(call[part])}"
        for part in ("grid", "seeds")
        if call[part] != old["call"][part]
    ]
    if changed:
        raise ValueError(
            f"resume: {str(path)!r} was made with other settings ({', '.join(changed)} "
            "differ); give the options of the interrupted sweep"
        )
    for run, (_, _, config) in zip(old["runs"], plan, strict=False):
        mine = config.to_dict()
        for name in _DEFAULT_OF:  # a record made before a GRU took the task's
            if not uses_field(config.model, name):  # depth and b_T: the base's
                mine[name] = run["config"].get(name, mine[name])
        if records.config_changes(mine, run["config"]):
            raise ValueError(f"resume: the runs in {str(path)!r} are not this sweep's")
    return old


def _plain(value: Any) -> Any:
    """A grid value as the record stores it: a task of your own by its name
    (a run's config names it so too), anything else as it is."""
    return value.name if isinstance(value, Task) else value


def _refuse_same_names(grid: dict[str, list[Any]]) -> None:
    """Refuse two different tasks of one name in a grid: the record, which
    names them, could not tell their runs apart."""
    for field, values in grid.items():
        named: dict[Any, Any] = {}
        for value in values:
            other = named.setdefault(_plain(value), value)
            if other is not value and isinstance(value, Task):
                raise ValueError(
                    f"grid: two values of {field!r} are tasks named "
                    f"{value.name!r}; the record names tasks, so give each its "
                    "own name (tensor_task(..., name=...))"
                )


def _short_json(value: Any, limit: int = 120) -> str:
    """``value`` as compact JSON, cut to ``limit`` characters."""
    text = json.dumps(value, separators=(",", ":"), default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _existing_advice(path: Path) -> str:
    """What to do about an existing ``out`` given without resume or
    overwrite: an interrupted sweep is offered to ``--resume`` first, as
    ``--overwrite`` discards its finished runs."""
    try:
        old = load_sweep(path, allow_incomplete=True)
    except (OSError, ValueError, TypeError, KeyError):
        old = None
    if old is not None and not old.get("complete", True):
        return (
            f"it holds an interrupted sweep ({len(old['runs'])} runs finished): "
            "pass resume=True (--resume) with the same options to continue it, "
            "or overwrite=True (--overwrite) to discard its runs and start again"
        )
    return "pass overwrite=True (--overwrite) to replace it, or give another out"


def _recorded_order(
    path: Path, grid: dict[str, list[Any]], seeds: list[int]
) -> tuple[dict[str, list[Any]], list[int]]:
    """``grid`` and ``seeds`` in the order of the interrupted sweep in ``path``
    when they hold the same fields, values and seeds in another order (the
    runs it finished are the start of that order); else as given, for
    :func:`_resumable` to refuse."""
    try:
        old = load_sweep(path, allow_incomplete=True)["call"]
        old_grid, old_seeds = dict(old["grid"]), list(old["seeds"])
    except (OSError, ValueError, TypeError, KeyError):
        return grid, seeds

    def stored(value: Any) -> str:  # a value as the record stores it
        return json.dumps(json.loads(json.dumps(value, default=repr)), sort_keys=True)

    mine = {k: {stored(v): v for v in values} for k, values in grid.items()}
    theirs = {k: [stored(v) for v in values] for k, values in old_grid.items()}
    if set(mine) != set(theirs) or any(
        sorted(mine[k]) != sorted(theirs[k]) for k in mine
    ):
        return grid, seeds
    if sorted(seeds) != sorted(old_seeds):
        return grid, seeds
    return {k: [mine[k][v] for v in theirs[k]] for k in theirs}, old_seeds


def _write(record: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # whole or not at all: a reader (or a kill) never sees half a file; strict
    # JSON: a NaN or infinite loss is null, named in the record's "non_finite"
    _io.write_record(path, record, name="out", indent=None, separators=(",", ":"))


def _signature(path: Path) -> tuple[int, int, int] | None:
    """The file at ``path`` as a sweep last saw it: inode, size and time of
    the last change (every write replaces the file, so a new inode), or
    ``None`` if there is none."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


class _Writer:
    """Writes a sweep's record, each time over the file it wrote last (or
    the one it started from): a record another process wrote meanwhile (a
    second sweep, after the lock was removed) is never replaced. This
    sweep's record then goes to a file of its own beside it, and the sweep
    stops with a one-line error saying where."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.seen = None if path is None else _signature(path)

    def __call__(self, record: dict[str, Any]) -> None:
        assert self.path is not None
        now = _signature(self.path)
        if now != self.seen:
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            kept = self.path.with_name(
                f"{self.path.stem}.orphan-{stamp}-{os.getpid()}{self.path.suffix}"
            )
            if not kept.parent.is_dir():  # its folder was removed: made again
                kept.parent.mkdir(parents=True, exist_ok=True)
            _write(record, kept)
            what = (
                "was removed (or moved) while this sweep ran"
                if now is None
                else "was written by another process while this sweep ran (after "
                "its lock was removed?), and is left as it is"
            )
            raise FileExistsError(
                f"out: {_io.short(self.path)!r} {what}; "
                f"this sweep's {len(record['runs'])} runs are in "
                f"{_io.short(kept)!r}: continue them with --out {kept} --resume "
                "(out=..., resume=True)"
            )
        _write(record, self.path)
        self.seen = _signature(self.path)


def lock_path(path: Path) -> Path:
    """The lock a sweep holds on its record ``path`` while it runs: one per
    file, whatever symlink names it (:func:`rhn.train.records.file_lock_path`)."""
    return records.file_lock_path(path)


def _check_replaceable(path: Path, overwrite: bool) -> None:
    """Refuse an ``out`` that is a file of a run folder, and an ``overwrite``
    of a file that is not a sweep's record (:func:`records.check_record_out`)."""
    records.check_record_out(path, overwrite, kind="sweep")


def _run_environment() -> dict[str, Any]:
    """What each run records of the software that trained it (a resumed sweep
    may run under another torch than the one that started it)."""
    from . import __version__

    return {
        "rhn_version": __version__,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
    }


def sweep(
    base: TrainConfig,
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int],
    *,
    out: str | Path | None = None,
    overwrite: bool = False,
    resume: bool = False,
    command: str | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    r"""Train one run per combination of ``grid`` values and seed; return the record.

    The runs are the Cartesian product of the grid's value lists (in the
    grid's order), each trained with every seed (innermost). A grid field that
    a combination's model does not read (``depth`` for the RNN, LSTM and GRU,
    ``transform_bias`` and ``dropout`` for all but the RHN, ``forget_bias``
    for all but the LSTM) is not swept for that model: its runs are made once,
    with the base value (the base's ``dropout`` and ``forget_bias`` are off
    for the models that do not read them). A ``num_params`` in the grid sets
    ``hidden_size`` to ``None``, so that the budget decides the width.

    Args:
        base: the settings every run shares (its ``seed``, ``out``,
            ``checkpoint_every`` and ``log_csv`` are replaced: runs write no
            checkpoints and no CSV; the record holds every history).
        grid: config field name -> list of values, e.g.
            ``{"model": ["rhn", "gru"], "depth": [1, 2]}``. May be empty.
        seeds: the seeds, each run once per combination.
        out: if given, the path of the JSON file to write. It is rewritten
            after every run (with ``"complete": false`` until the last), so an
            interrupted sweep leaves what it finished.
        overwrite: allow ``out`` to exist already (default: ``False``, which
            raises ``FileExistsError`` before any training).
        resume: continue the interrupted sweep in ``out``: its finished runs
            are kept and only the others are trained (default: ``False``).
            The sweep must be called with the same ``base``, ``grid`` and
            ``seeds``; the result is the same as an uninterrupted sweep's.
        command: the command line that made the sweep, recorded as is
            (``python -m rhn sweep`` passes its own).
        log: called with one line per finished run (e.g. ``print``): its
            ``valid_loss`` where the task has a validation split, otherwise
            its ``test_loss`` (fresh sequences of a generated task).

    Returns:
        A JSON-ready dict: ``format``, ``command``, ``call`` (``base`` as a
        dict, ``grid``, ``seeds``), ``environment`` (versions of ``rhn``,
        ``torch``, Python; platform; ``OMP_NUM_THREADS``), ``started``,
        ``finished``, ``seconds``, ``complete`` and ``runs``: one dict per run
        with ``setting`` (the grid values the run's model reads), ``seed``,
        ``config`` (:meth:`rhn.train.TrainConfig.to_dict`), ``metrics`` (``test_loss``,
        ``baseline``, ``num_params``, ``hidden_size``, ``seconds``, ...) and
        ``history`` (``step``, ``train_loss``, ``eval_step``, ``test_loss``
        and, for classification, ``test_accuracy``; on a fixed data set such
        as the chorales the evaluations score the validation split, under
        ``valid_loss`` (and ``valid_accuracy``), and ``test_loss`` repeats it:
        sweeps written before ``valid_loss`` existed have only ``test_loss``).

    A run whose training loss becomes NaN or infinite is recorded like the
    others, with ``metrics["diverged"]`` true, its ``error`` and the history
    up to then, and the sweep goes on (a resumed sweep does not train it
    again). Every config is built, its device found and its size checked
    against the memory before the first run trains.

    Raises:
        FileExistsError: ``out`` exists and neither ``overwrite`` nor ``resume``
            is set.
        ValueError: ``out`` is a directory or cannot be written (checked
            before any training).
    """
    if isinstance(base, TrainConfig):
        kept = {
            name: getattr(base, name)
            for name in ("out", "log_csv", "checkpoint_every")
            if getattr(base, name)
        }
        if kept:
            raise ValueError(
                f"base: a sweep writes one record (out=) and no run folders or "
                f"logs, so base must leave out, log_csv and checkpoint_every "
                f"out, got {kept}"
            )
    if not isinstance(base, TrainConfig):
        raise TypeError(f"base must be a TrainConfig, got {type(base).__name__}")
    grid = _check_grid(grid)
    _refuse_unread(base, grid)
    seeds = _check_seeds(seeds)
    _checks.boolean("overwrite", overwrite)
    _checks.boolean("resume", resume)
    path = None if out is None else Path(out)
    if resume and (overwrite or path is None):
        raise ValueError(
            "resume continues the sweep in out: it needs out and excludes overwrite"
        )
    lock = None
    if path is not None:
        # A typo in out must cost seconds, not the hours of the sweep: the file
        # is only written after the first run.
        _check_writable(path)
        _check_replaceable(path, overwrite)
        # the sweep owns its record while it runs, as a run owns its folder: a
        # second sweep into the same out is refused, not silently overwritten
        lock = records.FolderLock(
            path.parent, path=lock_path(path), holder="sweep", guards=path
        ).acquire()
    try:
        return _sweep(
            base,
            grid,
            seeds,
            path,
            overwrite,
            resume,
            command,
            log,  # type: ignore[arg-type]
        )
    finally:
        if lock is not None:
            lock.release()


def _sweep(
    base: TrainConfig,
    grid: dict[str, list[Any]],
    seeds: list[int],
    path: Path | None,
    overwrite: bool,
    resume: bool,
    command: str | None,
    log: Callable[[str], None] | None,
) -> dict[str, Any]:
    """:func:`sweep` once its arguments are checked and its out is locked."""
    if path is not None and path.exists() and not (overwrite or resume):
        raise FileExistsError(f"out: {str(path)!r} exists; " + _existing_advice(path))
    if resume:  # the same grid and seeds in another order: the record's order
        grid, seeds = _recorded_order(path, grid, seeds)  # type: ignore[arg-type]
    _refuse_same_names(grid)
    settings = _settings(base, grid)
    # Build every config first, so that a bad value fails before any training.
    plan = [(s, seed, _config(base, s, seed)) for s in settings for seed in seeds]
    tried: set[tuple[str, int, int]] = set()
    runs: dict[str, dict[str, Any]] = {}
    for setting, _, config in plan:  # and what only a run would find: the device
        device = resolve_device(config.device)
        # a parameter budget makes the run of the hidden size it resolves to,
        # and a task with data of its own scores them whole (eval_samples
        # is not read)
        sized = {"hidden_size": hidden_size(config), "num_params": None}
        if get_task(config.task).held_out is not None:
            sized["eval_samples"] = None
        key = json.dumps(
            {**config.to_dict(), **sized, "device": _device_key(device)},
            sort_keys=True,
            default=repr,
        )
        if runs.setdefault(key, setting) is not setting:
            raise ValueError(
                f"grid: the settings {runs[key]} and {setting} make the same run "
                f"(one config once names and num_params are resolved and fields "
                f"the task does not read are left out, on device "
                f"{_device_key(device)!r}); give each value once"
            )
        task = get_task(config.task)
        check_memory(config, task, device)
        if (task.name, id(task), config.seq_len) not in tried:
            # a task may refuse a length (an own task's data fixes it, the
            # temporal-order task needs 10 steps): every task and seq_len of
            # the grid is tried on one sequence, so that none fails after
            # other runs
            generate(task, 1, config.seq_len, seed=0)
            tried.add((task.name, id(task), config.seq_len))

    record: dict[str, Any] = {
        "format": FORMAT,
        "command": command,
        "call": {
            "base": base.to_dict(),
            "grid": {k: [_plain(v) for v in values] for k, values in grid.items()},
            "seeds": seeds,
        },
        "environment": _environment(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "finished": None,
        "seconds": 0.0,
        "complete": False,
        "runs": [],
    }
    if resume:
        record = _resumable(path, record, plan)
    write = _Writer(path)
    done = len(record["runs"])
    start = time.perf_counter() - record["seconds"]
    if done == len(plan) and not record["complete"]:
        # every run recorded, the last write of "complete" lost (a kill
        # between the run and the record's last write, or a hand edit)
        record["complete"] = True
        record["finished"] = record.get("finished") or time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime()
        )
        if path is not None:
            write(record)
    for i, (setting, seed, config) in enumerate(plan, 1):
        if i <= done:  # finished before the interruption
            continue
        try:
            result = train(config)
            metrics, full = dict(result.metrics), result.history
        except FloatingPointError as err:  # recorded as diverged; the sweep goes on
            metrics = dict(getattr(err, "metrics", {"diverged": True}))
            metrics.setdefault("error", str(err))
            full = getattr(err, "history", {})
        history = {k: full[k] for k in _HISTORY_KEYS if k in full}
        record["runs"].append(
            {
                "setting": {k: _plain(v) for k, v in setting.items()},
                "seed": seed,
                "config": config.to_dict(),
                "metrics": metrics,
                "history": history,
                "environment": _run_environment(),
            }
        )
        record["seconds"] = time.perf_counter() - start
        if i == len(plan):
            record["complete"] = True
            record["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if path is not None:
            write(record)
        if log is not None:
            m = metrics
            label = " ".join(f"{k}={_task_name(v)}" for k, v in setting.items())
            # a task with a validation split shows the loss to choose by; the
            # test loss stays in the record, for the one final report. The
            # baseline is scored on the test split where there is one
            key = "valid_loss" if "valid_loss" in m else "test_loss"
            loss = m.get(key)
            where = ""
            if key == "valid_loss" and "test_loss_reason" not in m:
                where = " on the test split"
            score = (
                f"{key} {loss:.4g} (baseline{where} {m['baseline']:.4g})"
                if isinstance(loss, float)
                else f"no {key}"
            )
            diverged = ", DIVERGED" if m.get("diverged") else ""
            log(
                f"[{i}/{len(plan)}] {label} seed={seed}: {score}{diverged}, "
                f"{m.get('seconds', 0.0):.0f} s"
            )
    return record


def load_sweep(path: str | Path, *, allow_incomplete: bool = False) -> dict[str, Any]:
    """Load a record written by :func:`sweep` (or ``python -m rhn sweep``).

    Args:
        path: the JSON file, or the file name of a record shipped with the
            package (see :mod:`rhn.results`), e.g. ``"adding_models.json"``;
            an existing file of that name in the working directory comes first.
        allow_incomplete: accept a sweep that was interrupted (default:
            ``False``, which raises ``ValueError``).
    """
    if isinstance(path, str) and Path(path).name == path and not Path(path).exists():
        if path not in results.names():
            raise FileNotFoundError(
                f"path: there is no file {path!r} in the working directory "
                f"({os.getcwd()}), and no record of that name is shipped with rhn; "
                "give the sweep's path as written by --out"
            )
        path = results.path(path)  # a shipped record, found wherever the page runs
    path = Path(path)
    record = _io.read_json(path, name="path")  # errors name the file
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else None
        raise ValueError(
            f"{str(path)!r} is not a sweep record of format {FORMAT} (format {found!r})"
        )
    missing = [k for k in _RECORD_KEYS if k not in record]
    if not missing and isinstance(record["runs"], list):
        missing = sorted(
            {k for run in record["runs"] for k in _RUN_KEYS if k not in run}
            if all(isinstance(run, dict) for run in record["runs"])
            else {"runs[i] (not a dict)"}
        )
    if missing or not isinstance(record["runs"], list):
        raise ValueError(
            f"{str(path)!r} is not a whole sweep record: it lacks {missing or ['runs']}"
        )
    if not record["complete"] and not allow_incomplete:
        raise ValueError(
            f"{str(path)!r} holds an interrupted sweep ({len(record['runs'])} runs); "
            "pass allow_incomplete=True to read it anyway"
        )
    return record


def _kind(value: Any) -> str:
    """What ``select`` compares by: a bool, a number (int and float alike), a
    string, ``None``, else the type's name."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return f"a {type(value).__name__}"


def _same_kinds(record: Mapping[str, Any], wanted: Mapping[str, Any]) -> None:
    """Refuse a value of a kind no run records for its field (``depth="1"``
    where depths are numbers), which would match nothing without a word."""
    for key, value in wanted.items():
        recorded = [
            run["config"][key]
            for run in record.get("runs", [])
            if isinstance(run.get("config"), Mapping) and key in run["config"]
        ]
        kinds = {_kind(v) for v in recorded if v is not None}
        if value is None or not kinds or _kind(value) in kinds:
            continue
        example = next(v for v in recorded if v is not None)
        raise TypeError(
            f"select: {key}={value!r} is {_kind(value)}, but the record holds "
            f"{' or '.join(sorted(kinds))} for {key} (e.g. {example!r}); it "
            "would match no run"
        )


def _as_configs_take(field: str, value: Any) -> Any:
    """A ``select`` value as a config stores it: a model, schedule or device
    in any case ("RHN", "CPU"), a built-in task's name in any case, a task
    object by its name."""
    if isinstance(value, Task):
        return value.name
    if isinstance(value, str):
        if field in ("model", "lr_schedule", "device"):
            return value.strip().lower()
        if field == "task" and value.strip().lower() in TASKS:
            return value.strip().lower()
    return value


def select(record: Mapping[str, Any], **setting: Any) -> list[dict[str, Any]]:
    """The runs of ``record`` whose config has every ``field=value`` given.

    For example ``select(record, model="rhn", depth=2)``. A field a run's
    model does not read (``depth`` of a GRU, ``forget_bias`` of an RHN)
    matches no value, so ``select(record, depth=2)`` leaves the GRU out;
    asked for with its model, ``select(record, model="gru", depth=2)``, the
    field is moot and the model's runs are returned. A value of another kind
    than the record's (``depth="1"`` where depths are numbers) is refused.
    """
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(setting) - fields)
    if unknown:
        raise ValueError(f"select: unknown config field(s) {unknown}")
    # as a config takes them: a model or schedule in any case ("RHN"), a task
    # object by its name
    wanted = {k: _as_configs_take(k, v) for k, v in setting.items()}

    _same_kinds(record, wanted)

    # a field the run's model does not read (a GRU's depth) was recorded at
    # the base's value: it matches no value asked for, unless the model is
    # asked for too (select(model="gru", depth=2): the GRU, whose depth is moot)
    def matches(run: Mapping[str, Any], key: str, value: Any) -> bool:
        config = run["config"]
        model = config.get("model")
        if isinstance(model, str) and not reads_field(model, key):
            return "model" in wanted
        return config.get(key) == value

    return [
        run
        for run in record["runs"]
        if all(matches(run, k, v) for k, v in wanted.items())
    ]


def steps_to_reach(run: Mapping[str, Any], threshold: float) -> int | None:
    """The first evaluation step at which the run's held-out loss is below
    ``threshold``, or ``None`` if it never is."""
    threshold = _checks.real("threshold", threshold)
    history = run["history"]
    for step, loss in zip(history["eval_step"], history["test_loss"], strict=True):
        if loss is not None and loss < threshold:  # None: a NaN or inf, stored as null
            return int(step)
    return None


def eval_curve(run: Any) -> tuple[list[int], list[float]]:
    """A run's held-out loss at every evaluation: ``(steps, losses)``.

    ``run`` is a record's run (``{"history": ...}``), a history itself, or
    what :func:`rhn.train.train` returned. For a task with a validation
    split the losses are the validation split's, whatever the record's age
    (records written before the history kept ``valid_loss`` hold them as
    ``test_loss``); for a task generated afresh, fresh sequences'.
    """
    history = getattr(run, "history", run)
    if isinstance(history, Mapping) and "history" in history:
        history = history["history"]
    if not isinstance(history, Mapping) or "eval_step" not in history:
        raise TypeError(
            "run must be a record's run, a training history or a train() result, "
            f"got {type(run).__name__}"
        )
    key = "valid_loss" if "valid_loss" in history else "test_loss"
    if key not in history:
        raise TypeError(
            "run: its history has evaluation steps but no held-out losses "
            f"(valid_loss or test_loss), keys {sorted(history)}"
        )
    losses = history[key]
    # a record stores a NaN or infinite loss as null (strict JSON): NaN again
    return [int(s) for s in history["eval_step"]], [
        math.nan if v is None else float(v) for v in losses
    ]


def core_parameters(run: Mapping[str, Any]) -> int:
    """The parameters of a recorded run's recurrent core, its head left out.

    A record written before ``metrics["num_params_total"]`` existed counts
    the head in ``num_params``; this subtracts it there (``(H + 1)`` per
    output of the task's head), so that old and new records compare.
    """
    metrics = run["metrics"]
    if "num_params_total" in metrics:
        return int(metrics["num_params"])
    try:
        outputs = get_task(run["config"]["task"]).output_size
    except ValueError as err:  # an own task, by name only
        raise ValueError(
            f"run: a record older than num_params_total of a task of your own "
            f"({run['config']['task']!r}) does not say how large its head is"
        ) from err
    return int(metrics["num_params"]) - outputs * (int(metrics["hidden_size"]) + 1)


def _stats(values: list[float]) -> dict[str, float]:
    n = len(values)
    mean = sum(values) / n
    # The sample standard deviation (n - 1); undefined for one seed.
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    )
    return {"mean": mean, "std": std, "min": min(values), "max": max(values)}


def summarize(
    record: Mapping[str, Any],
    metric: str | Callable[[Mapping[str, Any]], float] = "test_loss",
    by: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The runs grouped by setting, with statistics over seeds.

    Args:
        record: a sweep record.
        metric: a key of each run's ``metrics`` (default ``"test_loss"``), or a
            function of a run returning a number.
        by: the config fields to group by (default: the grid's fields).

    Returns:
        One dict per group, in the order the runs were made: the group's
        field values (``None`` for a field the group's model does not read),
        ``n`` (number of seeds), ``seeds``, ``values`` (one per seed),
        ``diverged`` (how many of the runs diverged, ``metrics["diverged"]``),
        then ``mean``, ``std`` (sample standard deviation, NaN for one run),
        ``min`` and ``max`` over the runs that did not diverge (NaN if none):
        a diverged run's loss is not a trained result.
    """
    if isinstance(by, str):  # one field, not its letters
        by = [by]
    by = list(record["call"]["grid"] if by is None else by)
    if callable(metric):
        value_of = metric
    else:
        name = metric

        def value_of(run: Mapping[str, Any]) -> float:
            if name not in run["metrics"]:
                raise ValueError(
                    f"metric {name!r} is not in the runs' metrics "
                    f"{sorted(run['metrics'])}"
                )
            return run["metrics"][name]

    groups: dict[str, dict[str, Any]] = {}
    for run in record["runs"]:
        config = run["config"]
        try:
            # None where the run's model does not read the field (depth of a GRU)
            key_values = {
                k: config[k] if uses_field(config["model"], k) else None for k in by
            }
        except KeyError as err:
            raise ValueError(f"by: {err.args[0]!r} is not a config field") from None
        key = json.dumps(key_values, sort_keys=True)
        group = groups.setdefault(
            key, {**key_values, "seeds": [], "values": [], "diverged": 0, "kept": []}
        )
        group["seeds"].append(run["seed"])
        value = value_of(run)  # None: a run that diverged before its evaluation
        value = math.nan if value is None else float(value)
        group["values"].append(value)
        if run["metrics"].get("diverged"):
            group["diverged"] += 1
        else:
            group["kept"].append(value)
    runs = record["runs"]
    if (
        isinstance(metric, str)
        and runs
        and all(run["metrics"].get(metric) is None for run in runs)
        and not any(run["metrics"].get("diverged") for run in runs)
    ):
        other = " (the task has no test split): pass metric='valid_loss'"
        raise ValueError(
            f"metric: no run has a {metric}"
            + (other if metric == "test_loss" else "; choose another metric")
        )
    out = []
    for g in groups.values():
        kept = g.pop("kept")
        stats = _stats(kept) if kept else dict.fromkeys(_STATS, math.nan)
        out.append({**g, "n": len(g["values"]), **stats})
    return out


_STATS = ("mean", "std", "min", "max")
