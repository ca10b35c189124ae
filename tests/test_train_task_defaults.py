"""Issue 32: a task's defaults are applied the same way by ``TrainConfig``
and by ``python -m rhn train``; recorded runs keep their recorded options."""

import dataclasses
import json

import pytest
from tiny_runs import TINY

import rhn.train
from rhn.__main__ import train_main
from rhn.tasks import TASKS
from rhn.train import TrainConfig
from rhn.train.records import filled_config

# options given on both sides; the rest come from the task, then the package
GIVEN = [
    {},
    {"model": "gru"},
    {"depth": 3, "seed": 2},
    {"num_params": 3000},
    {"hidden_size": 20, "lr": 0.01},
]


def _flags(options):
    return [a for k, v in options.items() for a in (f"--{k.replace('_', '-')}", str(v))]


def _cli_config(monkeypatch, task, options, out):
    """The TrainConfig that ``python -m rhn train`` builds, caught before it trains."""
    caught = []

    def fake_train(config, **kwargs):
        caught.append(config)
        raise SystemExit(0)

    monkeypatch.setattr(rhn.train, "train", fake_train)
    with pytest.raises(SystemExit):
        train_main(["--task", task, "--out", str(out), *_flags(options)])
    return caught[0]


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("options", GIVEN, ids=lambda o: ",".join(o) or "none")
def test_the_api_and_the_command_line_give_one_config(
    monkeypatch, tmp_path, task, options
):
    cli = _cli_config(monkeypatch, task, options, tmp_path / "run")
    api = TrainConfig(task=task, out=str(tmp_path / "run"), **options)
    assert api.to_dict() == cli.to_dict()
    assert TrainConfig.for_task(task, out=str(tmp_path / "run"), **options) == api


def test_a_task_default_fills_only_what_is_left_out():
    config = TrainConfig(task="chorales", lr=1e-2)
    defaults = TASKS["chorales"].defaults
    assert (config.lr, config.batch_size) == (1e-2, defaults["batch_size"])
    assert config.num_params == defaults["num_params"] and config.hidden_size is None
    # a value equal to the package default is given all the same
    assert defaults["batch_size"] != 64
    assert TrainConfig(task="chorales", batch_size=64).batch_size == 64
    # a size given replaces the task's budget, and a budget its size
    assert TrainConfig(task="chorales", hidden_size=8).num_params is None
    assert TrainConfig(task="copy", num_params=2000).hidden_size is None
    # replace gives the fields never given the new task's defaults
    moved = dataclasses.replace(TrainConfig(), task="chorales")
    assert moved == TrainConfig(task="chorales")
    assert moved.batch_size == defaults["batch_size"]


def test_every_task_trains_the_package_rhn_unless_told_otherwise():
    # one RHN across the book: only the copy task brings a depth and bias of
    # its own (the README says why); the chorales train the package's RHN
    package = {"depth": 2, "transform_bias": -3.0}
    own = {
        name
        for name, task in TASKS.items()
        if any(task.defaults.get(k, v) != v for k, v in package.items())
    }
    assert own == {"copy"}
    for name in set(TASKS) - own:
        config = TrainConfig(task=name, progress=False)
        assert (config.depth, config.transform_bias) == (2, -3.0), name


def test_a_task_whose_defaults_name_no_field_is_refused():
    task = dataclasses.replace(TASKS["adding"], name="mine", defaults={"dept": 3})
    with pytest.raises(TypeError, match=r"task 'mine'.*\['dept'\].*not TrainConfig"):
        TrainConfig(task=task)


def test_every_record_rebuilds_its_stored_config():
    """What each shipped sweep record stores is the config TrainConfig makes
    from it (fields added since at the package's defaults)."""
    from importlib import resources

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    seen = 0
    for path in resources.files("rhn._data.results").iterdir():
        if not path.name.endswith(".json"):
            continue
        record = json.loads(path.read_text())
        configs = [r["config"] for r in record.get("runs", []) if "config" in r]
        configs += [record["call"]["base"]] if "call" in record else []
        for saved in configs:
            kept = {k: v for k, v in filled_config(saved).items() if k in fields}
            rebuilt = TrainConfig(**kept).to_dict()
            assert {k: rebuilt[k] for k in saved if k in fields} == {
                k: v for k, v in saved.items() if k in fields
            }, (path.name, saved)
            seen += 1
    assert seen > 100


def test_a_resume_refused_over_a_task_default_says_why(tmp_path):
    """A run made before TrainConfig applied the task's defaults (no patience
    on the chorales), resumed from the API without them, is refused with a hint;
    the command line resumes it with its recorded options."""
    small = {**TINY, "steps": 2, "eval_every": 1, "batch_size": 2}
    small.pop("seq_len")
    old = TrainConfig(task="chorales", **small, out=str(tmp_path / "r"))
    old = dataclasses.replace(old, patience=0)
    rhn.train.train(old)
    again = TrainConfig(task="chorales", **{**small, "steps": 3}, out=old.out)
    with pytest.raises(ValueError, match=r"patience: 0 -> 6.*task's defaults \("):
        rhn.train.train(again, resume=old.out)
    assert train_main(["--resume", old.out, "--steps", "3"]) == 0
    state = rhn.train.load_checkpoint(old.out)
    assert state["step"] == 3
    assert state["config"]["patience"] == 0
