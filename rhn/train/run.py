"""A training run, step by step: :func:`train` and the private ``_Run``.

:func:`train` reads top to bottom: check the config, load the checkpoint to
resume, the set-up of a ``_Run`` and its ``restore`` (every check that can
still refuse the run), the loggers' checks, the claim of the folder
(:mod:`rhn.train.records`, which may remove an old run: so it comes last),
then ``fit`` (``train_step``, ``evaluate``, ``save_checkpoint``, interrupt
handling) and ``finish``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .. import _checks, _cli, _io, devices
from ..baselines import count_parameters
from ..tasks import Task, get_task
from . import records
from .config import TrainConfig, generate, resolve_device, stale_fields
from .interrupts import (
    TrainingInterrupted,
    caller_state_kept,
    signals_deferred,
    signals_held,
)
from .loggers import CSVLogger, Logger
from .model import LAYOUTS, check_memory, evaluate, make_model, model_io
from .model import loss as task_loss

__all__ = [
    "TrainResult",
    "train",
    "TrainingInterrupted",
    "DIVERGED_FACTOR",
    "FolderTakenOver",
]


_FOREIGN = "files not of this run"  # what a moved folder's place now holds


PATIENCE_ON_TEST = (
    "the task has no validation split, so the one held-out set that scores "
    "every evaluation also chose the best step: test_loss is the loss of the "
    "weights chosen on it, biased low; compare such runs with each other, not "
    "with a run scored on sequences it never chose by"
)


class FolderMoved(ValueError):
    """The run's ``out`` folder was moved or removed while it trained: the run
    stopped after writing the folder again whole (checkpoint and run.json)."""


class FolderTakenOver(RuntimeError):
    """Another run took the run's ``out`` folder over while it trained (its
    ``run.lock`` was deleted, and a second run claimed the folder): the run
    stopped without writing a file of the other run's, and kept its own
    state beside them (``checkpoint.orphan-<run id>.pt``, in ``path``)."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        model: the trained :class:`SequenceModel` (in eval mode), taking
            inputs in the layout the task's data were given in: ``(B, T, I)``
            for a task made with ``batch_first=True`` (as
            :func:`rhn.train.load_model` gives the run back), ``(T, B, I)``
            otherwise.
        history: per-step ``step``/``train_loss`` lists and per-evaluation
            ``eval_step``/``test_loss`` (and ``test_accuracy`` for class
            labels, per sequence or per kept step) lists. On a task with
            ``held_out`` splits (the chorales) the evaluations score the
            validation split, never the test split: their losses are in
            ``valid_loss`` (accuracies in ``valid_accuracy``), and
            ``test_loss`` (``test_accuracy``) repeats them under the name the
            other tasks use; the test split is scored once, in ``metrics``.
        metrics: the summary written to ``metrics.json``: ``test_loss`` (the
            final held-out loss), ``baseline``, ``diverged`` (see
            :func:`train`), ``steps``, ``seconds``, ``device``,
            ``num_params`` (the recurrent core's parameters, the count
            ``TrainConfig.num_params`` budgets), ``num_params_total`` (with
            the head), ``hidden_size``, ... (A record without
            ``num_params_total`` predates it: its ``num_params`` counts the
            head too.) With ``patience``, the model
            is the one of the best evaluation, ``best_step`` says when that
            was and ``test_loss`` (and ``test_accuracy``) are its held-out
            scores. On a task with ``held_out`` splits (the chorales, own
            data), the evaluations score the validation split,
            ``valid_loss`` (and ``valid_accuracy``) are the validation scores
            of the model returned and ``test_loss`` (and ``test_accuracy``)
            its scores on the test split; a task without a test split
            (``held_out=(valid, None)``, e.g. a
            :func:`rhn.owntasks.tensor_task` given no test data) has
            ``test_loss`` (and ``test_accuracy``) ``None`` and
            ``test_loss_reason`` saying why.
        written: whether this call wrote the run's files; ``False`` for a
            resume with nothing to train, which returns the recorded result
            and leaves every file as it was.
    """

    model: torch.nn.Module
    history: dict[str, list[float]]
    metrics: dict[str, Any]
    written: bool = True


def _schedule(config: TrainConfig, horizon: int) -> Callable[[int], float]:
    """The learning-rate factor at each step; ``horizon`` is the schedule's length
    (the first segment's ``steps``: a run extended later keeps its schedule and
    continues at the final rate)."""
    if config.lr_schedule == "constant":
        return lambda step: 1.0
    # cosine from 1 to 0.1 over the run
    return lambda step: (
        0.1 + 0.45 * (1 + math.cos(math.pi * min(step, horizon) / horizon))
    )


def train(
    config: TrainConfig,
    *,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    resume: str | Path | None = None,
    overwrite: bool = False,
    loggers: Sequence[Logger] = (),
) -> TrainResult:
    """Train the model ``config`` describes on its task; return model, history, metrics.

    Every step draws a fresh batch from a generator seeded by ``config.seed``;
    the held-out set is drawn once from a separate seed, so its sequences are
    never trained on.

    Args:
        config: the run (see :class:`TrainConfig`).
        callback: called after every step with a dict holding ``step``,
            ``train_loss``, ``lr``, ``model``, ``history`` and, after an
            evaluation, ``test_loss``. Returning ``True`` stops training
            early (a checkpoint is still written when ``config.out`` is set).
        resume: path of a checkpoint to continue from. Its config must equal
            ``config`` up to the fields that do not change the numbers
            (``out``, ``progress``, ``device``, ``checkpoint_every``,
            ``threads``; fields a checkpoint lacks count at their default);
            on the CPU the resumed run reproduces the uninterrupted one
            exactly. ``steps`` may be larger than the checkpoint's: the run
            goes on at the schedule's final learning rate (a run whose
            ``stop_loss`` or ``patience`` ended it is finished and trains
            nothing), and the record's
            ``run.segments`` say which call trained which steps. A resume
            into another ``out`` (or none) is a branch: a run with an id of
            its own, whose ``run.json``, checkpoint and ``metrics.json``
            (``run.parent``) name the run, checkpoint and step it came from.
            The log it appends to (``config.log_csv``, as the checkpoint
            records it) must hold the run's rows up to the last step logged
            there: a log cut short or gone is refused (restore it, or give
            another ``log_csv`` for the rest of the run). A resume in the
            run's own folder that has no step left to train (``steps``
            reached, ``metrics.json`` written) says so in one line on stderr,
            writes nothing and returns the recorded metrics.
        overwrite: replace a different run already in ``config.out``
            (default ``False``: refused, as on the command line), once every
            check of this run has passed; a :class:`~rhn.train.CSVLogger`
            then starts its file anew if it is a log of this kind. Refused
            with ``resume``: a resume never replaces a run.
        loggers: :class:`~rhn.train.Logger` objects that get one row per step
            (step, losses, learning rate, time); ``config.log_csv`` adds a
            :class:`~rhn.train.CSVLogger`. They may refuse the run before any
            work (e.g. a CSV file of another run).

    Returns:
        A :class:`TrainResult`. With ``config.out`` set, also writes
        ``out/metrics.json`` and ``out/checkpoint.pt``.

    The caller's global state is left as it was: the number of torch
    threads (``config.threads``) and the global random generator (seeded with
    ``config.seed`` for the initial weights) are restored when the run ends.

    ``metrics["diverged"]`` is ``True`` when the final held-out loss is not
    finite or more than ``rhn.train.DIVERGED_FACTOR`` times the task's baseline
    (the loss of the best constant prediction; on a task with a test split the
    test loss, against a baseline scored on that split, and a validation loss
    only when it is not finite): a run can blow up while its
    loss stays finite. With a baseline of 0 (constant targets) only a
    non-finite loss counts, and the run says so; a baseline that is NaN,
    negative or infinite is refused.

    Raises:
        FloatingPointError: if the training loss becomes NaN or infinite; the
            message names the step. With ``config.out`` set,
            ``metrics.json`` is written first, with ``"diverged": true``.
        TrainingInterrupted: on SIGINT (Ctrl-C), SIGTERM or SIGHUP. The signal is
            acted on between two steps: the checkpoint then written (with
            ``config.out`` set) resumes bit for bit. A second Ctrl-C stops
            at once, without a checkpoint.
        ValueError: if ``config.out`` is a file or cannot be written (checked
            before the first step), holds another run (without
            ``overwrite``) or is in use by another process (``out/run.lock``);
            or ``resume`` is empty, truncated, not a checkpoint of
            :func:`train`, or one of another config.
        FileNotFoundError: if ``resume`` names no file.
        FolderTakenOver: if another run claimed ``config.out`` while this one
            trained (after its ``run.lock`` was deleted): nothing of the other
            run's is written; this run's state goes beside it, to
            ``out/checkpoint.orphan-<run id>.pt`` (``err.path``).
        RuntimeError: if ``train`` is already running in another thread of
            this process: torch's random generator and thread count are
            shared by every thread, so two runs at once would each depend on
            the other's timing. Run them one after another, or in processes
            of their own.
    """
    with _one_thread_at_a_time():
        return _train(
            config,
            callback=callback,
            resume=resume,
            overwrite=overwrite,
            loggers=loggers,
        )


_running = {"thread": None, "depth": 0}  # which thread is in train(), how deep
_running_lock = threading.Lock()


@contextlib.contextmanager
def _one_thread_at_a_time() -> Iterator[None]:
    """Refuse a ``train`` call while another thread is in one (a callback of
    the same thread may train again: the runs then take turns)."""
    me = threading.get_ident()
    with _running_lock:
        if _running["thread"] not in (None, me):
            raise RuntimeError(
                "train() is already running in another thread of this process; "
                "torch's random generator and thread count are shared by all "
                "threads, so two runs at once would not be reproducible: run "
                "them one after another, or in separate processes"
            )
        _running["thread"] = me
        _running["depth"] += 1
    try:
        yield
    finally:
        with _running_lock:
            _running["depth"] -= 1
            if _running["depth"] == 0:
                _running["thread"] = None


def _train(
    config: TrainConfig,
    *,
    callback: Callable[[dict[str, Any]], bool | None] | None,
    resume: str | Path | None,
    overwrite: bool,
    loggers: Sequence[Logger],
) -> TrainResult:
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if callback is not None and not callable(callback):
        raise TypeError(
            "callback must be a function of each step's event, or None, got "
            f"{type(callback).__name__} {_io.short(repr(callback), 40)}"
        )
    # a field set after the config was made (config.lr = ...) is checked as
    # one given to TrainConfig: the checks run again on a copy
    checked = dataclasses.replace(config)
    stale = stale_fields(config, checked)
    if stale:  # the run would train other values than the config shows
        shown = ", ".join(f"{k}={getattr(config, k)!r}" for k in stale)
        now = ", ".join(f"{k}={v!r}" for k, v in stale.items())
        since = sorted(config.__dict__.get("_set_since", ()))
        if since:
            raise ValueError(
                f"config: {shown} came from the defaults when the config was "
                f"made, but {', '.join(since)} set since makes them {now}; make "
                "the config again, config = dataclasses.replace(config), or set "
                "those fields too"
            )
        raise ValueError(
            f"config: {shown} are not what the config's fields make ({now}): a "
            "value written into config.__dict__ skips the config's checks; set "
            "it as an attribute (config.lr = ...) or make the config again"
        )
    if hasattr(config, "_fingerprint"):  # the same task: its data's hash holds
        checked._fingerprint = config._fingerprint
    config = checked
    _checks.boolean("overwrite", overwrite)
    if torch.is_inference_mode_enabled():  # torch.no_grad() is fine: it trains
        raise RuntimeError(
            "train() was called inside torch.inference_mode(), where no tensor "
            "can be trained; call it outside that block"
        )
    if overwrite and resume is not None:  # nothing a resume could replace is lost
        raise ValueError(
            f"overwrite: a resume continues a run and never replaces one, got "
            f"overwrite=True with resume={str(resume)!r} (--overwrite with "
            "--resume); leave overwrite out, or give another out for a branch"
        )
    state, resume_path = None, None
    # what an --overwrite killed before its first checkpoint left (the old
    # run and its log's rows in a stash) is put back before anything is read
    if resume is not None:
        records.recover_resumed(resume)
    if config.out is not None:
        records.recover_folder(Path(config.out))
    if resume is not None:  # read and checked before any work, not after it
        state = records.load_checkpoint(resume, name="resume")
        records.check_resume(config, state)
        resume_path = Path(resume)
        if resume_path.is_dir():
            resume_path = resume_path / records.CHECKPOINT_NAME
    loggers = _loggers(config, loggers)
    out = None if config.out is None else Path(config.out)
    # a checkpoint copied into another run's folder must not take it over
    records.check_not_foreign(out, state, resume_path)
    # the run's identity: the checkpoint's when it goes on in its own folder,
    # else a new one (a fresh run, or a branch, which names its parent)
    run_id, parent, branch = records.identity(
        out, state, resume_path, log_csv=config.log_csv
    )
    # the folder before the log: a folder holding another run is the reason
    records.check_out_free(out, state, branch)
    # the log a resume appends to must hold the run's rows up to its step
    log_record = _kept_log(config, state, out, branch, resume_path)
    checked: list[Logger] = []
    lock = None
    try:
        with caller_state_kept():
            # Every set-up check (memory, the task's data and seq_len, the
            # checkpoint's weights and state) runs before the loggers' checks
            # and the claim of the folder, which may replace an old run:
            # nothing is removed for a run that is then refused.
            run = _Run(config, run_id=run_id)
            run.parent = parent
            unlogged = None if log_record is None else log_record.pop("unlogged", None)
            run.log_record = log_record
            if state is not None:
                run.restore(state, resume_path)
                done = _already_done(run, state, out, branch)
                if done is not None:
                    return done
            info: dict[str, Any] = {
                "columns": list(log_columns(run.task)),
                "start_step": 0 if state is None else int(state["step"]),
                "resumed": state is not None,
                # the row of the checkpoint's step that a failed write left
                # out of config.log_csv (a full disk): the log writes it first
                "unlogged_row": unlogged,
                "overwrite": overwrite,
                "segment": len(run.segments),
                "run_id": run_id,
                "parent": parent,
                "parent_log_csv": _parent_log(state) if branch else None,
                "replaces_run": records.replaced_run(out) if overwrite else None,
                "replaced_stash": None,
                "config": config.to_dict(),
            }
            for logger in loggers:  # before the folder is claimed
                logger.check(_own_copy(info))  # what one changes, no other sees
                checked.append(logger)
            if out is not None:
                _cli.writable_dir("out", out)
                lock = records.claim_folder(
                    out,
                    config,
                    resume_state=state,
                    resume_path=resume_path,
                    overwrite=overwrite,
                    run_id=run_id,
                    parent=parent,
                    branch=branch,
                )
                lock.anchor()  # a callback's os.chdir does not split the run
                run.lock = lock
                info["replaced_stash"] = getattr(lock, "aside", None)
            started: list[Logger] = []
            try:
                for logger in loggers:
                    logger.start(_own_copy(info))
                    started.append(logger)
                run.loggers = started
                if state is None:
                    _notes(run)
                run.fit(callback)
            except BaseException as err:  # the error that stopped the run first
                failed = _close_all(started)
                if failed is not None:
                    err.add_note(
                        f"rhn.train: a logger's close() failed as well: "
                        f"{_io.one_line(failed)[:200]}"
                    )
                raise
            # the run's state is written whatever the loggers' close() does
            failed = _close_all(started)
            if run.signal is not None:
                stop = run.interrupted()
                if failed is not None:
                    stop.add_note(f"rhn.train: {_io.one_line(failed)[:200]}")
                raise stop
            result = run.finish()
            if failed is not None:
                failed.add_note(
                    "rhn.train: the run finished all the same: its checkpoint "
                    "and metrics are written (a logger's close() failed after)"
                )
                raise failed
            return result
    except BaseException as err:
        if records.restore_aside(lock):  # failed before its first record
            how = "was stopped" if isinstance(err, TrainingInterrupted) else "failed"
            err.add_note(
                f"rhn.train: the run that overwrite was to replace in {str(out)!r} "
                f"is back in place: this run {how} before its first checkpoint"
            )
        raise
    finally:
        for logger in checked:  # refused after its check: let go of its file
            if isinstance(logger, CSVLogger):
                logger.close()
        if lock is not None:
            lock.release()


def _own_copy(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` for one logger: its own dict and lists, so that a logger that
    changes what it is given changes nothing another logger (the run's CSV
    log) reads."""
    return {
        k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
        for k, v in info.items()
    }


