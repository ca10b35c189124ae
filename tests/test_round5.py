"""Hostile round 5 (issue 32, "Nothing lost"): files told apart by what they are.

Each test is a case a hostile user tried: ``--overwrite`` with ``--resume``,
a log that is a hard link of another run's live log, a sweep whose ``--out``
is a symlink or a run's own checkpoint, an own task whose tensors change
after it is made, a resume from another directory, a branch that shared its
parent's run id, and the small ones (``--grid task=``, one device under two
names, a log named like a lock). The later ones are this round's own finds:
a task refusing a length after other runs trained, ``--overwrite`` emptying
another run's log, a garbled ``run.json`` stopping a folder's own resume,
non-strict JSON from the study and the benchmark, a resume without ``out``
taking its parent's id, a sweep written through a link into a run, an own
task's splits handed out by reference, a moved run folder, and a grid value
that equals the default.
"""

import json
import os

import pytest
import torch
from tiny_runs import CLI, SWEEP, TINY, contents, one_error_line, rows, tiny  # noqa: E402, F401

from rhn import experiments
from rhn.__main__ import main
from rhn.experiments import load_sweep, sweep
from rhn.owntasks import tensor_task
from rhn.train import TrainConfig, load_checkpoint, train


def marker(folder):
    return json.loads((folder / "run.json").read_text())


# --- 1. --overwrite with --resume never costs the checkpoint --------------------


def _legacy(out):
    """The run in ``out`` with a checkpoint written before run ids existed and a
    run.json that names an id (a resume that crashed before its checkpoint)."""
    state = load_checkpoint(out)
    del state["run_id"]
    torch.save(state, out / "checkpoint.pt")


def test_overwrite_with_resume_is_refused_up_front(tmp_path, monkeypatch, capsys):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    _legacy(out)
    before = contents(out)

    def crash(event):
        raise RuntimeError("killed before the first checkpoint")

    with pytest.raises(ValueError, match="overwrite: a resume continues a run"):
        train(tiny(out=str(out), steps=5), resume=out, overwrite=True, callback=crash)
    assert contents(out) == before  # the checkpoint is still there
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--resume", "A", "--steps", "5", "--overwrite"]) == 2
    err = one_error_line(capsys)
    assert "--overwrite" in err and "--resume" in err
    assert contents(out) == before
    # the folder's own checkpoint is the folder's run, whatever run.json says
    assert train(tiny(out=str(out), steps=5), resume=out).metrics["steps"] == 5


# --- 2. a hard link is the same file ---------------------------------------------


def test_a_hard_link_to_a_live_log_is_refused(tmp_path):
    log = tmp_path / "a.csv"
    link = tmp_path / "b.csv"
    refused = []

    def second(event):
        if event["step"] == 2:
            os.link(log, link)
            try:
                config = tiny(out=str(tmp_path / "B"), log_csv=str(link))
                train(config, overwrite=True)
            except ValueError as err:
                refused.append(str(err))

    train(tiny(out=str(tmp_path / "A"), log_csv=str(log)), callback=second)
    assert len(refused) == 1 and refused[0].startswith("log_csv: ")
    assert [r["step"] for r in rows(log)] == ["1", "2", "3"]
    assert not (tmp_path / "B" / "checkpoint.pt").exists()


def test_overwrite_never_empties_a_log_that_has_another_name(tmp_path):
    log = tmp_path / "a.csv"
    train(tiny(out=str(tmp_path / "A"), log_csv=str(log)))
    before = log.read_bytes()
    os.link(log, tmp_path / "b.csv")
    with pytest.raises(ValueError, match="log_csv: .*hard link"):
        train(
            tiny(out=str(tmp_path / "B"), log_csv=str(tmp_path / "b.csv")),
            overwrite=True,
        )
    assert log.read_bytes() == before


