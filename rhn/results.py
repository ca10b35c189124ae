"""The committed records the chapters read, shipped inside the package.

Training sweeps (``python -m rhn sweep``), optimisation studies
(``python -m rhn optstudy``) and speed benchmarks (``python -m rhn bench``)
take minutes to hours, longer than a page may take to build, so the book
commits their JSON records and each chapter reads them back. They live in
``rhn/_data/results/`` as package data: a chapter opened alone (in Colab, from
the rocket button, offline) finds them in the installed ``rhn``, and the
numbers it shows are those of the package version that is installed.

A record is named by its file name, e.g. ``"adding_models.json"``::

    >>> import rhn.results
    >>> "optstudy.json" in rhn.results.names()
    True
    >>> rhn.results.load("optstudy.json")["complete"]
    True
    >>> rhn.results.names("results-cpu-*.json")
    ['results-cpu-amd-epyc-2threads.json', 'results-cpu-amd-epyc.json']

To add or refresh one, write it into the folder, e.g.
``python -m rhn sweep ... --out rhn/_data/results/my_sweep.json``.
"""

from __future__ import annotations

import fnmatch
from importlib import resources
from pathlib import Path
from typing import Any

from . import _io

__all__ = ["folder", "load", "names", "path"]


def folder() -> Path:
    """The folder of the shipped records, ``rhn/_data/results`` in the package."""
    return Path(str(resources.files("rhn") / "_data" / "results"))


def names(pattern: str = "*.json") -> list[str]:
    """The file names of the shipped records matching ``pattern``, sorted.

    Args:
        pattern: a shell-style pattern (``fnmatch``) on the file name.
            Default: ``"*.json"``, every record.
    """
    found = (p.name for p in folder().iterdir() if p.is_file())
    return sorted(n for n in found if fnmatch.fnmatchcase(n, pattern))


def path(name: str) -> Path:
    """The path of the shipped record ``name`` (a file name, e.g. ``"optstudy.json"``).

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is a path rather than a file name.
        FileNotFoundError: no record of that name is shipped (the message lists
            those that are).
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a record's file name (str), got {name!r}")
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(
            f"name: expected a record's file name such as 'optstudy.json', "
            f"not a path: {name!r}"
        )
    file = folder() / name
    if not file.is_file():
        raise FileNotFoundError(
            f"no record {name!r} in the installed rhn ({folder()}); "
            f"shipped records: {', '.join(names()) or 'none'}"
        )
    return file


def load(name: str) -> dict[str, Any]:
    """The shipped record ``name``, parsed from JSON.

    Args:
        name: the record's file name, e.g. ``"adding_models.json"``
            (see :func:`names`).

    Returns:
        The record, a dict.

    Raises:
        FileNotFoundError: no such record (see :func:`path`).
        ValueError: the file is not a JSON object (e.g. cut short); the message
            names the file.
    """
    file = path(name)
    # a ValueError naming the file; it says so if merge-conflict markers are left
    record = _io.read_json(file, name=f"the record {name!r}")
    if not isinstance(record, dict):
        raise ValueError(
            f"the record {name!r} ({file}) holds a {type(record).__name__}, "
            "expected a JSON object"
        )
    return record