def _close_all(loggers: Sequence[Logger]) -> Exception | None:
    """Close every logger, each whatever the others do; the first error."""
    first = None
    for logger in loggers:
        try:
            logger.close()
        except Exception as err:  # a logger's own code
            first = first or err
    return first


def _kept_log(
    config: TrainConfig,
    state: dict[str, Any] | None,
    out: Path | None,
    branch: bool,
    resume_path: Path | None,
) -> dict[str, Any] | None:
    """What the checkpoint records about ``config.log_csv`` (``path``,
    ``inside``: its place in ``out``, ``from_step``: the step its rows of the
    run start after, ``last_step``: the last step logged), checked on a resume
    that appends to the log the run kept: it must hold the run's rows of the
    steps logged there (a log restored from a backup, cut short, or moved
    away would leave a gap). A checkpoint without the record (written before
    it) is not checked."""
    if config.log_csv is None:
        return None
    path = os.path.abspath(config.log_csv)
    start = 0 if state is None else int(state["step"])
    inside = None
    if out is not None:
        relative = os.path.relpath(path, os.path.abspath(out))
        inside = None if relative.startswith("..") else relative
    record = {"path": path, "inside": inside, "from_step": start, "last_step": start}
    saved = None if state is None or branch else state.get("log")
    if not isinstance(saved, dict):
        return record
    moved_with = (  # a log inside the run's folder moves with it
        saved.get("inside") is not None
        and out is not None
        and os.path.abspath(os.path.join(out, saved["inside"])) == path
    )
    from .loggers import check_log_rows, logged_steps, step_ranges

    held = logged_steps(config.log_csv, state.get("run_id"))  # type: ignore[union-attr]
    if saved.get("path") != path and not moved_with:
        # another log: the rest of the run goes there, unless it is an
        # earlier log of the run, whose rows stop before the run's step, or
        # the run's own log is still there and this one is new (a relative
        # log_csv given from another directory): the log would split in two
        earlier = saved.get("path")
        same_name = (
            isinstance(earlier, str)
            and not os.path.isabs(config.log_csv)
            and os.path.basename(earlier) == os.path.basename(path)
        )
        if same_name and not held and start > 0:
            theirs = logged_steps(earlier, state.get("run_id"))  # type: ignore[union-attr]
            if theirs:  # the same name, read from another directory
                raise ValueError(
                    f"log_csv: {_io.short(config.log_csv)!r} is read from the "
                    f"current directory, {_io.short(path)!r}, which holds no row "
                    f"of this run; its log, with steps up to {max(theirs)}, is "
                    f"{_io.short(earlier)!r}: give that path (or another name "
                    "to log the rest of the run in a new file)"
                )
        if held and max(held) < start:
            raise ValueError(
                f"log_csv: {_io.short(config.log_csv)!r} holds this run's rows "
                f"up to step {max(held)}, but the run is at step {start}: steps "
                f"after {max(held)} were logged in {_io.short(saved.get('path'))!r} "
                "(so its checkpoint says); appending here would leave a gap: "
                "resume with that log, or pass --log-csv (log_csv=) with a new file"
            )
        return record
    try:
        first, last = int(saved["from_step"]), int(saved["last_step"])
    except (KeyError, TypeError, ValueError):
        return record
    record["from_step"] = first
    unlogged = saved.get("unlogged")
    if isinstance(unlogged, dict) and unlogged.get("step") == start == last + 1:
        record["unlogged"] = unlogged  # the row a failed write left out
    if held is None:  # no log of this kind: the logger's check says so
        return record
    check_log_rows(config.log_csv, state.get("run_id"))  # type: ignore[union-attr]
    missing = [s for s in range(first + 1, min(last, start) + 1) if s not in held]
    if missing:
        where = _io.short(config.log_csv)
        gone = (
            f"the row of step {missing[0]} is missing"
            if len(missing) == 1
            else f"rows of steps {step_ranges(missing)} are missing"
        )
        what = (
            "is missing"
            if not os.path.exists(config.log_csv)
            else f"holds this run's rows of steps {step_ranges(held)} only"
        )
        raise ValueError(
            f"log_csv: {where!r} {what}, but the run is at step {start} and logged "
            f"steps {first + 1}-{last} there ({gone}); appending would leave a "
            "gap: restore the file, or pass "
            "--log-csv (log_csv=) with a new file to log the rest of the run there"
        )
    return record


