"""No run is ever lost, and the command line fails cleanly (issue 13).

Interrupts write a checkpoint that resumes bit for bit, bad ``resume=`` files
and ``--out`` paths are refused before any training, an existing run is not
overwritten by accident, diverged runs say so, the caller's global state is
restored, and every usage error of ``train`` and ``bench`` is one line on
stderr with exit status 2.
"""

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

import pytest
import torch

import rhn.train as rt
from rhn.__main__ import main
from rhn.train import TrainConfig, TrainingInterrupted, load_checkpoint, train

TINY = {
    "seq_len": 6,
    "hidden_size": 8,
    "depth": 2,
    "transform_bias": 0.0,
    "lr": 2e-2,
    "batch_size": 16,
    "eval_samples": 64,
    "progress": False,
    "device": "cpu",
}

CLI_TINY = ["--seq-len", "6", "--hidden-size", "8", "--depth", "2", "--batch-size"]
CLI_TINY += ["16", "--eval-samples", "64", "--device", "cpu", "--no-progress"]


def tiny(**overrides):
    return TrainConfig.for_task("adding", **{**TINY, **overrides})


# --- global state of the caller -------------------------------------------------


def test_train_restores_the_callers_threads_and_random_state():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        torch.manual_seed(1234)
        expected = torch.rand(3)
        torch.manual_seed(1234)
        train(tiny(steps=2, threads=1))
        assert torch.get_num_threads() == 2
        assert torch.equal(torch.rand(3), expected)
    finally:
        torch.set_num_threads(before)


def test_state_is_restored_when_the_run_fails():
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)

    def poison(event):
        with torch.no_grad():
            next(event["model"].parameters()).fill_(float("nan"))

    with pytest.raises(FloatingPointError):
        train(tiny(steps=5), callback=poison)
    assert torch.equal(torch.rand(2), expected)


# --- mixed precision on the CPU: the AMP code path in CI ------------------------


def test_amp_true_runs_bfloat16_autocast_on_the_cpu_with_the_default_model():
    seen = []

    def spy(event):
        seen.append(torch.is_autocast_enabled("cpu"))

    amp = train(tiny(steps=4, eval_every=2, amp=True))
    plain = train(tiny(steps=4, eval_every=2, amp=False), callback=spy)
    default = train(tiny(steps=4, eval_every=2))  # amp=None: CUDA only
    assert amp.model.core.impl != "loop"  # the default path, not the reference
    assert all(map(torch.isfinite, map(torch.tensor, amp.history["train_loss"])))
    # bfloat16 rounding changes the numbers; off (and the default) does not
    assert amp.history["train_loss"] != plain.history["train_loss"]
    assert default.history == plain.history
    assert seen == [False] * 4  # autocast is only around the forward pass
    assert abs(amp.history["train_loss"][0] - plain.history["train_loss"][0]) < 0.05


def test_amp_resume_equals_uninterrupted(tmp_path):
    config = tiny(steps=6, eval_every=3, amp=True, out=str(tmp_path))
    full = train(tiny(steps=6, eval_every=3, amp=True))
    train(config, callback=lambda e: e["step"] == 3)
    resumed = train(config, resume=tmp_path)
    assert resumed.history["train_loss"] == full.history["train_loss"]


# --- resume= with the wrong file --------------------------------------------------


def _write(path, data):
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    train(tiny(steps=3, out=str(out)))
    return out


