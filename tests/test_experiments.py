"""Multi-seed sweeps: rhn.experiments and ``python -m rhn sweep``."""

import json
import math
import statistics

import pytest

from rhn.__main__ import main
from rhn.experiments import load_sweep, select, steps_to_reach, summarize, sweep
from rhn.train import TrainConfig, train

TINY = {
    "seq_len": 6,
    "hidden_size": 8,
    "depth": 1,
    "steps": 4,
    "eval_every": 2,
    "eval_samples": 16,
    "batch_size": 8,
    "progress": False,
    "device": "cpu",
}


def tiny(**overrides):
    return TrainConfig(**{**TINY, **overrides})


def test_sweep_runs_every_setting_and_seed_like_train():
    record = sweep(tiny(), {"model": ["rhn", "gru"], "lr": [1e-2, 2e-2]}, [0, 3])
    runs = record["runs"]
    assert [(r["setting"]["model"], r["setting"]["lr"], r["seed"]) for r in runs] == [
        (m, lr, s) for m in ("rhn", "gru") for lr in (1e-2, 2e-2) for s in (0, 3)
    ]
    assert record["complete"] and record["call"]["seeds"] == [0, 3]
    assert record["environment"]["torch_version"]
    # Each run is exactly the run train() makes from its recorded config.
    run = runs[5]  # gru, lr 1e-2, seed 3
    again = train(TrainConfig(**run["config"]))
    assert run["history"]["test_loss"] == again.history["test_loss"]
    assert run["history"]["train_loss"] == again.history["train_loss"]
    assert run["metrics"]["test_loss"] == again.metrics["test_loss"]
    assert run["history"]["eval_step"] == [2, 4]
    assert run["config"]["model"] == "gru" and run["config"]["seed"] == 3
    json.dumps(record)  # JSON-ready


def test_a_sweep_keeps_the_validation_accuracy_of_labels_of_your_own():
    import torch

    from rhn.owntasks import tensor_task

    g = torch.Generator().manual_seed(0)
    xs = torch.randn(40, 6, 2, generator=g)
    labels = (xs[:, 0, 0] > 0).long()
    task = tensor_task(
        xs, labels, batch_first=True, test_fraction=0.2, loss="cross_entropy"
    )
    skip = ("seq_len", "eval_samples", "depth")  # a GRU reads no depth
    fields = {k: v for k, v in TINY.items() if k not in skip}
    record = sweep(TrainConfig(task=task, **fields), {"model": ["gru"]}, [0])
    (run,) = record["runs"]
    again = train(TrainConfig(**{**fields, "task": task, "model": "gru", "seed": 0}))
    assert run["history"]["valid_accuracy"] == again.history["valid_accuracy"]
    assert len(run["history"]["valid_accuracy"]) == 2
    assert run["metrics"]["valid_accuracy"] == again.metrics["valid_accuracy"]


def test_the_sweep_log_shows_the_validation_loss_where_a_split_exists():
    # the line printed per run must not invite choosing by the test split
    import torch

    from rhn.owntasks import tensor_task

    g = torch.Generator().manual_seed(1)
    xs = torch.randn(50, 6, 2, generator=g)
    fields = {k: v for k, v in TINY.items() if k not in ("seq_len", "eval_samples")}
    for test_fraction, where in ((0.2, " on the test split"), (0.0, "")):
        task = tensor_task(
            xs,
            xs[:, -1, :1],
            batch_first=True,
            valid_fraction=0.2,
            test_fraction=test_fraction,
        )
        lines: list[str] = []
        base = TrainConfig(task=task, **fields)
        record = sweep(base, {"model": ["rhn"]}, [0], log=lines.append)
        m = record["runs"][0]["metrics"]
        (line,) = lines
        said = f"valid_loss {m['valid_loss']:.4g} (baseline{where} {m['baseline']:.4g})"
        assert said in line, line
        assert "test_loss" not in line, line
    generated: list[str] = []
    record = sweep(tiny(), {"model": ["rhn"]}, [0], log=generated.append)
    m = record["runs"][0]["metrics"]
    assert (
        f"test_loss {m['test_loss']:.4g} (baseline {m['baseline']:.4g})" in generated[0]
    )


