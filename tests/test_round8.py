"""Hostile round 8 (issue 32): what a fresh hostile tester found.

Each test is one case: a dropout or forget bias a model does not read, a
sweep over such a field, a checkpoint copied into another run's folder, a
run folder moved while it trains, a default folder named by an own task, a
refused run's empty folder, a sweep resumed with its grid in another order,
and errors that did not name what was wrong.
"""

import dataclasses
import json

import pytest
import torch
from tiny_runs import CLI, SWEEP, one_error_line, tiny

from rhn.__main__ import main
from rhn.experiments import load_sweep, sweep
from rhn.train import TrainConfig, load_model, train
from rhn.train.records import filled_config

NOT_RHN = ["gru", "lstm", "rnn", "dtrnn"]

# --- 1. a dropout the model does not read is refused, not recorded -------------


@pytest.mark.parametrize("model", NOT_RHN)
def test_a_dropout_given_for_a_model_without_it_is_refused(model, capsys):
    with pytest.raises(ValueError, match=f"dropout=0.5 with model='{model}'"):
        tiny(model=model, dropout=0.5)
    assert main(["train", *CLI, "--model", model, "--dropout", "0.5"]) == 2
    err = one_error_line(capsys)
    assert "dropout" in err and model in err
    assert tiny(model=model, dropout=0).dropout == 0  # off: nothing asked for
    assert tiny(model="rhn", dropout=0.5).dropout == 0.5


def test_a_task_default_dropout_is_off_for_a_model_without_it():
    from rhn.tasks import TASKS, Task

    adding = TASKS["adding"]
    fields = {f.name: getattr(adding, f.name) for f in dataclasses.fields(Task)}
    task = Task(**{**fields, "name": "adding_dropout", "defaults": {"dropout": 0.25}})
    assert TrainConfig(task=task, model="rhn").dropout == 0.25
    assert TrainConfig(task=task, model="gru").dropout == 0.0  # what it trains with
    with pytest.raises(ValueError, match="dropout"):
        TrainConfig(task=task, model="gru", dropout=0.25)  # asked for: refused


def test_a_record_with_a_dropout_its_model_ignored_still_rebuilds(tmp_path):
    # a checkpoint written before the refusal: a GRU recorded at dropout 0.3
    out = tmp_path / "old"
    train(tiny(model="gru", out=str(out)))
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    state["config"]["dropout"] = 0.3
    state["config"]["forget_bias"] = 1.0
    torch.save(state, out / "checkpoint.pt")
    config = filled_config(state["config"])
    assert (config["dropout"], config["forget_bias"]) == (0.0, None)
    assert load_model(out).core.hidden_size == 8
    result = train(tiny(model="gru", out=str(out), steps=4), resume=out)
    assert result.metrics["steps"] == 4


def test_every_shipped_record_rebuilds_and_no_other_model_carries_dropout():
    from importlib import resources

    folder = resources.files("rhn") / "_data" / "results"
    checked = 0
    for path in sorted(folder.iterdir()):
        if not path.name.endswith(".json"):
            continue
        record = json.loads(path.read_text())
        if not (isinstance(record, dict) and isinstance(record.get("runs"), list)):
            continue
        for run in record["runs"]:
            saved = run.get("config") if isinstance(run, dict) else None
            if not (isinstance(saved, dict) and "model" in saved):
                continue
            if saved["model"] != "rhn":
                assert not saved.get("dropout"), (path.name, saved)
            if saved["model"] != "lstm":
                assert saved.get("forget_bias") is None, (path.name, saved)
            kept = dict(filled_config(saved), device="cpu", progress=False)
            TrainConfig(**{k: kept[k] for k in kept if k in TINY_FIELDS})
            checked += 1
    assert checked > 50, checked


TINY_FIELDS = {f.name for f in dataclasses.fields(TrainConfig)}


# --- 3. a forget bias is the LSTM's only ---------------------------------------


@pytest.mark.parametrize("model", ["gru", "dtrnn", "rnn", "rhn"])
def test_a_forget_bias_for_a_model_without_a_forget_gate_is_refused(model, capsys):
    with pytest.raises(ValueError, match=f"forget_bias=1.0 with model='{model}'"):
        tiny(model=model, forget_bias=1.0)
    assert main(["train", *CLI, "--model", model, "--forget-bias", "1"]) == 2
    assert "forget_bias" in one_error_line(capsys)
    assert tiny(model="lstm", forget_bias=1.0).forget_bias == 1.0


