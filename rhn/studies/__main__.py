"""``python -m rhn.studies NAME --seeds 0-9 --out FILE``: run one study, write JSON.

NAME is ``spirals`` (chapter 5; ``spirals20``: its exercise at depth 20),
``race`` (chapter 9), ``memory`` (the chapter "When to use an RHN": its
learning-rate search runs from seeds 100 and 101 whatever ``--seeds`` says),
``foothold`` (that chapter's adding problem against recall of one marked
value), or ``rerun`` with
``--check CHECK``, one of the live reruns of :mod:`rhn.studies.reruns`. The
file gets the study's settings and runs, and the machine that made them
(:func:`rhn.studies.machine`). ``tools/portable.py record`` runs this command
under several arithmetic variants of the CPU and merges the files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import _io
from . import machine, parse_seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rhn.studies", description=__doc__)
    parser.add_argument(
        "study", choices=["spirals", "spirals20", "race", "memory", "foothold", "rerun"]
    )
    parser.add_argument("--check", help="with rerun: the check's name")
    parser.add_argument("--seeds", default="0-9", help="0-9 or 0,1,2")
    parser.add_argument("--out", required=True, help="JSON file to write (atomically)")
    parser.add_argument(
        "--models",
        help="with memory: only these models, comma-separated labels of "
        "rhn.studies.memory.MODELS (default: all)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out if it holds a study's record (anything else is "
        "never replaced)",
    )
    parser.add_argument(
        "--lrs",
        help="with memory: the Adam learning rates of its search, comma-"
        "separated (default: those of rhn.studies.memory.LRS)",
    )
    args = parser.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as e:
        parser.error(f"--seeds: {e}")
    out = Path(args.out)
    if not out.parent.is_dir():
        parser.error(f"--out: the folder {str(out.parent)!r} does not exist")
    try:  # a regular file in a directory that can be written, before the work
        _io.check_writable(out, "--out")
    except ValueError as e:
        parser.error(str(e))
    from ..train import records

    try:  # never a file of a run folder, existing or not (a run may be writing it)
        records.check_record_out(out, False, kind="study", name="--out")
    except ValueError as e:
        parser.error(str(e))
    if out.exists() or out.is_symlink():
        # hours of work must not land on a checkpoint, a run's record or a
        # sweep's: only a study's own record is replaced, and only when asked
        try:
            found = _io.read_json(out, name="--out")
        except (OSError, ValueError):
            found = None
        if not (
            isinstance(found, dict) and "settings" in found and "format" not in found
        ):
            parser.error(
                f"--out: {str(out)!r} exists and is not a study's record (a "
                "checkpoint, a run's or a sweep's record?); it is never "
                "replaced: give another --out"
            )
        if not args.overwrite:
            parser.error(
                f"--out: {str(out)!r} holds a study's record already; pass "
                "--overwrite to replace it, or give another --out"
            )
    if args.check and args.study != "rerun":
        parser.error(f"--check: only rerun takes it, got {args.study!r}")
    for option in ("models", "lrs"):
        if getattr(args, option) and args.study != "memory":
            parser.error(
                f"--{option}: only the memory study takes it, got {args.study!r}"
            )
    # the study owns its record while it runs, as a sweep does: a second study
    # (or sweep) into the same --out is refused, not silently written over
    try:
        lock = records.FolderLock(
            out.parent, path=records.file_lock_path(out), holder="study", guards=out
        ).acquire()
    except (ValueError, FileExistsError) as e:
        parser.error(str(e))
    try:
        return _run(args, seeds, out, argv, parser)
    finally:
        lock.release()


def _run(args: Any, seeds: list[int], out: Path, argv: Any, parser: Any) -> int:
    """The study of ``args`` once ``out`` is checked and locked."""
    if args.study == "rerun":
        from . import reruns

        try:
            curves, saved = reruns.run(args.check)
        except ValueError as e:
            parser.error(f"--check: {e}")
        record = {"settings": {"check": args.check}, "curves": curves, "saved": saved}
    elif args.study == "memory":
        from . import memory

        models = memory.MODELS
        if args.models:
            labels = [m.strip() for m in args.models.split(",")]
            unknown = [m for m in labels if m not in memory.MODELS]
            if unknown:
                parser.error(
                    f"--models: expected labels from {list(memory.MODELS)}, "
                    f"got {unknown}"
                )
            models = {m: memory.MODELS[m] for m in labels}
        lrs = memory.LRS
        if args.lrs:
            try:
                lrs = tuple(float(x) for x in args.lrs.split(","))
            except ValueError:
                parser.error(f"--lrs: expected numbers like 0.001,0.03, got {args.lrs}")
            if not all(0 < lr <= 1 for lr in lrs):
                parser.error(f"--lrs: every rate must be in (0, 1], got {args.lrs!r}")
        record = memory.run(seeds, models=models, lrs=lrs, progress=True)
        record["command"] = "python -m rhn.studies " + " ".join(
            sys.argv[1:] if argv is None else argv
        )
    elif args.study == "spirals20":
        from . import spirals

        record = spirals.run(seeds, settings=spirals.SETTINGS_20, depth=20)
    else:
        if args.study == "spirals":
            from . import spirals as study
        elif args.study == "foothold":
            from . import foothold as study
        else:
            from . import race as study
        record = study.run(seeds)
    record["machine"] = machine()
    _io.write_json(out, record, name="--out")  # whole or not at all
    return 0


if __name__ == "__main__":
    sys.exit(main())
