"""What the hostile-round tests (tests/test_round4.py to test_round7.py)
share: a tiny training configuration, its command line, and how they read a
run's folder, a CSV log and a one-line error."""

import csv
import os
import signal

from rhn.train import TrainConfig

TINY = {
    "seq_len": 6,
    "hidden_size": 8,
    "steps": 3,
    "eval_every": 1,
    "batch_size": 8,
    "eval_samples": 32,
    "progress": False,
    "device": "cpu",
}
CLI = ["--task", "adding", "--seq-len", "6", "--hidden-size", "8", "--steps", "3"]
CLI += ["--eval-every", "1", "--eval-samples", "32", "--batch-size", "8"]
CLI += ["--no-progress", "--device", "cpu"]
SWEEP = [*CLI[2:], "--seeds", "0"]


def tiny(**overrides):
    task = overrides.pop("task", "adding")
    return TrainConfig.for_task(task, **{**TINY, **overrides})


def interrupt_at(step):
    """A callback that sends this process SIGINT (a Ctrl-C) after ``step``."""

    def stop(event):
        if event["step"] == step:
            os.kill(os.getpid(), signal.SIGINT)

    return stop


def contents(folder):
    """Every file of ``folder`` with its bytes: what a refusal must not change."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def one_error_line(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err
