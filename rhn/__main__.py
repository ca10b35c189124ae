"""Command line: ``python -m rhn <command> ...``.

Commands:
    train   train a model on a toy task (:mod:`rhn.train`)
    bench   time the recurrent loops (:mod:`rhn.bench`)

``python -m rhn <command> --help`` documents each command's options.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

COMMANDS = {
    "train": "train a model on a toy task; writes DIR/metrics.json and a checkpoint",
    "bench": "time the recurrent loops of the package against torch.nn",
}


def _main_parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  {name:<8}{text}" for name, text in COMMANDS.items())
    return argparse.ArgumentParser(
        prog="python -m rhn",
        description="Recurrent Highway Networks: command-line tools.",
        usage="python -m rhn {train,bench} ...",
        epilog=f"commands:\n{commands}\n\n"
        "Run 'python -m rhn COMMAND --help' for the options of a command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def train_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m rhn train``: one option per config field."""
    from .tasks import TASKS

    defaults = "\n".join(
        f"  {name}: "
        + ", ".join(f"{k.replace('_', '-')}={v}" for k, v in task.defaults.items())
        for name, task in TASKS.items()
    )
    p = argparse.ArgumentParser(
        prog="python -m rhn train",
        description="Train a recurrent model on a seeded toy task. Options left out "
        "take the task's defaults (chosen so that --model rhn solves the task), "
        "then the defaults of rhn.train.TrainConfig.",
        epilog=f"task defaults:\n{defaults}\n\nexample:\n  python -m rhn train "
        "--task adding --seq-len 100 --model rhn --depth 3 --seed 0 --device auto "
        "--out runs/adding",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS,  # absent options fall back to defaults
    )
    p.add_argument(
        "--task",
        choices=sorted(TASKS),
        default="adding",
        help="the toy task (default: adding)",
    )
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="T",
        help="sequence length T of the task (task default)",
    )
    p.add_argument(
        "--model",
        choices=["rhn", "lstm", "gru", "rnn"],
        help="recurrent core (default: rhn)",
    )
    p.add_argument(
        "--depth",
        type=int,
        metavar="D",
        help="RHN recurrence depth D; ignored by other models (default 3)",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--hidden-size", type=int, metavar="H", help="hidden size H (task default)"
    )
    size.add_argument(
        "--num-params",
        type=int,
        metavar="P",
        help="instead of --hidden-size: the H whose core has about P "
        "parameters (to compare models at equal size)",
    )
    p.add_argument(
        "--num-layers",
        type=int,
        metavar="N",
        help="stacked recurrent layers N (default 1)",
    )
    p.add_argument(
        "--transform-bias",
        type=float,
        metavar="B",
        help="initial RHN transform-gate bias, negative = carry (task default)",
    )
    p.add_argument(
        "--steps", type=int, help="optimiser steps, one fresh batch each (task default)"
    )
    p.add_argument(
        "--batch-size", type=int, metavar="B", help="sequences per step (task default)"
    )
    p.add_argument("--lr", type=float, help="Adam learning rate (task default)")
    p.add_argument(
        "--lr-schedule",
        choices=["constant", "cosine"],
        help="learning-rate schedule; cosine decays to lr/10 (default cosine)",
    )
    p.add_argument("--weight-decay", type=float, help="Adam weight decay (default 0)")
    p.add_argument(
        "--clip",
        type=float,
        help="max global gradient norm, 0 = no clipping (default 1)",
    )
    p.add_argument(
        "--eval-every",
        type=int,
        metavar="K",
        help="held-out evaluation every K steps (default 100)",
    )
    p.add_argument(
        "--eval-samples",
        type=int,
        metavar="M",
        help="size of the held-out set (default 1000)",
    )
    p.add_argument(
        "--stop-loss",
        type=float,
        metavar="L",
        help="stop early once the held-out loss is below L (default: never)",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="seed of the weights, batches and held-out set (default 0)",
    )
    p.add_argument(
        "--device",
        metavar="DEV",
        help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps (default auto)",
    )
    p.add_argument(
        "--no-amp",
        dest="amp",
        action="store_false",
        help="turn off mixed precision (used on CUDA only)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="torch CPU threads (default 1: small recurrent models are "
        "fastest single-threaded, and it behaves on a shared machine)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write DIR/metrics.json and DIR/checkpoint.pt (default: "
        "runs/<task>-<model>)",
    )
    p.add_argument(
        "--checkpoint-every",
        type=int,
        metavar="K",
        help="also write the checkpoint every K steps (default: at the end only)",
    )
    p.add_argument(
        "--resume",
        metavar="CKPT",
        help="continue the run saved in this checkpoint.pt (same "
        "options as the run that wrote it)",
    )
    p.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="hide the progress bar",
    )
    return p


def train_main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn train``: parse, train, write DIR/metrics.json, summarise."""
    from .train import TrainConfig, train

    args = vars(train_parser().parse_args(argv))
    resume = args.pop("resume", None)
    task = args.pop("task")
    if "num_params" in args:
        args["hidden_size"] = None
    args.setdefault("out", f"runs/{task}-{args.get('model', 'rhn')}")
    try:
        config = TrainConfig.for_task(task, **args)
        result = train(config, resume=resume)
    except (TypeError, ValueError, FloatingPointError) as err:
        print(f"python -m rhn train: error: {err}", file=sys.stderr)
        return 2 if not isinstance(err, FloatingPointError) else 1
    m = result.metrics
    summary = {
        k: m[k] for k in ("task", "model", "test_loss", "baseline", "steps", "seconds")
    }
    summary["ratio_to_baseline"] = m["test_loss"] / m["baseline"]
    print(json.dumps(summary, indent=1))
    print(f"wrote {config.out}/metrics.json and {config.out}/checkpoint.pt")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``python -m rhn <command> ...`` to the command's own ``main``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _main_parser()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "train":
        return train_main(rest)
    if command == "bench":
        # Imported only when asked for: the benchmark is a separate tool.
        try:
            bench = importlib.import_module("rhn.bench")
        except ModuleNotFoundError as err:
            if err.name != "rhn.bench":
                raise
            print("python -m rhn bench: rhn.bench is not installed", file=sys.stderr)
            return 2
        return bench.main(rest)
    parser.error(f"unknown command {command!r}; choose from {sorted(COMMANDS)}")
    return 2  # not reached: parser.error exits


if __name__ == "__main__":
    sys.exit(main())
