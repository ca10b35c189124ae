"""A depth or transform bias given for a model that does not read it warns:
``TrainConfig(model="gru", depth=3)`` trains a GRU, as without the depth.
Not an error: every recorded config holds both fields for every model, and
a resume or ``load_model`` passes them back."""

import dataclasses
import warnings

import pytest

from rhn.train import TrainConfig
from rhn.train.records import filled_config


@pytest.mark.parametrize(
    ("model", "field", "value", "readers"),
    [
        ("gru", "depth", 3, "'rhn' or 'dtrnn'"),
        ("lstm", "transform_bias", -4.0, "'rhn'"),
        ("dtrnn", "transform_bias", -1.0, "'rhn'"),
    ],
)
def test_a_setting_the_model_does_not_read_warns(model, field, value, readers):
    match = f"{field}={value} does nothing for model='{model}': only model={readers}"
    with pytest.warns(UserWarning, match=match):
        TrainConfig(model=model, progress=False, **{field: value})


def test_defaults_and_recorded_configs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TrainConfig(model="gru", progress=False)
        TrainConfig(model="dtrnn", depth=3, progress=False)  # a dtrnn reads it
        TrainConfig(model="gru", depth=2, progress=False)  # the default
        # a record's config comes back without a warning
        chorales = TrainConfig.for_task("chorales", model="gru", progress=False)
        fields = {f.name for f in dataclasses.fields(TrainConfig)}
        saved = filled_config(chorales.to_dict())
        TrainConfig(**{k: v for k, v in saved.items() if k in fields})


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(UserWarning, match="depth=3 does nothing") as caught:
        TrainConfig(model="gru", depth=3, progress=False)
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="depth=3 does nothing") as caught:
        TrainConfig.for_task("adding", model="gru", depth=3, progress=False)
    assert caught[0].filename == __file__


def test_a_sweep_grid_over_models_or_tasks_does_not_warn(tmp_path):
    """A sweep makes each run's config with dataclasses.replace (every field
    passed): the RHN's depth, given for the sweep, is not the GRU's mistake."""
    from rhn import experiments

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base = TrainConfig.for_task("copy", model="gru", progress=False)
        experiments._config(base, {"task": "temporal_order"}, 0)
        rhn4 = TrainConfig(model="rhn", depth=4, progress=False)
        dataclasses.replace(rhn4, model="gru")


def test_sweep_over_models_warns_which_runs_go_without_a_typed_option():
    # --transform-bias with --grid model=rhn,gru: the RHN runs use it, the GRU
    # runs cannot; the sweep says so in one warning (none when every model
    # reads it, a refusal when none does)
    from rhn.__main__ import _typed_and_unread

    args = {"transform_bias": 0.0, "depth": 3}
    with pytest.warns(UserWarning, match=r"--transform-bias 0.0 applies to the rhn ru"):
        _typed_and_unread({"transform_bias"}, args, ["rhn", "gru"])
    with pytest.warns(UserWarning, match=r"the lstm,gru runs do not read it"):
        _typed_and_unread({"depth"}, args, ["dtrnn", "lstm", "gru", "rhn"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _typed_and_unread({"transform_bias", "depth"}, args, ["rhn"])
    with pytest.raises(ValueError, match="--transform-bias is read only by"):
        _typed_and_unread({"transform_bias"}, args, ["gru", "lstm"])