def test_fields_a_model_ignores_are_not_swept():
    record = sweep(tiny(depth=3), {"model": ["rhn", "gru"], "depth": [1, 2]}, [0])
    settings = [r["setting"] for r in record["runs"]]
    assert settings == [
        {"model": "rhn", "depth": 1},
        {"model": "rhn", "depth": 2},
        {"model": "gru"},
    ]
    # not the base's depth (the RHNs'): what a GRU run alone records, the
    # task's default
    assert record["runs"][2]["config"]["depth"] == 2
    rows = summarize(record)
    assert [(r["model"], r["depth"]) for r in rows] == [
        ("rhn", 1),
        ("rhn", 2),
        ("gru", None),
    ]


def test_a_budget_in_the_grid_sets_the_width():
    record = sweep(tiny(), {"model": ["rnn", "lstm"], "num_params": [400]}, [0])
    for run in record["runs"]:
        assert run["config"]["hidden_size"] is None
        core = run["metrics"]["num_params"]  # the core, as the budget counts it
        head = run["metrics"]["hidden_size"] + 1
        assert run["metrics"]["num_params_total"] == core + head
        assert abs(core - 400) < 0.2 * 400
    widths = [r["metrics"]["hidden_size"] for r in record["runs"]]
    assert widths[0] > widths[1]  # the RNN is wider at equal size


def test_summarize_and_select_and_steps_to_reach():
    record = sweep(tiny(), {"model": ["rhn", "rnn"]}, [0, 1, 2])
    rows = summarize(record)
    assert [r["model"] for r in rows] == ["rhn", "rnn"]
    for row in rows:
        runs = select(record, model=row["model"])
        values = [r["metrics"]["test_loss"] for r in runs]
        assert row["values"] == values and row["seeds"] == [0, 1, 2]
        assert row["n"] == 3
        # the statistics are over the runs that did not diverge
        kept = [r["metrics"]["test_loss"] for r in runs if not r["metrics"]["diverged"]]
        assert row["diverged"] == 3 - len(kept)
        assert kept, row  # the tiny runs: two of the RHN's diverge, no RNN's
        assert row["mean"] == pytest.approx(statistics.mean(kept))
        if len(kept) > 1:
            assert row["std"] == pytest.approx(statistics.stdev(kept))
        else:
            assert math.isnan(row["std"])
        assert (row["min"], row["max"]) == (min(kept), max(kept))
    assert [row["diverged"] for row in rows] == [2, 0]
    by_seed = summarize(record, metric=lambda run: run["seed"], by=["model"])
    assert by_seed[1]["mean"] == 1.0 and by_seed[1]["min"] == 0  # the RNN's
    assert by_seed[0]["mean"] == 2.0  # the RHN's seed 2: 0 and 1 diverged
    run = record["runs"][0]
    losses = run["history"]["test_loss"]
    assert steps_to_reach(run, losses[0] + 1.0) == 2
    assert steps_to_reach(run, min(losses) - 1.0) is None
    one_seed = sweep(tiny(), {}, [5])
    assert summarize(one_seed, by=["model"])[0]["n"] == 1
    with pytest.raises(ValueError, match="metric 'nope'"):
        summarize(record, metric="nope")
    with pytest.raises(ValueError, match="unknown config field"):
        select(record, colour="red")


def test_out_file_round_trip_and_overwrite(tmp_path):
    path = tmp_path / "results" / "s.json"
    record = sweep(tiny(), {"model": ["rhn"]}, [0, 1], out=path, command="cmd")
    assert load_sweep(path) == json.loads(json.dumps(record))
    assert load_sweep(path)["command"] == "cmd"
    with pytest.raises(FileExistsError, match="overwrite"):
        sweep(tiny(), {"model": ["rhn"]}, [0], out=path)
    assert len(load_sweep(path)["runs"]) == 2  # untouched
    sweep(tiny(), {"model": ["rhn"]}, [0], out=path, overwrite=True)
    assert len(load_sweep(path)["runs"]) == 1
    partial = json.loads(path.read_text())
    partial["complete"] = False
    path.write_text(json.dumps(partial))
    with pytest.raises(ValueError, match="interrupted"):
        load_sweep(path)
    assert load_sweep(path, allow_incomplete=True)["runs"]
    path.write_text(json.dumps({"format": 99}))
    with pytest.raises(ValueError, match="format"):
        load_sweep(path)


