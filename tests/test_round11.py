"""Hostile round 11: a ``--log-csv`` the user changed by hand.

Each test is one case: a resume (or an ``--overwrite``, which keeps the old
rows to put back) must refuse a log with a duplicated row, a cell that is no
number, or a foreign line, in one line that names the file and the line; a
row of another run among this run's rows is named as such; one missing step
reads "the row of step N is missing"; and a resume with nothing to train says
it wrote nothing.
"""

import dataclasses
import re

import pytest
from tiny_runs import CLI, contents, one_error_line, tiny

from rhn.__main__ import main
from rhn.train import train


def logged_run(tmp_path, steps=6):
    """A finished tiny run in ``r/`` with its log ``log.csv`` beside it."""
    out, log = tmp_path / "r", tmp_path / "log.csv"
    config = tiny(out=str(out), log_csv=str(log), steps=steps, checkpoint_every=2)
    train(config)
    return config, out, log


def damage(log, edit):
    """``log`` with its lines (header first) changed by ``edit``."""
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(edit(lines)))


def duplicate_step_4(lines):  # sed -i '5p': line 5 is the row of step 4
    return [*lines[:5], lines[4], *lines[5:]]


def banana(lines):  # the train_loss of step 2 (line 3)
    cells = lines[2].split(",")
    cells[2] = "banana"
    return [*lines[:2], ",".join(cells), *lines[3:]]


def garbage(lines):
    return [*lines, "garbage,line\n"]


CASES = [
    (duplicate_step_4, r"line 6 has step 4 after step 4 on line 5"),
    (banana, r"line 3 has train_loss 'banana', not a number"),
    (garbage, r"line 8 has 2 fields, the header 7"),
]


@pytest.mark.parametrize("edit, what", CASES)
def test_a_resume_refuses_a_log_changed_by_hand(tmp_path, edit, what):
    config, out, log = logged_run(tmp_path)
    damage(log, edit)
    before = contents(tmp_path) | contents(out)
    with pytest.raises(ValueError) as caught:
        train(dataclasses.replace(config, steps=8), resume=out)
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(what, message), message
    assert "log.csv" in message and "restore the file" in message
    assert "--log-csv" in message
    assert contents(tmp_path) | contents(out) == before  # nothing trained


@pytest.mark.parametrize("edit, what", CASES)
def test_the_command_line_says_so_in_one_line(tmp_path, capsys, edit, what):
    config, out, log = logged_run(tmp_path)
    damage(log, edit)
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--steps", "8"]) == 2
    assert re.search(what, one_error_line(capsys))


@pytest.mark.parametrize("edit, what", CASES)
def test_overwrite_refuses_to_keep_a_log_changed_by_hand(tmp_path, edit, what):
    config, out, log = logged_run(tmp_path)
    damage(log, edit)
    before = contents(tmp_path) | contents(out)
    with pytest.raises(ValueError, match=what) as caught:
        train(config, overwrite=True)
    assert "overwrite" in str(caught.value) and "\n" not in str(caught.value)
    assert contents(tmp_path) | contents(out) == before


def test_an_intact_log_still_resumes_and_appends(tmp_path):
    config, out, log = logged_run(tmp_path)
    train(dataclasses.replace(config, steps=8), resume=out)
    steps = [int(line.split(",")[1]) for line in log.read_text().splitlines()[1:]]
    assert steps == list(range(1, 9))


def test_a_row_of_another_run_among_this_runs_rows_is_named(tmp_path):
    config, out, log = logged_run(tmp_path)

    def other_run_at_step_4(lines):
        cells = lines[4].rstrip("\n").split(",")
        cells[-1] = "e" * 32
        return [*lines[:4], ",".join(cells) + "\n", *lines[5:]]

    damage(log, other_run_at_step_4)
    with pytest.raises(ValueError) as caught:
        train(dataclasses.replace(config, steps=8), resume=out)
    message = str(caught.value)
    assert "line 5 names another run (" + "e" * 32 + ")" in message, message
    assert "missing" not in message


def test_one_missing_step_is_said_in_the_singular(tmp_path):
    config, out, log = logged_run(tmp_path)
    damage(log, lambda lines: lines[:-1])  # the row of step 6
    with pytest.raises(ValueError) as caught:
        train(dataclasses.replace(config, steps=8), resume=out)
    assert "the row of step 6 is missing" in str(caught.value), str(caught.value)
    damage(log, lambda lines: lines[:-1])  # steps 5 and 6 now
    with pytest.raises(ValueError, match=r"rows of steps 5-6 are missing"):
        train(dataclasses.replace(config, steps=8), resume=out)


def test_a_resume_with_nothing_to_train_says_it_wrote_nothing(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["train", *CLI, "--out", str(out)]) == 0
    before = contents(out)
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--steps", "3"]) == 0
    printed = capsys.readouterr().out
    assert "wrote nothing" in printed and "as they were" in printed
    assert f"wrote {out}/metrics.json" not in printed
    assert contents(out) == before
