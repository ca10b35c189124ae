"""Hostile round 10 (issue 32): what a fresh hostile tester found.

Each test is one case: a run whose folder another run took over (after the
user deleted its ``run.lock``) must not write over that run's files; a
copied folder whose original moved away must not log rows under the
original's id; float options beyond float32, and ``--stop-loss -inf``, are
one line naming the option; a damaged ``checkpoint.pt`` is one clear line
that offers no resume of it; SIGTERM, SIGTERM, SIGINT report the first
signal; and one predicate says what a batch is.
"""

import dataclasses
import json
import os
import shutil
import signal

import pytest
import torch
from tiny_runs import CLI, contents, one_error_line, rows, tiny

from rhn import _checks
from rhn.__main__ import main
from rhn.tasks import TASKS
from rhn.train import TrainingInterrupted, train
from rhn.train.interrupts import signals_deferred
from rhn.train.run import FolderTakenOver, _Run

# --- 1. a folder another run took over is never written into ---------------------


def take_over(out, same_id):
    """What a second run started in ``out`` (its run.lock deleted) leaves:
    its own run.json and run.lock, and a checkpoint and record of its own."""
    marker = json.loads((out / "run.json").read_text())
    by = {"pid": 999999, "host": "elsewhere", "token": "f" * 32}
    if not same_id:  # a fresh run with --overwrite; else a resume of the run
        marker["run_id"] = "e" * 32
    marker["by"] = by
    (out / "run.json").write_text(json.dumps(marker))
    (out / "run.lock").write_text(json.dumps(by))
    (out / "checkpoint.pt").write_bytes(b"the second run's checkpoint")
    (out / "metrics.json").write_text('{"the second run": "its record"}')


@pytest.mark.parametrize("same_id", [False, True])
def test_a_run_whose_folder_was_taken_over_keeps_its_state_beside_it(tmp_path, same_id):
    out = tmp_path / "r"
    config = tiny(out=str(out), steps=6, checkpoint_every=2)
    own = {}

    def at_step_3(event):
        if event["step"] == 3:
            own["id"] = json.loads((out / "run.json").read_text())["run_id"]
            take_over(out, same_id)
            own["files"] = contents(out)

    with pytest.raises(FolderTakenOver, match="another run took over") as caught:
        train(config, callback=at_step_3)
    message = str(caught.value)
    assert "\n" not in message and "step 4" in message
    orphan = out / f"checkpoint.orphan-{own['id']}.pt"
    assert caught.value.path == orphan and str(orphan.name) in message
    assert {k: v for k, v in contents(out).items() if k != orphan.name} == own[
        "files"
    ]  # nothing of the second run's touched, its lock kept
    state = torch.load(orphan, weights_only=False)
    assert state["step"] == 4 and state["run_id"] == own["id"]
    # the state kept resumes as a branch in a folder of its own
    result = train(
        dataclasses.replace(config, out=str(tmp_path / "kept")), resume=orphan
    )
    assert result.metrics["steps"] == 6


def test_the_command_line_exits_1_when_its_folder_was_taken_over(
    tmp_path, capsys, monkeypatch
):
    out = tmp_path / "r"
    real = _Run.evaluate

    def evaluate(self):
        scores = real(self)
        if self.step == 3:
            take_over(out, same_id=False)
        return scores

    monkeypatch.setattr(_Run, "evaluate", evaluate)
    args = ["train", *CLI, "--steps", "6", "--checkpoint-every", "2"]
    assert main([*args, "--out", str(out)]) == 1
    err = one_error_line(capsys)
    assert "another run took over" in err and "checkpoint.orphan-" in err, err
    assert (out / "checkpoint.pt").read_bytes() == b"the second run's checkpoint"


