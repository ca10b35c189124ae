"""The optimisation study: equal budgets, the record's layout, reproducibility."""

import json

import pytest
import torch

import rhn
from rhn import optstudy
from rhn.train import TrainConfig, make_model


def test_study_record_layout_budget_and_initial_gradients(tmp_path):
    out = tmp_path / "study.json"
    record = optstudy.run_study(
        depths=[1, 3], seeds=[0, 1], steps=4, eval_every=2, seq_len=6,
        num_params=600, eval_samples=16, out=out,
    )  # fmt: skip
    assert record["complete"] and json.loads(out.read_text()) == record
    runs = record["runs"]
    assert [(r["depth"], r["model"], r["seed"]) for r in runs] == [
        (d, m, s) for d in (1, 3) for m in ("rhn", "dtrnn") for s in (0, 1)
    ]
    for run in runs:
        assert abs(run["num_params"] - 600) / 600 < 0.1  # the same budget
        assert run["grad_steps"] == [0, 2, 4]
        assert all(len(curve) == 6 for curve in run["grad_norms"])
        assert len(run["history"]["train_loss"]) == 4
    # the lag curve at step 0 is that of the model train() starts from
    run = runs[-1]
    config = TrainConfig(
        task="adding", seq_len=6, model="dtrnn", depth=3, hidden_size=None,
        num_params=600, seed=1, progress=False,
    )  # fmt: skip
    torch.manual_seed(1)
    core = make_model(config).core
    probe, _ = rhn.tasks.adding_problem(32, 6, seed=12345)
    expected = rhn.gradflow.gradient_norms(core, probe)
    torch.testing.assert_close(torch.tensor(run["grad_norms"][0]), expected)


def test_study_rejects_bad_arguments():
    with pytest.raises(ValueError, match="models"):
        optstudy.run_study(models=["lstm"], steps=1)
    with pytest.raises(ValueError, match="depths"):
        optstudy.run_study(depths=[0], steps=1)


def test_dropout_modes_draw_masks_where_and_when_documented():
    from rhn.optstudy import _final_state

    torch.manual_seed(0)
    core = rhn.RHN(2, 6, depth=2, impl="loop").train()
    x = torch.randn(5, 3, 2)
    cell = core.cells[0]
    x_proj = x @ cell.weight_ih.T
    for mode in ("per-step", "per-step-carry"):
        torch.manual_seed(1)
        got = _final_state(core, x, mode, 0.5)
        torch.manual_seed(1)
        s, masks = torch.zeros(3, 6), []
        for x_t in x_proj:  # a new mask at every step, in the same order
            masks.append(torch.empty(3, 6).bernoulli_(0.5) * 2)
            s = (
                cell.step(x_t, s, masks[-1])
                if mode == "per-step"
                else cell.step(x_t, s * masks[-1])
            )
        torch.testing.assert_close(got, s)
        assert not torch.equal(masks[0], masks[1])
    # variational: the package's forward with state_dropout, one mask per sequence
    torch.manual_seed(2)
    got = _final_state(core, x, "variational", 0.5)
    torch.manual_seed(2)
    core.state_dropout = 0.5
    torch.testing.assert_close(got, core(x)[0][-1])
    assert not torch.equal(got, _final_state(core, x, "none", 0.5))


def test_dropout_study_layout_and_determinism():
    kwargs = dict(seeds=[0], steps=3, eval_every=2, seq_len=5, hidden_size=4,
                  eval_samples=8)  # fmt: skip
    a = optstudy.dropout_study(**kwargs)
    b = optstudy.dropout_study(modes=["none"], **kwargs)
    assert a["complete"] and [r["mode"] for r in a["runs"]] == list(
        optstudy.DROPOUT_MODES
    )
    assert a["runs"][0]["eval_step"] == [2, 3]
    assert a["runs"][0]["test_loss"] == b["runs"][0]["test_loss"]


def test_command_line_errors_are_one_line_and_existing_results_are_kept(
    tmp_path, capsys
):
    from rhn.__main__ import main

    out = tmp_path / "study.json"
    out.write_text("{}")
    cases = [
        ["--depths", "0", "--out", str(tmp_path / "a.json")],
        ["--lr", "-1", "--out", str(tmp_path / "a.json")],
        ["--out", str(tmp_path)],  # a directory
        ["--out", str(out)],  # an earlier study
        ["--task", "nope", "--steps", "1", "--out", str(tmp_path / "b.json")],
        # duplicates trained the same runs twice; dropout ignored depth options
        ["--depths", "1", "1", "--out", str(tmp_path / "a.json")],
        ["--seeds", "0", "0", "--out", str(tmp_path / "a.json")],
        ["--study", "dropout", "--steps", "5", "--out", str(tmp_path / "a.json")],
    ]
    for argv in cases:
        assert main(["optstudy", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("python -m rhn optstudy: error:"), (argv, err)
        assert err.count("\n") == 1, err
    assert out.read_text() == "{}"  # never overwritten without --overwrite
    assert not (tmp_path / "a.json").exists()
