"""Shared pieces of the command line (``python -m rhn <command>``).

Every command reports a mistake of the user the same way: one line on
stderr, ``python -m rhn <command>: error: ...``, and exit status 2, never a
traceback. Output paths are checked before any work starts, so that a typo
in ``--out`` costs seconds, not a training run.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from . import _io

USAGE_ERROR = 2  # the exit status of argparse and of every check below


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr, exit status 2.

    ``allow_abbrev`` is off: an abbreviated option (``--res`` for
    ``--resume``) would make the resume command printed on interrupt depend
    on how the user spelled it.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(USAGE_ERROR, f"{self.prog}: error: {one_line(message)}\n")

    def _parse_optional(self, arg_string: str) -> object:
        # "-inf", "-1e5" and "-nan" are values (argparse reads only "-1" and
        # "-1.5" so), not unknown options: the option's own check names them
        if arg_string.startswith("-") and _is_float(arg_string):
            if not self._has_negative_number_optionals:
                return None
        return super()._parse_optional(arg_string)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


FLOAT32_MAX = 3.4028234663852886e38
"""The largest float32; a float option beyond it is infinite in the model."""


def finite(text: str) -> float:
    """The ``type`` of a float option whose size the config checks itself
    (``--weight-decay``, whose bound is far below float32's): a finite
    number (argparse names the option: ``argument --weight-decay: ...``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def number(text: str) -> float:
    """The ``type`` of a float option: a finite number that float32 holds
    (argparse names the option: ``argument --lr: ...``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or abs(value) > FLOAT32_MAX:
        raise argparse.ArgumentTypeError(
            f"expected a finite number of at most {FLOAT32_MAX:.4g} in size (the "
            f"model computes in float32), got {text!r}"
        )
    return value


def one_line(message: object) -> str:
    """``message`` as a single line (newlines become ``"; "``)."""
    return "; ".join(part.strip() for part in str(message).splitlines() if part)


def fail(prog: str, message: object, status: int = USAGE_ERROR) -> int:
    """Print ``prog: error: message`` on stderr as one line; return ``status``."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    return status


def writable_dir(name: str, path: str | os.PathLike[str]) -> Path:
    """Create the directory ``path`` if needed and check that it can be written.

    Raises a ``ValueError`` naming ``name`` if ``path`` is a file, lies under a
    file, or cannot be written.
    """
    if isinstance(path, str) and not path.strip():
        raise ValueError(f"{name} must be a directory name, got {path!r}")
    path = Path(path)
    try:
        if path.is_symlink() and not path.exists():
            raise ValueError(
                f"{name} must be a directory, got {_io.short(path)!r}, a dangling "
                f"symlink (to {_io.short(os.readlink(path))!r}, which does not "
                f"exist); create its target or give another {name}"
            )
        if path.exists() and not path.is_dir():
            raise ValueError(f"{name} must be a directory, got the file {str(path)!r}")
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".rhn-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        if err.errno in (errno.ENAMETOOLONG, errno.ENOSPC, errno.EDQUOT):
            raise _io.path_error(name, path, err) from err
        reason = err.strerror or type(err).__name__
        raise ValueError(
            f"{name} must be a directory that can be written, got "
            f"{_io.short(path)!r} ({reason})"
        ) from err
    return path


def missing_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """The directories of ``path`` (itself included) that do not exist yet,
    outermost first: what :func:`writable_dir` would create, and what
    :func:`remove_made` removes again after a refusal."""
    missing: list[Path] = []
    current = Path(os.path.abspath(path))
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    return missing[::-1]


def remove_made(made: list[Path]) -> None:
    """Remove the directories of ``made`` (from :func:`missing_dirs`) that are
    still empty, innermost first: a refused command leaves no folder behind
    that it created, and never one holding anything."""
    for path in reversed(made):
        try:
            path.rmdir()  # only an empty directory
        except OSError:
            return


def writable_file(name: str, path: str | os.PathLike[str]) -> Path:
    """Check that the file ``path`` can be (over)written, without changing it.

    Raises a ``ValueError`` naming ``name`` if ``path`` is a directory, its
    directory does not exist, or it cannot be written.
    """
    if isinstance(path, str) and not path.strip():
        raise ValueError(f"{name} must be a file name, got {path!r}")
    path = Path(path)
    try:
        is_dir, parent_is_dir = path.is_dir(), path.parent.is_dir()
    except OSError as err:  # a path longer than the system allows
        raise _io.path_error(name, path, err) from err
    if is_dir:
        raise ValueError(f"{name} must be a file name, got the directory {str(path)!r}")
    if not parent_is_dir:
        raise ValueError(
            f"{name} must be in an existing directory, got {str(path)!r} "
            f"({str(path.parent)!r} does not exist)"
        )
    # a regular file (symlinks followed), in a directory where files can be made
    real = _io.check_writable(path, name)
    if real.exists():  # a read-only file is a wish not to replace it
        try:
            with open(real, "a"):  # "a": opens without truncating
                pass
        except OSError as err:
            reason = err.strerror or type(err).__name__
            raise ValueError(
                f"{name} must be a file that can be written, got {str(path)!r} "
                f"({reason})"
            ) from err
    return path