def _already_done(
    run: _Run, state: dict[str, Any], out: Path | None, branch: bool
) -> TrainResult | None:
    """A resume in the run's own folder with nothing to train (the run is at
    ``config.steps``, or its ``stop_loss`` or ``patience`` ended it, and its
    record is written): one line on stderr, the recorded result, and no file
    touched. ``None`` otherwise."""
    early = run.stop_reason
    if branch or (run.step < run.config.steps and early is None):
        return None
    record = records.finished_here(out, state)
    if record is None:  # its metrics.json is still to write: finish does
        return None
    if early is not None:
        said = (
            f"stopped early at step {run.step} ({early}): its stop rule ended "
            "it, so there is nothing to train; its files are left as they are"
        )
    else:
        said = (
            f"is already at step {run.step} (steps={run.config.steps}): nothing to "
            f"train, its files are left as they are; give --steps (steps=) above "
            f"{run.step} to train it further"
        )
    print(f"resume: the run in {_io.short(out)!r} {said}", file=sys.stderr)
    if run.best is not None:  # early stopping: the weights it returned
        run.model.load_state_dict(run.best["model"])
    run.model.eval()
    run.model.batch_first = bool(getattr(run.task, "batch_first", False))
    metrics = {k: v for k, v in record.items() if k not in ("config", "history", "run")}
    return TrainResult(
        model=run.model, history=run.history, metrics=metrics, written=False
    )


def _parent_log(state: dict[str, Any] | None) -> str | None:
    """The log of the run a branch resumes (its absolute path where the
    checkpoint recorded one), or ``None``: a branch must not append to it."""
    if state is None or not isinstance(state.get("config"), dict):
        return None
    paths = state.get("paths")
    if isinstance(paths, dict) and paths.get("log_csv"):
        return str(paths["log_csv"])
    log = state["config"].get("log_csv")
    return None if log is None else str(log)


def _loggers(config: TrainConfig, loggers: Sequence[Logger]) -> list[Logger]:
    """The loggers given, checked, plus the CSV file of ``config.log_csv``."""
    if isinstance(loggers, Logger) or not isinstance(loggers, (list, tuple)):
        raise TypeError(
            "loggers must be a list of rhn.train.Logger objects, got "
            f"{type(loggers).__name__}"
        )
    for i, logger in enumerate(loggers):
        if not isinstance(logger, Logger):
            raise TypeError(
                f"loggers[{i}] must be a rhn.train.Logger (e.g. CSVLogger(path)), "
                f"got {type(logger).__name__}"
            )
    extra = [] if config.log_csv is None else [CSVLogger(config.log_csv)]
    return [*loggers, *extra]


def log_columns(task: Task) -> dict[str, str]:
    """The columns of a logged row, each with the key of the step's event it
    reads (the evaluations of a task with held-out splits score validation)."""
    held = "test" if task.held_out is None else "valid"
    columns = {
        "segment": "segment",
        "step": "step",
        "train_loss": "train_loss",
        "lr": "lr",
        f"{held}_loss": "test_loss",
    }
    if task.loss == "cross_entropy":  # one label per sequence or per step
        columns[f"{held}_accuracy"] = "test_accuracy"
    columns["seconds"] = "seconds"
    return columns


DIVERGED_FACTOR = 10.0
"""A run whose final held-out loss exceeds this many baselines has diverged."""
NO_TEST_SPLIT = (
    "the task has no test split (held_out=(valid, None)): valid_loss is the only "
    "held-out loss, and it is not independent of the weights it chose; give "
    "tensor_task a test= set or a test_fraction (loader_task a test loader) "
    "for a test loss"
)
"""``metrics["test_loss_reason"]`` of a run on a task without a test split."""