def test_a_branch_never_appends_to_its_parents_log_by_a_hard_link(tmp_path):
    out, log = tmp_path / "A", tmp_path / "A.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    before = log.read_bytes()
    os.link(log, tmp_path / "B.csv")
    branch = tiny(out=str(tmp_path / "B"), log_csv=str(tmp_path / "B.csv"), steps=5)
    with pytest.raises(ValueError, match="log_csv: .*parent's log"):
        train(branch, resume=out)
    assert log.read_bytes() == before


# --- 3. a symlinked sweep out is the sweep it names ------------------------------


def test_a_sweep_through_a_symlink_is_refused_while_the_first_runs(tmp_path):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    link.symlink_to(real)
    refused = []

    def second(line):
        if not refused:
            try:
                sweep(tiny(), {}, [7], out=link, overwrite=True)
                refused.append("ran")
            except ValueError as err:
                refused.append(str(err))

    sweep(tiny(), {}, [0, 1], out=real, log=second)
    assert "in use by another sweep" in refused[0]
    assert [run["seed"] for run in load_sweep(real)["runs"]] == [0, 1]


# --- 4. an own task keeps the data it was made with ------------------------------


def test_an_own_task_copies_its_tensors(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 40, 2, generator=g)  # time first: no copy was needed
    y = x[:, :, 0].sum(0)
    mask_x = torch.randn(6, 40, 1, generator=g)
    y_steps = mask_x.squeeze(-1).cumsum(0)
    m = torch.ones(6, 40, dtype=torch.bool)
    kept = (x.clone(), y.clone())
    task = tensor_task(x, y, name="mine")
    masked = tensor_task(mask_x, y_steps, mask=m, name="mine")
    valid = [t.clone() for t in task.generate(0, split="valid")]
    x.mul_(0).add_(5.0)  # the caller reuses its buffers
    y.zero_()
    m[2:] = False
    assert all(
        torch.equal(a, b)
        for a, b in zip(task.generate(0, split="valid"), valid, strict=True)
    )
    assert masked.generate(0, split="valid")[2].all()
    copy = tensor_task(*kept, name="mine")
    assert copy.fingerprint == task.fingerprint
    a = train(tiny(task=task, steps=4))
    b = train(tiny(task=copy, steps=4))
    assert a.history == b.history


# --- 5. a resume from another directory writes where the run is -----------------


def test_a_resume_from_another_directory_writes_into_the_run(tmp_path, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    argv = ["train", *CLI, "--out", "runs/A", "--log-csv", "runs/A/log.csv"]
    assert main(argv) == 0
    argv = ["train", *CLI, "--out", "runs/B", "--log-csv", "logs/B.csv"]
    assert main(argv) == 0
    monkeypatch.chdir(elsewhere)
    assert main(["train", "--resume", "../home/runs/A", "--steps", "5"]) == 0
    assert main(["train", "--resume", "../home/runs/B", "--steps", "5"]) == 0
    assert list(elsewhere.iterdir()) == []  # nothing written here
    for run, log in (("A", "runs/A/log.csv"), ("B", "logs/B.csv")):
        record = json.loads((home / "runs" / run / "metrics.json").read_text())
        assert record["steps"] == 5
        assert [r["step"] for r in rows(home / log)] == ["1", "2", "3", "4", "5"]


# --- 6. a branch is a run of its own ---------------------------------------------


def test_a_branch_gets_its_own_run_id_and_names_its_parent(tmp_path):
    a, b = tmp_path / "A", tmp_path / "B"
    train(tiny(out=str(a), log_csv=str(tmp_path / "A.csv")))
    parent = marker(a)["run_id"]
    train(tiny(out=str(b), log_csv=str(tmp_path / "B.csv"), steps=5), resume=a)
    child = marker(b)["run_id"]
    assert child != parent
    assert marker(b)["parent"]["run_id"] == parent
    assert marker(b)["parent"]["step"] == 3
    record = json.loads((b / "metrics.json").read_text())
    assert record["run"]["id"] == child and record["run"]["parent"]["run_id"] == parent
    assert {r["run"] for r in rows(tmp_path / "A.csv")} == {parent}
    assert {r["run"] for r in rows(tmp_path / "B.csv")} == {child}
    # the branch resumed in its own folder stays itself, its parent kept
    train(tiny(out=str(b), log_csv=str(tmp_path / "B.csv"), steps=7), resume=b)
    assert marker(b)["run_id"] == child and marker(b)["parent"]["run_id"] == parent
    assert load_checkpoint(b)["parent"]["run_id"] == parent
    # the parent goes on as itself
    train(tiny(out=str(a), log_csv=str(tmp_path / "A.csv"), steps=4), resume=a)
    assert marker(a)["run_id"] == parent and "parent" not in marker(a)


# --- 7. a sweep never replaces a run's files, nor what is not a sweep ------------


@pytest.mark.parametrize("name", ["checkpoint.pt", "metrics.json", "run.json"])
def test_a_sweep_never_replaces_a_file_of_a_run(tmp_path, monkeypatch, capsys, name):
    run = tmp_path / "A"
    train(tiny(out=str(run)))
    before = contents(run)
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *SWEEP, "--out", f"A/{name}", "--overwrite"]) == 2
    err = one_error_line(capsys)
    assert "error: out: " in err and name in err and "file of the run" in err
    assert contents(run) == before


