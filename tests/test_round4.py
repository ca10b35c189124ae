"""Hostile round 4 (issue 32): nothing a user had is lost, no wrong result is silent.

Each test is a case a hostile user tried against the trainer: ``--overwrite``
refused by a later check after it had deleted the old run, ``--log-csv``
naming a data file, a run's own files, another run's log or the parent's log
of a branch, two runs logging into one file, rows a crash left behind, an own
task named like a built-in one, masks, labels and targets that the package
took without a word, and messages that were not one line.
"""

import dataclasses
import json

import pytest
import torch
from tiny_runs import CLI, SWEEP, TINY, contents, one_error_line, rows, tiny  # noqa: E402, F401

from rhn import experiments
from rhn.__main__ import main
from rhn.owntasks import tensor_task
from rhn.tasks import get_task
from rhn.train import CSVLogger, Logger, TrainConfig, load_model, train
from rhn.train.model import estimate_bytes


def own(T=6, N=40, name="mine", **kwargs):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(T, N, 2, generator=g)
    return tensor_task(x, x[:, :, 0].sum(0), name=name, **kwargs)


# --- 1. --overwrite: every set-up check before anything is deleted -------------


def _dangling(tmp_path):
    link = tmp_path / "gone"
    link.symlink_to(tmp_path / "no-such-folder")
    return {"log_csv": str(link / "log.csv")}


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda tmp: {"batch_size": 10**12}, "too large"),
        (lambda tmp: {"hidden_size": 10**6}, "too large"),
        (lambda tmp: {"task": own(), "seq_len": 7}, "seq_len"),
        (_dangling, "log_csv"),
    ],
    ids=["batch-size", "hidden-size", "own-task-seq-len", "dangling-log-folder"],
)
def test_overwrite_refused_by_a_set_up_check_keeps_the_old_run(tmp_path, change, words):
    out = tmp_path / "run"
    train(tiny(out=str(out)))
    before = contents(out)
    config = dataclasses.replace(tiny(out=str(out)), **change(tmp_path))
    with pytest.raises(ValueError, match=words):
        train(config, overwrite=True)
    assert contents(out) == before  # the old run, whole


def test_the_cli_overwrite_refused_by_the_memory_check_keeps_the_old_run(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "ov"]) == 0
    before = contents(tmp_path / "ov")
    capsys.readouterr()
    argv = ["train", *CLI, "--out", "ov", "--overwrite", "--batch-size", "10" * 6]
    assert main(argv) == 2
    assert "too large" in one_error_line(capsys)
    assert contents(tmp_path / "ov") == before


# --- 2. and 3. --log-csv never replaces what is not a log of this kind ----------


def test_overwrite_never_truncates_a_file_that_is_not_a_training_log(tmp_path):
    out = tmp_path / "run"
    train(tiny(out=str(out)))
    data = tmp_path / "mydata.csv"
    data.write_text("a,b\n1,2\n")
    record = tmp_path / "s.json"
    record.write_text('{"runs": []}\n')
    for victim in (data, record):
        with pytest.raises(ValueError, match="log_csv: .* is not a training log"):
            train(tiny(out=str(out), log_csv=str(victim)), overwrite=True)
    assert data.read_text() == "a,b\n1,2\n" and record.read_text() == '{"runs": []}\n'
    assert (out / "checkpoint.pt").exists()
    # a log of this kind is replaced, as overwrite promises
    log = tmp_path / "log.csv"
    train(tiny(out=str(out), log_csv=str(log)), overwrite=True)
    train(tiny(out=str(out), log_csv=str(log)), overwrite=True)
    assert len(rows(log)) == TINY["steps"]


@pytest.mark.parametrize(
    "name", ["metrics.json", "checkpoint.pt", "run.json", "run.lock", "run"]
)
def test_a_log_is_never_a_file_of_a_run_folder(tmp_path, name):
    other = tmp_path / "other"
    train(tiny(out=str(other)))
    before = contents(other)
    with pytest.raises(ValueError, match="is a file of the run folder"):
        train(tiny(out=str(tmp_path / "new"), log_csv=str(other / name)))
    assert contents(other) == before
    # in the run's own folder, even before it holds anything
    out = tmp_path / "fresh"
    with pytest.raises(ValueError, match="is a file of the run folder"):
        train(tiny(out=str(out), log_csv=str(out / name)))
    assert not (out / "checkpoint.pt").exists()


# --- 4. rows carry their run; no two runs write one log -------------------------


def test_a_resume_never_appends_to_another_runs_log(tmp_path):
    shared = tmp_path / "shared.csv"
    train(tiny(out=str(tmp_path / "A"), log_csv=str(shared)))
    train(tiny(out=str(tmp_path / "B")))
    before = shared.read_bytes()
    with pytest.raises(ValueError, match="holds rows of another run"):
        train(
            tiny(out=str(tmp_path / "B"), log_csv=str(shared), steps=5),
            resume=tmp_path / "B",
        )
    assert shared.read_bytes() == before
    run_a = json.loads((tmp_path / "A" / "run.json").read_text())["run_id"]
    assert {r["run"] for r in rows(shared)} == {run_a}


