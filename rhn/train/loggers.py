"""What a run reports while it trains: the :class:`Logger` hook and :class:`CSVLogger`.

:func:`rhn.train.train` takes ``loggers=[...]``; ``TrainConfig(log_csv=path)``
(``--log-csv`` on the command line) adds a :class:`CSVLogger` that a resumed
run keeps, since the config records it. A logger sees the same loop as the
rest of the run; it is not a second trainer.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import os
import stat
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import _io

__all__ = ["Logger", "CSVLogger"]


class Logger:
    """A hook :func:`rhn.train.train` calls as it trains. Override what you need.

    The calls, in order, for each call of :func:`~rhn.train.train`:

    - ``check(info)`` before any work, before the run's folder is claimed:
      raise (a ``ValueError`` of one line) to refuse the run.
    - ``start(info)`` once, before the first step of this call.
    - ``log(row)`` after every step.
    - ``close()`` when the call ends, however it ends.

    ``check`` runs once every set-up check of the run has passed (sizes,
    memory, the task's data, the checkpoint resumed) and before the run's
    folder is claimed, so a refusal there loses nothing.

    ``info`` holds ``columns`` (the keys of every row), ``start_step`` (0
    for a fresh run, the checkpoint's step for a resumed one), ``resumed``,
    ``overwrite`` (as given to :func:`~rhn.train.train`), ``segment`` (the
    number of earlier calls that trained this run, as its checkpoint
    records them, so 0 for a fresh run), ``run_id`` (the run's identity,
    kept by every resume in the run's own folder), ``parent`` (for a branch,
    a resume into another ``out``, which gets an id of its own: the run id,
    checkpoint and step it came from, else ``None``), ``parent_log_csv``
    (for a branch: the log the resumed run recorded, else ``None``),
    ``replaces_run`` (with ``overwrite``: the id of the run in ``out`` it
    replaces, else ``None``), ``replaced_stash`` (in ``start`` only, with
    ``overwrite``: the folder that keeps the replaced run's files until this
    run's first checkpoint, else ``None``) and ``config``
    (:meth:`TrainConfig.to_dict`).

    ``row`` holds ``segment``, ``step``, ``train_loss``, ``lr``, the
    held-out scores (``test_loss``, or ``valid_loss`` on a task with
    validation and test splits, and an accuracy for class labels, per
    sequence or per step; ``None`` at steps without an evaluation) and
    ``seconds`` (the run's training time so far).
    """

    def check(self, info: dict[str, Any]) -> None:
        """Refuse the run before it starts (raise); by default accept it."""

    def start(self, info: dict[str, Any]) -> None:
        """Called once before this call's first step."""

    def log(self, row: dict[str, Any]) -> None:
        """Called after every step with the step's row."""
        raise NotImplementedError(
            f"{type(self).__name__}: a Logger must define log(row), which the run "
            "calls at every step (check, start and close are optional)"
        )

    def close(self) -> None:
        """Called when the call of :func:`~rhn.train.train` ends."""


class CSVLogger(Logger):
    """One CSV row per step: the columns of :class:`Logger`'s ``row``, then ``run``.

    The last column, ``run``, is the run's identity (the id of its
    ``run.json``), so that the file says which run wrote each row. A fresh
    run starts the file with a header row; a resumed run appends to it. Rows
    of the run past the step of the checkpoint resumed (left by a kill after
    the last checkpoint, or by an older checkpoint put back), steps the
    resume trains again, are superseded: they move, whole, into a file of
    their own next to the log, ``LOG.superseded-TIME.csv``, and one line on
    stderr says so; no row is deleted. The call's ``segment`` is one more
    than the largest in the file (or the number of earlier calls the
    checkpoint records, if larger), so that a superseded row and a row of
    the resumed call never share a segment number.

    A resume also refuses a log that lacks the run's rows up to the last
    step its checkpoint records as logged there (a file cut short, restored
    from an older copy, or moved away), so that no gap is left silently, and
    a log changed by hand (see ``check_log_rows``: a row repeated, a cell
    that is no number, a line of another kind), so that no bad row is kept;
    so does ``overwrite``, which keeps the rows it replaces to put back.

    Refused before any work, with one line naming ``log_csv``: a file that is
    not a log of this kind (its first line is not this run's header), a
    resumed run's append to a log of another run (another ``run`` id), a
    branch (a resume into another ``out``) appending to its parent's log, a
    run's own files (``checkpoint.pt``, ``metrics.json``, ``run.json``,
    ``run.lock`` in ``out`` or any run folder), and a file another process
    is logging to, under any name (while the run writes it holds a lock,
    ``.NAME.rhn-lock`` next to the file, and a ``flock`` on the file itself,
    which its hard links share). A fresh run into a log that already holds
    rows is refused, unless :func:`~rhn.train.train` is called with
    ``overwrite=True``, which starts that log anew: only a log without other
    hard links and, when the run has an ``out``, only the log of the run
    that ``overwrite`` replaces there. The rows it replaces are kept with
    that run's files (in ``out/.rhn-replaced-ID/``) until the new run's
    first checkpoint, and written back if the new run fails before it (or
    at the next start in ``out`` after a kill); without an ``out`` there is
    no checkpoint to wait for, and the log starts anew at once. Each row is
    flushed when written.

    Args:
        path: the CSV file (its directory is created when missing).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path).strip():
            raise TypeError(f"path must be a file path (str), got {path!r}")
        self._given = os.fspath(path)
        # absolute: a callback that changes directory does not move the log
        self.path = Path(os.path.abspath(self._given))
        self._file: Any = None
        self._writer: Any = None
        self._columns: list[str] = []
        self._lock: Any = None
        self._fresh = True
        self._created = False
        self._segment = 0
        self._run: str | None = None
        self._superseded: list[list[str]] = []  # rows past the resumed step
        self._replacing = False  # overwrite: the file holds another run's rows
        self._mend = False  # its last row is whole but for its newline

    def __repr__(self) -> str:
        return f"CSVLogger({self._given!r})"

    def _where(self) -> str:
        return _io.short(self._given)

    def _rows(self) -> list[list[str]] | None:
        """The file's rows, header first; ``None`` if it is missing or empty."""
        try:
            with open(self.path, newline="", encoding="utf-8") as f:
                first = f.readline()
                if not first.strip():
                    return None
                self._first_line = first.rstrip("\r\n")  # for a message, as is
                header = next(csv.reader([first]))
                rest = f.read()
            self._mend = False
            if rest and _whole_last_row(rest, len(header), self._run):
                # only its newline is missing: the row is kept, the newline
                # written when this run appends
                rest, self._mend = rest + "\n", True
            elif rest and not rest.endswith("\n"):  # a row cut short (a full disk)
                cut = rest.rfind("\n") + 1
                warnings.warn(
                    f"log_csv: {self._where()!r} ends in a row cut short "
                    f"({_io.short(rest[cut:], 60)!r}, no newline); it is ignored "
                    "and removed when this run appends",
                    stacklevel=4,
                )
                rest = rest[:cut]
            return [header, *csv.reader(rest.splitlines(keepends=True))]
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, csv.Error) as err:
            raise ValueError(
                f"log_csv: cannot read {self._where()!r} as a training log "
                f"({_io.one_line(err)[:120]}); give another path"
            ) from None

    def check(self, info: dict[str, Any]) -> None:
        _refuse_run_files(self.path, info.get("config", {}).get("out"))
        parent = info.get("parent_log_csv")
        if parent is not None and _same_file(parent, self.path):
            raise ValueError(
                f"log_csv: {self._where()!r} is the log of the run this call "
                f"resumes into another out ({info['config'].get('out')!r}, a "
                "branch); a branch must not append to its parent's log: give it "
                "its own log_csv (--log-csv)"
            )
        _refuse_stream(self.path)
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"log_csv: {self._where()!r} exists and is not a file")
        try:  # a folder made costs nothing; a file that cannot be made, the run
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(
                f"log_csv: cannot make the folder of {self._where()!r} "
                f"({_io.one_line(err)[:120]})"
            ) from None
        _io.check_writable(self.path, "log_csv")
        from .records import FolderLock, file_lock_path  # records imports the config

        self._lock = FolderLock(
            self.path.parent,
            path=file_lock_path(self.path),
            name="log_csv",
            guards=self.path,
        ).acquire()
        try:
            existed = self.path.exists()
            # opened now (created if missing), emptied only in start: after
            # every check of the run has passed
            self._file = open(self.path, "a", newline="", encoding="utf-8")
            self._created = not existed
            if not _file_locked(self._file):  # the file under another name
                raise ValueError(
                    f"log_csv: {self._where()!r} is in use by another run under "
                    "another name (a hard link or a symlink to a log being "
                    "written); give this run its own log"
                )
            self._check_rows(info)
        except OSError as err:
            self.close()
            raise ValueError(
                f"log_csv: cannot write {self._where()!r} ({_io.one_line(err)[:120]})"
            ) from None
        except BaseException:
            self.close()
            raise

    def _check_rows(self, info: dict[str, Any]) -> None:
        columns = [*info["columns"], "run"]
        self._run = info.get("run_id")
        self._segment = int(info.get("segment", 0))
        rows = self._rows()
        self._fresh = rows is None
        if rows is None:
            return
        header, body = rows[0], [r for r in rows[1:] if r]
        legacy = header == columns[:-1]  # written before rows named their run
        if header != columns and not legacy:
            raise ValueError(
                f"log_csv: {self._where()!r} is not a training log of this run's "
                f"kind (its first line is {_io.short(self._first_line, 60)!r}, "
                f"the header would be {','.join(columns)!r}); it is never "
                "replaced or appended to: give another path"
            )
        if not info["resumed"]:
            if not body and not info["overwrite"]:  # a header alone: no rows lost
                self._fresh = True
                return
            if not info["overwrite"]:
                offer = (
                    ", or pass overwrite (--overwrite) to replace it"
                    if self._overwrite_would_take(header == columns, body, info)
                    else " (overwrite replaces only the log of the run it "
                    "replaces in out)"
                )
                raise ValueError(
                    f"log_csv: {self._where()!r} already holds rows of a run "
                    "(if that is the run in out, continue it with --resume, "
                    "resume=...); a fresh run starts a new file: give another "
                    f"path, delete it{offer}"
                )
            self._check_replace(header == columns, body, len(columns), info)
            self._fresh = True  # replaced in start: it is a log of this kind
            self._replacing = True
            return
        if legacy:
            raise ValueError(
                f"log_csv: {self._where()!r} was written before logs recorded their "
                "run, so an append cannot be checked to be this run's: give "
                "another path"
            )
        self._refuse_hard_links(
            "an append would write into each of them: give this run its own log"
        )
        check_log_rows(self.path, self._run)
        runs = {r[-1] for r in body if len(r) == len(columns)}
        others = sorted(runs - {self._run})
        if others:
            raise ValueError(
                f"log_csv: {self._where()!r} holds rows of another run ({others[0]}"
                f"), this run is {self._run}: give this run's own log to append to"
            )
        segments = [r[0] for r in body if len(r) == len(columns)]
        written = [int(s) for s in segments if s.isdigit()]
        if written:  # calls a crash cut before their checkpoint count too
            self._segment = max(self._segment, max(written) + 1)
        # rows of this run past the step resumed (a kill after the last
        # checkpoint, or an older checkpoint put back): the resume trains
        # those steps again, so they move out of the log in start
        at, start = columns.index("step"), int(info.get("start_step", 0))
        self._superseded = [
            r
            for r in body
            if len(r) == len(columns)
            and r[-1] == self._run
            and r[at].isdigit()
            and int(r[at]) > start
        ]
        self._fresh = False

    def _overwrite_would_take(
        self, named: bool, body: list[list[str]], info: dict[str, Any]
    ) -> bool:
        """Whether ``overwrite`` would replace this log: if its rows are all of
        the run it replaces in ``out`` (without an ``out``, no run is replaced,
        so a log with rows is never: it may be a resumable run's)."""
        out = info.get("config", {}).get("out")
        if out is None:
            return not body
        from .records import replaced_run

        width = len(info["columns"]) + 1
        runs = {r[-1] for r in body if named and len(r) == width}
        return named and len(runs) == 1 and runs == {replaced_run(out)}

    def _refuse_hard_links(self, consequence: str) -> None:
        """Refuse a log with other names (hard links): what this run does to
        it (``consequence``) would happen to each of them."""
        links = os.stat(self.path).st_nlink
        if links > 1:
            raise ValueError(
                f"log_csv: {self._where()!r} has {links} hard links (the same file "
                f"under other names, another run's log perhaps); {consequence}"
            )

    def _check_replace(
        self, named: bool, body: list[list[str]], width: int, info: dict[str, Any]
    ) -> None:
        """Refuse to empty a log that is not only this file (a hard link), or,
        with an ``out``, one whose rows are not of the run ``overwrite``
        replaces there."""
        self._refuse_hard_links("overwrite would empty each of them: give another path")
        if not body:
            return  # a header alone: nothing of any run is lost
        if info.get("config", {}).get("out") is None:
            # no folder, so no run that overwrite replaces: the rows may be a
            # run's that is resumed later, as on the command line
            raise ValueError(
                f"log_csv: {self._where()!r} holds rows of a run, and overwrite "
                "without out replaces no run (it replaces a log only with the run "
                "in out that wrote it); give another path, or delete it"
            )
        replaced = info.get("replaces_run")
        if named:  # the rows kept, to be put back if the new run fails
            check_log_rows(
                self.path,
                replaced,
                refusal="overwrite does not replace (and keep to put back) a "
                "log changed by hand",
            )
        runs = sorted({r[-1] for r in body if named and len(r) == width})
        if not named or runs != [replaced]:
            what = f"run {runs[0]}" if named and runs else "a run it does not name"
            raise ValueError(
                f"log_csv: {self._where()!r} holds rows of {what}, not of the run "
                f"overwrite replaces in out ({replaced or 'none'}); give another "
                "path, or delete it"
            )

    def start(self, info: dict[str, Any]) -> None:
        self._columns = list(info["columns"])
        try:
            if self._file is None:  # started without check: check now
                self.check(info)
            if self._fresh:
                stash = info.get("replaced_stash")
                if self._replacing and stash is not None:  # kept till the checkpoint
                    from .records import stash_log

                    stash_log(stash, self.path, self.path.read_bytes(), self._run)
                self._file.seek(0)
                self._file.truncate(0)
            elif self._superseded:
                self._supersede(int(info.get("start_step", 0)))
            else:  # a row cut short by a crash or a full disk: removed
                with open(self.path, "rb") as f:
                    data = f.read()
                if data and not data.endswith(b"\n"):
                    if self._mend:  # whole but for its newline
                        self._file.write("\n")
                        self._file.flush()
                    else:
                        self._file.truncate(data.rfind(b"\n") + 1)
        except OSError as err:
            raise ValueError(
                f"log_csv: cannot write {self._where()!r} ({_io.one_line(err)[:120]})"
            ) from None
        self._created = False
        self._writer = csv.writer(self._file, lineterminator="\n")
        if self._fresh:
            self._writer.writerow([*self._columns, "run"])
            self._file.flush()
        unlogged = info.get("unlogged_row")
        if unlogged and not self._fresh and info.get("resumed"):
            # the row of the step the run stopped at, which a failed write
            # (a full disk) left out: written now, so the log has no gap
            held = logged_steps(self.path, self._run) or set()
            if unlogged.get("step") not in held:
                self.log(unlogged, segment=unlogged.get("segment"))

    def _supersede(self, start: int) -> None:
        """Move this run's rows past step ``start`` into a file of their own
        next to the log (written whole first: nothing is lost), then rewrite
        the log without them (and without a row cut short)."""
        rows = self._rows() or []
        header, body = rows[0], [r for r in rows[1:] if r]
        moved = {id(r) for r in body if r in self._superseded}
        kept = [r for r in body if id(r) not in moved]
        gone = [r for r in body if id(r) in moved]
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        side = self.path.with_name(f"{self.path.name}.superseded-{stamp}.csv")
        n = 1
        while side.exists():
            n += 1
            side = self.path.with_name(f"{self.path.name}.superseded-{stamp}-{n}.csv")

        def write(f: Any) -> None:
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows([header, *gone])
            f.write(text.getvalue().encode("utf-8"))

        _io.atomic_write(side, write, name="log_csv")
        self._file.seek(0)
        self._file.truncate(0)
        csv.writer(self._file, lineterminator="\n").writerows([header, *kept])
        self._file.flush()
        at = header.index("step")
        steps = [int(r[at]) for r in gone]
        print(
            f"log_csv: moved {len(gone)} rows of this run past the checkpoint's "
            f"step {start} (steps {min(steps)}-{max(steps)}, trained again now) "
            f"from {self._where()!r} to {_io.short(side)!r}",
            file=sys.stderr,
        )
        self._superseded = []

    def log(self, row: dict[str, Any], segment: int | None = None) -> None:
        cells = [
            "" if row.get(c) is None else _text(row[c])
            for c in self._columns
            if c != "segment"
        ]
        segment = self._segment if segment is None else segment
        try:
            self._writer.writerow([str(segment), *cells, self._run or ""])
            self._file.flush()
        except OSError as err:
            raise ValueError(
                f"log_csv: cannot write {self._where()!r} ({err.strerror or err}): "
                f"the row of step {row.get('step')} is cut short, and a resume "
                "removes it and writes the row again: free some space and "
                "resume the run"
            ) from None

    def close(self) -> None:
        """Close the file and release its lock (also after a refused check: a
        file this logger made and never wrote is removed again). A file that
        cannot be closed (its last bytes meet a full disk) is a ``ValueError``
        of one line, after the lock is released."""
        failed: OSError | None = None
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as err:  # the descriptor is closed all the same
                failed = err
            if self._created:
                with contextlib.suppress(OSError):
                    if self.path.stat().st_size == 0:
                        self.path.unlink()
                self._created = False
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if failed is not None:
            raise ValueError(
                f"log_csv: cannot write {self._where()!r} "
                f"({failed.strerror or _io.one_line(failed)[:120]}) as it was "
                "closed: its last row may be cut short, and a resume removes it: "
                "free some space and resume the run"
            ) from None


# The files of a run folder (rhn.train.records); a log there would be one of
# them, or its lock would be the folder's (a log named "run").
_RUN_FILES = ("checkpoint.pt", "metrics.json", "run.json", "run.lock")


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    from .records import same_file

    return same_file(a, b)


def _file_locked(file: Any) -> bool:
    """Take an exclusive ``flock`` on the open ``file`` (its inode: every name
    of it, hard links too); ``False`` if another writer holds it. Released when
    the file is closed. Where there is no ``flock`` the path lock is all."""
    try:
        import fcntl
    except ImportError:  # Windows
        return True
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without flock
        return True
    return True


def _refuse_stream(path: Path) -> None:
    """Refuse a log that is a terminal or other device, or the file this
    process's stdout or stderr writes (``--log-csv /dev/stdout > out.txt``:
    the summary printed would overwrite the rows)."""
    try:
        mine = os.stat(path)
    except OSError:
        return  # no such file yet: a new file is no stream
    if stat.S_ISCHR(mine.st_mode):
        raise ValueError(
            f"log_csv: {_io.short(path)!r} is a character device (a terminal, "
            "/dev/null, ...); a log must be a regular file: give a file name, "
            "e.g. log.csv"
        )
    streams = [("stdout", 1), ("stderr", 2)]  # the process's own descriptors
    for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            streams.append((name, stream.fileno()))  # Python's, if a file
    for name, fd in streams:
        try:
            theirs = os.fstat(fd)
        except OSError:
            continue  # closed
        if (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino):
            raise ValueError(
                f"log_csv: {_io.short(path)!r} is the file this process's {name} "
                f"writes; what is printed there would overwrite the log: give the "
                "log a file of its own, e.g. log.csv"
            )


def _refuse_run_files(path: Path, out: str | None) -> None:
    """Refuse a log that would be (or lock) a file of a run folder."""
    names = {path.name, path.name + ".lock"}
    if not names & set(_RUN_FILES):
        return
    folder = path.parent
    in_out = out is not None and _same_file(folder, out)
    if in_out or any((folder / n).exists() for n in _RUN_FILES):
        raise ValueError(
            f"log_csv: {_io.short(path)!r} is a file of the run folder "
            f"{_io.short(folder)!r} ({', '.join(_RUN_FILES)}); give the log "
            "another name, e.g. log.csv"
        )


def _whole_last_row(text: str, width: int, run_id: str | None) -> bool:
    """Whether ``text`` ends in a row without its newline that is whole all
    the same: ``width`` cells, the last naming run ``run_id`` (a row cut
    short inside its run id, or before it, names no run)."""
    if not text or text.endswith("\n") or run_id is None:
        return False
    last = text[text.rfind("\n") + 1 :]
    try:
        cells = next(csv.reader([last]), [])
    except csv.Error:
        return False
    return len(cells) == width and cells[-1] == run_id


def logged_steps(path: str | os.PathLike[str], run_id: str | None) -> set[int] | None:
    """The steps of run ``run_id`` that the log ``path`` holds rows of: an
    empty set if it is missing or empty, ``None`` if it is no log with a
    ``run`` column (the logger's own check then says what is wrong)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            table = list(csv.reader(f))
    except FileNotFoundError:
        return set()
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if not table:
        return set()
    header = table[0]
    if "step" not in header or header[-1] != "run":
        return None
    at = header.index("step")
    return {
        int(row[at])
        for row in table[1:]
        if len(row) == len(header) and row[-1] == run_id and row[at].isdigit()
    }


def check_log_rows(
    path: str | os.PathLike[str],
    run_id: str | None,
    *,
    refusal: str = "a resume does not append to a log changed by hand",
) -> None:
    """Refuse (a ``ValueError`` of one line) a log whose rows were changed by
    hand: each row must have the header's number of cells, ``segment`` and
    ``step`` whole numbers, the other cells but ``run`` numbers (the held-out
    scores may be empty, as at steps without an evaluation), run ``run_id``'s
    steps must increase from row to row, and no row of another run may stand
    between two of its rows. Blank lines and a last row cut short (no
    newline, which the logger removes) are let be; a missing file, or one
    that is no log with a ``run`` column, is left to the logger's check."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        width = len(next(csv.reader(lines[:1]), []))
        if _whole_last_row(text, width, run_id):
            lines[-1] += "\n"  # whole but its newline: kept, as the logger does
        else:
            lines.pop()  # a row cut short: removed when the run appends
    reader = csv.reader(lines)
    try:  # a row's number: the file's line it ends on
        table = [(reader.line_num, row) for row in reader]
    except csv.Error:
        return
    if not table or "step" not in table[0][1] or table[0][1][-1] != "run":
        return
    header = table[0][1]
    whole = {"segment", "step"}
    may_be_empty = {
        c
        for c in header
        if c != "train_loss" and (c.endswith("_loss") or c.endswith("_accuracy"))
    }
    at = header.index("step")
    ours = [n for n, row in table[1:] if row and row[-1] == run_id]
    last: tuple[int, int] | None = None  # line, step of this run's row before

    def refuse(line: int, what: str) -> None:
        raise ValueError(
            f"log_csv: {_io.short(path)!r} line {line} {what}; {refusal}: "
            "restore the file, or start the log elsewhere with --log-csv (log_csv=)"
        )

    for n, row in table[1:]:
        if not row:
            continue
        if len(row) != len(header):
            refuse(
                n,
                f"has {len(row)} fields, the header {len(header)} "
                f"({_io.short(','.join(row), 40)!r})",
            )
        for column, cell in zip(header[:-1], row[:-1], strict=True):
            if cell == "" and column in may_be_empty:
                continue
            if column in whole:
                ok = cell.isdigit()
            else:
                try:
                    float(cell)
                    ok = True
                except ValueError:
                    ok = False
            if not ok:
                kind = "a whole number" if column in whole else "a number"
                refuse(n, f"has {column} {_io.short(cell, 30)!r}, not {kind}")
        if row[-1] != run_id:
            if ours and ours[0] < n < ours[-1]:
                refuse(
                    n,
                    f"names another run ({_io.short(row[-1], 40)}) among the rows "
                    f"of this run ({run_id})",
                )
            continue
        step = int(row[at])
        if last is not None and step <= last[1]:
            refuse(
                n,
                f"has step {step} after step {last[1]} on line {last[0]} (this "
                "run's steps must increase)",
            )
        last = (n, step)


def step_ranges(steps: Iterable[int], most: int = 4) -> str:
    """``1-5, 21-30``: sorted steps as ranges (the first ``most`` of them)."""
    spans: list[list[int]] = []
    for step in sorted(steps):
        if spans and step == spans[-1][1] + 1:
            spans[-1][1] = step
        else:
            spans.append([step, step])
    words = [f"{a}-{b}" if b > a else f"{a}" for a, b in spans[:most]]
    if len(spans) > most:
        words.append("...")
    return ", ".join(words) or "none"


def _text(value: Any) -> str:
    """A cell: floats exactly (``repr``), anything else as ``str``."""
    return repr(value) if isinstance(value, float) else str(value)