class _Run:
    """One training run: its state, and the named steps that advance it.

    :func:`train` calls them top to bottom: set-up (``__init__``), optionally
    :meth:`restore`, then :meth:`fit`, which repeats :meth:`train_step`,
    :meth:`evaluate` and :meth:`save_checkpoint`, and last :meth:`finish`.
    """

    def __init__(self, config: TrainConfig, run_id: str | None = None) -> None:
        self.config = config
        self.run_id = run_id  # the folder's identity (rhn.train.records)
        # absolute: a callback that changes directory does not move the run
        self.out = None if config.out is None else Path(os.path.abspath(config.out))
        self.log_path = (
            None if config.log_csv is None else Path(os.path.abspath(config.log_csv))
        )
        self.lock: records.FolderLock | None = None  # of out, once claimed
        self.task = get_task(config.task)
        self.device = resolve_device(config.device)
        check_memory(config, self.task, self.device)  # before allocating anything
        if config.threads is not None:
            torch.set_num_threads(config.threads)

        # The order of these draws fixes the run: weights first, then data.
        torch.manual_seed(config.seed)  # initial weights (and dropout masks)
        self.model = make_model(config, device=self.device)
        # Two independent streams: even seeds train, odd seeds test.
        self.batches = torch.Generator().manual_seed(2 * config.seed)
        held_out = {}
        if self.task.held_out is not None:  # a fixed data set: its validation split
            held_out = {"split": self.task.held_out[0]}
        try:
            self.test_data = generate(
                self.task,
                config.eval_samples,
                config.seq_len,
                seed=2 * config.seed + 1,
                device=self.device,
                **held_out,
            )
        except TypeError as err:
            if not held_out or "split" not in str(err):
                raise
            raise TypeError(
                f"task {self.task.name!r}: held_out={self.task.held_out!r} needs a "
                "generate that takes split= (the held-out split's name), and "
                f"this one does not ({_io.one_line(err)[:120]})"
            ) from None
        _check_generated(self.task, self.test_data, self.model)
        _check_batch_form(
            self.task,
            self.test_data,
            # a held-out split is scored whole, whatever eval_samples says
            config.eval_samples if self.task.held_out is None else None,
            "the held-out set",
            config.seq_len,
        )
        _check_deterministic(self.task, config.seq_len, 2 * config.seed + 1)
        # a task whose batches carry a mask: (inputs, targets, mask)
        self.masked = len(self.test_data) == 3
        if self.masked and isinstance(self.test_data[2], torch.Tensor):
            if not bool(self.test_data[2].any()):  # it scored 0.0, "perfect"
                raise ValueError(
                    f"task {self.task.name!r}: the mask of its held-out set "
                    "keeps no target, so there is nothing to score; a mask "
                    "must keep at least one step (True where the loss counts)"
                )
        self.baseline = _checked_baseline(self.task, config.seq_len)
        self.use_graph = self._use_graph()
        capturable = self.use_graph and self.device.type == "cuda"
        # a captured step reads its learning rate from this tensor on the
        # device, which the schedule fills in place; None: a float
        self.lr_tensor: torch.Tensor | None = None
        if self._lr_as_tensor():
            self.lr_tensor = torch.tensor(config.lr, device=self.device)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=config.lr if self.lr_tensor is None else self.lr_tensor,
            weight_decay=config.weight_decay,
            capturable=capturable,
        )
        self.schedule_steps = config.steps  # kept when a resume extends the run
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, _schedule(config, self.schedule_steps)
        )
        self.best: dict[str, Any] | None = None  # best held-out loss (patience)
        # why stop_loss or patience ended the run before config.steps, or None;
        # kept in the checkpoint, so a resumed run knows it is finished (training
        # on would add evaluation blocks to a run its own rule had ended)
        self.stop_reason: str | None = None
        self._setup_precision()
        self.graphed: Any = None  # rhn.graphs.GraphedStep, made at the first step
        if config.cuda_graph:  # asked for: refused with the reason if it cannot
            self._check_cuda_graph()
        self.history: dict[str, list[float]] = {
            "step": [],
            "train_loss": [],
            "eval_step": [],
            "test_loss": [],
        }
        if self.task.held_out is not None:  # the evaluations score validation
            self.history["valid_loss"] = []
        self.step = 0
        self.seconds = 0.0
        # One entry per call of train() on this run: which steps it trained.
        self.segments: list[dict[str, Any]] = []
        # the run a branch was resumed from (rhn.train.records.identity)
        self.parent: dict[str, Any] | None = None
        self.signal: int | None = None  # set by fit when a signal stopped it
        self.loggers: list[Logger] = []  # started by train, one row per step
        # config.log_csv's rows of the run (train's _kept_log), in the checkpoint
        self.log_record: dict[str, Any] | None = None
        self.columns = log_columns(self.task)

    def _setup_precision(self) -> None:
        """Mixed precision by the GPU's capability (:func:`rhn.devices.precision`).

        ``amp=None``: bfloat16 on compute capability 8.0+, float16 with a
        GradScaler on 7.x, none below and on the CPU; ``amp=True`` also on the
        CPU, where it is slower but runs the same code path (so CI tests it).
        """
        chosen = devices.precision(self.device, self.config.amp)
        self.use_amp = chosen.dtype is not None
        self.amp_dtype = chosen.dtype or torch.bfloat16
        self.scaler = torch.amp.GradScaler("cuda", enabled=chosen.grad_scaler)

    def _use_graph(self) -> bool:
        """Whether steps replay from a CUDA graph (``config.cuda_graph``).

        ``None`` (the default) means yes on a CUDA device when nothing forbids
        it: a task whose batches keep their shape, torch 2.4 or newer, and no
        float16 ``GradScaler`` (so a GPU of compute capability 8.0 or newer
        under the default precision).
        """
        config = self.config
        if config.cuda_graph is not None:
            return bool(config.cuda_graph)
        if self.device.type != "cuda" or self.task.loss == "frame_nll":
            return False
        if self.masked:  # the captured step takes (inputs, targets) only
            return False
        version = torch.torch_version.TorchVersion(torch.__version__)
        scaled = devices.precision(self.device, config.amp).grad_scaler
        return version >= (2, 4) and not scaled

    def _check_cuda_graph(self) -> None:
        if self.task.loss == "frame_nll":  # the chorales
            raise ValueError(
                f"cuda_graph=True cannot replay task {self.task.name!r}: its "
                "batches are padded to their longest sequence (shapes change every "
                "step) and its loss counts frames on the CPU; set cuda_graph=False"
            )
        if self.masked:
            raise ValueError(
                f"cuda_graph=True cannot replay task {self.task.name!r}: its batches "
                "carry a mask, which the captured step does not take; set "
                "cuda_graph=False"
            )
        # The captured optimizer step reads the learning rate from one tensor;
        # before torch 2.4 the LR scheduler replaced that tensor instead of
        # filling it, so the graph would keep the first rate without a word.
        version = torch.torch_version.TorchVersion(torch.__version__)
        if version < (2, 4):
            raise ValueError(
                f"cuda_graph=True needs torch >= 2.4 (its LR schedulers update a "
                f"tensor learning rate in place), got torch {torch.__version__}"
            )
        if self.device.type != "cuda":
            raise ValueError(
                f"cuda_graph=True needs a CUDA device, got device {self.device}"
            )
        if self.scaler.is_enabled():
            raise ValueError(
                "cuda_graph=True cannot capture float16 with a GradScaler (this GPU "
                "has no bfloat16); set amp=False or cuda_graph=False"
            )

    def autocast(self) -> contextlib.AbstractContextManager:
        """The context the forward pass runs in (autocast, or nothing)."""
        if self.use_amp:  # the device's own autocast (tests use the CPU's)
            return torch.autocast(self.device.type, dtype=self.amp_dtype)
        return contextlib.nullcontext()

    def restore(self, state: dict[str, Any], path: Path | None = None) -> None:
        """Continue from a checkpoint's ``state`` (checked by
        :func:`rhn.train.records.check_resume`)."""
        saved_io = state.get("model_io")
        if isinstance(saved_io, dict) and isinstance(saved_io.get("batch_first"), bool):
            now = bool(getattr(self.task, "batch_first", False))
            if saved_io["batch_first"] != now:  # load_model would flip layouts
                raise ValueError(
                    f"resume: the run's task {self.task.name!r} gave its data "
                    f"{LAYOUTS[saved_io['batch_first']]}, this one "
                    f"{LAYOUTS[now]}: the trained model would take another layout "
                    "than before the resume; give the task its first layout "
                    f"(batch_first={saved_io['batch_first']})"
                )
        try:
            self.model.load_state_dict(state["model"])
        except RuntimeError as err:
            detail = str(err).strip().splitlines()[-1].strip()[:200]
            where = "" if path is None else f" {str(path)!r}"
            raise ValueError(
                f"resume: the weights in the checkpoint{where} do not fit the model "
                f"this config builds ({detail})"
            ) from None
        where = "" if path is None else f" {str(path)!r}"

        def part(what: str, load: Callable[[], Any]) -> Any:
            try:
                return load()
            except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
                detail = (
                    str(err).strip().splitlines()[-1].strip()[:120]
                    if str(err).strip()
                    else type(err).__name__
                )
                raise ValueError(
                    f"resume: the checkpoint{where} is damaged: its {what} cannot be "
                    f"restored ({type(err).__name__}: {detail}); resume from another "
                    "checkpoint or start the run afresh"
                ) from None

        def numbers() -> tuple[int, int, float]:
            steps = int(state.get("schedule_steps", state["config"]["steps"]))
            return steps, int(state["step"]), float(state["seconds"])

        self.schedule_steps, step, seconds = part("step counters", numbers)
        self.scheduler.lr_lambdas = [_schedule(self.config, self.schedule_steps)]
        part("optimizer state", lambda: self._load_optimizer(state["optimizer"]))
        part("scheduler state", lambda: self._load_scheduler(state["scheduler"]))
        part("scaler state", lambda: self.scaler.load_state_dict(state["scaler"]))
        part(
            "batch generator state",
            lambda: self.batches.set_state(state["batch_generator"]),
        )
        part("random state", lambda: torch.set_rng_state(state["torch_rng"]))
        cuda_rng = state.get("cuda_rng")  # a run on a GPU; None elsewhere
        if cuda_rng is not None and self.device.type == "cuda":
            part(
                "GPU random state",
                lambda: torch.cuda.set_rng_state(cuda_rng, self.device),
            )
        history = state["history"]
        if not (
            isinstance(history, dict)
            and all(
                isinstance(history.get(k), list)
                for k in ("step", "train_loss", "eval_step", "test_loss")
            )
            and len(history["eval_step"]) == len(history["test_loss"])
        ):
            raise ValueError(
                f"resume: the checkpoint{where} is damaged: its history is not the "
                f"lists {sorted(self.history)} of a run; resume from another "
                "checkpoint or start the run afresh"
            )
        self.history = history
        if self.task.held_out is not None and "valid_loss" not in self.history:
            # a checkpoint written before the key existed: the same numbers
            self.history["valid_loss"] = list(self.history["test_loss"])
        self.step, self.seconds = step, seconds
        self.best = state.get("best")
        reason = state.get("stop_reason")  # absent before it was recorded
        self.stop_reason = reason if isinstance(reason, str) else None
        self.segments = list(state.get("segments") or [])
        if not self.segments:  # written before segments were recorded
            steps = int(state["config"]["steps"])
            self.segments = [{"from_step": 0, "to_step": self.step, "steps": steps}]
        if self.run_id is None:
            self.run_id = state.get("run_id")

    def _lr_as_tensor(self) -> bool:
        """Whether Adam reads its learning rate from a tensor (a captured step)."""
        return self.use_graph and self.device.type == "cuda"

    def _load_optimizer(self, saved: dict[str, Any]) -> None:
        """Adam's state, checked against the weights: torch loads moments of the
        wrong shape without a word, and the first step then fails.

        torch puts the checkpoint's learning rate into the param group as it
        was saved: a tensor on the CPU (the checkpoint is read there) or a
        float. A CUDA graph captured from a CPU tensor or a float keeps that
        one rate while the schedule moves on, so the rate goes back into this
        run's own form: its tensor on the device, filled, or a float.
        """
        params = list(self.model.parameters())
        for index, moments in dict(saved["state"]).items():
            for key in ("exp_avg", "exp_avg_sq"):
                if moments[key].shape != params[int(index)].shape:
                    raise ValueError(
                        f"{key} of parameter {index} has shape "
                        f"{tuple(moments[key].shape)}, the parameter "
                        f"{tuple(params[int(index)].shape)}"
                    )
        # how this run's Adam computes (capturable for a CUDA graph, foreach,
        # fused): this run's choice, not the one of the device it was saved on
        own = [
            {k: g[k] for k in ("capturable", "foreach", "fused") if k in g}
            for g in self.optimizer.param_groups
        ]
        self.optimizer.load_state_dict(saved)
        for group, options in zip(self.optimizer.param_groups, own, strict=True):
            group.update(options)
            if options.get("capturable"):  # a captured step reads it there
                for p in group["params"]:
                    step = self.optimizer.state.get(p, {}).get("step")
                    if isinstance(step, torch.Tensor):
                        self.optimizer.state[p]["step"] = step.to(
                            p.device, torch.float32
                        )
            rate = float(group["lr"])
            if self.lr_tensor is None:
                group["lr"] = rate
            else:
                with torch.no_grad():
                    self.lr_tensor.fill_(rate)
                group["lr"] = self.lr_tensor

    def _load_scheduler(self, saved: dict[str, Any]) -> None:
        if "lr_lambdas" not in saved or "last_epoch" not in saved:
            raise KeyError("lr_lambdas" if "lr_lambdas" not in saved else "last_epoch")
        self.scheduler.load_state_dict(saved)

    @torch.enable_grad()  # called under torch.no_grad() too, it trains
    def train_step(self) -> float:
        """One optimiser step on a fresh batch; returns the batch's loss."""
        config = self.config
        # the rate this step trains at (the scheduler moves it after the step)
        self.lr_used = float(self.optimizer.param_groups[0]["lr"])
        self.step += 1
        x, y, *rest = generate(
            self.task,
            config.batch_size,
            config.seq_len,
            generator=self.batches,
            device=self.device,
        )
        mask = rest[0] if rest else None
        if x.dtype != self.test_data[0].dtype:
            _check_generated(self.task, (x, y, *rest), self.model)
        _check_batch_form(
            self.task,
            (x, y),
            config.batch_size,
            f"the batch of step {self.step}",
            config.seq_len,
            # class labels: every batch on the CPU, the first one elsewhere
            labels=x.device.type == "cpu" or self.step == 1,
        )
        if self.use_graph and mask is not None:
            raise ValueError(
                f"task {self.task.name!r}: a training batch carries a mask but its "
                "held-out set does not; a task with masks gives them in every batch"
            )
        if self.use_graph:
            return self._graphed_step(x, y)
        with self.autocast():
            prediction = self.model(x)
        loss = task_loss(self.task, prediction, y, mask)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            self._check_batch(x, y)  # bad data is not a learning rate to lower
            raise FloatingPointError(
                f"the training loss became {loss_value} at step {self.step} "
                f"({config.model} on {self.task.name}, lr={config.lr}); "
                + (_scale_hint(x, y) or _lower_hint(config.clip))
            )
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if config.clip > 0:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), config.clip)
        self._updating = True  # from here on the weights change
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.history["step"].append(self.step)
        self.history["train_loss"].append(loss_value)
        return loss_value

    def _check_batch(self, x: torch.Tensor, y: torch.Tensor) -> None:
        """Raise a ``ValueError`` naming the task if its batch holds NaN or inf."""
        for what, t in (("inputs", x), ("targets", y)):
            if t.is_floating_point() and not torch.isfinite(t).all():
                raise ValueError(
                    f"task {self.task.name!r}: the batch of step {self.step} has NaN "
                    f"or infinite {what}; the task's data must be finite"
                )

    def _graphed_step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """:meth:`train_step` replayed from a CUDA graph (``config.cuda_graph``).

        The graph is captured at the first step (:class:`rhn.graphs.GraphedStep`);
        its optimizer step runs before the loss is checked, so a non-finite loss
        stops the run one update later than without the graph.
        """
        if self.graphed is None:
            from ..graphs import GraphedStep

            self.graphed = GraphedStep(
                lambda xb, yb: task_loss(self.task, self.model(xb), yb),
                list(self.model.parameters()),
                self.optimizer,
                x,
                y,
                clip=self.config.clip or None,
                amp_dtype=self.amp_dtype if self.use_amp else None,
                capture=self.device.type == "cuda",
            )
        loss_value = self.graphed(x, y).item()
        if not math.isfinite(loss_value):
            raise FloatingPointError(
                f"the training loss became {loss_value} at step {self.step}; "
                + _lower_hint(self.config.clip)
            )
        self.scheduler.step()
        self.history["step"].append(self.step)
        self.history["train_loss"].append(loss_value)
        return loss_value

    def evaluate(self, *, extra: bool = False) -> dict[str, float]:
        """Score the held-out set and append the scores to the history.

        On a task with ``held_out`` splits the set is the validation split,
        and its loss is also returned and recorded as ``valid_loss``. The
        ``extra`` evaluation of a run stopped between two (by a callback or a
        signal) becomes the best of early stopping only where no evaluation
        before it is: the checkpoint, written before it, keeps the earlier
        best, and ``load_model`` must give the weights the metrics describe.
        """
        scores = evaluate(self.model, self.task, self.test_data, self.autocast)
        if self.task.held_out is not None:  # the validation split's, by name
            scores["valid_loss"] = scores["test_loss"]
            if "test_accuracy" in scores:
                scores["valid_accuracy"] = scores["test_accuracy"]
        self.history["eval_step"].append(self.step)
        for key, value in scores.items():
            self.history.setdefault(key, []).append(value)
        if self.config.patience and (
            self.best is None or (not extra and scores["test_loss"] < self.best["loss"])
        ):
            weights = {
                k: v.detach().clone() for k, v in self.model.state_dict().items()
            }
            self.best = {
                "loss": scores["test_loss"],
                "step": self.step,
                "model": weights,
            }
        return scores

    def _stop_rule(self, loss: float) -> str | None:
        """Whether ``stop_loss`` or ``patience`` ends the run at this
        evaluation (held-out ``loss``): why, in words, or ``None``."""
        if self.config.stop_loss is not None and loss < self.config.stop_loss:
            limit = self.config.stop_loss
            return f"its held-out loss {loss:.4g} fell below stop_loss={limit:g}"
        if self.out_of_patience():
            assert self.best is not None
            return (
                f"its held-out loss did not improve on step {self.best['step']}'s "
                f"in patience={self.config.patience} evaluations"
            )
        return None

    def out_of_patience(self) -> bool:
        """Whether ``patience`` evaluations have passed without a better loss."""
        if not self.config.patience or self.best is None:
            return False
        since = sum(s > self.best["step"] for s in self.history["eval_step"])
        return since >= self.config.patience

    def held_out_metrics(self) -> dict[str, Any]:
        """With early stopping, the best step and loss; on a fixed data set, the
        validation loss and the test split's loss (of the model as it is)."""
        out: dict[str, Any] = {}
        accuracy = self.history.get("test_accuracy")
        if self.best is not None:
            # the held-out set also chose these weights; the accuracy is the
            # one of that evaluation, not of the last
            out.update(best_step=self.best["step"], test_loss=self.best["loss"])
            if self.task.held_out is None:  # one set chose and scored them
                out["test_loss_note"] = PATIENCE_ON_TEST
            if accuracy:
                at = self.history["eval_step"].index(self.best["step"])
                out["test_accuracy"] = accuracy[at]
        if self.task.held_out is not None:
            # the evaluations scored the validation split: their loss and
            # accuracy are the validation's; the test split is scored here
            out["valid_loss"] = out.pop("test_loss", self.history["test_loss"][-1])
            if accuracy:
                out["valid_accuracy"] = out.pop("test_accuracy", accuracy[-1])
            if self.task.held_out[1] is None:  # nothing held out for a test
                out["test_loss"] = None
                out["test_loss_reason"] = NO_TEST_SPLIT
                if accuracy:
                    out["test_accuracy"] = None
                return out
            test = generate(
                self.task,
                self.config.eval_samples,
                self.config.seq_len,
                device=self.device,
                split=self.task.held_out[1],
            )
            scores = evaluate(self.model, self.task, test, self.autocast)
            out["test_loss"] = scores["test_loss"]
            if "test_accuracy" in scores:
                out["test_accuracy"] = scores["test_accuracy"]
        return out

    def _state(self) -> dict[str, Any]:
        """Everything a resumed run needs: what a checkpoint holds."""
        self.segments[-1]["to_step"] = self.step
        return {
            "config": self.config.to_dict(),
            # the task's sizes: load_model rebuilds the model without its data
            "model_io": model_io(self.task),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "batch_generator": self.batches.get_state(),
            "torch_rng": torch.get_rng_state(),
            # dropout masks on a GPU come from the device's generator
            "cuda_rng": (
                torch.cuda.get_rng_state(self.device)
                if self.device.type == "cuda"
                else None
            ),
            "history": self.history,
            "step": self.step,
            "seconds": self.seconds,
            "best": self.best,
            "stop_reason": self.stop_reason,
            "run_id": self.run_id,
            "parent": self.parent,
            "segments": self.segments,
            "schedule_steps": self.schedule_steps,
            # where this run wrote, whatever the directory a resume starts in
            "paths": _absolute_paths(self.config),
            # config.log_csv: the steps it holds rows of, checked on a resume
            "log": None if self.log_record is None else dict(self.log_record),
        }

    def save_checkpoint(self, stop_if_moved: bool = True) -> None:
        """Write everything a resumed run needs to ``out/checkpoint.pt``.

        When ``out`` was moved or removed while the run trained (its
        ``run.json`` is gone, or another run's), the folder is written again
        whole (the checkpoint and the run's ``run.json``) and, with
        ``stop_if_moved``, the run stops with :class:`FolderMoved`: its log
        may have moved with the old folder, and two folders must not go on
        as one run (the moved one resumes as a copy, under an id of its own).
        """
        out = self.out
        other = records.taken_over(out, self.lock)
        moved = other is None and not records.still_claimed(out, self.lock)
        if moved:  # whatever now lies at out is not this run's to replace
            if records.run_files(out):
                other = _FOREIGN
        out.mkdir(parents=True, exist_ok=True)
        state = self._state()
        if other is not None:  # nothing of the other run's is touched
            path = out / records.orphan_name(self.run_id)
            records.save_checkpoint(path, state)
            raise self._taken_over(other, path)
        records.save_checkpoint(out / records.CHECKPOINT_NAME, state)
        records.drop_aside(self.lock)  # the run replaced by overwrite goes now
        if moved:
            records.reclaim(out, self.lock)  # type: ignore[arg-type]
            message = (
                f"out: {str(out)!r} was moved or removed while this run trained (its "
                f"run.json was gone at step {self.step}); the checkpoint of step "
                f"{self.step} and the run's run.json are in {str(out)!r} again"
            )
            if stop_if_moved:
                raise FolderMoved(
                    f"{message}: the run stopped; resume it with --resume {out} "
                    "(a moved copy of the folder holds an older checkpoint and "
                    "resumes as a run of its own)"
                )
            warnings.warn(message, stacklevel=2)

    def _taken_over(self, other: str, path: Path) -> FolderTakenOver:
        """The error that stops a run whose folder another run took over
        (``other`` says who), or whose moved folder's place now holds another
        run's files: they are not this run's, so they, its lock and its
        replaced run (``overwrite``) are left alone."""
        if self.lock is not None:
            self.lock.aside = None  # restore_aside would write into the folder
        out = _io.short(self.config.out)
        head = (
            f"out: {out!r} was moved or removed while this run (id {self.run_id}) "
            "trained, and a checkpoint.pt or metrics.json not of this run lies "
            "there now"
            if other == _FOREIGN
            else f"out: another run took over {out!r} while this run (id "
            f"{self.run_id}) trained: {other} (this run's run.lock was deleted)"
        )
        return FolderTakenOver(
            f"{head}; this "
            f"run stopped at step {self.step} without writing a file of the other "
            f"run's, and its own state went to {_io.short(path)!r}: move that "
            f"file into a folder of its own to keep it (--resume it with another "
            "--out for a branch)",
            path,
        )

    def fit(self, callback: Callable[[dict[str, Any]], bool | None] | None) -> None:
        """Step until ``config.steps``, an early stop, the callback, or a signal.

        A SIGINT, SIGTERM or SIGHUP ends the loop after the current step and leaves
        its number in ``self.signal`` (:func:`.interrupts.signals_deferred`).
        """
        self.segments.append(
            {"from_step": self.step, "to_step": self.step, "steps": self.config.steps}
        )
        if self.config.patience and self.task.held_out is None:
            from .config import _outside_the_package

            warnings.warn(
                f"patience on task {self.task.name!r}: {PATIENCE_ON_TEST}",
                stacklevel=_outside_the_package(),
            )
        bar = self._progress_bar()
        self.model.train()
        try:
            with signals_deferred() as signals:
                self._loop(callback, bar, signals)
        except FloatingPointError as err:
            metrics = self.metrics(diverged=True, error=str(err))
            if not self._replacing():  # else the replaced run goes back instead
                self._write_metrics(metrics)
            # what the run did before it diverged, for a sweep to record
            err.metrics, err.history = metrics, self.history  # type: ignore[attr-defined]
            raise
        except (Exception, KeyboardInterrupt, SystemExit) as err:
            # a logger's, a callback's, a task's own code (a real Ctrl-C is a
            # deferred signal: the loop ends after its step, see fit's doc)
            with signals_held():  # another Ctrl-C waits for the write
                self._save_after_error(err)
            raise
        finally:
            if bar is not None:
                bar.close()
        if signals:
            self.signal = signals[0]

    def _loop(
        self,
        callback: Callable[[dict[str, Any]], bool | None] | None,
        bar: Any,
        signals: list[int],
    ) -> None:
        """The loop proper: step, evaluate, report, checkpoint; stop when told."""
        config = self.config
        stopped = self.stop_reason is not None  # a resumed run that had stopped
        start = time.perf_counter() - self.seconds
        while self.step < config.steps and not stopped and not signals:
            # where to go back to if this step fails before its update
            self._mark = (self.step, self.batches.get_state(), torch.get_rng_state())
            self._updating = False
            loss_value = self.train_step()
            self._mark = None
            event: dict[str, Any] = {
                "step": self.step,
                "train_loss": loss_value,
                "lr": self.lr_used,
            }
            if self.step % config.eval_every == 0 or self.step == config.steps:
                scores = self.evaluate()
                event.update(scores)
                if self.step < config.steps:  # at the last step it just ends
                    self.stop_reason = self._stop_rule(scores["test_loss"])
                stopped = self.stop_reason is not None
            self.seconds = time.perf_counter() - start
            if self.loggers:
                event.update(segment=len(self.segments) - 1, seconds=self.seconds)
                row = {col: event.get(key) for col, key in self.columns.items()}
                try:
                    for logger in self.loggers:
                        logger.log(dict(row))  # its own: a change stays there
                except BaseException:
                    # the step is done, its row is not (a full disk): the
                    # checkpoint keeps the row, and a resume writes it first
                    if self.log_record is not None:
                        self.log_record["unlogged"] = dict(row)
                    raise
                if self.log_record is not None:  # every logger took the row
                    self.log_record["last_step"] = self.step
            if bar is not None:
                self._show_progress(bar, event)
            if callback is not None:
                event.update(model=self.model, history=self.history)
                sizes = {k: len(v) for k, v in self.history.items()}
                answer = callback(event)
                self.model.train()  # a callback that evaluated: back to training
                if {k: len(v) for k, v in self.history.items()} != sizes:
                    raise ValueError(
                        "callback: it changed event['history'], the run's own "
                        "history (read it, or copy it to change it: "
                        "{k: list(v) for k, v in event['history'].items()})"
                    )
                if answer is True:
                    stopped = True
                elif answer is not None and answer is not False:
                    raise TypeError(
                        "callback must return True (stop), False or None "
                        f"(go on), got {type(answer).__name__} "
                        f"{_io.short(repr(answer), 40)}"
                    )
            if (
                config.out is not None
                and config.checkpoint_every
                and self.step % config.checkpoint_every == 0
            ):
                self.save_checkpoint()

    def _replacing(self) -> bool:
        """Whether the run that ``overwrite`` replaces is still set aside: this
        run has written no checkpoint yet, and if it fails now, that run is put
        back (``train``), so nothing of this run's is written over it."""
        return getattr(self.lock, "aside", None) is not None

    def _save_after_error(self, err: Exception) -> None:
        """Checkpoint the last completed step when code run by the loop raised
        ``err`` (a step failed before its update goes back to the one before),
        so that the steps done are not lost; say so in ``err``'s notes and in
        its ``checkpoint`` attribute."""
        mark = getattr(self, "_mark", None)
        if mark is not None:
            if getattr(self, "_updating", False):
                return  # the weights changed half way: no consistent state
            self.step, generator, rng = mark
            self.batches.set_state(generator)
            torch.set_rng_state(rng)
            del self.history["step"][self.step :]
            del self.history["train_loss"][self.step :]
        if self.config.out is None or self.step <= self.segments[-1]["from_step"]:
            return
        if isinstance(err, FolderTakenOver):  # its state is kept, and said
            return
        if isinstance(err, FolderMoved):  # its checkpoint is written, and said
            err.checkpoint = self.out / records.CHECKPOINT_NAME  # type: ignore[attr-defined]
            return
        if self._replacing():  # the replaced run goes back; this one beside it
            try:
                kept = self._keep_beside()
            except Exception as other:
                err.add_note(f"no checkpoint could be written ({_io.one_line(other)})")
                return
            err.kept = kept  # type: ignore[attr-defined]
            err.kept_log = getattr(self, "kept_log", None)  # type: ignore[attr-defined]
            err.add_note(self._kept_note(kept))
            return
        try:
            self.save_checkpoint(stop_if_moved=False)
        except Exception as other:  # the disk that failed the log, say
            err.add_note(f"no checkpoint could be written ({_io.one_line(other)})")
            return
        path = self.out / records.CHECKPOINT_NAME
        err.checkpoint = path  # type: ignore[attr-defined]
        err.add_note(
            f"rhn.train: a checkpoint of step {self.step}, the last completed, "
            f"was written to {str(path)!r} before this error; resume from it"
        )

    def interrupted(self) -> TrainingInterrupted:
        """Checkpoint the run stopped by a signal; the exception to raise."""
        checkpoint, kept = None, None
        # a run that --overwrite started writes no checkpoint into the folder
        # before its first: the run it was to replace goes back in place
        # (train), and this run's state goes beside it
        with signals_held():  # a second Ctrl-C waits for the write
            if self.config.out is not None and not self._replacing():
                self.save_checkpoint(stop_if_moved=False)
                checkpoint = self.out / records.CHECKPOINT_NAME
            elif self.config.out is not None:
                kept = self._keep_beside()
        why = "config.out is None"
        if self.config.out is not None and checkpoint is None:
            why = "stopped before the first checkpoint of a run that overwrite started"
        if kept is not None:
            why = "the run that overwrite started had no checkpoint yet"
        stop = TrainingInterrupted(self.signal, self.step, checkpoint, why, kept)
        stop.kept_log = getattr(self, "kept_log", None)  # type: ignore[attr-defined]
        if kept is not None:
            stop.add_note(self._kept_note(kept))
        return stop

    def _keep_beside(self) -> Path | None:
        """The state of an ``overwrite`` run that stops or fails before its
        first checkpoint, written beside the run it was to replace (which goes
        back in place) as ``out/checkpoint.orphan-<run id>.pt``, so that its
        steps are not lost; ``None`` if it completed no step."""
        if self.step <= self.segments[-1]["from_step"]:
            return None
        path = self.out / records.orphan_name(self.run_id)
        records.save_checkpoint(path, self._state())
        # the rows it logged: the replaced run's log comes back over them
        log = self.log_path
        if log is not None and log.is_file():
            kept_log = log.with_name(records.orphan_name(self.run_id, log.name))
            data = log.read_bytes()
            _io.atomic_write(kept_log, lambda f: f.write(data), name="log_csv")
            self.kept_log = kept_log
        return path

    def _kept_note(self, kept: Path | None) -> str:
        if kept is None:
            return "rhn.train: this run completed no step: nothing of it to keep"
        rows = getattr(self, "kept_log", None)
        logged = "" if rows is None else f", and the rows it logged in {str(rows)!r}"
        return (
            f"rhn.train: this run's state of step {self.step} is kept in "
            f"{str(kept)!r}{logged}: resume it into a folder of its own (--resume "
            f"{kept} --out <a new folder>"
            + ("" if rows is None else ", with a new --log-csv")
            + ")"
        )

    def _progress_bar(self) -> Any:
        """A ``tqdm`` bar starting at the current step, or ``None``."""
        if not self.config.progress:
            return None
        from tqdm.auto import tqdm  # imported here: only runs that show a bar need it

        return tqdm(
            total=self.config.steps,
            initial=self.step,
            desc=f"{self.config.model} on {self.task.name}",
            unit="step",
            dynamic_ncols=True,
        )

    def _show_progress(self, bar: Any, event: dict[str, Any]) -> None:
        bar.update(1)
        if "test_loss" in event or self.step % 10 == 0:
            postfix = {"loss": f"{event['train_loss']:.4f}"}
            if self.history["test_loss"]:
                # what the evaluations score: the validation split on a data set
                label = "test" if self.task.held_out is None else "valid"
                postfix[label] = f"{self.history['test_loss'][-1]:.4f}"
            bar.set_postfix(postfix, refresh=False)

    def _too_far(self, loss: float | None) -> bool:
        """Whether a held-out ``loss`` counts as diverged: not finite, or
        more than ``DIVERGED_FACTOR`` baselines (a baseline of 0, constant
        targets, leaves nothing to compare)."""
        if loss is None:
            return False
        if not math.isfinite(loss):
            return True
        baseline = self.baseline
        return (
            math.isfinite(baseline)
            and baseline > 0
            and (loss > DIVERGED_FACTOR * baseline)
        )

    def _baseline_on_test(self) -> bool:
        """Whether the task has a test split, on which its baseline is scored
        (the chorales', tensor_task's and loader_task's baselines are)."""
        held = self.task.held_out
        return held is not None and held[1] is not None

    def metrics(self, *, diverged: bool = False, error: str | None = None) -> dict:
        """The summary of the run as it stands (written to ``metrics.json``)."""
        history = self.history
        test_loss = history["test_loss"][-1] if history["test_loss"] else None
        baseline = self.baseline
        if self.best is not None and error is None:  # early stopping: the model
            test_loss = self.best["loss"]  # returned is the best evaluation's
        if self._baseline_on_test():
            # the baseline is the test split's: the test loss is judged against
            # it once scored (at the end of train); a validation loss only when
            # it is not finite
            if test_loss is not None and not math.isfinite(test_loss):
                diverged = True
        else:
            diverged = diverged or self._too_far(test_loss)
        metrics: dict[str, Any] = {
            "task": self.task.name,
            "model": self.config.model,
            "test_loss": test_loss,
            "baseline": baseline,
            "diverged": diverged,
            "steps": self.step,
            "seconds": self.seconds,
            "device": _device_name(self.device),
            # the core's parameters, as TrainConfig.num_params counts them;
            # records written before num_params_total counted the head too
            "num_params": count_parameters(self.model.core),
            "num_params_total": count_parameters(self.model),
            "hidden_size": self.model.core.hidden_size,
        }
        if "test_accuracy" in history:
            metrics["test_accuracy"] = history["test_accuracy"][-1]
        if self.task.held_out is not None:
            # the evaluations scored the validation split; the test split is
            # scored only at the end (held_out_metrics), so a run that stops on
            # an error has no test loss
            metrics["valid_loss"], metrics["test_loss"] = test_loss, None
            if "test_accuracy" in metrics:  # likewise the validation's
                metrics["valid_accuracy"] = metrics.pop("test_accuracy")
                metrics["test_accuracy"] = None
        if error is not None:
            metrics["error"] = error
        return metrics

    def _write_metrics(self, metrics: dict[str, Any]) -> None:
        """Write ``out/metrics.json``: the metrics, the config, the history and
        the run's identity and segments."""
        if self.config.out is None:
            return
        self.segments[-1]["to_step"] = self.step
        run = {
            "id": self.run_id,
            "segments": self.segments,
            "schedule_steps": self.schedule_steps,
            # config's out and log_csv as given; these, wherever it was started
            "paths": _absolute_paths(self.config),
        }
        if self.parent is not None:
            run["parent"] = self.parent
        record = {
            **metrics,
            "config": self.config.to_dict(),
            "history": self.history,
            "run": run,
        }
        out = self.out
        other = records.taken_over(out, self.lock)
        if other is not None:  # the record goes beside the other run's
            path = out / records.orphan_name(self.run_id, records.METRICS_NAME)
            records.write_metrics(path, record)
            raise self._taken_over(other, path)
        records.write_metrics(out / records.METRICS_NAME, record)
        records.drop_aside(self.lock)

    def finish(self) -> TrainResult:
        """Evaluate if the last step was not, write checkpoint and metrics, return."""
        evaluated = self.history["eval_step"]
        extra = not evaluated or evaluated[-1] != self.step
        if self.config.out is not None:
            # to resume from: the last weights (and the best), saved before an
            # evaluation off the schedule, so that a resumed run evaluates
            # (and counts its patience) as the run never stopped would
            self.save_checkpoint(stop_if_moved=False)
        if extra:
            self.evaluate(extra=True)  # stopped early between evaluations
        self.model.eval()
        if self.best is not None:  # early stopping: back to the best weights
            self.model.load_state_dict(self.best["model"])
        metrics = {**self.metrics(), **self.held_out_metrics()}
        if self._baseline_on_test():  # the test loss against the test baseline
            metrics["diverged"] = metrics["diverged"] or self._too_far(
                metrics["test_loss"]
            )
        if self.config.out is not None:
            self._write_metrics(metrics)
        # trained on time-first batches; returned in the layout the task's data
        # were given in, as load_model gives the run back
        self.model.batch_first = bool(getattr(self.task, "batch_first", False))
        return TrainResult(model=self.model, history=self.history, metrics=metrics)