@pytest.mark.parametrize(
    "grid, seeds, error, words",
    [
        ({"colour": [1]}, [0], ValueError, "colour"),
        ({"seed": [1, 2]}, [0], ValueError, "'seed'"),
        ({"depth": []}, [0], ValueError, "at least one"),
        ({"depth": 2}, [0], TypeError, "list of values"),
        ({"depth": [1, 1]}, [0], ValueError, "repeats"),
        ({"depth": [0]}, [0], ValueError, "depth"),
        ({}, [], ValueError, "at least one seed"),
        ({}, [0, 0], ValueError, "repeats"),
        ({}, [-1], ValueError, "seeds"),
        ({}, "0,1", TypeError, "seeds"),
        ([("depth", [1])], [0], TypeError, "grid"),
    ],
)
def test_sweep_errors(grid, seeds, error, words):
    with pytest.raises(error, match=words):
        sweep(tiny(), grid, seeds)


def test_sweep_needs_a_config():
    with pytest.raises(TypeError, match="TrainConfig"):
        sweep({"model": "rhn"}, {}, [0])


def test_cli_sweep_end_to_end(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    argv = [
        "sweep",
        "--seq-len", "6", "--hidden-size", "8", "--steps", "4", "--eval-every", "2",
        "--eval-samples", "16", "--batch-size", "8", "--device", "cpu",
        "--no-progress", "--grid", "model=rhn,gru", "--grid", "depth=1,2",
        "--seeds", "0,1", "--out", str(out),
    ]  # fmt: skip
    status = main(argv)
    record = load_sweep(out)
    # exit status 1 when a run diverged (these 4-step runs may), as train's
    diverged = any(run["metrics"]["diverged"] for run in record["runs"])
    assert status == (1 if diverged else 0)
    assert record["command"].startswith("python -m rhn sweep --seq-len 6")
    assert len(record["runs"]) == 6  # rhn x 2 depths x 2 seeds, gru x 2 seeds
    run = select(record, model="rhn", depth=2, seed=1)[0]
    assert run["config"]["steps"] == 4 and run["config"]["hidden_size"] == 8
    # The same run through the Python API gives the same numbers.
    again = train(TrainConfig(**run["config"]))
    assert again.history["test_loss"] == run["history"]["test_loss"]
    capsys.readouterr()
    assert main(argv) == 2  # the file exists
    err = capsys.readouterr().err
    assert "exists" in err and "--overwrite" in err and err.count("\n") == 1
    status = main([*argv, "--overwrite", "--grid", "lr=0.01"])
    record = load_sweep(out)
    assert record["call"]["grid"]["lr"] == [0.01]
    assert status == (1 if any(r["metrics"]["diverged"] for r in record["runs"]) else 0)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--grid", "depth=a"], "expected int"),
        (["--grid", "colour=1"], "FIELD=V1"),
        (["--grid", "depth"], "FIELD=V1"),
        (["--grid", "depth=1", "--grid", "depth=2"], "twice"),
        (["--grid", "amp=yes"], "true or false"),
        (["--seed", "1"], "--seeds"),
        (["--resume"], "no sweep to continue"),
        (["--seeds", "0,,1"], "comma-separated ints"),  # was read as 0,1
    ],
)
def test_cli_sweep_errors(tmp_path, capsys, argv, words):
    base = ["sweep", "--seeds", "0", "--out", str(tmp_path / "x.json")]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "x.json").exists()