def test_a_sweep_overwrites_only_a_sweep_record(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    assert main(["sweep", *SWEEP, "--out", "data.csv", "--overwrite"]) == 2
    assert "not a sweep record" in one_error_line(capsys)
    assert (tmp_path / "data.csv").read_text() == "a,b\n1,2\n"
    assert main(["sweep", *SWEEP, "--out", "s.json"]) == 0
    assert main(["sweep", *SWEEP, "--out", "s.json", "--overwrite"]) == 0


# --- 8. the small ones -----------------------------------------------------------


def test_grid_task_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *SWEEP, "--grid", "task=nope", "--out", "s.json"]) == 2
    err = one_error_line(capsys)
    assert "--grid task" in err and "nope" in err and "Union" not in err
    argv = ["sweep", *SWEEP, "--grid", "task=adding,temporal_order", "--out", "s.json"]
    argv[argv.index("--seq-len") + 1] = "10"
    assert main(argv) == 0
    assert [r["config"]["task"] for r in load_sweep("s.json")["runs"]] == [
        "adding",
        "temporal_order",
    ]


def test_one_device_under_two_names_is_one_setting(tmp_path):
    with pytest.raises(ValueError, match="grid: .*the same run"):
        sweep(tiny(), {"device": ["cpu", "cpu:0"]}, [0])
    with pytest.raises(ValueError, match="grid: .*the same run"):
        sweep(tiny(), {"model": ["rhn", "gru"], "device": ["cpu", "CPU:0"]}, [0])


def test_a_log_named_like_a_lock_blocks_nothing(tmp_path):
    other = tmp_path / "x.csv.lock"
    train(tiny(out=str(tmp_path / "A"), log_csv=str(other)))  # a log of its own
    before = other.read_bytes()
    train(tiny(out=str(tmp_path / "B"), log_csv=str(tmp_path / "x.csv")))
    assert other.read_bytes() == before
    assert len(rows(tmp_path / "x.csv")) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "A",
        "B",
        "x.csv",
        "x.csv.lock",
    ]


# --- this round's own finds ------------------------------------------------------


def test_a_sweep_tries_every_task_and_seq_len_before_any_run(tmp_path, monkeypatch):
    """temporal_order needs 10 steps: found after the adding runs had trained."""
    trained = []
    monkeypatch.setattr(experiments, "train", lambda *a, **k: trained.append(a))
    grid = {"task": ["adding", "temporal_order"]}
    with pytest.raises(ValueError, match="seq_len must be an int >= 10, got 6"):
        sweep(tiny(), grid, [0], out=str(tmp_path / "s.json"))
    assert trained == [] and not (tmp_path / "s.json").exists()