def test_resume_accepts_the_run_directory(finished_run):
    result = train(tiny(steps=3, out=str(finished_run)), resume=finished_run)
    assert result.metrics["steps"] == 3


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda d, run: d / "nope.pt", FileNotFoundError, ["resume", "no checkpoint"]),
        (lambda d, run: d, FileNotFoundError, ["checkpoint.pt"]),  # empty directory
        (
            lambda d, run: _write(d / "empty.pt", b""),
            ValueError,
            ["empty (0 bytes)", "checkpoint.pt"],
        ),
        (
            lambda d, run: _write(
                d / "half.pt", (run / "checkpoint.pt").read_bytes()[:2000]
            ),
            ValueError,
            ["not a readable torch checkpoint"],
        ),
        (
            lambda d, run: run / "metrics.json",
            ValueError,
            ["metrics.json", "is a JSON record, not a checkpoint"],
        ),
        (
            lambda d, run: (
                torch.save(rt.make_model(tiny()).state_dict(), d / "w.pt") or d / "w.pt"
            ),
            ValueError,
            ["not a checkpoint of rhn.train", "without"],
        ),
        (
            lambda d, run: (
                torch.save(
                    {
                        k: v
                        for k, v in load_checkpoint(run / "checkpoint.pt").items()
                        if k != "model"
                    },
                    d / "nomodel.pt",
                )
                or d / "nomodel.pt"
            ),
            ValueError,
            ["without ['model']"],
        ),
    ],
    ids=[
        "missing",
        "empty-dir",
        "empty",
        "truncated",
        "json",
        "state-dict",
        "no-model",
    ],
)
def test_resume_refuses_wrong_files(tmp_path, finished_run, make, error, words):
    path = make(tmp_path, finished_run)
    with pytest.raises(error) as info:
        train(tiny(steps=3), resume=path)
    for word in words:
        assert word in str(info.value)


def test_resume_of_a_wrong_type():
    with pytest.raises(TypeError, match="resume must be a path"):
        train(tiny(steps=3), resume=3)


# --- sizes: num_params is never silently ignored ----------------------------------


def test_num_params_and_hidden_size_together_are_refused():
    with pytest.raises(ValueError, match="not both") as info:
        TrainConfig(hidden_size=32, num_params=5000)
    assert "hidden_size=None" in str(info.value)
    # a budget given as an override replaces the task's default size
    assert TrainConfig.for_task("adding", num_params=5000).hidden_size is None
    assert TrainConfig.for_task("copy", num_params=5000).hidden_size is None


def test_num_params_alone_sizes_the_model_as_on_the_command_line():
    from rhn import matched_hidden_size
    from rhn.train import make_model
    from rhn.train.config import HIDDEN_SIZE

    # the Python API as the command line: --num-params alone, no hidden_size
    config = TrainConfig(model="gru", num_params=5000)
    assert config.hidden_size is None and config.num_params == 5000
    H = matched_hidden_size("gru", 2, 5000)
    assert make_model(config).core.hidden_size == H != HIDDEN_SIZE
    assert config == TrainConfig(model="gru", hidden_size=None, num_params=5000)
    # neither: the default size; a size alone: that size
    default = TrainConfig()
    assert default.hidden_size == HIDDEN_SIZE == 48 and default.num_params is None
    assert type(default.hidden_size) is int  # a plain int, as given
    assert TrainConfig(hidden_size=20).hidden_size == 20
    with pytest.raises(ValueError, match="both are None"):
        TrainConfig(hidden_size=None)  # None asks for num_params
    # both, one line naming both and how to size by the budget
    with pytest.raises(ValueError) as info:
        TrainConfig(hidden_size=48, num_params=5000)
    message = str(info.value)
    assert "\n" not in message
    for word in ("hidden_size=48", "num_params=5000", "not both"):
        assert word in message


# --- out: checked before the first step -------------------------------------------


