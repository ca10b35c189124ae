"""Command line: ``python -m rhn <command> ...``.

Commands:
    train   train a model on a toy task (:mod:`rhn.train`)
    sweep   train a grid of settings over several seeds (:mod:`rhn.experiments`)
    bench   time the recurrent loops (:mod:`rhn.bench`)
    optstudy the RHN against the gate-free DT-RNN over depths (:mod:`rhn.optstudy`)

``python -m rhn <command> --help`` documents each command's options.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import math
import os
import shlex
import signal
import sys
import typing
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from . import _cli, _io

COMMANDS = {
    "train": "train a model on a task; writes DIR/metrics.json and a checkpoint",
    "sweep": "train every combination of a grid of settings and seeds; writes a JSON",
    "bench": "time the recurrent loops of the package against torch.nn",
    "optstudy": "the RHN against the gate-free DT-RNN over depths; writes a JSON",
    "data": "rebuild the shipped chorale piano rolls from music21 (data chorales)",
}

# Where each command's entry point lives, as "module:function"; imported only
# when the command runs. A new command adds a line here and one to COMMANDS.
HANDLERS = {
    "train": "rhn.__main__:train_main",
    "sweep": "rhn.__main__:sweep_main",
    "bench": "rhn.bench:main",
    "optstudy": "rhn.optstudy:main",
    "data": "rhn.chorales:data_main",
}


def _main_parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  {name:<10}{text}" for name, text in COMMANDS.items())
    return _cli.Parser(
        prog="python -m rhn",
        description="Recurrent Highway Networks: command-line tools.",
        usage=f"python -m rhn {{{','.join(COMMANDS)}}} ...",
        epilog=f"commands:\n{commands}\n\n"
        "Run 'python -m rhn COMMAND --help' for the options of a command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def train_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m rhn train``: one option per config field."""
    from .tasks import TASKS
    from .train import TrainConfig

    config_defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    overrides = "\n".join(
        f"  {name}: "
        + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in task.defaults.items())
        for name, task in TASKS.items()
    )
    p = _cli.Parser(
        prog="python -m rhn train",
        description="Train a recurrent model on a seeded toy task or on the Bach "
        "chorales (a fixed data set: held-out means its validation split during "
        "training, its test split at the end) and write "
        "DIR/metrics.json (final held-out loss, baseline, history) and "
        "DIR/checkpoint.pt. Options left out take the task's defaults (listed "
        "below; chosen so that --model rhn solves the task), then the defaults "
        "shown with each option.",
        epilog=f"task defaults (override the option defaults):\n{overrides}\n\n"
        "example:\n  python -m rhn train --task adding --seq-len 100 --model rhn "
        "--depth 3 --seed 0 --device auto --out runs/adding",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS,  # absent options fall back to defaults
    )

    def option(flag: str, text: str, **kwargs: object) -> None:
        """Add ``flag``, its help ending with the TrainConfig default."""
        field = flag.removeprefix("--").replace("-", "_")
        p.add_argument(
            flag, help=f"{text} (default: {config_defaults[field]})", **kwargs
        )

    # Names are case-insensitive, as in the Python API: lowered before checking.
    p.add_argument(
        "--task",
        type=_task_arg,
        metavar="TASK",
        help=f"the task: one of {', '.join(sorted(TASKS))}, or your own as "
        "module:function: imports the module (from the current directory or the "
        "installed packages, running its top-level code) and calls the named "
        "function, which must be a Python function taking no arguments and "
        "returning an rhn.tasks.Task (see rhn.owntasks) (default: adding)",
    )
    option(
        "--seq-len",
        "sequence length T of the task (not for the chorales, which train on "
        "whole chorales)",
        type=int,
        metavar="T",
    )
    option(
        "--model",
        "recurrent core",
        type=str.lower,
        choices=["rhn", "lstm", "gru", "rnn", "dtrnn"],
    )
    option(
        "--depth",
        "recurrence depth D of rhn and dtrnn; refused with the other models",
        type=int,
        metavar="D",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--hidden-size",
        type=int,
        metavar="H",
        help=f"hidden size H (default: {config_defaults['hidden_size']})",
    )
    size.add_argument(
        "--num-params",
        type=int,
        metavar="P",
        help="instead of --hidden-size: the H whose recurrent core "
        "has about P parameters, to compare models at equal size",
    )
    option("--num-layers", "stacked recurrent layers N", type=int, metavar="N")
    option(
        "--transform-bias",
        "initial RHN transform-gate bias (negative: the "
        "cell starts by carrying its state); refused with the other models",
        type=_cli.number,
        metavar="B",
    )
    option(
        "--forget-bias",
        "initial LSTM forget-gate bias (1 is the usual fair choice); "
        "left out: torch's initialisation; refused with the other models, "
        "which have no forget gate",
        type=_cli.number,
        metavar="B",
    )
    option("--steps", "optimiser steps, each on a fresh batch", type=int, metavar="S")
    option("--batch-size", "sequences per step", type=int, metavar="B")
    option("--lr", "Adam learning rate", type=_cli.number)
    option(
        "--lr-schedule",
        "learning-rate schedule; cosine decays to lr/10",
        type=str.lower,
        choices=["constant", "cosine"],
    )
    option("--weight-decay", "Adam weight decay", type=_cli.finite, metavar="W")
    option("--clip", "max global gradient norm, 0 = no clipping", type=_cli.number)
    option("--eval-every", "held-out evaluation every K steps", type=int, metavar="K")
    option(
        "--eval-samples",
        "size of the held-out set (chorales: ignored, whole splits)",
        type=int,
        metavar="M",
    )
    option(
        "--stop-loss",
        "stop early once the held-out loss is below L",
        type=_cli.number,
        metavar="L",
    )
    option(
        "--patience",
        "stop after P evaluations without a better held-out loss and keep the "
        "best weights; 0 = off",
        type=int,
        metavar="P",
    )
    option(
        "--dropout",
        "RHN variational dropout rate on input, state and output; a "
        "non-zero rate is refused with the other models, which do not read it "
        "(a task's default rate is turned off for them)",
        type=_cli.number,
        metavar="P",
    )
    option(
        "--seed",
        "seed of the initial weights, the batches and the held-out set",
        type=int,
    )
    option(
        "--device",
        "auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps",
        metavar="DEV",
    )
    amp = p.add_mutually_exclusive_group()
    amp.add_argument(
        "--amp",
        dest="amp",
        action="store_true",
        help="mixed precision on the CPU too (bfloat16 autocast; by default "
        "it is used on CUDA only)",
    )
    amp.add_argument(
        "--no-amp",
        dest="amp",
        action="store_false",
        help="no mixed precision, not even on CUDA",
    )
    option(
        "--threads",
        "torch CPU threads; small recurrent models are fastest on one",
        type=int,
        metavar="N",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="directory for metrics.json and checkpoint.pt (default: "
        "runs/<task>-<model>)",
    )
    option(
        "--checkpoint-every",
        "also write the checkpoint every K steps; 0 means at the end only",
        type=int,
        metavar="K",
    )
    option(
        "--log-csv",
        "also write one CSV row per step (step, losses, learning rate, time, "
        "the run's id) to this file; a resumed run appends to it, a branch "
        "(--resume into another --out) needs its own",
        metavar="FILE",
    )
    p.add_argument(
        "--resume",
        metavar="CKPT",
        help="continue the run saved in this checkpoint.pt (or run directory) "
        "with the options it recorded (an own task needs --task again); only "
        "--threads, --no-progress, --device, --checkpoint-every, --log-csv and "
        "--out may differ, and a larger --steps extends a finished run at the "
        "schedule's final learning rate",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run already in --out (refused without this flag)",
    )
    p.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="hide the progress bar (shown by default)",
    )
    return p