# --- 2. a sweep does not repeat a run over a field its model does not read ------


def test_a_sweep_over_dropout_runs_a_gru_once(tmp_path):
    base = tiny(steps=2)
    # no model of the sweep reads dropout: its two values would be one run,
    # refused since round 22 (it ran once, under one of the two labels)
    with pytest.raises(ValueError, match=r"grid\['dropout'\].*the same run"):
        sweep(dataclasses.replace(base, model="gru"), {"dropout": [0, 0.5]}, [0])
    grid = {"model": ["gru", "rhn"], "dropout": [0.0, 0.3]}
    record = sweep(base, grid, [0])
    made = [(r["config"]["model"], r["config"]["dropout"]) for r in record["runs"]]
    assert made == [("gru", 0.0), ("rhn", 0.0), ("rhn", 0.3)]


def test_a_sweep_base_dropout_is_off_for_its_other_models(tmp_path):
    out = tmp_path / "s.json"
    argv = ["sweep", *SWEEP, "--steps", "2", "--dropout", "0.3", "--out", str(out)]
    assert main([*argv, "--grid", "model=gru,rhn"]) == 0
    runs = load_sweep(out)["runs"]
    made = [(r["config"]["model"], r["config"]["dropout"]) for r in runs]
    assert made == [("gru", 0.0), ("rhn", 0.3)]


# --- 4. a checkpoint copied into another run's folder does not take it over ----


def test_a_checkpoint_copied_into_another_runs_folder_is_refused(tmp_path, capsys):
    import shutil

    from tiny_runs import contents

    a, b = tmp_path / "d43a", tmp_path / "d43b"
    assert main(["train", *CLI, "--out", str(a)]) == 0
    assert main(["train", *CLI, "--seed", "1", "--out", str(b)]) == 0
    ids = [json.loads((d / "run.json").read_text())["run_id"] for d in (a, b)]
    shutil.copy(a / "checkpoint.pt", b / "checkpoint.pt")
    before = contents(b)
    capsys.readouterr()
    assert main(["train", "--resume", str(b), "--steps", "5", "--no-progress"]) == 2
    err = one_error_line(capsys)
    assert str(b) in err and ids[0] in err and ids[1] in err and "--out" in err
    assert contents(b) == before  # the seed-1 run's records are kept
    with pytest.raises(ValueError, match=ids[1]):
        train(tiny(out=str(b), steps=5), resume=b)
    # a whole copy (cp -r) is still a run of its own, as before
    c = tmp_path / "copy"
    shutil.copytree(a, c)
    assert main(["train", "--resume", str(c), "--steps", "5", "--no-progress"]) == 0
    assert json.loads((c / "run.json").read_text())["parent"]["run_id"] == ids[0]


# --- 6. the default folder of an own task stays inside runs/ -------------------


def test_an_own_task_name_with_separators_makes_a_folder_inside_runs(
    tmp_path, monkeypatch
):
    (tmp_path / "evilmod.py").write_text(
        "import dataclasses\n"
        "from rhn.tasks import TASKS\n"
        "def make():\n"
        "    return dataclasses.replace(TASKS['adding'], name='../../evil\\nname')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    assert main(["train", *CLI[2:], "--task", "evilmod:make"]) == 0
    made = [p for p in (work / "runs").iterdir()]
    assert len(made) == 1 and (made[0] / "checkpoint.pt").is_file(), made
    assert "\n" not in made[0].name and made[0].name.endswith("-rhn")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "evilmod.py"]
    assert sorted(p.name for p in work.iterdir()) == ["runs"]


# --- 7. a refused run leaves no empty folder behind ---------------------------