def test_a_branch_never_appends_to_its_parents_log(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "BA", "--log-csv", "BA/log.csv"]) == 0
    before = (tmp_path / "BA" / "log.csv").read_bytes()
    capsys.readouterr()
    assert main(["train", "--resume", "BA", "--out", "BB", "--steps", "5"]) == 2
    assert "a branch must not append to its parent's log" in one_error_line(capsys)
    assert (tmp_path / "BA" / "log.csv").read_bytes() == before
    # its own log: the branch's rows, steps 4 and 5
    argv = ["train", "--resume", "BA", "--out", "BB", "--steps", "5"]
    assert main([*argv, "--log-csv", "BB/log.csv"]) == 0
    assert [r["step"] for r in rows(tmp_path / "BB" / "log.csv")] == ["4", "5"]
    assert (tmp_path / "BA" / "log.csv").read_bytes() == before


def test_two_runs_started_at_once_never_share_a_log(tmp_path):
    log = tmp_path / "same.csv"
    refused = []

    class SecondRun(Logger):
        """Starts a second run with the same log after the first one's check,
        before it wrote anything: the moment two processes race."""

        def check(self, info):
            try:
                train(tiny(out=str(tmp_path / "second"), log_csv=str(log)))
            except ValueError as err:
                refused.append(str(err))

        def log(self, row):
            pass

    train(tiny(out=str(tmp_path / "first")), loggers=[CSVLogger(log), SecondRun()])
    assert len(refused) == 1 and "is in use by another run" in refused[0]
    assert [r["step"] for r in rows(log)] == ["1", "2", "3"]  # one run's rows
    assert not (tmp_path / "same.csv.lock").exists()  # let go when it ended


# --- 5. an own task named like a built-in one -----------------------------------


def test_an_own_task_named_like_a_built_in_one_is_never_taken_for_it(tmp_path):
    with pytest.raises(ValueError, match="name must not be a built-in task's"):
        own(name="adding")
    # a Task made by hand under a built-in name: refused since hostile round
    # 20 (its record named the built-in task, with its own baseline); runs
    # made before are still told apart by their fingerprint
    fake = dataclasses.replace(own(), name="adding")
    with pytest.raises(ValueError, match="may not take a built-in task's name"):
        train(tiny(task=fake, out=str(tmp_path / "nm")))
    assert not (tmp_path / "nm").exists()
    built = tmp_path / "built"
    train(tiny(out=str(built)))
    with pytest.raises(ValueError, match="may not take a built-in task's name"):
        train(tiny(task=fake, out=str(built), steps=5), resume=built)
    with pytest.raises(ValueError, match="the built-in task 'adding', not your own"):
        load_model(built, fake)


# --- 6. a split whose mask keeps nothing; strict JSON on stdout -----------------


def test_a_held_out_split_whose_mask_keeps_nothing_is_refused():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 10, 1, generator=g)  # (N, T, I)
    y = x.squeeze(-1).cumsum(1)
    m = torch.zeros(50, 10, dtype=torch.bool)
    m[:40] = True  # the last ten sequences, the held-out ones, have no labels
    with pytest.raises(ValueError, match="valid_fraction: the last 10 sequences"):
        tensor_task(x, y, mask=m, batch_first=True)
    m[45:] = True
    task = tensor_task(x, y, mask=m, batch_first=True)  # a kept target: fine
    assert task.baseline(10) > 0


