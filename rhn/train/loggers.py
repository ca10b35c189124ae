"""What a run reports while it trains: the :class:`Logger` hook and :class:`CSVLogger`.

:func:`rhn.train.train` takes ``loggers=[...]``; ``TrainConfig(log_csv=path)``
(``--log-csv`` on the command line) adds a :class:`CSVLogger` that a resumed
run keeps, since the config records it. A logger sees the same loop as the
rest of the run; it is not a second trainer.
"""

from __future__ import annotations

import csv
import os
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

    ``info`` holds ``columns`` (the keys of every row), ``start_step`` (0
    for a fresh run, the checkpoint's step for a resumed one), ``resumed``,
    ``overwrite`` (as given to :func:`~rhn.train.train`), ``segment`` (in
    ``start``: the number of earlier calls that trained this run, so 0 for a
    fresh run) and ``config`` (:meth:`TrainConfig.to_dict`).

    ``row`` holds ``segment``, ``step``, ``train_loss``, ``lr``, the
    held-out scores (``test_loss``, or ``valid_loss`` on a task with
    validation and test splits, and an accuracy for one label per sequence;
    ``None`` at steps without an evaluation) and ``seconds`` (the run's
    training time so far).
    """

    def check(self, info: dict[str, Any]) -> None:
        """Refuse the run before it starts (raise); by default accept it."""

    def start(self, info: dict[str, Any]) -> None:
        """Called once before this call's first step."""

    def log(self, row: dict[str, Any]) -> None:
        """Called after every step with the step's row."""
        raise NotImplementedError

    def close(self) -> None:
        """Called when the call of :func:`~rhn.train.train` ends."""


class CSVLogger(Logger):
    """One CSV row per step: the columns of :class:`Logger`'s ``row``.

    A fresh run starts the file with a header row; a resumed run appends to
    it and never removes a row. Rows that a crash left past the checkpoint
    (steps trained again after the resume) stay: their ``segment`` tells them
    from the rows of the resumed call, which has the larger number. A fresh
    run into a file that already holds rows is refused, unless
    :func:`~rhn.train.train` is called with ``overwrite=True``, which starts
    the file anew. Each row is flushed when written.

    Args:
        path: the CSV file (its directory is created when missing).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path).strip():
            raise TypeError(f"path must be a file path (str), got {path!r}")
        self.path = Path(os.fspath(path))
        self._file: Any = None
        self._writer: Any = None
        self._columns: list[str] = []

    def __repr__(self) -> str:
        return f"CSVLogger({str(self.path)!r})"

    def _header(self) -> list[str] | None:
        """The file's header row; ``None`` if the file is missing or empty."""
        try:
            with open(self.path, newline="", encoding="utf-8") as f:
                first = f.readline()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(
                f"log_csv: cannot read {str(self.path)!r} ({_io.one_line(err)[:120]})"
            ) from None
        return next(csv.reader([first])) if first.strip() else None

    def check(self, info: dict[str, Any]) -> None:
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"log_csv: {str(self.path)!r} exists and is not a file")
        header = self._header()
        if header is None:
            return
        if not info["resumed"] and not info["overwrite"]:
            raise ValueError(
                f"log_csv: {str(self.path)!r} already holds rows of another run; a "
                "fresh run starts a new file: give another path, delete it, or pass "
                "overwrite (--overwrite) to replace it"
            )
        if info["resumed"] and header != list(info["columns"]):
            raise ValueError(
                f"log_csv: {str(self.path)!r} has the columns {header}, this run "
                f"writes {list(info['columns'])}: give another path to append to"
            )

    def start(self, info: dict[str, Any]) -> None:
        self._columns = list(info["columns"])
        fresh = not info["resumed"] or self._header() is None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if fresh:
                self._file = open(self.path, "w", newline="", encoding="utf-8")
            else:
                with open(self.path, "rb") as f:  # a row cut short by a crash
                    f.seek(-1, os.SEEK_END)
                    ends_cut = f.read(1) != b"\n"
                self._file = open(self.path, "a", newline="", encoding="utf-8")
                if ends_cut:
                    self._file.write("\n")
        except OSError as err:
            raise ValueError(
                f"log_csv: cannot write {str(self.path)!r} ({_io.one_line(err)[:120]})"
            ) from None
        self._writer = csv.writer(self._file, lineterminator="\n")
        if fresh:
            self._writer.writerow(self._columns)
            self._file.flush()

    def log(self, row: dict[str, Any]) -> None:
        self._writer.writerow(
            ["" if row.get(c) is None else _text(row[c]) for c in self._columns]
        )
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _text(value: Any) -> str:
    """A cell: floats exactly (``repr``), anything else as ``str``."""
    return repr(value) if isinstance(value, float) else str(value)