def test_cli_sweep_needs_out_and_seeds(tmp_path, capsys):
    assert main(["sweep", "--seeds", "0"]) == 2
    assert "--out is required" in capsys.readouterr().err
    assert main(["sweep", "--out", str(tmp_path / "x.json")]) == 2
    assert "--seeds is required" in capsys.readouterr().err
    assert main(["sweep", "--seeds", "0,x", "--out", str(tmp_path / "x.json")]) == 2
    assert "comma-separated" in capsys.readouterr().err


def test_forget_bias_is_swept_for_the_lstm_only(tmp_path):
    out = tmp_path / "fb.json"
    argv = [
        "sweep", "--seq-len", "6", "--hidden-size", "8", "--steps", "2",
        "--eval-every", "2", "--eval-samples", "16", "--batch-size", "8",
        "--device", "cpu", "--no-progress", "--grid", "model=lstm,rnn",
        "--grid", "forget_bias=none,1", "--seeds", "0", "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    record = load_sweep(out)
    assert [r["setting"] for r in record["runs"]] == [
        {"model": "lstm", "forget_bias": None},
        {"model": "lstm", "forget_bias": 1.0},
        {"model": "rnn"},
    ]
    assert record["call"]["grid"]["forget_bias"] == [None, 1.0]


def test_eval_curve_and_core_parameters_read_old_and_new_records_alike(tmp_path):
    """A shipped record made before num_params_total (the head inside
    num_params), a chorales record of the first kind (the validation NLL
    under test_loss only) and a run of today (valid_loss in the history,
    num_params the core's) give the same kind of numbers."""
    import torch
    from tiny_runs import TINY

    from rhn.experiments import core_parameters, eval_curve, load_sweep
    from rhn.owntasks import tensor_task
    from rhn.train import TrainConfig, train

    old = load_sweep("adding_models.json")["runs"][0]
    assert "num_params_total" not in old["metrics"]
    steps, losses = eval_curve(old)
    assert steps == old["history"]["eval_step"]
    assert losses == old["history"]["test_loss"]
    head = old["metrics"]["hidden_size"] + 1  # one output, one bias
    assert core_parameters(old) == old["metrics"]["num_params"] - head
    assert abs(core_parameters(old) - 9649) < 0.02 * 9649
    # the first chorales records: no valid_loss, the head inside num_params
    run = load_sweep("chorales_models.json")["runs"][0]
    first = {
        "config": run["config"],
        "history": {k: v for k, v in run["history"].items() if k != "valid_loss"},
        "metrics": {
            **{k: v for k, v in run["metrics"].items() if k != "num_params_total"},
            "num_params": run["metrics"]["num_params_total"],
        },
    }
    assert eval_curve(first) == eval_curve(run)
    assert core_parameters(first) == core_parameters(run)
    assert core_parameters(run) == run["metrics"]["num_params"]
    assert abs(core_parameters(first) - 40_000) < 0.02 * 40_000

    g = torch.Generator().manual_seed(0)
    xs = torch.randn(40, 6, 2, generator=g)
    task = tensor_task(xs, xs.sum((1, 2)), batch_first=True, test_fraction=0.2)
    fields = {k: v for k, v in TINY.items() if k not in ("seq_len", "eval_samples")}
    result = train(TrainConfig(task=task, **fields))
    new = {"history": result.history, "metrics": result.metrics}
    steps, losses = eval_curve(result)
    assert (steps, losses) == eval_curve(new) == eval_curve(result.history)
    assert losses == result.history["valid_loss"] and len(steps) == 3
    assert core_parameters(new) == result.metrics["num_params"]
    assert result.metrics["num_params_total"] > core_parameters(new)
    with pytest.raises(TypeError, match="run must be a record's run"):
        eval_curve([1, 2])


def test_eval_curve_reads_a_history_of_validation_losses_only_and_names_a_bad_one():
    from rhn.experiments import eval_curve

    assert eval_curve({"eval_step": [5], "valid_loss": [0.5]}) == ([5], [0.5])
    with pytest.raises(TypeError, match="no held-out losses"):
        eval_curve({"eval_step": [5], "train_loss": [0.5]})