def test_the_cli_summary_is_strict_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # a NaN baseline is refused since round 9: a held-out loss that
    # overflows (targets of 1e30 in the held-out set alone) is non-finite
    (tmp_path / "infloss.py").write_text(
        "import dataclasses\n"
        "from rhn.tasks import get_task\n"
        "def make():\n"
        "    task = get_task('adding')\n"
        "    def generate(n, seq_len, generator=None, **kwargs):\n"
        "        x, y = task.generate(n, seq_len, generator=generator, **kwargs)\n"
        "        return (x, y) if generator is not None else (x, y + 1e30)\n"
        "    return dataclasses.replace(task, name='infloss', generate=generate)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["train", *CLI[2:], "--task", "infloss:make", "--out", "n"]
    assert main(argv) == 1  # a held-out loss of inf: diverged
    text = capsys.readouterr().out
    summary = json.loads(text[: text.rindex("}") + 1], parse_constant=_refuse)
    assert summary["test_loss"] is None and summary["ratio_to_baseline"] is None
    assert summary["non_finite"] == {"test_loss": "inf", "ratio_to_baseline": "inf"}
    assert summary["diverged"] is True


def _refuse(name):
    raise AssertionError(f"not strict JSON: {name}")


# --- 7. rows a crash left are told apart ----------------------------------------


def test_rows_a_crash_left_past_the_checkpoint_keep_their_own_segment(tmp_path):
    out, log = tmp_path / "run", tmp_path / "log.csv"
    train(tiny(out=str(out), log_csv=str(log), steps=4))

    class Killed(BaseException):  # a kill: no handler runs, no checkpoint
        pass

    def crash(event):
        if event["step"] == 7:
            raise Killed

    with pytest.raises(Killed):  # no checkpoint after step 4
        again = tiny(out=str(out), log_csv=str(log), steps=10)
        train(again, resume=out, callback=crash)
    train(tiny(out=str(out), log_csv=str(log), steps=10), resume=out)
    # the crash's rows moved next to the log (round 7: superseded, not doubled)
    (side,) = tmp_path.glob("log.csv.superseded-*.csv")
    keys = [(r["segment"], r["step"]) for r in rows(log) + rows(side)]
    assert len(keys) == len(set(keys)), keys  # no (segment, step) twice
    assert [k for k in keys if k[0] == "1"] == [("1", "5"), ("1", "6"), ("1", "7")]
    assert [k for k in rows(side)] and {r["segment"] for r in rows(side)} == {"1"}
    assert [int(k[1]) for k in keys if k[0] == "2"] == list(range(5, 11))


# --- 8. a stray label, and the head in the memory check -------------------------


def test_a_stray_label_is_refused_and_the_head_counts_in_the_memory_check():
    x = torch.randn(10, 40, 2, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 3, (40,), generator=torch.Generator().manual_seed(1))
    y[5] = 10**8  # a missing-value code
    with pytest.raises(
        ValueError, match=r"a stray code\? .* pass num_classes=100000001$"
    ):
        tensor_task(x, y, name="big")
    config = TrainConfig(task=own(), hidden_size=8, device="cpu", progress=False)
    small = estimate_bytes(config, 2, 3, "last")[1]
    large = estimate_bytes(config, 2, 10**10, "last")[1]
    assert large - small >= 20 * 9 * (10**10 - 3)  # (H + 1) * C head parameters
    task = tensor_task(x, y, name="big", num_classes=10**10)  # asked for
    head = r"too large .*\(its head has 10000000000 outputs\)"
    with pytest.raises(ValueError, match=head):
        train(TrainConfig(task=task, hidden_size=8, steps=2, **_quiet()))


def _quiet():
    return {"eval_every": 1, "progress": False, "device": "cpu"}


def test_the_cli_names_a_stray_label_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bigtask.py").write_text(
        "import torch\n"
        "from rhn.owntasks import tensor_task\n"
        "def make():\n"
        "    y = torch.randint(0, 3, (40,))\n"
        "    y[5] = 10**8\n"
        "    return tensor_task(torch.randn(10, 40, 2), y, name='big')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["train", "--task", "bigtask:make", "--steps", "2"]) == 2
    assert "largest label is 100000000" in one_error_line(capsys)


# --- 9. one line, naming the argument -------------------------------------------


def test_bool_targets_are_refused_naming_targets():
    x = torch.randn(10, 40, 2)
    with pytest.raises(TypeError, match="targets must be .* got bool: give"):
        tensor_task(x, torch.rand(40) > 0.5)


def test_a_json_record_is_named_as_one_not_a_checkpoint(tmp_path, monkeypatch, capsys):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    (tmp_path / "s.json").write_text('{"format": 1, "runs": []}\n')
    for record in (tmp_path / "s.json", out / "metrics.json", out / "run.json"):
        with pytest.raises(ValueError, match="is a JSON record, not a checkpoint"):
            load_model(record)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--resume", "A/metrics.json", "--steps", "5"]) == 2
    assert "A/metrics.json' is a JSON record" in one_error_line(capsys)


def test_load_model_checks_its_device_like_train_config(tmp_path):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    with pytest.raises(ValueError, match="device must be a device torch knows"):
        load_model(out, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            load_model(out, device="cuda")
    assert next(load_model(out, device="auto").parameters()).device.type in (
        "cpu",
        "cuda",
        "mps",
    )


# --- 10. a sweep tries every seq_len of the grid up front -----------------------


def test_a_sweep_checks_every_seq_len_of_an_own_task_before_any_run(
    tmp_path, monkeypatch
):
    trained = []
    monkeypatch.setattr(experiments, "train", lambda *a, **k: trained.append(a))
    base = TrainConfig(task=own(T=10), hidden_size=8, steps=2, **_quiet())
    with pytest.raises(ValueError, match="seq_len: task 'mine' holds sequences of"):
        experiments.sweep(
            base, {"seq_len": [10, 11]}, [0], out=str(tmp_path / "s.json")
        )
    assert trained == [] and not (tmp_path / "s.json").exists()


def test_the_new_checks_leave_ordinary_runs_alone(tmp_path):
    """A fresh run, its resume and a resumed own task still train and log."""
    log = tmp_path / "log.csv"
    task = own()
    config = TrainConfig(
        task=task, hidden_size=8, steps=3, out=str(tmp_path / "r"), log_csv=str(log)
    )
    config = dataclasses.replace(config, **_quiet())
    train(config)
    train(dataclasses.replace(config, steps=5), resume=tmp_path / "r")
    assert [(r["segment"], r["step"]) for r in rows(log)] == [
        ("0", "1"),
        ("0", "2"),
        ("0", "3"),
        ("1", "4"),
        ("1", "5"),
    ]
    assert get_task(config.task) is task
    assert load_model(tmp_path / "r", task) is not None
