"""Hostile round 12: the CLI and the training loop against tasks that misbehave
and signals other than Ctrl-C.

Each test is one case of the round: a task function that changes the working
directory, a ``generate`` that returns another number of steps than asked,
SIGHUP (a closed terminal), an ``--overwrite`` over a folder that holds only
``run.json``, torch's own words for a full disk, a ``baseline`` that raises,
the task a resume refusal names, and Ctrl-C while an own task is imported.
"""

import os
import signal
import textwrap

import pytest
from tiny_runs import CLI, SWEEP, one_error_line, rows, tiny

import rhn.train.records as records
import rhn.train.run as run
from rhn.__main__ import main
from rhn.train import TrainingInterrupted, load_checkpoint, train

OWN = """\
import os
import torch
from rhn.owntasks import tensor_task
from rhn.tasks import TASKS, Task

g = torch.Generator().manual_seed(0)
X = torch.randn(64, 6, 2, generator=g)
Y = X[:, -3:, 0].sum(1)


def ok():
    return tensor_task(X, Y, batch_first=True, name="ok")


def moves():
    os.makedirs("elsewhere", exist_ok=True)
    os.chdir("elsewhere")
    return TASKS["adding"]


def _steps(extra):
    def generate(n, T, *, seed=None, generator=None, device="cpu", **kw):
        if generator is None:
            generator = torch.Generator().manual_seed(seed or 0)
        x = torch.randn(T + extra, n, 2, generator=generator).to(device)
        return x, x[-1, :, 0]

    return generate


def longer():
    return Task(name="longer", generate=_steps(3), input_size=2, output_size=1,
                loss="mse", readout="last", baseline=lambda T: 1.0)


def global_rng():
    def generate(n, T, *, seed=None, generator=None, device="cpu", **kw):
        x = torch.randn(T, n, 2).to(device)  # ignores seed and generator
        return x, x[-1, :, 0]

    return Task(name="globalrng", generate=generate, input_size=2, output_size=1,
                loss="mse", readout="last", baseline=lambda T: 1.0)


def seeded():
    data = _steps(0)

    def generate(*args, **kwargs):
        torch.rand(1)  # a draw from the global state, not in the data
        return data(*args, **kwargs)

    return Task(name="seeded", generate=generate, input_size=2, output_size=1,
                loss="mse", readout="last", baseline=lambda T: 1.0)


def baseline_raises():
    def baseline(T):
        raise KeyError("nope")

    return Task(name="braise", generate=_steps(0), input_size=2, output_size=1,
                loss="mse", readout="last", baseline=baseline)
"""