def _task_arg(text: str) -> str:
    """``--task``: a built-in name (any case) or ``module:function``."""
    from .tasks import TASKS

    if ":" in text:
        return text.strip()
    name = text.strip().lower()
    if name not in TASKS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(sorted(TASKS))}, "
            "or give module:function)"
        )
    return name


def _resolve_task(task: str, name: str = "--task") -> object:
    """The task a ``--task`` value names: a name, or the task module:function
    makes. A module or function that changes the working directory is refused
    (the directory put back first): relative ``--out``, ``--log-csv`` and
    ``--resume`` paths would be read in the other one."""
    if ":" not in task:
        return task
    import os

    from .owntasks import task_from_spec

    before = os.getcwd()
    try:
        made = task_from_spec(task, name=name)
    finally:  # its own error, or Ctrl-C, in the directory it started in
        after = _cwd_now()
        if after != before:
            os.chdir(before)
    if after != before:
        raise ValueError(
            f"{name} {task}: importing or calling it changed the working "
            f"directory from {before!r} to {after!r}, where relative paths "
            "(--out, --log-csv, --resume) would land; it was put back: "
            "change the directory inside your function only if you change "
            "it back before returning"
        )
    return made


def _cwd_now() -> str | None:
    """The working directory, or ``None`` when it no longer exists."""
    import os

    try:
        return os.getcwd()
    except OSError:
        return None