def _check_generated(task: Any, batch: Any, model: torch.nn.Module) -> None:
    """Refuse a batch of ``task.generate`` that the model cannot take: not
    ``(inputs, targets)`` or ``(inputs, targets, mask)`` tensors, or inputs of
    another dtype than the model's weights (float64 from numpy, say)."""
    if not _checks.is_batch(batch):
        raise TypeError(
            f"task {task.name!r}: its generate must return (inputs, targets) or "
            f"(inputs, targets, mask) tensors, got {type(batch).__name__}"
        )
    dtype = next(model.parameters()).dtype
    default = torch.get_default_dtype()
    if batch[0].dtype != dtype and dtype == default != torch.float32:
        # torch.set_default_dtype changed what the model is built in, not
        # what the task generates: the task is not the one to change
        raise TypeError(
            f"task {task.name!r} generates {batch[0].dtype} inputs, but torch's "
            f"default dtype is {default} (torch.set_default_dtype), so rhn.train "
            f"built the model in {default}; call torch.set_default_dtype("
            f"{batch[0].dtype}) before training, or make the task return {default}"
        )
    if batch[0].dtype != dtype:
        raise TypeError(
            f"task {task.name!r}: its generate returned inputs of dtype "
            f"{batch[0].dtype}, expected {dtype} as the model's weights; return "
            "x.float() (numpy arrays become float64)"
        )