@pytest.fixture
def own(tmp_path, monkeypatch):
    """A module ``own12`` of tasks in ``tmp_path``, the current directory."""
    (tmp_path / "own12.py").write_text(OWN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- 1. a task function that changes the working directory ------------------------


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_a_task_that_changes_directory_is_refused(own, capsys, command):
    args = [*CLI[2:], "--out", "cwrun"] if command == "train" else SWEEP
    if command == "sweep":
        args = [*args, "--out", "cw.json"]
    status = main([command, "--task", "own12:moves", *args])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "--task own12:moves" in message and "working directory" in message
    assert str(own) in message and str(own / "elsewhere") in message
    assert os.getcwd() == str(own)  # put back
    assert not (own / "elsewhere" / "cwrun").exists()
    assert not (own / "elsewhere" / "cw.json").exists()


# --- 2. a generate that returns another number of steps ------------------------


def test_a_generate_with_other_steps_than_seq_len_is_refused(own, capsys):
    status = main(["train", "--task", "own12:longer", *CLI[2:], "--out", "r"])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "'longer'" in message and "seq_len=6" in message
    assert "9 steps" in message, message
    assert not (own / "r" / "metrics.json").exists()


def test_the_copy_task_still_trains_with_its_longer_sequences():
    result = train(tiny(task="copy", seq_len=4, steps=1))
    assert result.metrics["steps"] == 1


# --- 3. SIGHUP: a checkpoint, the resume command, exit 129 ---------------------


@pytest.fixture
def hangup_at_step_2(monkeypatch):
    """SIGHUP sent to this process during step 2 (after a handler that fails
    the test is installed, in case the run does not handle it)."""

    def unhandled(signum, frame):
        raise AssertionError("SIGHUP was not handled by the run")

    previous = signal.signal(signal.SIGHUP, unhandled)
    step = run._Run.train_step

    def stepping(self):
        loss = step(self)
        if self.step == 2:
            os.kill(os.getpid(), signal.SIGHUP)
        return loss

    monkeypatch.setattr(run._Run, "train_step", stepping)
    yield
    assert signal.getsignal(signal.SIGHUP) is unhandled  # handler given back
    signal.signal(signal.SIGHUP, previous)


def test_sighup_checkpoints_like_sigterm(tmp_path, hangup_at_step_2):
    out = tmp_path / "hup"
    with pytest.raises(TrainingInterrupted) as caught:
        train(tiny(steps=100, out=str(out)))
    assert caught.value.signum == signal.SIGHUP and caught.value.exit_code == 129
    assert load_checkpoint(out)["step"] == 2


def test_the_cli_exits_129_after_sighup_with_the_resume_command(
    tmp_path, capsys, hangup_at_step_2
):
    out = tmp_path / "hup"
    status = main(["train", *CLI, "--steps", "100", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 129, err
    assert "interrupted by SIGHUP after step 2" in err
    assert err.split("resume with: ")[1].strip().endswith(str(out / "checkpoint.pt"))


def test_a_sweep_exits_129_after_sighup(tmp_path, capsys, hangup_at_step_2):
    out = tmp_path / "s.json"
    status = main(["sweep", *SWEEP, "--steps", "100", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 129, err
    assert "interrupted by SIGHUP" in err


# --- 4. --overwrite over a folder that holds only run.json ----------------------


def test_overwrite_reads_the_run_id_of_run_json_alone(tmp_path, capsys):
    out, log = tmp_path / "hup", tmp_path / "hup.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    (out / "checkpoint.pt").unlink()  # killed before its first checkpoint
    (out / "metrics.json").unlink()
    assert [p.name for p in out.iterdir()] == ["run.json"]
    args = ["train", *CLI, "--out", str(out), "--log-csv", str(log)]
    assert main(args) == 2
    assert "--overwrite" in one_error_line(capsys)
    assert main([*args, "--overwrite"]) == 0, capsys.readouterr().err
    assert [int(r["step"]) for r in rows(log)] == [1, 2, 3]


# --- 5. torch's words for a full disk on a first checkpoint -----------------------


def test_torchs_unexpected_pos_is_a_full_disk_in_one_line(
    tmp_path, monkeypatch, capsys
):
    def full(obj, f, *args, **kwargs):
        f.write(b"partial")
        raise RuntimeError(
            "[enforce fail at inline_container.cc:672] . unexpected pos 8448 vs 8342"
        )

    monkeypatch.setattr(records.torch, "save", full)
    out = tmp_path / "r"
    status = main(["train", *CLI, "--out", str(out)])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "disk is full" in message and "checkpoint.pt" in message


# --- 6. a baseline that raises ---------------------------------------------------


def test_a_baseline_that_raises_is_one_line(own, capsys):
    status = main(["train", "--task", "own12:baseline_raises", *CLI[2:]])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "'braise'" in message and "baseline(6) raised KeyError" in message


# --- 7. a generate that ignores its seed and generator --------------------------


def test_a_generate_that_ignores_its_seed_is_refused_at_the_start(own, capsys):
    status = main(["train", "--task", "own12:global_rng", *CLI[2:], "--out", "r"])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "'globalrng'" in message and "generator in the same state" in message
    assert "global random state" in message
    assert not (own / "r" / "metrics.json").exists()


def test_the_check_leaves_a_seeded_tasks_run_as_it_was(own, monkeypatch):
    import own12

    task = own12.seeded()
    checked = train(tiny(task=task, dropout=0.25))
    monkeypatch.setattr(run, "_check_deterministic", lambda *args: None)
    unchecked = train(tiny(task=task, dropout=0.25))  # masks: the global state
    assert checked.history["train_loss"] == unchecked.history["train_loss"]


def test_a_generate_that_honours_its_generator_trains(own):
    import own12

    assert train(tiny(task=own12.seeded())).metrics["steps"] == 3


# --- 8. the resume refusal names the task the run trained -------------------------


def test_the_resume_refusal_names_the_saved_task(own, capsys):
    out = own / "d3"
    assert main(["train", "--task", "own12:ok", *CLI[2:], "--out", str(out)]) == 0
    capsys.readouterr()
    status = main(["train", "--task", "adding", "--resume", str(out)])
    message = one_error_line(capsys)
    assert status == 2, message
    assert "your own task named 'ok'" in message, message


# --- 9. a rerun of an interrupted sweep ---------------------------------------


@pytest.fixture
def interrupted_sweep(tmp_path, monkeypatch, capsys):
    """A sweep of two seeds stopped by SIGTERM in its second run: one run kept."""
    out = tmp_path / "cs.json"
    step, calls = run._Run.train_step, []

    def stepping(self):
        calls.append(self.step)
        loss = step(self)
        if len(calls) == 5:  # step 2 of the second run
            os.kill(os.getpid(), signal.SIGTERM)
        return loss

    monkeypatch.setattr(run._Run, "train_step", stepping)
    args = ["sweep", *SWEEP[:-1], "0,1", "--out", str(out)]
    assert main(args) == 143
    monkeypatch.setattr(run._Run, "train_step", step)
    capsys.readouterr()
    return args


def test_a_rerun_without_resume_offers_resume(interrupted_sweep, capsys):
    assert main(interrupted_sweep) == 2
    message = one_error_line(capsys)
    assert "interrupted sweep (1 runs finished)" in message
    assert "--resume" in message and "--overwrite" in message
    assert main([*interrupted_sweep, "--resume"]) == 0


def test_a_resume_with_another_grid_names_the_values(interrupted_sweep, capsys):
    assert main([*interrupted_sweep, "--grid", "depth=1,2", "--resume"]) == 2
    message = one_error_line(capsys)
    assert 'grid: {} -> {"depth":[1,2]}' in message, message
    other_seeds = [*interrupted_sweep[:-3], "0,2", *interrupted_sweep[-2:]]
    assert main([*other_seeds, "--resume"]) == 2
    assert "seeds: [0,1] -> [0,2]" in one_error_line(capsys)


# --- 10. a checkpoint that holds objects which would run code ------------------


class _Runs:
    def __reduce__(self):
        return (os.getcwd, ())  # harmless, and still refused by weights_only


def evil_run(tmp_path):
    import torch

    out = tmp_path / "r"
    train(tiny(out=str(out)))
    torch.save({"model": _Runs()}, out / "checkpoint.pt")
    return out


def test_a_checkpoint_with_code_is_named_as_such(tmp_path, capsys):
    from rhn.train import load_model

    out = evil_run(tmp_path)
    with pytest.raises(ValueError, match="could run code") as caught:
        load_model(out)
    assert "cut short" not in str(caught.value)
    assert main(["train", "--resume", str(out)]) == 2
    message = one_error_line(capsys)
    assert "could run code" in message and "cut short" not in message
    assert main(["train", *CLI, "--out", str(out), "--overwrite"]) == 2
    message = one_error_line(capsys)
    assert "could run code" in message and "(overwrite=)" not in message


# --- 11. advice that the next command refuses ------------------------------------


def test_a_foreign_metrics_json_is_not_offered_to_overwrite(tmp_path, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "metrics.json").write_text('{"a": 1}')
    assert main(["train", *CLI, "--out", str(out)]) == 2
    message = one_error_line(capsys)
    assert "not a metrics.json that rhn wrote" in message
    assert "--overwrite (overwrite=True) to replace it" not in message
    assert "(resume=)" not in message


def test_another_runs_log_in_a_fresh_out_is_not_offered_to_overwrite(tmp_path, capsys):
    log = tmp_path / "other.csv"
    train(tiny(out=str(tmp_path / "other"), log_csv=str(log)))
    (tmp_path / "mine.csv").symlink_to(log)
    args = ["train", *CLI, "--out", str(tmp_path / "new")]
    args += ["--log-csv", str(tmp_path / "mine.csv")]
    assert main(args) == 2
    message = one_error_line(capsys)
    assert "already holds rows of a run" in message
    assert "pass overwrite" not in message
    assert main([*args, "--overwrite"]) == 2  # as the advice says
    one_error_line(capsys)


def test_a_log_that_overwrite_takes_is_still_offered(tmp_path, capsys):
    out, log = tmp_path / "r", tmp_path / "r.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    args = ["train", *CLI, "--out", str(out), "--log-csv", str(log)]
    assert main(args) == 2
    assert "--overwrite" in one_error_line(capsys)
    assert main([*args, "--overwrite"]) == 0


# --- 12. no advice to delete what is not a plain file of the user's -------------


def test_overwrite_through_a_symlink_never_advises_deleting(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("the user's own notes\n")
    (tmp_path / "stdout").symlink_to(tmp_path / "notes.txt")  # as /dev/stdout
    out = tmp_path / "stdout"
    assert main(["sweep", *SWEEP, "--out", str(out), "--overwrite"]) == 2
    message = one_error_line(capsys)
    assert "not a sweep record" in message and "notes.txt" in message
    assert "delete" not in message
    assert (tmp_path / "notes.txt").read_text() == "the user's own notes\n"


def test_overwrite_of_a_pipe_says_it_is_no_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ValueError, match="not a regular file, it is a named pipe"):
        records.check_record_out(tmp_path / "pipe", True, kind="sweep")


# --- 13. Ctrl-C while the own task's module is imported ----------------------------


def test_ctrl_c_during_the_import_of_a_task_is_an_interrupt(own, capsys):
    (own / "slowmod.py").write_text(
        textwrap.dedent(
            """\
            raise KeyboardInterrupt

            def make():
                pass
            """
        )
    )
    status = main(["train", "--task", "slowmod:make", *CLI[2:]])
    err = capsys.readouterr().err
    assert status == 130, err
    assert "interrupted" in err and "slowmod" in err
    assert "raised KeyboardInterrupt" not in err