def _default_out(task: str, model: object) -> str:
    """``runs/<task>-<model>``, the folder of a run given no ``--out``: an own
    task's name may hold anything, so path separators, control characters
    and leading dots become ``_`` and the folder stays inside ``runs/``."""
    import re

    name = re.sub(r"[\x00-\x1f\x7f/\\]+", "_", f"{task}-{model}")
    name = re.sub(r"^[.\s]+", "_", name)
    return f"runs/{name}"


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


NO_FLAG = frozenset({"cuda_graph"})
"""TrainConfig fields that the command line has no option for (set in Python)."""


def _command_line(task: str, args: dict[str, object], resume: str) -> str:
    """The ``python -m rhn train`` command that resumes the run of ``args``."""
    words = ["python", "-m", "rhn", "train", "--task", task]
    for field, value in args.items():
        if value is None:  # a field at None is the option left out
            continue
        if field in NO_FLAG:  # the resume keeps what the run recorded
            continue
        if field == "amp":
            words.append("--amp" if value else "--no-amp")
        elif field == "progress":
            words += [] if value else ["--no-progress"]
        elif field in ("out", "log_csv"):  # the command works from any directory
            words += [_flag(field), os.path.abspath(str(value))]
        elif not (field == "hidden_size" and value is None):  # None: --num-params
            words += [_flag(field), str(value)]
    words += ["--resume", resume]
    return shlex.join(words)


def _branch_command(task: str, args: dict[str, object], kept: Path) -> str:
    """The command that resumes the state ``kept`` beside the folder it could
    not replace, into a new folder named after the run's file (and, when the
    run logged, into a new log: its rows so far are kept beside its log)."""
    run_id = kept.stem.rsplit("-", 1)[-1]
    out = Path(str(args["out"]))
    changes = {"out": str(out.with_name(f"{out.name}-{run_id}"))}
    if args.get("log_csv") is not None:
        log = Path(str(args["log_csv"]))
        changes["log_csv"] = str(log.with_name(f"{log.stem}-{run_id}{log.suffix}"))
    return _command_line(task, {**args, **changes}, str(kept))