def _refuse_dataless(task: Task, batch: Any) -> None:
    """Refuse a batch of tensors on the ``meta`` device (shapes, no data) or
    not dense (sparse): the training loop takes plain tensors."""
    tensors = (
        [t for t in batch if isinstance(t, torch.Tensor)]
        if isinstance(batch, (tuple, list))
        else []
    )
    if any(t.device.type == "meta" for t in tensors):
        raise ValueError(
            f"task {task.name!r}: its generate returned tensors on the meta "
            "device, which hold shapes but no data: return tensors on the CPU "
            "(or on the device it is given)"
        )
    sparse = next((t.layout for t in tensors if t.layout != torch.strided), None)
    if sparse is not None:
        raise ValueError(
            f"task {task.name!r}: its generate returned a {sparse} tensor; the "
            "training loop takes dense tensors: return x.to_dense()"
        )


def _check_deterministic(task: Task, seq_len: int, seed: int) -> None:
    """Refuse an own task whose ``generate`` gives other data from a generator
    in the same state once torch's global random state and Python's
    ``random`` have moved on (it draws from them, not from the generator it is
    given): its run could be neither repeated nor resumed. Two small batches;
    the global random states are put back, so a deterministic task's run is
    unchanged."""
    from .. import tasks

    if task in tasks.TASKS.values():
        return
    if task.fingerprint is not None:  # rhn.owntasks.tensor_task: drawn right
        return
    import random

    python_state, torch_state = random.getstate(), torch.get_rng_state()
    try:
        drawn, held = [], []
        for other in (seed, seed + 1):  # the global states moved between
            torch.manual_seed(other)
            random.seed(other)
            generator = torch.Generator().manual_seed(seed)
            batch = generate(task, 2, seq_len, generator=generator)
            _refuse_dataless(task, batch)
            drawn.append(_io.fingerprint(*batch))
            # the held-out set comes from the seed path: the same check (a
            # task with held-out splits gives them whole, from its data)
            if task.held_out is None:
                held.append(_io.fingerprint(*generate(task, 2, seq_len, seed=seed)))
    finally:
        random.setstate(python_state)
        torch.set_rng_state(torch_state)
    if drawn[0] != drawn[1] or (held and held[0] != held[1]):
        raise ValueError(
            f"task {task.name!r}: its generate returned other data from a "
            "generator in the same state once torch's global random state and "
            "Python's random had changed: it must draw every random number "
            "from the generator it is given (or from the seed when none is "
            "given), or the run can be neither repeated nor resumed"
        )