def test_a_refused_run_leaves_no_folder_it_made(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t85.csv").symlink_to(tmp_path / "gone" / "t85.csv")
    (tmp_path / "logdir").mkdir()
    cases = {
        "t85": "t85.csv",  # a dangling symlink
        "t86/deeper": "logdir",  # a directory
        "t89": "t89",  # the out folder itself
        "t90": "/dev/null",
    }
    for out, log in cases.items():
        assert main(["train", *CLI, "--out", out, "--log-csv", log]) == 2, out
        one_error_line(capsys)
        assert not (tmp_path / out.split("/")[0]).exists(), out
    # a folder that was there before is kept, empty or not
    (tmp_path / "mine").mkdir()
    assert main(["train", *CLI, "--out", "mine", "--log-csv", "logdir"]) == 2
    assert (tmp_path / "mine").is_dir()


def test_a_dangling_out_symlink_is_named_as_such(tmp_path, capsys):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    assert main(["train", *CLI, "--out", str(link)]) == 2
    err = one_error_line(capsys)
    assert "dangling symlink" in err and "--out" in err and "File exists" not in err


# --- 8. a sweep resumes with its grid and seeds given in another order ---------


def interrupted_sweep(out, monkeypatch, grid, seeds, after=2):
    from rhn import experiments

    real, calls = experiments.train, []

    def stop(config, **kwargs):
        calls.append(config)
        if len(calls) > after:
            raise KeyboardInterrupt
        return real(config, **kwargs)

    monkeypatch.setattr(experiments, "train", stop)
    with pytest.raises(KeyboardInterrupt):
        sweep(tiny(steps=2), grid, seeds, out=out)
    monkeypatch.setattr(experiments, "train", real)


def test_a_sweep_resumes_with_the_grid_in_another_order(tmp_path, monkeypatch):
    out = tmp_path / "s.json"
    interrupted_sweep(out, monkeypatch, {"depth": [1, 2]}, [0, 1])
    done = [
        (r["setting"], r["seed"])
        for r in load_sweep(out, allow_incomplete=True)["runs"]
    ]
    record = sweep(tiny(steps=2), {"depth": [2, 1]}, [1, 0], out=out, resume=True)
    made = [(r["setting"]["depth"], r["seed"]) for r in record["runs"]]
    assert made == [(1, 0), (1, 1), (2, 0), (2, 1)]  # each once, in the record's order
    assert [(r["setting"], r["seed"]) for r in record["runs"][:2]] == done
    # a different grid is still refused
    out2 = tmp_path / "t.json"
    interrupted_sweep(out2, monkeypatch, {"depth": [1, 2]}, [0, 1])
    with pytest.raises(ValueError, match="grid"):
        sweep(tiny(steps=2), {"depth": [1, 3]}, [0, 1], out=out2, resume=True)
    with pytest.raises(ValueError, match="seeds"):
        sweep(tiny(steps=2), {"depth": [2, 1]}, [0, 2], out=out2, resume=True)


def test_the_sweep_command_resumes_with_the_grid_in_another_order(
    tmp_path, monkeypatch
):
    out = tmp_path / "s.json"
    interrupted_sweep(out, monkeypatch, {"depth": [1, 2]}, [0, 1])
    options = list(CLI)
    options[options.index("--steps") + 1] = "2"  # as tiny(steps=2)
    args = ["sweep", *options]
    args += ["--grid", "depth=2,1", "--seeds", "1,0", "--out", str(out), "--resume"]
    assert main(args) != 2  # 1 only when a two-step run ended far above baseline
    assert len(load_sweep(out)["runs"]) == 4


# --- 5. a run folder moved or removed while the run trains ---------------------


def run_that_loses_its_folder(tmp_path, lose):
    import shutil

    out = tmp_path / "m1"
    config = tiny(
        out=str(out), steps=6, checkpoint_every=2, log_csv=str(out / "log.csv")
    )

    def at_step_3(event):
        if event["step"] == 3:
            lose(out, shutil)

    with pytest.raises(ValueError, match="moved or removed") as caught:
        train(config, callback=at_step_3)
    assert "step 4" in str(caught.value) and "--resume" in str(caught.value)
    return out, config


def step_of(folder):
    return torch.load(folder / "checkpoint.pt", weights_only=False)["step"]


def test_a_folder_moved_mid_run_stops_it_and_never_makes_two_of_one_run(tmp_path):
    moved = tmp_path / "m1moved"
    out, config = run_that_loses_its_folder(
        tmp_path, lambda out, shutil: shutil.move(out, moved)
    )
    assert step_of(out) == 4 and step_of(moved) == 2
    own_id = json.loads((out / "run.json").read_text())["run_id"]
    assert json.loads((moved / "run.json").read_text())["run_id"] == own_id
    # the moved folder resumes as a copy: a run id of its own
    with pytest.warns(UserWarning, match="folder moved while it trained"):
        branch = train(
            dataclasses.replace(config, out=str(moved), log_csv=None), resume=moved
        )
    moved_id = json.loads((moved / "run.json").read_text())
    assert moved_id["run_id"] != own_id and moved_id["parent"]["run_id"] == own_id
    assert branch.metrics["steps"] == 6
    # and the folder the run recreated goes on as the run itself
    train(dataclasses.replace(config, log_csv=None), resume=out)
    assert json.loads((out / "run.json").read_text())["run_id"] == own_id


def test_a_folder_removed_mid_run_is_written_again_whole(tmp_path, capsys):
    out, config = run_that_loses_its_folder(
        tmp_path, lambda out, shutil: shutil.rmtree(out)
    )
    assert step_of(out) == 4 and (out / "run.json").is_file()
    result = train(dataclasses.replace(config, log_csv=None), resume=out)
    assert result.metrics["steps"] == 6


# --- 9. errors that name what is wrong, in one line ----------------------------


def test_sparse_and_meta_tensors_are_one_line_errors():
    from rhn.owntasks import tensor_task

    x, y = torch.randn(6, 40, 1), torch.randn(40)
    with pytest.raises(ValueError, match="inputs must be a dense tensor") as caught:
        tensor_task(x.to_sparse(), y)
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match="inputs are on the meta device"):
        tensor_task(x.to("meta"), y)
    with pytest.raises(ValueError, match="valid: the targets must be a dense"):
        tensor_task(x, y, valid=(x, y.to_sparse()))