def test_a_deleted_lock_alone_does_not_stop_the_run(tmp_path):
    out = tmp_path / "r"

    def at_step_3(event):
        if event["step"] == 3:
            (out / "run.lock").unlink()

    config = tiny(out=str(out), steps=6, checkpoint_every=2)
    assert train(config, callback=at_step_3).metrics["steps"] == 6
    assert not list(out.glob("*orphan*"))


# --- 2. cp -r, then mv: the copy never logs under the original's id --------------


def test_a_copy_whose_original_moved_away_is_a_run_of_its_own(tmp_path):
    r1, log = tmp_path / "r1", tmp_path / "log.csv"
    config = tiny(out=str(r1), log_csv=str(log))
    train(config)
    shutil.copytree(r1, tmp_path / "r2")
    r1.rename(tmp_path / "r3")  # neither folder is where the run was written
    first = json.loads((tmp_path / "r3" / "run.json").read_text())["run_id"]
    for name in ("r2", "r3"):
        assert json.loads((tmp_path / name / "run.json").read_text())["run_id"] == first
    r2 = dataclasses.replace(config, out=str(tmp_path / "r2"), steps=5)
    train(r2, resume=tmp_path / "r2")  # the first to go on: the run itself
    logged = log.read_bytes()
    r3 = dataclasses.replace(config, out=str(tmp_path / "r3"), steps=5)
    with pytest.raises(ValueError, match="log_csv.*another run"):
        train(r3, resume=tmp_path / "r3")  # the other: never under the same id
    assert log.read_bytes() == logged
    assert [(r["step"], r["run"]) for r in rows(log)] == [
        (str(s), first) for s in range(1, 6)
    ]
    # with a log of its own it goes on as a copy: a new id, its parent named
    own = dataclasses.replace(r3, log_csv=str(tmp_path / "r3.csv"))
    train(own, resume=tmp_path / "r3")
    marker = json.loads((tmp_path / "r3" / "run.json").read_text())
    assert marker["run_id"] != first and marker["parent"]["run_id"] == first
    assert {r["run"] for r in rows(tmp_path / "r3.csv")} == {marker["run_id"]}


# --- 3. float options: one line naming the option ---------------------------------


@pytest.mark.parametrize(
    "option, value",
    [
        ("--lr", "1e300"),
        ("--lr", "1e39"),
        ("--weight-decay", "inf"),
        ("--clip", "1e39"),
        ("--stop-loss", "1e39"),
        ("--stop-loss", "-inf"),
        ("--stop-loss", "nan"),
        ("--transform-bias", "-1e40"),
    ],
)
def test_a_float_option_beyond_float32_is_one_line_naming_it(
    option, value, capsys, tmp_path
):
    args = ["train", *CLI, "--out", str(tmp_path / "o"), option, value]
    with pytest.raises(SystemExit) as caught:
        main(args)
    assert caught.value.code == 2
    err = one_error_line(capsys)
    assert f"argument {option}:" in err and "finite number" in err, err
    assert repr(value) in err and not (tmp_path / "o").exists()


def test_a_negative_float_in_exponent_form_is_a_value(tmp_path):
    args = ["train", *CLI, "--out", str(tmp_path / "o"), "--stop-loss", "-1e5"]
    assert main(args) in (0, 1)  # trained: never an "expected one argument"


def test_a_weight_decay_float32_cannot_hold_names_its_bound(tmp_path, capsys):
    # its own bound (tests/test_round3.py) is far below float32's largest
    args = ["train", *CLI, "--out", str(tmp_path / "o"), "--weight-decay", "1e300"]
    assert main(args) == 2
    assert "weight_decay must be at most" in one_error_line(capsys)


@pytest.mark.parametrize("field", ["lr", "clip", "stop_loss"])
def test_the_api_refuses_what_float32_cannot_hold(field):
    with pytest.raises(ValueError, match=f"{field} must fit in .*float32"):
        tiny(**{field: 1e39})


# --- 4. a damaged checkpoint.pt: one clear line, no resume offered ----------------