@pytest.mark.parametrize("where", ["file", "under-file"])
def test_out_that_cannot_be_a_directory_fails_before_training(tmp_path, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    out = blocker if where == "file" else blocker / "run"
    steps = []
    with pytest.raises(ValueError, match="out must be a directory") as info:
        train(tiny(steps=3, out=str(out)), callback=steps.append)
    assert steps == []
    assert str(out) in str(info.value)


# --- interrupts: a checkpoint that resumes bit for bit ----------------------------


def test_sigint_in_process_checkpoints_and_resumes_exactly(tmp_path):
    full = train(tiny(steps=8, eval_every=3))

    def ctrl_c(event):
        if event["step"] == 4:
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.getsignal(signal.SIGINT)
    config = tiny(steps=8, eval_every=3, out=str(tmp_path))
    with pytest.raises(TrainingInterrupted) as info:
        train(config, callback=ctrl_c)
    stop = info.value
    assert isinstance(stop, KeyboardInterrupt)
    assert (stop.step, stop.exit_code) == (4, 130)
    assert stop.checkpoint == tmp_path / "checkpoint.pt"
    assert "SIGINT after step 4" in str(stop)
    assert signal.getsignal(signal.SIGINT) is previous  # handler restored
    assert load_checkpoint(stop.checkpoint)["step"] == 4
    resumed = train(config, resume=stop.checkpoint)
    assert resumed.history == full.history  # evaluations included: none was added
    for p, q in zip(full.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_sigterm_without_out_still_stops_cleanly():
    def term(event):
        if event["step"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(TrainingInterrupted) as info:
        train(tiny(steps=50), callback=term)
    assert (info.value.step, info.value.exit_code) == (2, 143)
    assert info.value.checkpoint is None


def test_cli_ctrl_c_writes_a_checkpoint_and_the_resume_command(tmp_path):
    """A real SIGINT from outside the process, as a terminal's Ctrl-C sends."""
    signum, code = signal.SIGINT, 130
    out = tmp_path / "run"
    args = ["train", *CLI_TINY, "--steps", "3000", "--eval-every", "1000"]
    args += ["--checkpoint-every", "5", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rhn", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    while not (out / "checkpoint.pt").exists() and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never wrote its first checkpoint"
        time.sleep(0.01)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    name = signal.Signals(signum).name
    assert f"interrupted by {name} after step" in stderr
    step = load_checkpoint(out / "checkpoint.pt")["step"]
    assert 5 <= step < 3000
    command = next(
        line.removeprefix("resume with: ")
        for line in stderr.splitlines()
        if line.startswith("resume with: ")
    )
    words = shlex.split(command)
    assert words[:4] == ["python", "-m", "rhn", "train"]
    assert words[-2:] == ["--resume", str(out / "checkpoint.pt")]
    # the printed command parses to the same config as the interrupted run
    from rhn.__main__ import train_parser

    given = vars(train_parser().parse_args(words[4:]))
    assert given["out"] == str(out) and given["steps"] == 3000
    assert given["progress"] is False and given["hidden_size"] == 8


def test_cli_sigterm_exits_143_after_a_checkpoint(tmp_path, capsys):
    """SIGTERM (what a batch scheduler sends) during ``main`` in this process."""
    out = tmp_path / "run"
    sized = CLI_TINY[:2] + CLI_TINY[4:]  # without --hidden-size
    assert "--hidden-size" not in sized
    args = ["train", *sized, "--steps", "100000", "--checkpoint-every", "3"]
    args += ["--eval-every", "100000", "--out", str(out), "--num-params", "300"]
    done = threading.Event()

    def terminate_once_running():
        while not (out / "checkpoint.pt").exists():
            if done.wait(0.005):
                return  # main returned without training: never signal
        os.kill(os.getpid(), signal.SIGTERM)

    watcher = threading.Thread(target=terminate_once_running)
    watcher.start()
    try:
        status = main(args)
    finally:
        done.set()
        watcher.join()
    err = capsys.readouterr().err
    assert status == 143, err
    assert "interrupted by SIGTERM after step" in err
    command = err.split("resume with: ")[1].strip()
    assert "--num-params 300" in command and "--hidden-size" not in command
    assert command.endswith(f"--resume {out / 'checkpoint.pt'}")
    assert load_checkpoint(out / "checkpoint.pt")["step"] >= 3


# --- an existing run is never overwritten by accident ------------------------------


def test_cli_refuses_an_existing_run_unless_resumed_or_overwritten(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", *CLI_TINY, "--steps", "4", "--eval-every", "2", "--out", str(out)]
    assert main(args) == 0
    first = (out / "metrics.json").read_text()
    capsys.readouterr()
    assert main([*args, "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a run" in err
    assert "--resume" in err and "--overwrite" in err
    assert (out / "metrics.json").read_text() == first  # untouched
    assert main([*args, "--resume", str(out / "checkpoint.pt")]) == 0
    assert main([*args, "--seed", "1", "--overwrite"]) == 0
    second = json.loads((out / "metrics.json").read_text())
    assert second["config"]["seed"] == 1


# --- divergence is reported in metrics.json and the exit status -----------------


def test_finite_explosion_is_marked_diverged(tmp_path):
    def explode(event):
        if event["step"] == 3:
            with torch.no_grad():
                event["model"].head.bias.fill_(1e4)  # finite, but absurd
            return True

    result = train(tiny(steps=20, eval_every=10, out=str(tmp_path)), callback=explode)
    assert result.metrics["diverged"] is True
    assert result.metrics["test_loss"] > rt.DIVERGED_FACTOR * result.metrics["baseline"]
    assert json.loads((tmp_path / "metrics.json").read_text())["diverged"] is True
    assert train(tiny(steps=20, eval_every=10)).metrics["diverged"] is False


def test_nan_loss_writes_metrics_marked_diverged(tmp_path):
    def poison(event):
        if event["step"] == 2:
            with torch.no_grad():
                next(event["model"].parameters()).fill_(float("nan"))

    with pytest.raises(FloatingPointError, match="step 3"):
        train(tiny(steps=10, out=str(tmp_path)), callback=poison)
    record = json.loads((tmp_path / "metrics.json").read_text())
    assert record["diverged"] is True and "step 3" in record["error"]
    assert record["history"]["step"] == [1, 2]


def test_cli_exit_status_of_a_diverged_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(rt.run, "DIVERGED_FACTOR", 1e-9)  # every run counts as diverged
    args = ["train", *CLI_TINY, "--steps", "2", "--out", str(tmp_path / "r")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "diverged" in err
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["diverged"]


# --- every CLI usage error: one line on stderr, exit status 2 --------------------


def _bad_cli_cases(tmp):
    blocker = tmp / "file"
    blocker.write_text("x")
    (tmp / "empty.pt").write_bytes(b"")
    return [
        ["train", "--steps", "0"],
        ["train", "--steps", "x"],
        ["train", "--model", "transformer"],
        ["train", "--task", "sorting"],
        ["train", "--lr", "-1"],
        ["train", "--seed", "-1"],
        ["train", "--seed", str(2**32)],
        ["train", "--device", "tpu"],
        ["train", "--transform-bias", "1e39"],
        ["train", "--hidden-size", "8", "--num-params", "100"],
        ["train", "--out", str(blocker)],
        ["train", "--out", str(blocker / "run")],
        ["train", "--out", str(tmp / "a"), "--resume", str(tmp / "missing.pt")],
        ["train", "--out", str(tmp / "b"), "--resume", str(tmp / "empty.pt")],
        ["train", "--frobnicate"],
        ["bench", "--batch", "0"],
        ["bench", "--batch", "4", "-1"],
        ["bench", "--steps", "0"],
        ["bench", "--repeats", "0"],
        ["bench", "--warmup", "-1"],
        ["bench", "--threads", "0"],
        ["bench", "--seed", "-5"],
        ["bench", "--device", "tpu"],
        ["bench", "--models", "transformer"],
        ["bench", "--out", str(tmp)],
        ["bench", "--out", str(tmp / "no" / "such" / "dir.json")],
        ["sweep", "--grid"],
        ["sweep", "--seeds", "0", "--out", str(tmp / "s.json"), "--grid", "model=x"],
        ["frobnicate"],
        [],  # no command: it printed the help on stdout
    ]


def test_every_cli_usage_error_is_one_line_with_status_2(tmp_path, capfd):
    for argv in _bad_cli_cases(tmp_path):
        try:
            status = main(argv)
        except SystemExit as exit:  # argparse's own errors
            status = exit.code
        out, err = capfd.readouterr()
        assert status == 2, argv
        assert err.count("\n") == 1 and err.startswith("python -m rhn"), (argv, err)
        assert "error: " in err and "Traceback" not in err, argv
        assert out == "", argv


def test_bench_out_is_checked_before_any_timing(tmp_path, capfd):
    start = time.perf_counter()
    assert main(["bench", "--out", str(tmp_path)]) == 2  # the defaults time minutes
    assert time.perf_counter() - start < 10
    assert "--out must be a file name" in capfd.readouterr().err


def test_cli_names_are_case_insensitive(tmp_path, capsys):
    args = ["train", "--task", "ADDING", "--model", "LSTM", "--lr-schedule", "Cosine"]
    at = CLI_TINY.index("--depth")  # the LSTM has none (refused)
    args += [*CLI_TINY[:at], *CLI_TINY[at + 2 :], "--steps", "2"]
    args += ["--out", str(tmp_path / "r")]
    assert main(args) == 0
    record = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (record["task"], record["model"]) == ("adding", "lstm")


def test_ctrl_c_in_any_command_exits_130_without_a_traceback(monkeypatch, capsys):
    import rhn.__main__ as cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.HANDLERS, "bench", "rhn.__main__:_interrupted_for_test")
    monkeypatch.setattr(cli, "_interrupted_for_test", interrupted, raising=False)
    assert main(["bench"]) == 130
    assert capsys.readouterr().err == "python -m rhn bench: interrupted\n"


# --- sweep: a bad --out fails before the first run -------------------------------


def test_sweep_out_is_checked_before_any_training(tmp_path, capfd, monkeypatch):
    import rhn.experiments as ex

    def no_training(config, **kwargs):
        raise AssertionError("trained before --out was checked")

    monkeypatch.setattr(ex, "train", no_training)
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me\n")
    cases = [
        ([str(tmp_path)], "must be a file name"),  # a directory
        ([str(tmp_path), "--overwrite"], "must be a file name"),
        ([str(blocker / "s.json")], "can be written"),  # under a file
    ]
    for out, words in cases:
        argv = ["sweep", "--seeds", "0", *CLI_TINY, "--steps", "2", "--out", *out]
        assert main(argv) == 2, out
        out_text, err = capfd.readouterr()
        assert err.count("\n") == 1 and words in err and "Traceback" not in err, err
    assert blocker.read_text() == "keep me\n" and tmp_path.is_dir()


def test_an_interrupted_sweep_keeps_its_runs_and_resumes(tmp_path, capfd, monkeypatch):
    import rhn.experiments as ex
    from rhn.experiments import load_sweep

    real, calls = ex.train, []

    def interrupted_second_run(config, **kwargs):
        calls.append(config)
        if len(calls) == 2:
            raise TrainingInterrupted(signal.SIGTERM, 1, None)
        return real(config, **kwargs)

    monkeypatch.setattr(ex, "train", interrupted_second_run)
    out = tmp_path / "s.json"
    argv = ["sweep", "--seeds", "0,1,2", *CLI_TINY, "--steps", "2", "--out", str(out)]
    assert main(argv) == 143
    err = capfd.readouterr().err.splitlines()
    assert err[0].startswith("[1/3]") and len(err) == 3
    assert "SIGTERM" in err[1] and f"1 runs finished now are kept in {out}" in err[1]
    assert "checkpoint" not in err[1]  # a sweep writes none; the old text said so
    assert len(load_sweep(out, allow_incomplete=True)["runs"]) == 1
    command = shlex.split(err[2].removeprefix("resume with: "))
    assert command[:4] == ["python", "-m", "rhn", "sweep"] and command[-1] == "--resume"

    assert main([*command[3:-1], "--lr", "0.5", "--resume"]) == 2  # other settings
    assert "base.lr" in capfd.readouterr().err

    calls[:] = [None, None]  # the printed command trains the two missing runs only
    assert main(command[3:]) == 0
    assert len(calls) == 4 and [c.seed for c in calls[2:]] == [1, 2]
    resumed = load_sweep(out)
    whole = tmp_path / "whole.json"
    assert main([*argv[:-1], str(whole)]) == 0
    for a, b in zip(resumed["runs"], load_sweep(whole)["runs"], strict=True):
        assert (a["config"], a["history"]) == (b["config"], b["history"])
    capfd.readouterr()

    assert main(command[3:]) == 2  # finished: nothing to resume
    assert "nothing to continue" in capfd.readouterr().err
    calls[:] = [None]  # interrupted in the first run: the file is not touched
    second = tmp_path / "t.json"
    assert main([*argv[:-1], str(second)]) == 143
    assert "no run finished this time" in capfd.readouterr().err
    assert not second.exists()


def test_bench_keeps_an_existing_out_file_unless_overwrite(tmp_path, capfd):
    out = tmp_path / "results-cpu.json"
    earlier = '{"meta": {"earlier": "numbers"}, "results": []}\n'  # a bench record
    out.write_text(earlier)
    argv = ["bench", "--batch", "1", "--steps", "2", "--input-size", "2"]
    argv += ["--hidden-size", "3", "--depth", "1", "--repeats", "1", "--warmup", "0"]
    argv += ["--models", "rhn-loop", "--out", str(out)]
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "--overwrite" in err and "Traceback" not in err
    assert out.read_text() == earlier
    assert main([*argv, "--overwrite"]) == 0
    assert "meta" in json.loads(out.read_text())
