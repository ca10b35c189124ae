"""Every file the package writes goes through here: whole or not at all.

:func:`atomic_write` fills a temporary file in the target's own directory,
flushes it to disk (``fsync``), renames it over the target (atomic on POSIX
and Windows) and flushes the directory, so that a reader, or a process killed
at any instant, sees the old file or the new one, never a part. Two things a
plain rename would get wrong are handled first: a symlink is written through
to its target (the link stays a link), and anything that is not a regular file
(``/dev/null``, a FIFO, a directory) is refused, so that a rename never
replaces a device node.

:func:`check_writable` asks the same questions before any work starts, about
the directory too: the temporary file is created there, so a file that can be
written in a read-only directory still cannot be replaced.
"""

from __future__ import annotations

import glob
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "check_writable", "write_json", "write_text", "read_json"]


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def target(path: str | os.PathLike[str], name: str = "path") -> Path:
    """The file a write to ``path`` must change: symlinks followed to the end.

    Raises a ``ValueError`` naming ``name`` if that is not a regular file.
    """
    path = Path(path)
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real
    except OSError as err:
        raise ValueError(
            f"{name}: cannot inspect {str(path)!r} ({err.strerror or err})"
        ) from err
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"{name} must be a regular file, got {str(path)!r}, a {_kind(mode)}; "
            "the package writes results only to regular files"
        )
    return real


def check_writable(path: str | os.PathLike[str], name: str = "path") -> Path:
    """Check, without changing anything, that :func:`atomic_write` can write ``path``.

    The directory must exist and allow creating files in it (the temporary
    file lives there); an existing target must be a regular file.

    Returns:
        The path that will be written (``path`` with symlinks resolved).
    """
    real = target(path, name)
    directory = real.parent
    if not directory.is_dir():
        raise ValueError(
            f"{name} must be in an existing directory, got {str(path)!r} "
            f"({str(directory)!r} is not a directory)"
        )
    try:  # a real probe: permissions, read-only mounts, quotas, root or not
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".rhn-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ValueError(
            f"{name} must be in a directory that can be written, got {str(path)!r} "
            f"(cannot create files in {str(directory)!r}: {err.strerror or err})"
        ) from err
    return real


def _fdopen(fd: int) -> IO[bytes]:
    """Open the temporary file's descriptor (the one place files are opened)."""
    return os.fdopen(fd, "wb")


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; not possible (nor needed) on Windows."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a directory: best effort
        pass
    finally:
        os.close(fd)


def _remove_stale_temporaries(real: Path) -> None:
    """Delete temporary files of ``real`` left by processes that were killed."""
    head = f".{real.name}."
    for leftover in real.parent.glob(f"{glob.escape(head)}*.tmp"):
        pid = leftover.name[len(head) :].split(".", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            try:
                leftover.unlink()
            except OSError:
                pass


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    return True


def atomic_write(
    path: str | os.PathLike[str],
    fill: Callable[[IO[bytes]], None],
    *,
    name: str = "path",
) -> Path:
    """Write a file in one step: ``fill(f)`` fills a temporary file, then a rename.

    Args:
        path: the file to write; a symlink is written through to its target.
        fill: called with a binary file open for writing.
        name: how error messages call ``path`` (an option or argument name).

    Returns:
        The file written (``path`` with symlinks resolved).

    Raises:
        ValueError: if ``path`` is not a regular file (a device, a directory)
            or its directory cannot be written. The target is untouched
            whenever anything fails, including ``fill``.
    """
    real = check_writable(path, name)
    _remove_stale_temporaries(real)
    # the pid in the name tells a later writer whether its owner still runs
    prefix = f".{real.name}.{os.getpid()}."
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=prefix, suffix=".tmp")
    try:
        with _fdopen(fd) as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        try:  # keep the old file's permissions; a new one gets the usual ones
            mode = stat.S_IMODE(os.stat(real).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(real.parent)
    return real


def write_text(path: str | os.PathLike[str], text: str, *, name: str = "path") -> Path:
    """:func:`atomic_write` of ``text`` in UTF-8."""
    data = text.encode("utf-8")
    return atomic_write(path, lambda f: f.write(data), name=name)


def write_json(
    path: str | os.PathLike[str], obj: Any, *, name: str = "path", **dumps: Any
) -> Path:
    """:func:`atomic_write` of ``json.dumps(obj, **dumps)`` and a newline."""
    return write_text(path, json.dumps(obj, **dumps) + "\n", name=name)


def read_json(path: str | os.PathLike[str], *, name: str = "path") -> Any:
    """Read a JSON file; any failure is a ``ValueError`` naming the file.

    A file left with merge-conflict markers (``<<<<<<<``) says so.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: no file at {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{name}: cannot read {str(path)!r} ({err})") from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        hint = ""
        if any(line.startswith(("<<<<<<<", ">>>>>>>")) for line in text.splitlines()):
            hint = "; it holds merge-conflict markers (<<<<<<<): resolve the merge"
        elif not text.strip():
            hint = "; it is empty"
        raise ValueError(
            f"{name}: {str(path)!r} is not valid JSON (line {err.lineno}, column "
            f"{err.colno}: {err.msg}){hint}"
        ) from err