BUDGET_MISS = 0.1
"""A core further than this fraction from ``num_params`` is named when built."""


def _say_budget_missed(config: TrainConfig, core: nn.Module, task: Task) -> None:
    """One line on stderr when the core built for ``config.num_params`` misses
    it by more than ``BUDGET_MISS`` (a budget so small that one hidden unit
    more or less is a large step)."""
    built = count_parameters(core)
    if abs(built - config.num_params) > BUDGET_MISS * config.num_params:
        print(
            f"rhn.train: num_params={config.num_params} builds a {config.model} "
            f"core of {built} parameters on task {task.name!r} (hidden size "
            f"{core.hidden_size}, the nearest count), "
            f"{built / config.num_params - 1:+.0%} off the budget",
            file=sys.stderr,
        )


def _checked_baseline(task: Any, seq_len: int) -> float:
    """``task.baseline(seq_len)`` as a float; one line naming the task's
    baseline if it is not a real number."""
    try:
        value = task.baseline(seq_len)
    except Exception as err:  # the task's own code
        raise ValueError(
            f"task {task.name!r}: its baseline({seq_len}) raised "
            f"{type(err).__name__}: {_io.one_line(err)[:200]}; it must return "
            "the loss of the best memoryless predictor for that seq_len: fix "
            "the task's baseline"
        ) from err
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"task {task.name!r}: its baseline({seq_len}) must return a number "
            f"(the loss of a memoryless predictor), got {type(value).__name__} "
            f"{_io.one_line(repr(value))[:60]}"
        )
    value = float(value)
    if not value >= 0 or value == math.inf:  # NaN, negative or infinite
        raise ValueError(
            f"task {task.name!r}: its baseline({seq_len}) returned {value}, expected "
            "a finite loss of 0 or more (the loss of the best memoryless "
            "predictor, which the divergence check compares the held-out loss with)"
        )
    return value


