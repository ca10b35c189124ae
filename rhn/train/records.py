"""What a run leaves on disk: checkpoints, metrics, and the folder it owns.

A run's folder (``TrainConfig.out``) holds:

- ``checkpoint.pt``: everything a resumed run needs (``save_checkpoint``,
  :func:`rhn.train.load_checkpoint`);
- ``metrics.json``: the summary, the config, the history and the run's
  segments (one per call of :func:`rhn.train.train`);
- ``run.json``: the marker, the run's identity (a random id made when the
  run starts, kept by every resume, and a hash of the settings that change
  its numbers);
- ``run.lock`` while a process trains into it: pid, host and start time, so
  that a second writer is refused with a message naming the first
  (``FolderLock``).

Every file is written whole or not at all (:mod:`rhn._io`).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import socket
import uuid
import warnings
from pathlib import Path
from typing import Any

import torch

from .. import _io
from .config import TrainConfig

__all__ = [
    "CHECKPOINT_NAME",
    "METRICS_NAME",
    "MARKER_NAME",
    "LOCK_NAME",
    "RESULT_NEUTRAL",
    "load_checkpoint",
    "check_resume",
    "claim_folder",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"
MARKER_NAME = "run.json"
LOCK_NAME = "run.lock"

# Fields a resumed run (or sweep) may change: they do not alter the numbers it
# computes. ``steps`` may grow too (checked apart: see check_resume).
RESULT_NEUTRAL = frozenset({"out", "progress", "device", "checkpoint_every", "threads"})


# What every checkpoint written by train() holds.
_CHECKPOINT_KEYS = (
    "config",
    "model",
    "optimizer",
    "scheduler",
    "scaler",
    "batch_generator",
    "torch_rng",
    "history",
    "step",
    "seconds",
)


def load_checkpoint(path: str | Path, *, name: str = "path") -> dict[str, Any]:
    """Load a checkpoint of :func:`rhn.train.train` (``weights_only=True``: safe).

    Args:
        path: the ``checkpoint.pt`` file, or the run directory holding it.
        name: how error messages call ``path`` (``train`` says ``resume``).

    Raises:
        FileNotFoundError: if there is no such file.
        ValueError: if the file is empty, truncated, not a torch file, or a
            torch file that is not a checkpoint of :func:`rhn.train.train` (a bare
            ``state_dict``, say); the message says what was found.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(
            f"{name} must be a path (str or pathlib.Path), got {type(path).__name__}"
        )
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME  # a run directory
    expected = f"the {CHECKPOINT_NAME} that rhn.train writes into its out directory"
    if not path.is_file():
        raise FileNotFoundError(f"{name}: no checkpoint file at {str(path)!r}")
    if path.stat().st_size == 0:
        raise ValueError(
            f"{name}: {str(path)!r} is empty (0 bytes); expected {expected}"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated zips, JSON, pickles of other objects, ...
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise ValueError(
            f"{name}: {str(path)!r} is not a readable torch checkpoint "
            f"({type(err).__name__}: {reason[:120]}); expected {expected}"
        ) from err
    missing = (
        [k for k in _CHECKPOINT_KEYS if k not in state]
        if isinstance(state, dict)
        else list(_CHECKPOINT_KEYS)
    )
    if missing:
        found = (
            f"a dict with keys {sorted(map(str, state))[:6]}"
            if isinstance(state, dict)
            else f"a {type(state).__name__}"
        )
        raise ValueError(
            f"{name}: {str(path)!r} is not a checkpoint of rhn.train: it holds "
            f"{found}, without {missing}; expected {expected}"
        )
    return state


def _filled(saved: dict[str, Any]) -> dict[str, Any]:
    """A saved config with the fields it lacks (written before they existed) at
    their defaults, which is how the code of that time behaved."""
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(TrainConfig)
        if f.default is not dataclasses.MISSING
    }
    return {**defaults, **saved}


def config_changes(
    current: dict[str, Any],
    saved: dict[str, Any],
    *,
    allow: frozenset[str] = frozenset(),
) -> list[str]:
    """The fields whose values differ, ``"name: old -> new"``, neutral ones aside."""
    saved = _filled(saved)
    current = json.loads(json.dumps(current))  # compare as the files store them
    return [
        f"{k}: {saved.get(k)!r} -> {current[k]!r}"
        for k in sorted(current)
        if k not in RESULT_NEUTRAL and k not in allow and saved.get(k) != current[k]
    ]


def check_resume(config: TrainConfig, state: dict[str, Any]) -> None:
    """Refuse to resume ``state`` under a config that would change its numbers.

    The whole config is compared (fields an old checkpoint lacks count at
    their defaults), except ``RESULT_NEUTRAL``; ``steps`` may change as
    long as it is not below the step the checkpoint reached (a larger value
    extends a finished run; the learning-rate schedule keeps its first length).
    """
    changed = config_changes(
        config.to_dict(), state["config"], allow=frozenset({"steps"})
    )
    if changed:
        raise ValueError(
            "resume: the checkpoint was trained with a different config ("
            + ", ".join(changed)
            + ")"
        )
    if config.steps < int(state["step"]):
        raise ValueError(
            f"resume: steps must be at least {int(state['step'])}, the step the "
            f"checkpoint reached, got {config.steps}"
        )


