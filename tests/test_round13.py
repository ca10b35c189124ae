"""Hostile round 13: a run that stopped early, resumed.

A run stopped by ``stop_loss`` or ``patience`` before ``steps`` used to train
one more evaluation block when resumed (its checkpoint did not say it had
stopped) and stop again: a history one block longer than the run's, without
a word. The stop is now read back from the history: a resume in the run's own
folder trains nothing, leaves its files as they are and says why in one line;
a resume into another folder (a branch) copies the run as it stopped.
"""

import dataclasses
import json

import pytest
from tiny_runs import CLI, contents, tiny

from rhn.__main__ import main
from rhn.train import train

# stop_loss far above the adding problem's loss: it stops at its first
# evaluation (step 2 of 40); patience=1 at lr=0.1 stops once a held-out loss
# is not a new best (at step 4 here)
STOPS = {
    "stop_loss": ({"stop_loss": 1e9}, ["--stop-loss", "1e9"], "fell below stop_loss"),
    "patience": (
        {"patience": 1, "lr": 0.1},
        ["--patience", "1", "--lr", "0.1"],
        "did not improve",
    ),
}


def _stopped(tmp_path, how):
    fields, *_ = STOPS[how]
    out = tmp_path / "run"
    config = tiny(steps=40, eval_every=2, out=str(out), **fields)
    first = train(config)
    assert first.metrics["steps"] < 40, first.metrics  # it did stop early
    return out, config, first


@pytest.mark.parametrize("how", sorted(STOPS))
def test_a_resumed_run_that_stopped_early_trains_nothing(tmp_path, capsys, how):
    out, config, first = _stopped(tmp_path, how)
    before = contents(out)
    capsys.readouterr()
    again = train(config, resume=out)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped early at step" in err, err
    assert STOPS[how][2] in err, err
    assert contents(out) == before  # not one byte rewritten
    assert again.history == first.history
    assert again.metrics["test_loss"] == first.metrics["test_loss"]
    assert not again.written


@pytest.mark.parametrize("how", sorted(STOPS))
def test_the_cli_resume_of_a_stopped_run_says_so_in_one_line(tmp_path, capsys, how):
    _, flags, words = STOPS[how]
    out = tmp_path / "run"
    argv = ["train", *CLI, "--steps", "40", "--eval-every", "2", *flags]
    assert main([*argv, "--out", str(out)]) == 0
    before = contents(out)
    capsys.readouterr()
    assert main(["train", "--no-progress", "--resume", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped early" in err and words in err, err
    assert contents(out) == before


def test_more_steps_do_not_restart_a_stopped_run(tmp_path, capsys):
    # the stop rule is part of the run: more steps would stop at once again
    out, config, first = _stopped(tmp_path, "stop_loss")
    before = contents(out)
    again = train(dataclasses.replace(config, steps=80), resume=out)
    assert "stopped early" in capsys.readouterr().err
    assert contents(out) == before and again.history == first.history


def test_a_branch_of_a_stopped_run_is_the_run_as_it_stopped(tmp_path):
    out, config, first = _stopped(tmp_path, "patience")
    branch = tmp_path / "branch"
    copy = train(dataclasses.replace(config, out=str(branch)), resume=out)
    assert copy.history == first.history
    record = json.loads((branch / "metrics.json").read_text())
    assert record["history"] == first.history
