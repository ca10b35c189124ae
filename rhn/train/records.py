"""What a run leaves on disk: checkpoints, metrics, and the folder it owns.

A run's folder (``TrainConfig.out``) holds:

- ``checkpoint.pt``: everything a resumed run needs (``save_checkpoint``,
  :func:`rhn.train.load_checkpoint`);
- ``metrics.json``: the summary, the config, the history and the run's
  segments (one per call of :func:`rhn.train.train`);
- ``run.json``: the marker, the run's identity (a random id made when the
  run starts, kept by every resume in this folder; a branch, resumed into
  another folder, gets its own and names its ``parent``) and a hash of the
  settings that change its numbers;
- ``run.lock`` while a process trains into it: pid, host and start time, so
  that a second writer is refused with a message naming the first
  (``FolderLock``).

Every file is written whole or not at all (:mod:`rhn._io`).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import errno
import hashlib
import json
import os
import pickle
import socket
import stat
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from .. import _io
from ..tasks import TASKS
from .config import TrainConfig, unread_off

__all__ = [
    "CHECKPOINT_NAME",
    "METRICS_NAME",
    "MARKER_NAME",
    "LOCK_NAME",
    "RESULT_NEUTRAL",
    "load_checkpoint",
    "check_resume",
    "claim_folder",
    "FolderLock",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"
MARKER_NAME = "run.json"
LOCK_NAME = "run.lock"

# Fields a resumed run (or sweep) may change: they do not alter the numbers it
# computes. ``steps`` may grow too (checked apart: see check_resume).
# A step replayed from a CUDA graph runs the same kernels as an eager one.
RESULT_NEUTRAL = frozenset(
    {
        "out",
        "progress",
        "device",
        "checkpoint_every",
        "threads",
        "cuda_graph",
        "log_csv",
    }
)


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


class UnreadableCheckpoint(ValueError):
    """A file that :func:`load_checkpoint` cannot use as a checkpoint;
    ``what`` says what it is instead, in a few words."""

    def __init__(self, message: str, *, what: str) -> None:
        super().__init__(message)
        self.what = what


def _damage(path: Path, head: bytes, size: int, err: Exception) -> str:
    """What a file that ``torch.load`` refused is, in a few words, from its
    first bytes ``head`` (never the loader's own message: it may be long)."""
    if head.startswith(b"PK") and isinstance(err, pickle.UnpicklingError):
        return (  # whole, but with objects that run code when loaded
            "its torch archive holds objects other than tensors and numbers, "
            "which torch's weights-only loader refuses to load because loading "
            "them could run code; rhn.train writes no such objects"
        )
    if head.startswith(b"PK"):  # the zip archive torch.save writes
        return (
            f"its torch archive is cut short or damaged ({size} bytes: a copy or "
            "a write that did not finish)"
        )
    if head.startswith(b"\x80"):  # a pickle: an old torch file, or an object's
        return (
            f"a pickle that torch's weights-only loader refuses "
            f"({type(err).__name__}), not a checkpoint of rhn.train"
        )
    text = head.decode("utf-8", "ignore")  # a character cut at 64 bytes is let go
    if len(text.encode()) >= len(head) - 3 and all(
        c.isprintable() or c.isspace() for c in text
    ):
        words = " ".join(text.split())[:24]
        return f"a text file (it begins {words!r}), not a torch file"
    return f"not a torch file ({size} bytes that are neither a zip nor a pickle)"


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
    if not str(path).strip():  # Path("") is the current directory
        raise ValueError(
            f"{name} must be a checkpoint file or a run folder, got {str(path)!r}"
        )
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME  # a run directory
    expected = f"the {CHECKPOINT_NAME} that rhn.train writes into its out directory"
    if not path.is_file():
        left = stashes(path.parent)
        if left and not path.exists():
            raise FileNotFoundError(_stash_advice(name, path, left))
        if path.exists():  # /dev/null, a pipe, a socket
            raise ValueError(
                f"{name}: {str(path)!r} is not a regular file; expected {expected}"
            )
        raise FileNotFoundError(f"{name}: no checkpoint file at {str(path)!r}")
    size = path.stat().st_size
    if size == 0:
        raise UnreadableCheckpoint(
            f"{name}: {str(path)!r} is empty (0 bytes); expected {expected}",
            what="it is empty (0 bytes)",
        )
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
    if head[:1] in (b"{", b"["):  # metrics.json, a sweep's record, run.json
        raise UnreadableCheckpoint(
            f"{name}: {_io.short(path)!r} is a JSON record, not a checkpoint; "
            f"expected {expected}",
            what="it is a JSON record (metrics.json, run.json, a sweep's record)",
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated zips, text, pickles of other objects, ...
        what = _damage(path, head, size, err)
        raise UnreadableCheckpoint(
            f"{name}: {str(path)!r} is not a readable torch checkpoint: {what}; "
            f"expected {expected}",
            what=what,
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
        raise UnreadableCheckpoint(
            f"{name}: {str(path)!r} is not a checkpoint of rhn.train: it holds "
            f"{found}, without {missing}; expected {expected}",
            what=f"a torch file holding {found}, not a checkpoint of rhn.train",
        )
    return state


def filled_config(saved: dict[str, Any]) -> dict[str, Any]:
    """A saved config with the fields it lacks (written before they existed) at
    their defaults, which is how the code of that time behaved: the package's
    defaults, not the task's, which ``TrainConfig`` would give a field left
    out. Rebuild a recorded config from this, never from the record alone.
    A ``dropout`` or ``forget_bias`` that the run's model did not read (kept
    by records written before they were refused) is off, as the run trained
    (:func:`rhn.train.config.unread_off`)."""
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(TrainConfig)
        if f.default is not dataclasses.MISSING
    }
    return unread_off({**defaults, **saved})


def same_data_print(recorded: object, current: dict[str, Any]) -> object:
    """The fingerprint of ``current`` (a config's ``to_dict``) to hold against
    a ``recorded`` one: the hash of the 4-sequence sample where the record was
    made before the sample grew (its print does not start ``s256-``)."""
    legacy = current.get("task_fingerprint_4")
    if isinstance(recorded, str) and legacy and not recorded.startswith("s256-"):
        return legacy
    return current.get("task_fingerprint")


def config_changes(
    current: dict[str, Any],
    saved: dict[str, Any],
    *,
    allow: frozenset[str] = frozenset(),
) -> list[str]:
    """The fields whose values differ, ``"name: old -> new"``, neutral ones aside."""
    saved = filled_config(saved)
    current = json.loads(json.dumps(current))  # compare as the files store them
    changes = [
        f"{k}: {saved.get(k)!r} -> {current[k]!r}"
        for k in sorted(current)
        if k not in RESULT_NEUTRAL
        and k not in allow
        and not k.startswith("task_fingerprint")
        and saved.get(k) != current[k]
    ]
    # an own task's data: the same name on other data would mix two data sets
    # in one record. A built-in task has no fingerprint, so an own task named
    # like one differs from it by having one.
    old_data = saved.get("task_fingerprint")
    new_data = same_data_print(old_data, current)
    name = current.get("task")
    if old_data and new_data and old_data != new_data:
        changes.append(
            f"task_fingerprint: {old_data!r} -> {new_data!r} (task "
            f"{name!r} has other data than the run's: other data, or a "
            "generate that draws from torch's global or Python's random state "
            "instead of the seed or generator it is given)"
        )
    elif old_data and not new_data:
        changes.append(
            f"task: the run trained your own task named {saved.get('task')!r} "
            f"(data fingerprint {old_data}), not the built-in task {name!r}: "
            "give your task again (--task module:function, or the Task)"
        )
    elif new_data and not old_data and name in TASKS:
        # (a checkpoint of an own task written before fingerprints has a name
        # of its own, which is not a built-in one)
        changes.append(
            f"task: the run trained the built-in task {name!r}, not your own task "
            "of that name"
        )
    return changes


def check_resume(config: TrainConfig, state: dict[str, Any]) -> None:
    """Refuse to resume ``state`` under a config that would change its numbers.

    The whole config is compared (fields an old checkpoint lacks count at
    their defaults), except ``RESULT_NEUTRAL``; ``steps`` may change as
    long as it is not below the step the checkpoint reached (a larger value
    extends a finished run; the learning-rate schedule keeps its first length).
    """
    try:
        step = int(state["step"])
        if not isinstance(state["config"], dict):
            raise TypeError(f"its config is a {type(state['config']).__name__}")
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"resume: the checkpoint is damaged ({_io.one_line(err)[:120]}); resume "
            "from another checkpoint or start the run afresh"
        ) from None
    changed = config_changes(
        config.to_dict(), state["config"], allow=frozenset({"steps"})
    )
    if changed:
        task = config.task if not isinstance(config.task, str) else TASKS[config.task]
        named = [c.split(":")[0] for c in changed]
        theirs = [n for n in named if n in task.defaults]
        hint = (
            f"; TrainConfig gives the fields left out the task's defaults "
            f"({', '.join(theirs)} here): give the run's values (or leave "
            "them off the command line: python -m rhn train --resume takes "
            "them from the checkpoint)"
            if theirs
            else ""
        )
        raise ValueError(
            "resume: the checkpoint was trained with a different config ("
            + ", ".join(changed)
            + ")"
            + hint
        )
    if config.steps < step:
        raise ValueError(
            f"resume: steps must be at least {step}, the step the "
            f"checkpoint reached, got {config.steps}"
        )
    schedule = state.get("schedule_steps", state["config"].get("steps"))
    if (
        config.lr_schedule != "constant"
        and isinstance(schedule, int)
        and config.steps < schedule
    ):
        # the resumed run keeps its schedule: its record would name a shorter
        # run than the one it trained, and a rerun of that config differs
        raise ValueError(
            f"resume: steps {config.steps} is below the {schedule} steps of the "
            f"run's {config.lr_schedule} learning-rate schedule, which a resume "
            f"keeps; give steps >= {schedule}, or start a {config.steps}-step "
            "run afresh"
        )


def config_hash(config: dict[str, Any]) -> str:
    """A short hash of the settings that change a run's numbers."""
    kept = {
        k: v
        for k, v in filled_config(config).items()
        if k not in RESULT_NEUTRAL | {"steps"}
    }
    text = json.dumps(kept, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_files(out: Path) -> list[str]:
    """The names of a run's files (checkpoint, metrics) that ``out`` holds."""
    return [n for n in (CHECKPOINT_NAME, METRICS_NAME) if (out / n).exists()]


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` with ``torch.save``, atomically (:mod:`rhn._io`)."""
    _io.atomic_write(path, lambda f: torch.save(state, f), name="out")


def write_metrics(path: Path, record: dict[str, Any]) -> None:
    """Write the metrics record as indented strict JSON, atomically (a NaN or
    infinite number is written as null and named in ``"non_finite"``)."""
    _io.write_record(path, record, name="out", indent=1)


def new_run_id() -> str:
    """A fresh identity for a run (random: it never touches torch's generators)."""
    return uuid.uuid4().hex


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _boot_id() -> str | None:
    """This boot of the machine (Linux), so that a lock survives no reboot."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux), or ``None``.

    A pid is reused: pid 1 of a restarted container is another process than
    the pid 1 that wrote a lock. Its start time tells them apart.
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _holder_alive(info: dict[str, Any], host: str) -> bool:
    """Whether the process that wrote the lock ``info`` still runs.

    A lock of another host cannot be checked: it counts as alive. On this host
    the pid must exist, and, where the lock recorded them, the boot and the
    process's start time must be the same (a pid reused after a reboot or a
    container restart is another process).
    """
    pid = info.get("pid")
    if info.get("host") != host or not isinstance(pid, int) or isinstance(pid, bool):
        return True
    if info.get("boot_id") and _boot_id() and info["boot_id"] != _boot_id():
        return False
    if not _io._pid_alive(pid):
        return False
    start = info.get("process_start")
    return not (start and _process_start(pid) and start != _process_start(pid))


# the tokens of the locks this process has let go (FolderLock.info["token"])
_RELEASED_TOKENS: set[str] = set()


class FolderLock:
    """``out/run.lock`` while a run writes into ``out`` (or ``path`` itself for
    the lock of a single file, such as a sweep's record).

    Taken with an atomic hard link (or ``O_EXCL``), so that of two runs
    started at once exactly one gets it. The lock records the pid, the host,
    the boot and the process's start time. A lock whose process no longer
    runs on this host (the pid is gone, or is now another process: after a
    reboot, or in a restarted container where the trainer is pid 1 again) is
    stale and is taken over with a warning; the takeover holds ``flock`` on
    the lock's directory and removes the stale lock only if it is still the
    one read, so that of two processes taking over at once only one gets it.
    A lock of another host cannot be checked and is refused like a live one.
    """

    def __init__(
        self,
        out: Path,
        *,
        path: Path | None = None,
        name: str = "out",
        holder: str = "run",
        guards: Path | None = None,
    ) -> None:
        self.path = Path(out) / LOCK_NAME if path is None else Path(path)
        self.name, self.holder = name, holder
        self.guards = guards
        self.info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _now(),
            "boot_id": _boot_id(),
            "process_start": _process_start(os.getpid()),
            "token": uuid.uuid4().hex,  # this lock, of all locks of this process
        }
        self.held = False
        self.aside: Path | None = None  # the files of a run overwrite replaces
        self.marker: dict[str, Any] | None = None  # the run.json it wrote

    def anchor(self) -> None:
        """Make the lock's paths absolute, so that a change of the working
        directory while the run trains (a callback's ``os.chdir``) neither
        moves the run nor leaves its lock behind."""
        self.path = Path(os.path.abspath(self.path))
        if self.guards is not None:
            self.guards = Path(os.path.abspath(self.guards))
        if self.aside is not None:
            self.aside = Path(os.path.abspath(self.aside))

    def acquire(self) -> FolderLock:
        for _ in range(5):  # a stale lock removed, then another try
            if self._create():
                self.held = True
                return self
            other = self._read()
            if other is None:
                continue  # vanished between the two calls: try again
            if not _holder_alive(other, self.info["host"]) or self._let_go(other):
                if self._take_over(other):
                    self.held = True
                    return self
                continue
            if other.get("unreadable"):
                raise ValueError(
                    f"{self.name}: {_io.short(self._what())!r} may be in use by "
                    f"another {self.holder}: its lock {_io.short(self.path)!r} is "
                    "unreadable (not the JSON of a lock that rhn wrote, so its "
                    "process cannot be checked); if no process is using it, delete "
                    f"the lock (rm {_io.short(self.path)}) and try again"
                )
            pid, host, when = other.get("pid"), other.get("host"), other.get("started")
            if pid == os.getpid() and host == self.info["host"]:
                raise ValueError(
                    f"{self.name}: {_io.short(self._what())!r} is in use by another "
                    f"{self.holder} in this process (pid {pid}, since {when}): a "
                    "logger or run of this Python session holds it; give each its "
                    f"own {self.name}"
                )
            raise ValueError(
                f"{self.name}: {_io.short(self._what())!r} is in use by another "
                f"{self.holder} (pid {pid} on host {host}, started {when}); "
                f"wait for it to finish, choose another {self.name}, or delete "
                f"{_io.short(self.path)!r} if that process is gone"
            )
        raise ValueError(
            f"{self.name}: could not take the lock {_io.short(self.path)!r}"
        )

    def _let_go(self, other: dict[str, Any]) -> bool:
        """Whether ``other`` is a lock that this process took and has let go
        since: one that moved with its folder while its run trained (the run
        released it where the folder had been)."""
        return (
            other.get("pid") == os.getpid()
            and other.get("host") == self.info["host"]
            and other.get("token") in _RELEASED_TOKENS
        )

    def _what(self) -> Path:
        """What the lock guards: the file given as ``guards``, else the run
        folder of ``run.lock``."""
        if self.guards is not None:
            return self.guards
        if self.path.name == LOCK_NAME:
            return self.path.parent
        return self.path

    def _take_over(self, stale: dict[str, Any]) -> bool:
        """Replace the stale lock ``stale``; ``False`` if it changed meanwhile."""
        with _directory_locked(self.path.parent):
            if self._read() != stale:  # another process took it over first
                return False
            why = (
                "this process, which let it go (its folder moved while it trained)"
                if self._let_go(stale)
                else f"process {stale.get('pid')}, which no longer runs"
            )
            warnings.warn(
                f"{self.name}: removing the stale lock {_io.short(self.path)!r} of "
                f"{why}",
                stacklevel=4,
            )
            self.path.unlink(missing_ok=True)
            return self._create()

    def _create(self) -> bool:
        data = json.dumps(self.info).encode()
        # a short name of its own: the lock's name may be near the longest allowed
        tmp = self.path.with_name(f".rhn-lock.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        try:
            tmp.write_bytes(data)  # complete before it is seen under the lock's name
            try:
                os.link(tmp, self.path)
                return True
            except FileExistsError:
                return False
            except OSError as err:
                if err.errno == errno.ENAMETOOLONG:
                    raise
                # no hard links on this file system
                try:
                    fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                return True
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as err:
            raise _io.path_error(self.name, self.path, err) from err

    def _read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise ValueError(
                f"{self.name}: {_io.short(self.path)!r} is a folder where rhn keeps "
                f"the lock file of {_io.short(self._what())!r}; move it away or "
                f"choose another {self.name}"
            ) from None
        except OSError as err:
            raise _io.path_error(self.name, self.path, err) from err
        try:
            info = json.loads(text)
        except json.JSONDecodeError:
            info = None
        if not isinstance(info, dict):  # counts as held: refused, named so
            return {"pid": None, "host": "unknown", "unreadable": text[:200]}
        return info

    def release(self) -> None:
        if self.held:
            self.held = False
            _RELEASED_TOKENS.add(self.info["token"])
            if self._read() == self.info:  # never remove another run's lock
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def _directory_locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (none where there is no
    ``fcntl``: there a takeover is as good as the file system makes it)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


def file_lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock of a single file ``path`` (a CSV log, a sweep's record):
    ``.NAME.rhn-lock`` next to the file ``path`` resolves to (symlinks
    followed), so that two names of one file share one lock, and a name no
    file of the user's is likely to have (``NAME.lock`` may be a log too)."""
    real = Path(os.path.realpath(path))
    return real.with_name(f".{real.name}.rhn-lock")


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file: the same device and inode where
    both exist (a hard link, a symlink, another spelling), else the same real
    path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _continues(
    out: Path | None, state: dict[str, Any] | None, resume_path: Path | None
) -> bool:
    """Whether resuming ``state`` into ``out`` continues the run in its own
    folder (else it is a branch, a run of its own): ``out`` holds the
    checkpoint resumed, or names the checkpoint's run in its ``run.json``."""
    if out is None or state is None:
        return False
    if resume_path is not None and same_file(resume_path, out / CHECKPOINT_NAME):
        return True
    run_id = state.get("run_id")
    try:
        marker = _marker(out) or {}
    except (OSError, ValueError):  # unreadable: no run of this id
        marker = {}
    return bool(run_id) and marker.get("run_id") == run_id


def identity(
    out: Path | None,
    state: dict[str, Any] | None,
    resume_path: Path | None,
    log_csv: str | os.PathLike[str] | None = None,
) -> tuple[str, dict[str, Any] | None, bool]:
    """The run id of a call of :func:`rhn.train.train`, its ``parent`` and
    whether it is a branch.

    A fresh run gets a new id and no parent. A resume that continues the run
    in its own folder keeps the run's id and its parent, unless the folder is
    a copy of the run's (:func:`copied_from`): then it gets a new id and
    ``parent`` names the run copied, as a branch does. Any other resume is a
    branch: a new id, and ``parent`` names the run it came from (its id, the
    checkpoint and the step), so that its records and log rows are told apart
    from the parent's.
    """
    if state is None:
        return new_run_id(), None, False
    if _continues(out, state, resume_path):
        try:
            marker = (_marker(out) or {}) if out is not None else {}
        except (OSError, ValueError):
            marker = {}
        run_id = state.get("run_id") or marker.get("run_id") or new_run_id()
        original = copied_from(out, state)  # type: ignore[arg-type]
        if original is None:  # cp -r, then mv of one of the two
            original = copied_by_log(out, state, log_csv)  # type: ignore[arg-type]
        if original is not None:  # cp -r: the copy is a run of its own
            parent = {"run_id": run_id, "checkpoint": str(original / CHECKPOINT_NAME)}
            parent["step"] = int(state["step"])
            return new_run_id(), parent, False
        return run_id, state.get("parent"), False
    where = None if resume_path is None else os.path.abspath(resume_path)
    parent = {"run_id": state.get("run_id"), "checkpoint": where}
    parent["step"] = int(state["step"])
    return new_run_id(), parent, True


def foreign_records(out: Path, state: dict[str, Any]) -> dict[str, str]:
    """The records of ``out`` that name another run than the checkpoint
    ``state``'s, as ``{file name: the run they name}``: a ``metrics.json`` of
    another run, a ``run.json`` of a run that is neither the checkpoint's nor
    branched from it. Empty for a checkpoint older than run ids."""
    run_id = state.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        return {}  # a checkpoint older than run ids
    found: dict[str, str] = {}
    try:
        marker = _marker(out) or {}
    except (OSError, ValueError):
        marker = {}
    parent = marker.get("parent")
    parent_id = parent.get("run_id") if isinstance(parent, dict) else None
    if isinstance(marker.get("run_id"), str) and run_id not in (
        marker["run_id"],
        parent_id,
    ):
        found[MARKER_NAME] = marker["run_id"]
    try:
        record = _io.read_json(out / METRICS_NAME, name="out")
    except (OSError, ValueError):
        record = None
    run = record.get("run") if isinstance(record, dict) else None
    other = run.get("id") if isinstance(run, dict) else None
    if isinstance(other, str) and other != run_id:
        found[METRICS_NAME] = other
    return found


def check_not_foreign(
    out: Path | None, state: dict[str, Any] | None, resume_path: Path | None
) -> None:
    """Refuse to resume ``out``'s own ``checkpoint.pt`` when the folder's
    records belong to another run than the checkpoint (a checkpoint copied in
    from another run's folder): continuing would replace that run's
    ``metrics.json`` and ``run.json`` with a branch of the checkpoint's run.

    The folder's ``metrics.json`` must name the checkpoint's run, and its
    ``run.json`` that run or a run branched from it (a copy of a folder that
    was claimed but had not yet written its first checkpoint).
    """
    if out is None or state is None or resume_path is None:
        return
    if not same_file(resume_path, out / CHECKPOINT_NAME):
        return
    found = foreign_records(out, state)
    if not found:
        return
    others = sorted(set(found.values()))
    paths = state.get("paths")
    came = paths.get("out") if isinstance(paths, dict) else None
    where = f", written in {_io.short(came)!r}" if isinstance(came, str) else ""
    raise ValueError(
        f"resume: {_io.short(out / CHECKPOINT_NAME)!r} is a checkpoint of run "
        f"{state['run_id']}{where}, but {_io.short(out)!r} holds run "
        f"{' and '.join(others)} "
        f"({', '.join(sorted(found))}): resuming it there would replace that run's "
        f"records; move the checkpoint into a folder of its own and resume it "
        f"there (or --resume it with another --out for a branch)"
    )


def copied_from(out: Path, state: dict[str, Any]) -> Path | None:
    """The run folder ``out`` is a copy of (``cp -r r1 cpy``), or ``None``.

    The checkpoint records the absolute path of the folder it was written in
    (``paths``). When that is another folder than ``out`` and it still holds
    a run of the same id, ``out`` is a copy, and continuing it under the
    same id would mix two runs under one id (in a log they share, say). A
    folder moved (its recorded path gone, or holding another run) keeps its
    id.
    """
    paths = state.get("paths")
    recorded = paths.get("out") if isinstance(paths, dict) else None
    run_id = state.get("run_id")
    if not isinstance(recorded, str) or not run_id:
        return None
    original = Path(recorded)
    if not original.is_dir() or same_file(original, out):
        return None
    try:
        marker = _marker(original) or {}
    except (OSError, ValueError):
        return None
    return original if marker.get("run_id") == run_id else None


def copied_by_log(
    out: Path, state: dict[str, Any], log_csv: str | os.PathLike[str] | None
) -> Path | None:
    """The folder recorded in the checkpoint of ``out`` when ``out`` is a copy
    that :func:`copied_from` cannot see (``cp -r r1 r2; mv r1 r3``: neither
    folder is where the checkpoint was written), else ``None``.

    Such a folder is a copy when the log it appends to (``log_csv``) or the
    log its checkpoint was written with, outside the folder, holds rows of
    its run id after its checkpoint's step: another folder of the same run
    went on from the same point and logged them. It then resumes under an
    id of its own, never adding rows under the id of the other folder's
    run. (In the folder where the checkpoint was written,
    such rows are those of a later checkpoint replaced by an older one, and
    are moved aside instead.)"""
    paths = state.get("paths")
    recorded = paths.get("out") if isinstance(paths, dict) else None
    run_id = state.get("run_id")
    if not isinstance(recorded, str) or not run_id:
        return None
    if os.path.abspath(recorded) == os.path.abspath(out):
        return None  # not relocated
    from .loggers import logged_steps

    # the log given now, and the one the checkpoint was logging to
    logs = {log_csv, paths.get("log_csv")} - {None}  # type: ignore[union-attr]
    for log in sorted(map(os.path.abspath, logs)):
        if not os.path.relpath(log, os.path.abspath(out)).startswith(".."):
            continue  # a log inside the folder moved with it: it is its own
        held = logged_steps(log, run_id)
        if held and max(held) > int(state["step"]):
            return Path(recorded)
    return None


def _marker(out: Path) -> dict[str, Any] | None:
    try:
        marker = _io.read_json(out / MARKER_NAME, name="out")
    except FileNotFoundError:
        return None
    return marker if isinstance(marker, dict) else {}


def _progress(out: Path) -> int | None:
    """The step the run in ``out`` reached: its checkpoint's, else its record's."""
    path = out / CHECKPOINT_NAME
    if path.is_file():
        try:
            return int(load_checkpoint(path, name="out")["step"])
        except (ValueError, TypeError, KeyError):
            pass  # unreadable: the record may still say
    try:
        record = _io.read_json(out / METRICS_NAME, name="out")
        return int(record["steps"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def claim_folder(
    out: Path,
    config: TrainConfig,
    *,
    resume_state: dict[str, Any] | None,
    resume_path: Path | None,
    overwrite: bool,
    run_id: str,
    parent: dict[str, Any] | None = None,
    branch: bool = False,
) -> FolderLock:
    """Lock ``out`` and check that it holds no other run; return the lock.

    ``out`` may hold a run only when this call resumes that same run: the
    checkpoint resumed is the folder's own, or its run id is the folder's
    (``run.json``), and a copy is not behind the folder (a stale copy of the
    run's checkpoint would move the folder back and lose the steps since).
    Otherwise the call is refused, unless ``overwrite`` (a fresh run only),
    which removes the old run's files, once every file the new run writes is
    known to be writable. The marker ``run.json`` is written for the run now
    owning ``out``: ``run_id`` and ``parent`` from ``identity``
    (``branch``: whether it found this resume to be a branch). What an
    interrupted ``overwrite`` left is dealt with before, by
    ``recover_folder``, ahead of the loggers' checks.
    """
    lock = FolderLock(out).acquire()
    try:
        check_own_files(out)
        # every file the run will write, checked before anything is removed:
        # a directory named metrics.json must not cost the checkpoint
        for name in (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME):
            _check_run_file(out / name)
            _io.check_writable(out / name, "out")
        same = _continues(out, resume_state, resume_path)
        if resume_state is not None and same == branch:  # decided before the lock
            raise ValueError(
                f"out: {_io.short(out)!r} changed while this run started (another "
                "process wrote its run.json); run the command again"
            )
        # a marker alone is a claim that wrote nothing yet (a run that failed
        # before its first checkpoint): the folder is free
        found = run_files(out)
        own = resume_path is not None and same_file(resume_path, out / CHECKPOINT_NAME)
        if found:
            if same and not own:  # a copy of the run's checkpoint: not behind it
                reached = _progress(out)
                step = int(resume_state["step"])  # type: ignore[index]
                if reached is not None and step < reached:
                    raise ValueError(
                        f"resume: the checkpoint {_io.short(resume_path)!r} is at "
                        f"step {step}, behind the run in {_io.short(out)!r} (step "
                        f"{reached}); resuming it would lose steps {step + 1}-"
                        f"{reached}: pass --resume {_io.short(out)} to continue the "
                        "run, or another --out for a branch of it"
                    )
            if not same and (not overwrite or resume_state is not None):
                _refuse_other_run(out, found, resumed=resume_state is not None)
            if not same:  # overwrite: never leave a mix of two runs
                _check_replaceable(out)
                lock.aside = _set_aside(out, run_id)
        marker = {
            "run_id": run_id,
            "config_hash": config_hash(config.to_dict()),
            "task": config.to_dict()["task"],
            "model": config.model,
            "claimed": _now(),
            "by": lock.info,
        }
        if parent is not None:
            marker["parent"] = parent
        _io.write_json(out / MARKER_NAME, marker, name="out", indent=1)
        lock.marker = marker
    except BaseException:
        lock.release()
        raise
    return lock


def _refuse_other_run(out: Path, found: list[str], *, resumed: bool) -> None:
    """Refuse ``out``, which holds another run (its files ``found``)."""
    if CHECKPOINT_NAME in found:  # one that cannot be resumed is not offered
        damage = unusable_checkpoint(out / CHECKPOINT_NAME)
        if damage is not None:
            raise ValueError(
                f"out: {_io.short(out / CHECKPOINT_NAME)!r} is not a readable "
                f"checkpoint that rhn wrote: {damage}; no run can resume or "
                "replace it: "
                f"{_move_aside(out / CHECKPOINT_NAME)}"
            )
    _check_replaceable(out)  # a file of the user's: --overwrite would not help
    what = "another run than the checkpoint resumed" if resumed else "a run"
    how = (
        "delete it yourself"
        if resumed
        else "--overwrite (overwrite=True) to replace it"
    )
    go_on = (
        f"pass --resume {out} (in Python resume={str(out)!r}; the folder or "
        f"its {CHECKPOINT_NAME}) to continue it, {how}, "
        "or another out"
        if CHECKPOINT_NAME in found
        else f"it has no {CHECKPOINT_NAME} to resume: {how}, or give another out"
    )
    raise ValueError(
        f"out: {str(out)!r} already holds {what} ({', '.join(found)}); " + go_on
    )


def check_out_free(
    out: Path | None, state: dict[str, Any] | None, branch: bool
) -> None:
    """Refuse, before the loggers' checks, a resume into an ``out`` that holds
    another run (a backup checkpoint whose folder now holds a new run): the
    folder is the reason, not the log (``claim_folder`` checks it again under
    its lock)."""
    if out is None or state is None or not branch or not out.is_dir():
        return
    found = run_files(out)
    if found:
        _refuse_other_run(out, found, resumed=True)


def finished_here(out: Path | None, state: dict[str, Any]) -> dict[str, Any] | None:
    """The record in ``out`` of the run ``state`` checkpoints when that record
    is of the checkpoint's step (nothing is left to write for it), else ``None``."""
    if out is None:
        return None
    try:
        record = _io.read_json(out / METRICS_NAME, name="out")
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or "error" in record:
        return None
    run = record.get("run")
    run_id = run.get("id") if isinstance(run, dict) else None
    if not run_id or run_id != state.get("run_id"):
        return None
    if record.get("steps") != int(state["step"]):
        return None
    return record


def still_claimed(out: Path, lock: FolderLock | None) -> bool:
    """Whether ``out`` still holds the ``run.json`` that ``lock``'s claim
    wrote: ``False`` once the folder was moved or removed (or its run.json
    replaced) while the run trained."""
    if lock is None or lock.marker is None:
        return True  # not claimed by this process: nothing to compare
    try:
        marker = _marker(out)
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("run_id") == lock.marker["run_id"]


def taken_over(out: Path, lock: FolderLock | None) -> str | None:
    """Who owns ``out`` now, when another run took it over while the run of
    ``lock`` trained (its ``run.lock`` deleted, then a second run claimed
    the folder): the folder's ``run.json`` names another run or another
    claim (the ``token`` of the lock that wrote it), or its ``run.lock`` is
    another's. ``None`` while the folder is still this run's, or is gone
    (moved or removed: :func:`still_claimed` says so)."""
    if lock is None or lock.marker is None:
        return None
    try:
        marker = _marker(out)
    except (OSError, ValueError):  # unreadable: no claim to compare
        marker = None
    if isinstance(marker, dict) and marker:
        by = marker.get("by") if isinstance(marker.get("by"), dict) else {}
        token = by.get("token")
        if marker.get("run_id") != lock.marker["run_id"] or (
            token is not None and token != lock.info["token"]
        ):
            return (
                f"run {marker.get('run_id')} (pid {by.get('pid')} on host "
                f"{by.get('host')}) wrote its run.json"
            )
    other = lock._read()
    if (
        isinstance(other, dict)
        and not other.get("unreadable")
        and other.get("token")
        and other["token"] != lock.info["token"]
    ):
        return (
            f"pid {other.get('pid')} on host {other.get('host')} holds its {LOCK_NAME}"
        )
    return None


def orphan_name(run_id: str | None, kind: str = CHECKPOINT_NAME) -> str:
    """The name under which a run whose folder was taken over keeps its own
    file ``kind`` beside the other run's: ``checkpoint.orphan-<run id>.pt``."""
    stem, dot, ext = kind.rpartition(".")
    return f"{stem}.orphan-{run_id or 'unknown'}{dot}{ext}"


def reclaim(out: Path, lock: FolderLock) -> None:
    """Write the run's ``run.json`` into ``out`` again (after the folder was
    moved or removed): the folder holds a complete run, and a moved copy of
    it, whose checkpoint names this folder, resumes under a run id of its own
    (:func:`copied_from`)."""
    if lock.marker is not None:
        _io.write_json(out / MARKER_NAME, lock.marker, name="out", indent=1)


def _check_run_file(path: Path) -> None:
    """Refuse a run file's name (``checkpoint.pt``, ...) held by something
    that is not a regular file, a directory say: the run cannot write it, and
    ``overwrite`` never removes it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing (or unreadable: check_writable says why)
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"out: {_io.short(path)!r} is a {_io._kind(mode)}, where the run keeps "
            f"its {path.name}; rhn never replaces it, not even with --overwrite: "
            "move it away, or give another out"
        )


ASIDE_PREFIX = ".rhn-replaced-"

# What every metrics.json that train() writes holds.
_METRICS_KEYS = ("config", "history", "steps")


def _check_replaceable(out: Path) -> None:
    """Refuse ``overwrite`` of a folder whose ``checkpoint.pt`` or
    ``metrics.json`` rhn did not write (a file of the user's under that
    name): only a run's own files are ever replaced."""
    path = out / METRICS_NAME
    if path.exists():
        try:
            record = _io.read_json(path, name="out")
        except (OSError, ValueError):
            record = None
        if not isinstance(record, dict) or any(k not in record for k in _METRICS_KEYS):
            raise ValueError(
                f"out: {_io.short(path)!r} is not a metrics.json that rhn wrote "
                f"(no keys {list(_METRICS_KEYS)}); overwrite replaces only a run's "
                "own files: move the file away, or give another out"
            )
    path = out / CHECKPOINT_NAME
    if path.exists():
        what = unusable_checkpoint(path)
        if what is not None:
            raise ValueError(
                f"out: {_io.short(path)!r} is not a readable checkpoint that rhn "
                f"wrote: {what}; "
                "--overwrite (overwrite=True) replaces only a run's own files: "
                f"{_move_aside(path)}"
            )


def unusable_checkpoint(path: Path) -> str | None:
    """What ``path`` is when it is no checkpoint :func:`load_checkpoint` can
    read (in a few words), else ``None``."""
    try:
        load_checkpoint(path, name="out")
    except UnreadableCheckpoint as err:
        return err.what
    except OSError as err:
        return _io.one_line(err.strerror or type(err).__name__)
    return None


def _move_aside(path: Path) -> str:
    """What to do with a file named like a run's own that no run can use."""
    aside = path.with_name(path.name + ".damaged")
    return (
        f"move it aside (mv {_io.short(path)} {_io.short(aside)}) and run the "
        "command again, or give another out"
    )


def _set_aside(out: Path, run_id: str) -> Path:
    """Move the files of the run ``overwrite`` replaces into a hidden folder
    of ``out``: removed once the new run has written its first record
    (:func:`drop_aside`), put back if it fails before (:func:`restore_aside`)."""
    aside = out / f"{ASIDE_PREFIX}{run_id[:12]}"
    try:
        aside.mkdir()
        for name in (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME):
            if (out / name).exists():
                os.replace(out / name, aside / name)
    except OSError as err:
        raise _io.path_error("out", aside, err) from err
    return aside


def drop_aside(lock: FolderLock | None) -> None:
    """The new run wrote a record: delete the replaced run's files."""
    aside = getattr(lock, "aside", None)
    if aside is None:
        return
    lock.aside = None  # type: ignore[union-attr]
    for path in aside.iterdir():
        path.unlink(missing_ok=True)
    aside.rmdir()


def restore_aside(lock: FolderLock | None) -> bool:
    """The new run failed before writing a record: put the replaced run's
    files back (its claim, ``run.json``, goes); whether there were any."""
    aside = getattr(lock, "aside", None)
    if aside is None:
        return False
    lock.aside = None  # type: ignore[union-attr]
    out = aside.parent
    (out / MARKER_NAME).unlink(missing_ok=True)
    _put_back(aside, out)
    return True


# In a stash, beside the replaced run's files: the rows of the log that the
# new run emptied (LOG_ROWS) and where they came from (LOG_INFO).
LOG_ROWS, LOG_INFO = "log_csv.csv", "log_csv.json"


def stash_log(aside: Path, log: Path, data: bytes, run_id: str | None) -> None:
    """Keep the rows of ``log``, which the run ``run_id`` is about to empty
    (``overwrite``), in the stash ``aside`` of the run it replaces: deleted
    with the stash at the first checkpoint, put back with it before."""
    _io.atomic_write(aside / LOG_ROWS, lambda f: f.write(data), name="log_csv")
    info = {"path": os.path.abspath(log), "run_id": run_id}
    _io.write_json(aside / LOG_INFO, info, name="log_csv")  # written last


def _put_back(stash: Path, out: Path) -> None:
    """Move the replaced run's files from ``stash`` back into ``out``, and its
    log's rows back into its log."""
    if (stash / LOG_INFO).exists():
        _restore_log(stash)
    (stash / LOG_ROWS).unlink(missing_ok=True)
    for path in stash.iterdir():
        os.replace(path, out / path.name)
    stash.rmdir()


def _restore_log(stash: Path) -> None:
    """Write the log's saved rows back over the rows of the run that failed
    (or was killed) before its first checkpoint. A log that now holds rows of
    any other run is left alone: the saved rows go to a file beside it."""
    info = _io.read_json(stash / LOG_INFO, name="log_csv")
    log, failed = Path(info["path"]), info.get("run_id")
    saved = (stash / LOG_ROWS).read_bytes()
    try:
        with open(log, newline="", encoding="utf-8") as f:
            body = list(csv.reader(f))[1:]
    except FileNotFoundError:
        body = []
    except (OSError, UnicodeDecodeError, csv.Error):
        body = [["unreadable"]]
    if any(row and row[-1] != failed for row in body):
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        side = log.with_name(f"{log.name}.replaced-{stamp}.csv")
        _io.atomic_write(side, lambda f: f.write(saved), name="log_csv")
        print(
            f"log_csv: {_io.short(log)!r} holds rows of another run now; the rows "
            f"of the run put back are in {_io.short(side)!r}",
            file=sys.stderr,
        )
    else:
        _io.atomic_write(log, lambda f: f.write(saved), name="log_csv")
    (stash / LOG_INFO).unlink()


def recover_aside(out: Path, *, name: str = "out") -> None:
    """Deal with what an ``overwrite`` killed midway (SIGKILL, a power cut)
    left: the replaced run's files in ``out/.rhn-replaced-ID/``. Called with
    the folder locked. Where ``out`` holds no ``checkpoint.pt`` and no
    ``metrics.json`` (the new run wrote none), the old run is put back, and
    one line on stderr says so; else one line names the folder left."""
    left = stashes(out)
    if not left:
        return
    newer = [n for n in (CHECKPOINT_NAME, METRICS_NAME) if (out / n).exists()]
    if newer or len(left) > 1:
        if not (out / CHECKPOINT_NAME).exists() and any(
            (stash / CHECKPOINT_NAME).exists() for stash in left
        ):
            return  # the folder's checkpoint is in a stash: never "delete it"
        print(
            f"{name}: {_io.short(out)!r} still holds the files of a run an "
            f"interrupted --overwrite replaced, in {_io.short(left[0])!r}"
            + (f" (and {len(left) - 1} more)" if len(left) > 1 else "")
            + "; delete it once you no longer need that run",
            file=sys.stderr,
        )
        return
    stash = left[0]
    try:
        (out / MARKER_NAME).unlink(missing_ok=True)  # the killed run's claim
        _put_back(stash, out)
    except OSError as err:
        raise _io.path_error("out", stash, err) from err
    print(
        f"{name}: put back the run that an interrupted --overwrite had moved to "
        f"{_io.short(stash)!r} (the new run wrote no checkpoint)",
        file=sys.stderr,
    )


def _stash_advice(name: str, path: Path, left: list[Path]) -> str:
    """One line: the checkpoint at ``path`` is missing because an interrupted
    ``overwrite`` moved its run into a stash of ``left``; how to put it back."""
    stash, folder = left[0], path.parent
    files = [
        n for n in (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME) if (stash / n).exists()
    ]
    log = ""
    if (stash / LOG_INFO).exists():
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            where = _io.read_json(stash / LOG_INFO, name=name)["path"]
            log = f", and the log's rows in {LOG_ROWS} back over {_io.short(where)!r}"
    more = f" (and {len(left) - 1} more such folders)" if len(left) > 1 else ""
    return (
        f"{name}: no checkpoint file at {_io.short(path)!r}: an --overwrite killed "
        f"before its first checkpoint moved the run there to {_io.short(stash)!r}"
        f"{more}; to put it back, move {', '.join(files) or 'its files'} from "
        f"there into {_io.short(folder)!r}{log}, delete the empty folder, and "
        "try again"
    )


def stashes(folder: Path) -> list[Path]:
    """The stashes an interrupted ``overwrite`` left in ``folder``."""
    try:
        return sorted(p for p in folder.glob(f"{ASIDE_PREFIX}*") if p.is_dir())
    except OSError:
        return []


def recover_folder(folder: Path, *, name: str = "out") -> None:
    """:func:`recover_aside` before a run starts (before its log is read):
    with ``folder``'s lock, which a live run holds (refused then, with how
    to wait for it), so that a stash is never taken from a run still going."""
    if not folder.is_dir() or not stashes(folder):
        return
    lock = FolderLock(folder, name=name).acquire()
    try:
        recover_aside(folder, name=name)
    finally:
        lock.release()


def recover_resumed(resume: str | os.PathLike[str]) -> None:
    """``resume`` names a run folder (or its ``checkpoint.pt``) that holds no
    checkpoint, only the stash of the run an ``overwrite`` killed before its
    first checkpoint had moved aside: put that run back (the rule of
    :func:`recover_aside`: one stash, nothing newer), so that it resumes."""
    if not isinstance(resume, (str, os.PathLike)):
        return  # load_checkpoint names the type
    path = Path(resume)
    folder = path if path.is_dir() else path.parent
    if path.name != CHECKPOINT_NAME and not path.is_dir():
        return
    # more than one stash is not unambiguous: load_checkpoint names them
    if not (folder / CHECKPOINT_NAME).exists() and len(stashes(folder)) == 1:
        recover_folder(folder, name="resume")


def check_own_files(out: Path) -> None:
    """Refuse a run folder whose files are not its own: a ``checkpoint.pt``,
    ``metrics.json`` or ``run.json`` that is a symlink (a write would go
    through it into another run, which holds no lock of this folder's) or has
    other hard links (``cp -al``: the file is another folder's too)."""
    for name in (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME):
        path = out / name
        if path.is_symlink():
            raise ValueError(
                f"out: {_io.short(path)!r} is a symlink (to "
                f"{_io.short(os.readlink(path))!r}); a run folder's files must be "
                "its own: copy the file in its place (cp -L), or give another out"
            )
        try:
            info = os.stat(path)
        except OSError:
            continue
        links = info.st_nlink
        if stat.S_ISREG(info.st_mode) and links > 1:  # (a directory has two)
            raise ValueError(
                f"out: {_io.short(path)!r} has {links} hard links (the same file "
                "in another folder, a copy made with cp -al perhaps); writing it "
                "would change the other run too: copy the folder with cp -a, or "
                "give another out"
            )
    marker = out / MARKER_NAME
    # beside a run's checkpoint or record it is that run's, garbled perhaps
    # (rewritten by the run); alone it may be the user's own file
    alone = not any((out / n).exists() for n in (CHECKPOINT_NAME, METRICS_NAME))
    if alone and marker.is_file():
        try:
            found = _io.read_json(marker, name="out")
        except (OSError, ValueError):
            found = None
        if not (isinstance(found, dict) and "run_id" in found):
            raise ValueError(
                f"out: {_io.short(marker)!r} is not a run's marker (a run writes "
                "its run.json there, with its run_id), and it would be replaced: "
                "move the file, or give another out"
            )


def replaced_run(out: str | os.PathLike[str] | None) -> str | None:
    """The id of the run a fresh ``overwrite`` into ``out`` would replace (the
    id in its ``run.json``), or ``None``. A ``run.json`` alone counts: the
    run was stopped (SIGKILL, SIGHUP of an older version) before its first
    checkpoint, and its log may hold rows of it."""
    if out is None:
        return None
    out = Path(out)
    names = (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME)
    if not any((out / n).exists() for n in names):
        return None
    try:
        return (_marker(out) or {}).get("run_id")
    except (OSError, ValueError):
        return None


# What each writer of a single JSON record writes, told apart by its keys.
RECORD_KINDS = {
    "sweep": ("format", "call", "runs"),
    "study": ("format", "settings", "runs"),
    "bench": ("meta", "results"),
}
_RECORD_WHAT = {
    "sweep": "a sweep record (a JSON file that sweep wrote)",
    "study": "a study record (a JSON file that optstudy wrote)",
    "bench": "a benchmark record (a JSON file that bench wrote)",
}


def record_kind(path: str | os.PathLike[str]) -> str | None:
    """Which writer's record the JSON file ``path`` is (``"sweep"``,
    ``"study"``, ``"bench"``), or ``None`` for anything else."""
    try:
        record = _io.read_json(path, name="out")
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    for kind, keys in RECORD_KINDS.items():
        if all(k in record for k in keys):
            return kind
    return None


def _is_training_log(path: Path) -> bool:
    """Whether ``path`` starts with the header of a training log
    (:class:`rhn.train.CSVLogger`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith("segment,step,train_loss,")


def check_record_out(
    path: str | os.PathLike[str],
    overwrite: bool,
    *,
    kind: str,
    name: str = "out",
) -> None:
    """The one check of every writer of a single record (sweep, optstudy,
    bench) before it replaces ``path``: never a file of a run folder (under
    any name: a symlink is followed), and with ``overwrite`` only a record of
    its own ``kind``; a typo must not cost a file."""
    real = Path(os.path.realpath(path))
    run_files = (CHECKPOINT_NAME, METRICS_NAME, MARKER_NAME)
    if real.name in (*run_files, LOCK_NAME) and any(
        (real.parent / n).exists() for n in run_files
    ):
        raise ValueError(
            f"{name}: {_io.short(path)!r} is a file of the run folder "
            f"{_io.short(real.parent)!r} ({', '.join(run_files)}); a {kind} never "
            f"replaces a run's files: give its record another name, e.g. {kind}.json"
        )
    if not overwrite or not real.exists():
        return
    if not real.is_file():  # a pipe, a terminal: nothing to delete
        raise ValueError(
            f"{name}: {_io.short(path)!r} is not a regular file, it is a "
            f"{_io._kind(os.stat(real).st_mode)}; a {kind} record is written to "
            "a regular file only: give the path of one"
        )
    found = record_kind(real)
    if found != kind:
        what = "a file no writer of rhn made" if found is None else _RECORD_WHAT[found]
        if found is None and _is_training_log(real):
            what = "a training log (a CSV that train --log-csv wrote)"
        if os.path.islink(path):  # /dev/stdout, say: never advise deleting it
            what += f" (through the symlink: {_io.short(real)!r})"
            advice = "give another path"
        else:
            advice = "give another path, or delete it"
        raise ValueError(
            f"{name}: {_io.short(path)!r} is not {_RECORD_WHAT[kind]}, it is {what}; "
            f"overwrite replaces only a {kind} record: {advice}"
        )