def _notes(run: _Run) -> None:
    """What a fresh run says once, on stderr, when every check has passed: a
    core that misses its ``num_params`` widely, and a baseline of 0."""
    if run.config.hidden_size is None:  # sized by num_params
        _say_budget_missed(run.config, run.model.core, run.task)
    if run.baseline == 0:  # constant targets: no multiple of 0 to compare with
        print(
            f"rhn.train: task {run.task.name!r} has a baseline of 0 (its targets "
            "are predicted exactly without memory, constant targets say): "
            "divergence is judged by non-finite losses only",
            file=sys.stderr,
        )


def _check_batch_form(
    task: Any,
    batch: Any,
    asked: int | None,
    what: str,
    seq_len: int | None = None,
    labels: bool = True,
) -> None:
    """Refuse a batch of ``task.generate`` with another number of sequences
    than ``asked`` (``None``: any, a held-out split scored whole), another
    number of steps than ``seq_len`` asks for (``Task.length``), or targets
    of a dtype the task's loss does not take (``what`` names the batch)."""
    x, y = batch[0], batch[1]
    got = int(x.shape[1]) if x.dim() >= 2 else None
    if asked is not None and got != asked:
        raise ValueError(
            f"task {task.name!r}: its generate was asked for {asked} sequences "
            f"({what}) and returned inputs of shape {tuple(x.shape)} "
            f"({got if got is not None else 'no'} sequences, (T, B, features)); "
            "it must return as many sequences as asked"
        )
    if task.held_out is None and seq_len is not None:
        steps = seq_len if task.length is None else task.length(seq_len)
        if int(x.shape[0]) != steps:
            raise ValueError(
                f"task {task.name!r}: its generate was asked for seq_len={seq_len} "
                f"({what}) and returned inputs of {int(x.shape[0])} steps, shape "
                f"{tuple(x.shape)} (T, B, features), expected {steps} steps: "
                "return seq_len steps, or give the Task a length(seq_len) that "
                "says how many it returns"
            )
    wrong = None
    if task.loss == "mse" and not y.is_floating_point():
        wrong = "a floating dtype (torch.float32) for its mse loss"
    elif task.loss == "cross_entropy" and y.dtype != torch.long:
        wrong = "integer class labels (torch.long) for its cross_entropy loss"
    if wrong is not None:
        raise ValueError(
            f"task {task.name!r}: its generate returned targets of dtype {y.dtype} "
            f"({what}), expected {wrong}"
        )
    features = int(x.shape[-1]) if x.dim() == 3 else None
    if features is not None and features != task.input_size:
        raise ValueError(
            f"task {task.name!r}: its generate returned inputs with {features} "
            f"features in their last dimension ({what}, shape {tuple(x.shape)}), "
            f"but the task's input_size is {task.input_size}: make them agree"
        )
    if labels and task.loss == "cross_entropy" and y.numel():
        low = int(y.min())  # (on a GPU a wait: the caller says when to look)
        if low < 0:
            raise ValueError(
                f"task {task.name!r}: its generate returned the class label "
                f"{low} ({what}); labels run from 0 to output_size - 1 = "
                f"{task.output_size - 1} (to leave steps out of the loss, give "
                "the batch a mask instead of PyTorch's ignore_index)"
            )
        top = int(y.max())
        if top >= task.output_size:
            raise ValueError(
                f"task {task.name!r}: its generate returned the class label "
                f"{top} ({what}), but the task's output_size={task.output_size} "
                f"has classes 0 to {task.output_size - 1}: raise output_size to "
                "the number of classes"
            )


HUGE_DATA = 1e4
"""Data larger than this (in absolute value) is named when a loss overflows."""


def _scale_hint(x: torch.Tensor, y: torch.Tensor) -> str | None:
    """What to do about a batch whose inputs or targets are huge (the loss
    overflows whatever the learning rate), or ``None``."""
    sizes = {
        what: float(t.detach().abs().max())
        for what, t in (("inputs", x), ("targets", y))
        if t.is_floating_point() and t.numel()
    }
    big = {what: size for what, size in sizes.items() if size > HUGE_DATA}
    if not big:
        return None
    found = ", ".join(f"{what} up to {size:.3g}" for what, size in big.items())
    return (
        f"the data's scale is huge ({found}): standardise it (subtract the mean, "
        "divide by the standard deviation) before training; a lower --lr will not help"
    )


def _absolute_paths(config: TrainConfig) -> dict[str, str | None]:
    """``out`` and ``log_csv`` as absolute paths (the config keeps them as given)."""
    paths = {"out": config.out, "log_csv": config.log_csv}
    return {k: None if v is None else os.path.abspath(v) for k, v in paths.items()}


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


def _lower_hint(clip: float) -> str:
    """What to change after a loss that overflowed: with clipping off (0),
    there is no clip to lower, so set one."""
    if clip:
        return "lower the learning rate or the gradient clip (--lr, --clip)"
    return "lower the learning rate (--lr) or clip the gradients (--clip 1)"