def adding_with(**changes):
    from rhn.tasks import TASKS

    return dataclasses.replace(TASKS["adding"], name="mine", **changes)


def test_a_float64_generate_and_a_str_baseline_name_the_task():
    from rhn.tasks import TASKS

    def float64(n, t, **kwargs):
        x, y = TASKS["adding"].generate(n, t, **kwargs)
        return x.double(), y.double()

    with pytest.raises(TypeError, match="task 'mine': its generate returned"):
        train(tiny(task=adding_with(generate=float64)))
    with pytest.raises(TypeError, match=r"task 'mine': its baseline\(6\) must"):
        train(tiny(task=adding_with(baseline=lambda seq_len: "low")))


def test_log_and_record_messages_say_what_the_file_is(tmp_path, capsys):
    record, log = tmp_path / "s.json", tmp_path / "log.csv"
    assert main(["sweep", *SWEEP, "--out", str(record)]) in (0, 1)
    first = record.read_text().splitlines()[0][:20]
    capsys.readouterr()
    assert (
        main(["train", *CLI, "--out", str(tmp_path / "r"), "--log-csv", str(record)])
        == 2
    )
    assert repr(first)[:-1] in one_error_line(capsys)  # the line as it is
    assert (
        main(["train", *CLI, "--out", str(tmp_path / "r1"), "--log-csv", str(log)]) == 0
    )
    capsys.readouterr()
    assert main(["sweep", *SWEEP, "--out", str(log), "--overwrite"]) == 2
    assert "it is a training log" in one_error_line(capsys)
    # a log holding its header alone has no rows to lose: a fresh run takes it
    header = tmp_path / "header.csv"
    header.write_text(log.read_text().splitlines()[0] + "\n")
    assert (
        main(["train", *CLI, "--out", str(tmp_path / "r2"), "--log-csv", str(header)])
        == 0
    )
    assert len(header.read_text().splitlines()) == 4  # the header and 3 steps


def test_a_directory_named_checkpoint_pt_is_named_as_such(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["train", *CLI, "--out", str(out)]) == 0
    (out / "checkpoint.pt").unlink()
    (out / "checkpoint.pt").mkdir()
    capsys.readouterr()
    assert main(["train", *CLI, "--out", str(out), "--overwrite"]) == 2
    err = one_error_line(capsys)
    assert "checkpoint.pt' is a directory" in err and "move it away" in err


def test_a_bad_seed_is_named_by_its_index(capsys):
    assert main(["sweep", *SWEEP[:-2], "--seeds", "0,-1", "--out", "x.json"]) == 2
    assert "seeds[1] must be" in one_error_line(capsys)