def _recorded_options(
    resume: str, task: str | None, given: dict[str, object]
) -> tuple[str, dict[str, object]]:
    """``--resume`` with options left out: the task and options the run recorded,
    under the options given (the resume check refuses those that may not change)."""
    from .tasks import TASKS
    from .train import TrainConfig, load_checkpoint
    from .train.records import filled_config, recover_resumed

    recover_resumed(resume)  # a run an --overwrite killed early had moved aside
    state = load_checkpoint(resume, name="--resume")
    saved = state["config"]
    if not isinstance(saved, dict):
        raise ValueError(f"--resume: {resume!r} is damaged (its config is no dict)")
    if task is None:
        task = saved.get("task", "adding")
        if task not in TASKS:
            raise ValueError(
                f"--resume: the run trained your own task {task!r}, which a "
                "checkpoint stores by name only: give --task module:function again"
            )
    fields = {f.name for f in dataclasses.fields(TrainConfig)} - {"task"}
    # every field, those the run lacks (older than them) at the package's
    # defaults as the resume check counts them, not at the task's
    recorded = {k: v for k, v in filled_config(saved).items() if k in fields}
    recorded.update(_recorded_paths(resume, state, "out" in given))
    # a size given replaces the recorded one, whichever way it was given
    if given.get("hidden_size") is not None:
        recorded.pop("num_params", None)
    if "num_params" in given:
        recorded.pop("hidden_size", None)
    return task, {**recorded, **given}


def _recorded_paths(
    resume: str, state: dict[str, object], out_given: bool
) -> dict[str, object]:
    """``out`` and ``log_csv`` of a resume, whatever the current directory: the
    run's folder (the one holding ``checkpoint.pt``) is ``out``, and a log the
    run kept inside its folder moves with it; other paths as the run recorded
    them (absolute where the checkpoint has them)."""
    import os
    from pathlib import Path

    from .train.records import CHECKPOINT_NAME

    saved = state["config"]
    paths = state.get("paths") if isinstance(state.get("paths"), dict) else {}
    old_out = paths.get("out") or saved.get("out")  # type: ignore[union-attr]
    old_log = paths.get("log_csv") or saved.get("log_csv")  # type: ignore[union-attr]
    given = Path(resume)
    folder = given if given.is_dir() else None
    if folder is None and given.name == CHECKPOINT_NAME:
        folder = given.parent
    out = None if old_out is None else str(old_out)
    if folder is not None:  # absolute: the record names it from any directory
        out = os.path.abspath(str(folder))
    found: dict[str, object] = {}
    if not out_given and out is not None:
        found["out"] = out
    if old_log is not None:
        log = str(old_log)
        inside = old_out is not None and _inside(log, str(old_out))
        if inside is not None and folder is not None and not out_given:
            log = os.path.join(str(folder), inside)  # the folder's own log
        found["log_csv"] = log
    return found