def damaged(tmp_path, kind):
    run = tmp_path / "good"
    train(tiny(out=str(run)))
    folder = tmp_path / kind
    folder.mkdir()
    if kind == "dmg1":  # the first half of a real checkpoint
        data = (run / "checkpoint.pt").read_bytes()
        (folder / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    else:  # a text file under the checkpoint's name
        (folder / "checkpoint.pt").write_text("notes about the run\n")
    return folder


@pytest.mark.parametrize("kind", ["dmg1", "dmg6"])
@pytest.mark.parametrize("overwrite", [True, False])
def test_a_damaged_checkpoint_is_one_clear_line(kind, overwrite, tmp_path, capsys):
    folder = damaged(tmp_path, kind)
    before = contents(folder)
    extra = ["--overwrite"] if overwrite else []
    assert main(["train", *CLI, "--out", str(folder), *extra]) == 2
    err = one_error_line(capsys)
    assert str(folder / "checkpoint.pt") in err
    assert "not a readable checkpoint" in err and "move it aside" in err, err
    assert "--resume" not in err and "Errno" not in err
    assert err.count("(") == err.count(")") and err.count("[") == err.count("]")
    what = "cut short" if kind == "dmg1" else "a text file"
    assert what in err
    assert contents(folder) == before


def test_resuming_a_damaged_checkpoint_says_what_it_is(tmp_path, capsys):
    for kind, what in (("dmg1", "cut short"), ("dmg6", "not a torch file")):
        (tmp_path / kind).mkdir()
        folder = damaged(tmp_path / kind, kind)
        assert main(["train", *CLI, "--resume", str(folder)]) == 2
        err = one_error_line(capsys)
        assert "not a readable torch checkpoint" in err and what in err, err
        assert err.count("(") == err.count(")") and "Errno" not in err


# --- 5. TERM, TERM, INT: the first signal is reported ----------------------------


def test_term_term_int_notes_all_three_and_reports_sigterm():
    with signals_deferred() as received:
        note = signal.getsignal(signal.SIGINT)
        try:
            for signum in (signal.SIGTERM, signal.SIGTERM, signal.SIGINT):
                note(signum, None)  # the third must not stop at once
        except KeyboardInterrupt:
            pytest.fail("a SIGINT after two SIGTERMs stopped at once as SIGINT")
        assert received[0] == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C still does
            note(signal.SIGINT, None)


def test_a_run_sent_term_term_int_stops_as_sigterm(tmp_path):
    def signals(event):
        if event["step"] == 2:
            for signum in (signal.SIGTERM, signal.SIGTERM, signal.SIGINT):
                os.kill(os.getpid(), signum)

    config = tiny(steps=50, out=str(tmp_path / "r"))
    with pytest.raises(KeyboardInterrupt) as caught:  # a bare one: the wrong stop
        train(config, callback=signals)
    stop = caught.value
    assert isinstance(stop, TrainingInterrupted), repr(stop)
    assert stop.signum == signal.SIGTERM and stop.exit_code == 143
    assert "SIGTERM after step 2" in str(stop) and stop.checkpoint is not None


# --- 6. one predicate for a batch's structure ------------------------------------


def test_a_batch_is_judged_by_one_predicate(monkeypatch):
    from rhn.owntasks import tensor_task

    x, y = torch.randn(6, 40, 1), torch.randn(40)
    assert _checks.is_batch((x, y)) and _checks.is_batch([x, y, None])
    assert not _checks.is_batch((x,)) and not _checks.is_batch((x, y.tolist()))
    seen = []
    monkeypatch.setattr(_checks, "is_batch", lambda value: seen.append(value))
    with pytest.raises(TypeError, match="pair of tensors"):
        tensor_task(x, y)
    task = dataclasses.replace(TASKS["adding"], name="own_adding")
    with pytest.raises(TypeError, match="its generate must return"):
        train(tiny(task=task))
    assert len(seen) == 2