def test_overwrite_never_empties_the_log_of_a_run_it_does_not_replace(tmp_path):
    """--overwrite replaces the run in --out; another run's log is not its."""
    other = tmp_path / "other.csv"
    train(tiny(out=str(tmp_path / "O"), log_csv=str(other)))
    train(tiny(out=str(tmp_path / "A")))
    before = other.read_bytes()
    with pytest.raises(ValueError, match="log_csv: .*not of the run overwrite"):
        train(tiny(out=str(tmp_path / "A"), log_csv=str(other)), overwrite=True)
    assert other.read_bytes() == before
    # the log of the run it replaces is replaced, as asked
    own = tmp_path / "A.csv"
    train(tiny(out=str(tmp_path / "A"), log_csv=str(own)), overwrite=True)
    train(tiny(out=str(tmp_path / "A"), log_csv=str(own), seed=1), overwrite=True)
    assert {r["run"] for r in rows(own)} == {marker(tmp_path / "A")["run_id"]}


def test_a_garbled_run_json_does_not_stop_the_folders_own_resume(tmp_path):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    (out / "run.json").write_text("{not json")
    assert train(tiny(out=str(out), steps=5), resume=out).metrics["steps"] == 5
    assert marker(out)["run_id"] == load_checkpoint(out)["run_id"]


def test_study_and_bench_records_are_strict_json(tmp_path):
    from rhn import optstudy

    path = tmp_path / "study.json"
    optstudy._write({"runs": [{"grad_norms": [1.0, float("inf")]}]}, path)
    record = json.loads(path.read_text(), parse_constant=_refuse)
    assert record["runs"][0]["grad_norms"] == [1.0, None]
    assert record["non_finite"]["runs[0].grad_norms[1]"] == "inf"


def _refuse(name):
    raise AssertionError(f"not strict JSON: {name}")


def test_a_resume_without_out_is_a_branch_of_its_own(tmp_path):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    log = tmp_path / "mem.csv"
    train(tiny(log_csv=str(log), steps=5), resume=out)  # nothing written to A
    assert {r["run"] for r in rows(log)} != {marker(out)["run_id"]}
    assert load_checkpoint(out)["step"] == 3


def test_a_sweep_never_writes_through_a_link_into_a_run(tmp_path):
    train(tiny(out=str(tmp_path / "A")))
    before = contents(tmp_path / "A")
    link = tmp_path / "s.json"
    link.symlink_to(tmp_path / "A" / "metrics.json")
    with pytest.raises(ValueError, match="out: .*is a file of the run folder"):
        sweep(tiny(), {}, [0], out=link, overwrite=True)
    assert contents(tmp_path / "A") == before


def test_an_own_tasks_splits_are_copies(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 40, 2, generator=g)
    vx = torch.randn(6, 10, 2, generator=g)
    vy = vx[:, :, 0].sum(0)
    task = tensor_task(x, x[:, :, 0].sum(0), valid=(vx, vy), name="mine")
    before = task.fingerprint
    vx.zero_()  # the split given apart
    held = task.generate(0, split="valid")
    assert torch.equal(held[1], vy) and held[0].abs().sum() > 0
    held[0].zero_()  # what generate returned, changed by the caller
    assert task.generate(0, split="valid")[0].abs().sum() > 0
    assert task.fingerprint == before


def test_a_moved_run_folder_resumes_where_it_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A", "--log-csv", "A/log.csv"]) == 0
    os.rename("A", "A2")
    assert main(["train", "--resume", "A2", "--steps", "5"]) == 0
    assert not (tmp_path / "A").exists()
    assert [r["step"] for r in rows(tmp_path / "A2" / "log.csv")] == [
        str(s) for s in range(1, 6)
    ]


def test_a_grid_value_that_is_the_default_is_one_setting():
    with pytest.raises(ValueError, match="grid: .*the same run"):
        sweep(TrainConfig(**TINY), {"seq_len": [None, 100]}, [0])
