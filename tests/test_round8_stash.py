"""Issue 32, round 8: an ``--overwrite`` keeps the log's rows with the run it
replaces until its first checkpoint, and a run an ``--overwrite`` killed
early comes back for ``--resume``."""

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tiny_runs import CLI, contents, one_error_line, rows, tiny

from rhn.__main__ import main
from rhn.tasks import TASKS
from rhn.train import load_checkpoint, load_model, records, train

ROOT = Path(__file__).resolve().parents[1]


def _stashes(folder):
    return sorted(folder.glob(".rhn-replaced-*"))


def _old_run(tmp_path):
    """A finished run in A with its log A/log.csv: the folder, the log, its bytes."""
    out, log = tmp_path / "A", tmp_path / "A" / "log.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    return out, log, log.read_bytes()


def test_overwrite_keeps_the_old_rows_until_its_first_checkpoint(tmp_path):
    out, log, before = _old_run(tmp_path)
    old_id = rows(log)[0]["run"]
    seen = []

    def look(event):  # after each step; the first checkpoint is at the end
        (stash,) = _stashes(out)
        kept = rows(stash / records.LOG_ROWS)
        seen.append(event["step"])
        assert {r["run"] for r in kept} == {old_id} and len(kept) == 3
        assert (stash / records.LOG_ROWS).read_bytes() == before
        assert old_id not in {r["run"] for r in rows(log)}  # the new run's log

    config = tiny(out=str(out), log_csv=str(log), seed=1)
    train(config, overwrite=True, callback=look)
    assert seen == [1, 2, 3]
    assert not _stashes(out)  # gone with the old run at the first checkpoint
    assert [r["step"] for r in rows(log)] == ["1", "2", "3"]
    assert old_id not in {r["run"] for r in rows(log)}


def _flaky(**kwargs):
    """The adding task, whose training batches fail: a run of it fails at its
    first step, before any checkpoint."""

    def generate(n, *args, **kw):
        # a training batch (8 sequences) fails; the start's check that the
        # task draws from its generator (two sequences) passes
        if kw.get("generator") is not None and n > 2:
            raise RuntimeError("no training batch today")
        return TASKS["adding"].generate(n, *args, **kw)

    return dataclasses.replace(TASKS["adding"], name="flaky", generate=generate)


def test_a_failed_overwrite_puts_the_log_rows_back(tmp_path):
    out, log, before = _old_run(tmp_path)
    folder = contents(out)
    config = tiny(task=_flaky(), out=str(out), log_csv=str(log), seed=1)
    with pytest.raises(RuntimeError, match="no training batch") as err:
        train(config, overwrite=True)
    assert any("back in place" in n for n in err.value.__notes__)
    assert log.read_bytes() == before and contents(out) == folder
    assert not _stashes(out)


KILLED = """
import os, signal
from tiny_runs import tiny
from rhn.train import train

def kill(event):
    if event["step"] == 2:
        os.kill(os.getpid(), signal.SIGKILL)

train(tiny(out="A", log_csv="A/log.csv", seed=1), overwrite=True, callback=kill)
"""


def _killed_overwrite(tmp_path):
    """A real --overwrite killed by SIGKILL after two steps, no checkpoint."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}")
    env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


# the killed process's locks are taken over, with a warning
@pytest.mark.filterwarnings("ignore:.*removing the stale lock.*:UserWarning")
def test_a_killed_overwrite_resumes_with_its_log(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out, log, before = _old_run(tmp_path)
    old_id = rows(log)[0]["run"]
    _killed_overwrite(tmp_path)
    (stash,) = _stashes(out)
    assert not (out / "checkpoint.pt").exists()
    assert old_id not in {r["run"] for r in rows(log)}  # the killed run's rows
    capsys.readouterr()
    # the folder holds only the stash: --resume puts the run back and goes on
    assert main(["train", "--resume", "A", "--steps", "5"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(err) == 1 and "put back the run" in err[0] and stash.name in err[0]
    assert not _stashes(out) and load_checkpoint(out)["step"] == 5
    assert log.read_bytes().startswith(before)
    assert [(r["run"], r["step"]) for r in rows(log)] == [
        (old_id, str(s)) for s in range(1, 6)
    ]


# the killed process's locks are taken over, with a warning
@pytest.mark.filterwarnings("ignore:.*removing the stale lock.*:UserWarning")
def test_a_killed_overwrite_gives_back_the_log_at_the_next_start(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    out, log, before = _old_run(tmp_path)
    _killed_overwrite(tmp_path)
    # the same command again: the old run and its rows come back, then go
    argv = ["train", *CLI, "--out", "A", "--log-csv", "A/log.csv", "--overwrite"]
    assert main([*argv, "--seed", "2"]) == 0
    assert "put back the run" in capsys.readouterr().err
    assert not _stashes(out) and len(rows(log)) == 3
    assert log.read_bytes() != before


def test_a_resume_with_two_stashes_says_how_to_put_the_run_back(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    out, log, before = _old_run(tmp_path)
    first = records._set_aside(out, "0123456789abcdef")
    (out / ".rhn-replaced-fedcba987654").mkdir()  # a second kill, say
    capsys.readouterr()
    assert main(["train", "--resume", "A", "--steps", "5"]) == 2
    err = one_error_line(capsys)
    assert "--resume: no checkpoint file at 'A/checkpoint.pt'" in err
    assert first.name in err and "1 more" in err
    assert "move checkpoint.pt, metrics.json, run.json from there into 'A'" in err
    with pytest.raises(FileNotFoundError, match=first.name):
        load_model(out)  # reading a run never moves it
    assert first.is_dir() and not (out / "checkpoint.pt").exists()
