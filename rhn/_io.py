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

import errno
import glob
import hashlib
import json
import math
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
    try:
        real = Path(os.path.realpath(path)) if path.is_symlink() else path
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise path_error(name, path, err) from err
        raise ValueError(
            f"{name}: cannot inspect {short(path)!r} ({err.strerror or err})"
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
    try:  # a real probe, named as atomic_write names its temporary file: the
        # permissions, read-only mounts, quotas and the longest name allowed
        fd, probe = tempfile.mkstemp(dir=directory, **_temporary_name(real))
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise ValueError(
                f"{name}: the file name {short(real.name)!r} is too long for this "
                f"file system (the temporary file written next to it needs "
                f"{len(real.name) + _TEMPORARY_EXTRA} characters, at most "
                f"{_name_max(directory)} are allowed); choose a shorter name"
            ) from err
        raise ValueError(
            f"{name} must be in a directory that can be written, got "
            f"{short(path)!r} (cannot create files in {short(directory)!r}: "
            f"{err.strerror or err})"
        ) from err
    return real


# What the temporary file's name adds to the target's: ".", ".<pid>.", eight
# random characters of mkstemp and ".tmp" (a pid has at most 7 digits on Linux)
_TEMPORARY_EXTRA = 1 + 9 + 8 + 4


def _temporary_name(real: Path) -> dict[str, str]:
    """The ``prefix`` and ``suffix`` of :func:`atomic_write`'s temporary file
    (the pid in it tells a later writer whether its owner still runs)."""
    return {"prefix": f".{real.name}.{os.getpid()}.", "suffix": ".tmp"}


def _name_max(directory: Path) -> int:
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def short(path: str | os.PathLike[str], limit: int = 120) -> str:
    """``path`` for a message: a very long one keeps its start and its end."""
    text = os.fspath(path)
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2 - 2]}...{text[-(limit // 2 - 1) :]} ({len(text)} chars)"


def path_error(name: str, path: str | os.PathLike[str], err: OSError) -> ValueError:
    """A one-line ``ValueError`` naming ``name`` for an ``OSError`` about ``path``
    (a path too long, a full disk, no permission)."""
    if err.errno == errno.ENAMETOOLONG:
        return ValueError(
            f"{name}: the path {short(path)!r} is too long for this system "
            f"(a name may have {_name_max(Path('.'))} characters, a path "
            f"{_path_max()}); choose a shorter one"
        )
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return ValueError(
            f"{name}: no space left to write {short(path)!r} ({err.strerror}); the "
            "files already there are unchanged: free some space and run again"
        )
    return ValueError(f"{name}: cannot write {short(path)!r} ({err.strerror or err})")


def _path_max() -> int:
    try:
        return int(os.pathconf("/", "PC_PATH_MAX"))
    except (OSError, ValueError, AttributeError):
        return 4096


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
    fd, tmp = tempfile.mkstemp(dir=real.parent, **_temporary_name(real))
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
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError) and err.errno in _FULL:
            raise path_error(name, path, err) from err
        if isinstance(err, RuntimeError) and _torch_write_failed(str(err)):
            # torch's zip writer says no more than this when the disk is full
            raise ValueError(
                f"{name}: could not write {short(path)!r} (torch: "
                f"{one_line(err)[:100]}): most likely the disk is full; the file "
                "already there is unchanged: free some space and run again"
            ) from err
        raise
    _fsync_directory(real.parent)
    return real


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _torch_write_failed(text: str) -> bool:
    """Whether torch's zip writer (``inline_container.cc``) says a write came
    short, as it does on a full disk (it swallows the ``OSError``): "file
    write failed" for a small file, "unexpected pos" when a larger one finds
    fewer bytes written than it wrote."""
    return "write failed" in text or (
        "inline_container" in text and "unexpected pos" in text
    )


def one_line(err: object) -> str:
    """An error's text as one line."""
    return "; ".join(p.strip() for p in str(err).splitlines() if p.strip())


def finite_json(obj: Any) -> tuple[Any, dict[str, str]]:
    """``obj`` with every NaN or infinite float replaced by ``None`` (strict JSON).

    Returns the cleaned copy and what was replaced, ``{"where": "inf"}``, with
    ``where`` the key path (``"history.test_loss[3]"``), for a record to keep as
    its reason.
    """
    notes: dict[str, str] = {}

    def clean(value: Any, where: str) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            notes[where or "value"] = repr(value)
            return None
        if isinstance(value, dict):
            return {
                k: clean(v, f"{where}.{k}" if where else str(k))
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [clean(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return value

    return clean(obj, ""), notes


def write_record(
    path: str | os.PathLike[str],
    record: dict[str, Any],
    *,
    name: str = "path",
    **dumps: Any,
) -> Path:
    """Write ``record`` as strict JSON: a NaN or infinite number becomes ``null``
    and the record's ``"non_finite"`` says where and what it was."""
    clean, notes = finite_json(record)
    if notes:
        clean["non_finite"] = {
            "why": "JSON has no NaN or infinity: these values are written as null",
            **notes,
        }
    return write_text(
        path, json.dumps(clean, allow_nan=False, **dumps) + "\n", name=name
    )


def fingerprint(*parts: Any) -> str:
    """A short hash of tensors, numbers and strings (data a run was trained on)."""
    digest = hashlib.sha256()
    for part in parts:
        if hasattr(part, "detach") and hasattr(part, "numpy"):  # a torch tensor
            t = part.detach().cpu().contiguous()
            digest.update(f"{t.dtype}{tuple(t.shape)}".encode())
            digest.update(t.view(-1).view(torch_uint8()).numpy().tobytes())
        else:
            digest.update(repr(part).encode())
        digest.update(b"|")
    return digest.hexdigest()[:16]


def torch_uint8() -> Any:
    import torch

    return torch.uint8


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
