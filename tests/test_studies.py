"""rhn.studies: the chapters' experiments as functions, and their live reruns."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rhn import results
from rhn.studies import machine, memory, parse_seeds, reruns, spirals

ROOT = Path(__file__).resolve().parent.parent


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3,1") == [3, 1]
    assert parse_seeds("7") == [7]
    for bad in ("", "a", "1,1", "-1", "2-x"):
        with pytest.raises(ValueError, match="seeds"):
            parse_seeds(bad)


def test_machine_names_the_arithmetic(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    info = machine()
    assert info["torch"] == torch.__version__ and info["threads"] >= 1
    assert info["variables"]["ATEN_CPU_CAPABILITY"] == "avx2"


def test_spirals_nets_are_seeded_and_checked():
    a = spirals.make_net("he", depth=3, seed=5)
    b = spirals.make_net("he", depth=3, seed=5)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    highway = spirals.make_net("highway", depth=2, transform_bias=-3.0)
    assert torch.all(highway[1].bias[32:] == -3.0)  # the gate half of the bias
    with pytest.raises(ValueError, match="kind must be one of"):
        spirals.make_net("resnet")


def test_spirals_study_matches_a_hand_written_loop():
    record = spirals.run([1], settings=[("plain", 0.0)], depth=2, steps=6, every=3)
    x, y = spirals.spirals(1000, seed=0)
    xt, yt = spirals.spirals(1000, seed=1)
    net = spirals.make_net("plain", depth=2, seed=1)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(1)
    expected = []
    for step in range(1, 7):
        idx = torch.randint(0, 1000, (128,), generator=g)
        loss = torch.nn.functional.cross_entropy(net(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 3 == 0:
            with torch.no_grad():
                expected.append(torch.nn.functional.cross_entropy(net(xt), yt).item())
    assert record["runs"][0]["history"] == expected


def test_memory_train_one_is_a_run_of_the_record():
    # one run, by hand, with the settings a record keeps: train_one must pass
    # on the model, its keyword arguments, the seed and the rate
    from rhn.train import TrainConfig, train

    record = memory.run(
        [3], models={"LSTM b1": ("lstm", {"forget_bias": 1.0})}, lrs=(3e-3,),
        search_seeds=(9,), seq_len=12, steps=4, eval_every=2, eval_samples=64,
    )  # fmt: skip
    settings = {**record["settings"], "solve_accuracy": 0.0}
    got = memory.train_one("lstm", {"forget_bias": 1.0}, 3, 3e-3, settings)
    config = TrainConfig(
        task="sine_memory", seq_len=12, model="lstm", forget_bias=1.0,
        hidden_size=None, num_params=settings["num_params"], steps=4,
        batch_size=32, lr=3e-3, eval_every=2, eval_samples=64, seed=3,
        progress=False, threads=1, device="cpu", amp=False,
    )  # fmt: skip
    history = train(config).history
    assert got["history"]["test_loss"] == history["test_loss"]
    assert got["history"]["test_accuracy"] == history["test_accuracy"]
    assert got["steps_to_solve"] == 2  # every accuracy reaches 0
    assert {k: v for k, v in got.items() if k != "steps_to_solve"} == {
        k: v
        for k, v in record["runs"][0].items()
        if k not in ("model", "steps_to_solve")
    }
    other = memory.train_one("lstm", {}, 3, 3e-3, settings)  # the kwargs count
    assert other["history"]["test_loss"] != history["test_loss"]


def test_compare_uses_the_recorded_spread(monkeypatch):
    record = {
        "variant_spread": {"check": "dropout", "max_deviation": {"loss": [0.0, 1e-2]}}
    }
    monkeypatch.setattr(results, "load", lambda name: record)
    tol = reruns.tolerances("dropout")["loss"]
    assert tol == [reruns.FLOOR, reruns.MARGIN * 1e-2]
    saved = {"loss": [1.0, 1.0]}
    out = reruns.compare("dropout", {"loss": [1.0, 1.02]}, saved)
    assert not out["identical"] and out["deviation"]["loss"][1] == pytest.approx(0.02)
    assert reruns.compare("dropout", dict(saved), saved)["identical"]
    with pytest.raises(AssertionError, match="evaluation 0"):
        reruns.compare("dropout", {"loss": [1.002, 1.0]}, saved)
    with pytest.raises(AssertionError, match="evaluation 1"):
        reruns.compare("dropout", {"loss": [1.0, 1.04]}, saved)


def test_compare_without_a_spread_says_how_to_measure_it(monkeypatch):
    monkeypatch.setattr(results, "load", lambda name: {"runs": []})
    with pytest.raises(ValueError, match="tools/portable.py spread optstudy_t10"):
        reruns.tolerances("optstudy_t10")


@pytest.mark.parametrize("name", sorted(reruns.CHECKS))
def test_every_check_has_a_spread_in_its_record(name):
    spread = results.load(reruns.RECORDS[name])["variant_spread"]
    assert spread["check"] == name
    assert set(spread["variants"]) >= {"native", "sse", "mkl-compatible"}
    for devs in spread["max_deviation"].values():
        assert all(d >= 0 for d in devs)


def test_unknown_check_is_refused():
    with pytest.raises(ValueError, match="check must be one of"):
        reruns.run("nope")


def test_studies_cli_errors_are_one_line(tmp_path):
    def run(seeds, out):
        cmd = [
            sys.executable,
            "-m",
            "rhn.studies",
            "spirals",
            "--seeds",
            seeds,
            "--out",
            str(out),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)

    proc = run("x", tmp_path / "a.json")
    assert proc.returncode == 2 and "--seeds" in proc.stderr.splitlines()[-1]
    proc = run("0", tmp_path / "missing" / "a.json")
    assert proc.returncode == 2 and "--out" in proc.stderr.splitlines()[-1]


def test_portable_lists_variants_this_cpu_can_run():
    proc = subprocess.run(
        [sys.executable, "tools/portable.py", "list", "--names"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    names = proc.stdout.split()
    assert names[0] == "native" and {"sse", "threads2"} <= set(names)


def test_ci_runs_the_plain_kernels_and_avx2_only_where_it_is_not_native():
    path = ROOT / "tools" / "portable.py"
    spec = importlib.util.spec_from_file_location("portable", path)
    portable = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(portable)
    assert list(portable.ci_variants({"avx2"})) == ["sse"]
    assert list(portable.ci_variants({"avx2", "avx512f"})) == ["avx2", "sse"]
    assert portable.ci_variants({"avx2"})["sse"]["ATEN_CPU_CAPABILITY"] == "default"
    proc = subprocess.run(
        [sys.executable, "tools/portable.py", "list", "--ci", "--names"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert proc.stdout.split() == list(portable.ci_variants())
    # --ci and --record choose different lists: asking for both is an error
    both = [sys.executable, "tools/portable.py", "list", "--ci", "--record"]
    proc = subprocess.run(both, capture_output=True, text=True, cwd=ROOT)
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode == 2 and "--record" in last and "--ci" in last, last


@pytest.mark.parametrize("name", ["spirals.json", "spirals20.json", "race.json"])
def test_variant_records_say_what_made_them(name):
    record = results.load(name)
    assert record["study"] in name and len(record["settings"]["seeds"]) >= 10
    # regenerated from the repository root; no machine's own path in the record
    assert record["command"].endswith(f" --out rhn/_data/results/{name}")
    for variant in record["variants"].values():
        assert variant["machine"]["torch"] and variant["machine"]["cpu"]
        seeds = {r["seed"] for r in variant["runs"]}
        assert seeds == set(record["settings"]["seeds"])
    json.dumps(record)


def test_a_spread_measured_on_another_cpu_is_merged_not_replaced(tmp_path, monkeypatch):
    import argparse

    path = ROOT / "tools" / "portable.py"
    spec = importlib.util.spec_from_file_location("portable", path)
    portable = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(portable)
    name = reruns.RECORDS["dropout"]
    first = {"machine": {"cpu": "CPU A"}, "curves": {"loss": [1.0, 1.5]}}
    record = {
        "runs": [],
        "variant_spread": {
            "check": "dropout",
            "max_deviation": {"loss": [0.5, 0.0]},
            "variants": {"native": first},
        },
    }
    (tmp_path / name).write_text(json.dumps(record))
    monkeypatch.setattr(results, "folder", lambda: tmp_path)
    measured = {
        "machine": {"cpu": "CPU B"},
        "curves": {"loss": [1.0, 1.2]},
        "saved": {"loss": [1.0, 1.0]},
    }
    monkeypatch.setattr(portable, "run_variants", lambda *a: {"native": measured})
    assert portable.cmd_spread(argparse.Namespace(check="dropout", jobs=1)) == 0
    spread = json.loads((tmp_path / name).read_text())["variant_spread"]
    assert spread["max_deviation"]["loss"] == [0.5, pytest.approx(0.2)]
    assert spread["variants"]["native"] == first
    assert spread["variants"]["native @ CPU B"]["curves"] == measured["curves"]
    assert json.loads((tmp_path / name).read_text())["runs"] == []