def _inside(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` if it lies inside it, else ``None``."""
    import os

    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(folder))
    if os.path.isabs(path) != os.path.isabs(folder) or relative.startswith(".."):
        return None
    return relative


def train_main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn train``: parse, train, write DIR/metrics.json, summarise.

    Exit status: 0 on success; 2 for a usage error (one line on stderr); 1
    when the run diverged (its loss became NaN or infinite, or ended above
    ``DIVERGED_FACTOR`` times the baseline), or when another run took its
    ``--out`` over, or moved it, while it trained (its state kept and said); 130, 143 or
    129 when SIGINT, SIGTERM or SIGHUP stopped it (after writing a checkpoint
    and printing the resume command).
    """
    from .train import DIVERGED_FACTOR, TrainConfig, TrainingInterrupted, train
    from .train.run import FolderMoved, FolderTakenOver

    prog = "python -m rhn train"
    args = vars(train_parser().parse_args(argv))
    resume = args.pop("resume", None)
    overwrite = args.pop("overwrite", False)
    task = args.pop("task", None)
    if "num_params" in args:
        args["hidden_size"] = None
    made: list[typing.Any] = []
    typed = {name for name in ("depth", "transform_bias") if name in args}
    try:
        if resume is not None:  # options left out: the run's own
            task, args = _recorded_options(resume, task, args)
        task = "adding" if task is None else task
        task_obj = _resolve_task(task)
        name = task_obj if isinstance(task_obj, str) else task_obj.name
        args.setdefault("out", _default_out(name, args.get("model", "rhn")))
        _typed_and_unread(typed, args)
        config = TrainConfig.for_task(task_obj, **args)
        made = _cli.missing_dirs(config.out)  # removed again if refused
        _cli.writable_dir("--out", config.out)
        result = train(config, resume=resume, overwrite=overwrite)
    except (FolderTakenOver, FolderMoved) as err:  # its own state kept, and said
        return _cli.fail(
            prog, "; ".join([str(err), *getattr(err, "__notes__", [])]), status=1
        )
    except (TypeError, ValueError, FileNotFoundError) as err:
        _cli.remove_made(made)  # a folder this call made and left empty
        # what the run kept: a checkpoint of the steps done, the old run back
        return _cli.fail(prog, "; ".join([str(err), *getattr(err, "__notes__", [])]))
    except FloatingPointError as err:  # before Exception, which it is too
        said = [f"the run diverged: {err}", *getattr(err, "__notes__", [])]
        if resume is not None:
            said.append(_RESUME_KEEPS)
        return _cli.fail(prog, "; ".join(said), status=1)
    except Exception as err:  # your own task's or logger's code
        saved = getattr(err, "checkpoint", None)
        if saved is not None:
            print(
                f"{prog}: {type(err).__name__} in the run; a checkpoint of the "
                f"last completed step was written to {saved}: resume with "
                f"--resume {saved}",
                file=sys.stderr,
            )
        kept = getattr(err, "kept", None)
        if kept is not None:  # an --overwrite failed early: its own state
            print(
                f"{prog}: {type(err).__name__} in the run; its last completed step "
                f"is kept in {kept} (the run it was to replace is back in place): "
                f"resume it with {_branch_command(task, args, kept)}",
                file=sys.stderr,
            )
        raise
    except TrainingInterrupted as stop:
        print(f"{prog}: {stop}", file=sys.stderr)
        for note in getattr(stop, "__notes__", []):  # the replaced run put back
            print(f"{prog}: {note.removeprefix('rhn.train: ')}", file=sys.stderr)
        if stop.checkpoint is not None:
            command = _command_line(task, args, str(stop.checkpoint))
            print(f"resume with: {command}", file=sys.stderr)
        kept = getattr(stop, "kept", None)
        if kept is not None:  # an --overwrite stopped early: its own state
            command = _branch_command(task, args, kept)
            print(f"resume it with: {command}", file=sys.stderr)
        return stop.exit_code
    m = result.metrics
    summary = {
        k: m[k]
        for k in (
            "task",
            "model",
            "test_loss",
            "baseline",
            "diverged",
            "steps",
            "seconds",
        )
    }
    # a data set (chorales): the validation loss that chose the weights
    summary.update(
        {k: m[k] for k in ("valid_loss", "best_step", "test_loss_reason") if k in m}
    )
    ratio = None  # no ratio to a baseline of 0 (constant targets)
    if m["test_loss"] is not None and m["baseline"]:
        ratio = m["test_loss"] / m["baseline"]
    summary["ratio_to_baseline"] = ratio
    clean, notes = _io.finite_json(summary)  # strict JSON: NaN and inf as null
    if notes:
        clean["non_finite"] = notes
    print(json.dumps(clean, indent=1, allow_nan=False))
    if result.written:
        print(f"wrote {config.out}/metrics.json and {config.out}/checkpoint.pt")
    else:
        print(
            f"wrote nothing: {config.out}/metrics.json and {config.out}/checkpoint.pt "
            "are as they were"
        )
    if m["diverged"]:
        # without a test split, the validation loss is the held-out loss
        held = m["test_loss"] if m["test_loss"] is not None else m.get("valid_loss")
        finite = isinstance(held, (int, float)) and math.isfinite(held)
        if finite and held > DIVERGED_FACTOR * m["baseline"]:
            what = (
                f"its final held-out loss {held:.4g} is more than "
                f"{DIVERGED_FACTOR:g} times the baseline {m['baseline']:.4g}"
            )
        elif finite:  # the test loss is finite: the validation loss was not
            what = "its validation loss was not finite"
        else:
            what = "its final held-out loss is not finite"
        return _cli.fail(
            prog,
            f"the run diverged: {what}; "
            + ("lower --lr or --clip" if config.clip else "lower --lr or set --clip 1")
            + ("" if resume is None else f"; {_RESUME_KEEPS}"),
            status=1,
        )
    return 0


_RESUME_KEEPS = (
    "a resume keeps the run's --lr and --clip: to change them, start the run "
    "anew (--overwrite) or in another --out"
)


def sweep_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m rhn sweep``: ``train``'s options plus the grid."""
    p = _cli.Parser(
        prog="python -m rhn sweep",
        usage="python -m rhn sweep [--task TASK] --grid FIELD=V1,V2,... "
        "[--grid ...] --seeds S1,S2,... --out FILE [--overwrite] [train options]",
        description="Train one run for every combination of the --grid values and "
        "every seed (rhn.experiments.sweep) and write one JSON file: the command, "
        "the versions, and each run's config, final metrics and history. Every "
        "'train' option below applies to all runs; a --grid field overrides it.",
        epilog="example:\n  python -m rhn sweep --task adding --grid "
        "model=rhn,gru,lstm --grid depth=1,2 --seeds 0,1,2 --steps 500 "
        "--no-progress --out rhn/_data/results/adding.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[train_parser()],  # every option of 'train', with its help
        # Options of 'train' that mean something else here are replaced below.
        conflict_handler="resolve",
        argument_default=argparse.SUPPRESS,
    )
    p.add_argument("--out", metavar="FILE", help="the JSON file to write (required)")
    for flag in ("--seed", "--checkpoint-every", "--log-csv"):
        p.add_argument(flag, help=argparse.SUPPRESS)
    p.add_argument(
        "--resume",
        action="store_true",
        default=False,
        help="continue the interrupted sweep in --out: keep its finished runs, "
        "train the others (give the options of the interrupted sweep)",
    )
    p.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="FIELD=V1,V2,...",
        help="a config field and its values, e.g. model=rhn,gru or depth=1,2,4 "
        "(repeat for a product of grids; fields as the options above, with _ or -)",
    )
    p.add_argument(
        "--seeds", metavar="S1,S2,...", help="the seeds of every setting (required)"
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        default=False,
        help="replace an existing --out file (refused by default)",
    )
    return p


def _grid_values(field: str, text: str) -> list[object]:
    """Parse the comma-separated values of ``--grid field=...`` to the field's type."""
    from .train import TrainConfig

    if field == "task":  # a name or module:function, as --task takes it
        tasks: list[object] = []
        for word in (w.strip() for w in text.split(",")):
            try:
                tasks.append(_resolve_task(_task_arg(word), name="--grid task"))
            except argparse.ArgumentTypeError as err:
                raise ValueError(f"--grid task: {err}") from None
        return tasks
    hints = typing.get_type_hints(TrainConfig)
    kind = hints[field]
    optional = type(None) in typing.get_args(kind)
    if optional:
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    values: list[object] = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            raise ValueError(f"--grid {field}: empty value in {text!r}")
        if optional and word.lower() == "none":
            values.append(None)
        elif kind is bool:
            if word.lower() not in ("true", "false"):
                raise ValueError(
                    f"--grid {field}: expected true or false, got {word!r}"
                )
            values.append(word.lower() == "true")
        else:
            try:
                values.append(kind(word))
            except ValueError:
                raise ValueError(
                    f"--grid {field}: expected {kind.__name__} values, got {word!r}"
                ) from None
    return values


def sweep_main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn sweep``: parse, run every setting and seed, write the JSON.

    Exit status: 0 on success; 2 for a usage error (one line on stderr); 1 when
    the JSON was written but some runs diverged: stopped by a NaN or
    infinite loss (recorded with ``"diverged": true`` and their ``error``) or
    ended far above the baseline (``"diverged": true``), as ``train`` exits 1
    for such a run; every other run still runs. 130 or 143 when SIGINT or
    SIGTERM stopped it, 129 when SIGHUP did.
    """
    import dataclasses as dc

    from .experiments import NOT_IN_GRID, sweep
    from .train import TrainConfig

    argv = list(sys.argv[1:] if argv is None else argv)
    args = vars(sweep_parser().parse_args(argv))

    def fail(message: str) -> int:
        print(f"python -m rhn sweep: error: {message}", file=sys.stderr)
        return 2

    for name, hint in (
        ("seed", "give the seeds with --seeds 0,1,2"),
        ("checkpoint_every", "sweep runs write no checkpoints"),
        ("log_csv", "the sweep's JSON holds every run's history"),
    ):
        if name in args:
            return fail(f"--{name.replace('_', '-')} is not a sweep option: {hint}")
    for name in ("out", "seeds"):
        if args.get(name) is None:
            return fail(f"--{name} is required")
    task = args.pop("task", "adding")
    out, overwrite = args.pop("out"), args.pop("overwrite")
    resume = args.pop("resume")
    command = "python -m rhn sweep " + shlex.join(argv)
    fields = {f.name for f in dc.fields(TrainConfig)}
    finished: list[str] = []  # one log line per finished run

    def log(line: str) -> None:
        finished.append(line)
        print(line, file=sys.stderr, flush=True)

    try:
        seeds = [int(s) for s in args.pop("seeds").split(",")]  # "0,,1": an error
    except ValueError:
        return fail("--seeds must be comma-separated ints, e.g. 0,1,2")
    grid: dict[str, list[object]] = {}
    try:
        for item in args.pop("grid"):
            field, sep, text = item.partition("=")
            field = field.strip().replace("-", "_")
            if not sep or field not in fields or field in NOT_IN_GRID:
                raise ValueError(
                    f"--grid expects FIELD=V1,V2,... with FIELD a config field a "
                    f"sweep can vary ({', '.join(sorted(fields - NOT_IN_GRID))}), "
                    f"got {item!r}"
                    + ("; seeds go in --seeds" if field == "seed" else "")
                )
            if field in grid:
                raise ValueError(f"--grid {field} is given twice")
            grid[field] = _grid_values(field, text)
        if "num_params" in args:
            args["hidden_size"] = None
        typed = {name for name in ("depth", "transform_bias") if name in args}
        models = grid.get("model") or [args.get("model", TrainConfig.model)]
        _typed_and_unread(typed, args, [str(m) for m in models])
        base = TrainConfig.for_task(_resolve_task(task), **args)
        record = sweep(
            base,
            grid,
            seeds,
            out=out,
            overwrite=overwrite,
            resume=resume,
            command=command,
            log=log,
        )
    except (TypeError, ValueError, FileExistsError) as err:
        return fail(str(err))
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM or SIGHUP (TrainingInterrupted)
        signum = getattr(stop, "signum", signal.SIGINT)
        kept = (
            f"the {len(finished)} runs finished now are kept in {out} (marked "
            "incomplete; rhn.experiments.load_sweep(path, allow_incomplete=True) "
            "reads them)"
            if finished
            else f"no run finished this time, {out} was not changed"
        )
        print(
            f"python -m rhn sweep: interrupted by {signal.Signals(signum).name}; "
            + kept,
            file=sys.stderr,
        )
        if finished or resume:
            words = [w for w in argv if w not in ("--overwrite", "--resume")]
            # the record and any own task's module from any directory: --out
            # as an absolute path (--out=PATH too)
            for i, w in enumerate(words):
                if w == "--out" and i + 1 < len(words):
                    words[i + 1] = os.path.abspath(words[i + 1])
                elif w.startswith("--out="):
                    words[i] = "--out=" + os.path.abspath(w.split("=", 1)[1])
            again = shlex.join(["python", "-m", "rhn", "sweep", *words, "--resume"])
            print(f"resume with: {again}", file=sys.stderr)
        return getattr(stop, "exit_code", 128 + signum)
    except FloatingPointError as err:
        print(f"python -m rhn sweep: error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out}: {len(record['runs'])} runs in {record['seconds']:.0f} s")
    # a diverged run (stopped by a NaN or infinite loss, or ended far above
    # the baseline) makes the sweep exit 1, as train does for one run
    stopped = [run for run in record["runs"] if "error" in run["metrics"]]
    flagged = [run for run in record["runs"] if run["metrics"].get("diverged")]
    if flagged:
        print(
            f"python -m rhn sweep: {len(flagged)} of {len(record['runs'])} runs "
            f"diverged, {len(stopped)} of them stopped by a NaN or infinite loss "
            f"(recorded with diverged: true in {out})",
            file=sys.stderr,
        )
    return 1 if flagged else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``python -m rhn <command> ...`` to the command's own ``main``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _main_parser()
    if not argv:  # a mistake like any other: one line on stderr, status 2
        return _cli.fail(
            "python -m rhn",
            f"give a command, one of {', '.join(sorted(COMMANDS))} "
            "('python -m rhn --help' describes them)",
        )
    if argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0
    command, rest = argv[0], argv[1:]
    if command not in HANDLERS:
        parser.error(f"unknown command {command!r}; choose from {sorted(COMMANDS)}")
    module, function = HANDLERS[command].split(":")
    if module == "rhn.__main__":  # this file, which may be running as __main__
        handler: Callable[[list[str]], int] = globals()[function]
    else:
        try:
            handler = getattr(importlib.import_module(module), function)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
            return _cli.fail(f"python -m rhn {command}", f"{module} is not installed")
    try:
        with _one_line_warnings(f"python -m rhn {command}"):
            return handler(rest)
    except KeyboardInterrupt as stop:  # a command that does not handle it itself
        print(f"python -m rhn {command}: {str(stop) or 'interrupted'}", file=sys.stderr)
        return getattr(stop, "exit_code", 130)


def _typed_and_unread(
    typed: set[str], args: dict[str, typing.Any], models: list[str] | None = None
) -> None:
    """Refuse ``--depth`` or ``--transform-bias`` typed where no model of the
    run (or of a sweep's ``models``) reads them: the record would state a
    setting no run used (in Python such a value is a warning, since sweeps
    and loops over models pass one config's fields to every model). A sweep
    whose grid mixes models that read it with models that do not is warned
    which runs go without it."""
    from .train import TrainConfig
    from .train.config import reads_field

    if models is None:
        models = [args.get("model", TrainConfig.model)]
    for name in sorted(typed):
        flag = "--" + name.replace("_", "-")
        readers_here = [m for m in models if reads_field(str(m).lower(), name)]
        if readers_here and len(readers_here) < len(models):
            others = ",".join(str(m) for m in models if m not in readers_here)
            warnings.warn(
                f"{flag} {args[name]} applies to the "
                f"{','.join(map(str, readers_here))} runs only; the {others} "
                f"runs do not read it and their records keep the default",
                UserWarning,
                stacklevel=2,
            )
        if not readers_here:
            readers = "rhn and dtrnn" if name == "depth" else "rhn"
            which = ",".join(str(m) for m in models)
            raise ValueError(
                f"{flag} is read only by --model {readers}, got "
                f"{flag} {args[name]} with --model {which}, "
                f"which does not read it (the record would state a setting the "
                f"run never used): leave {flag} out"
            )


@contextlib.contextmanager
def _one_line_warnings(prog: str) -> Iterator[None]:
    """Show the package's own warnings as ``prog: warning: message``, one line:
    on the command line the file and source line a warning points at are the
    package's, not the user's (other warnings are shown as Python shows them)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        if os.path.abspath(filename).startswith(package):
            print(f"{prog}: warning: {_io.one_line(message)}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":
    sys.exit(main())