def config_hash(config: dict[str, Any]) -> str:
    """A short hash of the settings that change a run's numbers."""
    kept = {
        k: v for k, v in _filled(config).items() if k not in RESULT_NEUTRAL | {"steps"}
    }
    text = json.dumps(kept, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` with ``torch.save``, atomically (:mod:`rhn._io`)."""
    _io.atomic_write(path, lambda f: torch.save(state, f), name="out")


def write_metrics(path: Path, record: dict[str, Any]) -> None:
    """Write the metrics record as indented JSON, atomically."""
    _io.write_text(path, json.dumps(record, indent=1), name="out")


def new_run_id() -> str:
    """A fresh identity for a run (random: it never touches torch's generators)."""
    return uuid.uuid4().hex


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class FolderLock:
    """``out/run.lock`` while a run writes into ``out``.

    Taken with an atomic hard link (or ``O_EXCL``), so that of two runs
    started at once exactly one gets it. A lock left by a process that no
    longer exists on this host is stale and is taken over with a warning; a
    lock of another host cannot be checked and is refused like a live one.
    """

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_NAME
        self.info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _now(),
        }
        self.held = False

    def acquire(self) -> FolderLock:
        for _ in range(3):  # a stale lock removed, then another try
            if self._create():
                self.held = True
                return self
            other = self._read()
            if other is None:
                continue  # vanished between the two calls: try again
            pid, host = other.get("pid"), other.get("host")
            if (
                host == self.info["host"]
                and isinstance(pid, int)
                and not _io._pid_alive(pid)
            ):
                warnings.warn(
                    f"out: removing the stale lock {str(self.path)!r} of process "
                    f"{pid}, which no longer runs",
                    stacklevel=3,
                )
                self.path.unlink(missing_ok=True)
                continue
            raise ValueError(
                f"out: {str(self.path.parent)!r} is in use by another run (pid {pid} "
                f"on host {host}, started {other.get('started')}); wait for it to "
                f"finish, choose another out, or delete {str(self.path)!r} if that "
                "process is gone"
            )
        raise ValueError(f"out: could not take the lock {str(self.path)!r}")

    def _create(self) -> bool:
        data = json.dumps(self.info).encode()
        tmp = self.path.with_name(f".{LOCK_NAME}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        tmp.write_bytes(data)  # complete before it can be seen under the lock's name
        try:
            os.link(tmp, self.path)
            return True
        except FileExistsError:
            return False
        except OSError:  # no hard links on this file system
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return True
        finally:
            tmp.unlink(missing_ok=True)

    def _read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None
        try:
            info = json.loads(text)
        except json.JSONDecodeError:
            info = None
        return info if isinstance(info, dict) else {"pid": None, "host": "unknown"}

    def release(self) -> None:
        if self.held:
            self.held = False
            if self._read() == self.info:  # never remove another run's lock
                self.path.unlink(missing_ok=True)


def _marker(out: Path) -> dict[str, Any] | None:
    try:
        marker = _io.read_json(out / MARKER_NAME, name="out")
    except FileNotFoundError:
        return None
    return marker if isinstance(marker, dict) else {}


def claim_folder(
    out: Path,
    config: TrainConfig,
    *,
    resume_state: dict[str, Any] | None,
    resume_path: Path | None,
    overwrite: bool,
) -> tuple[FolderLock, str]:
    """Lock ``out`` and check that it holds no other run; return the lock and run id.

    ``out`` may hold a run only when this call resumes that same run: the
    checkpoint's run id equals the folder's (or, for folders written before
    run ids, the checkpoint resumed is the folder's own). Otherwise the call
    is refused, unless ``overwrite``, which removes the old run's files. The
    marker ``run.json`` is written for the run now owning ``out``.
    """
    lock = FolderLock(out).acquire()
    try:
        # a marker alone is a claim that wrote nothing yet (a run that failed
        # before its first checkpoint): the folder is free
        found = [n for n in (CHECKPOINT_NAME, METRICS_NAME) if (out / n).exists()]
        run_id = None if resume_state is None else resume_state.get("run_id")
        if found:
            marker = _marker(out) or {}
            same = resume_state is not None and (
                (run_id is not None and marker.get("run_id") == run_id)
                or (
                    not marker.get("run_id")
                    and resume_path is not None
                    and resume_path.resolve() == (out / CHECKPOINT_NAME).resolve()
                )
            )
            if not same and not overwrite:
                what = (
                    "another run than the checkpoint resumed"
                    if resume_state is not None
                    else "a run"
                )
                raise ValueError(
                    f"out: {str(out)!r} already holds {what} ({', '.join(found)}); "
                    f"pass --resume {out / CHECKPOINT_NAME} (resume=) to continue "
                    "it, --overwrite (overwrite=True) to replace it, or another out"
                )
            if not same:  # overwrite: never leave a mix of two runs
                for name in (*found, MARKER_NAME):
                    (out / name).unlink(missing_ok=True)
        if run_id is None:
            run_id = new_run_id()
        _io.write_json(
            out / MARKER_NAME,
            {
                "run_id": run_id,
                "config_hash": config_hash(config.to_dict()),
                "task": config.to_dict()["task"],
                "model": config.model,
                "claimed": _now(),
                "by": lock.info,
            },
            name="out",
            indent=1,
        )
    except BaseException:
        lock.release()
        raise
    return lock, run_id
