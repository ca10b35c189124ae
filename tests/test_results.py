"""The committed records travel with the package (rhn.results)."""

from pathlib import Path

import pytest

import rhn
import rhn.results
from rhn import experiments


def test_every_record_loads_and_is_a_json_object():
    names = rhn.results.names()
    assert "adding_models.json" in names and "results-cpu-amd-epyc.json" in names
    for name in names:
        record = rhn.results.load(name)
        assert isinstance(record, dict) and record, name
    # only JSON in the folder: pyproject's package data ships "_data/results/*.json"
    assert {p.name for p in rhn.results.folder().iterdir()} == set(names)


def test_names_filters_with_a_pattern():
    assert rhn.results.names("chorales_*.json") == [
        "chorales_bias.json",
        "chorales_depth.json",
        "chorales_dropout.json",
        "chorales_lstm_forget1.json",
        "chorales_models.json",
        "chorales_rhn_matched.json",
    ]
    assert rhn.results.names("no-such-*.json") == []


def test_path_is_inside_the_package():
    p = rhn.results.path("optstudy.json")
    assert p.is_file() and p.parent == Path(rhn.__file__).parent / "_data" / "results"


def test_a_missing_record_names_itself_and_lists_the_shipped_ones():
    with pytest.raises(FileNotFoundError, match="'nope.json'.*optstudy.json"):
        rhn.results.load("nope.json")


@pytest.mark.parametrize("bad", ["results/optstudy.json", "../pyproject.toml", ""])
def test_a_path_instead_of_a_name_is_refused(bad):
    with pytest.raises(ValueError, match="file name"):
        rhn.results.path(bad)


def test_a_name_that_is_not_a_string_is_refused():
    with pytest.raises(TypeError, match="name"):
        rhn.results.path(Path("optstudy.json"))


def test_a_corrupt_record_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "cut.json").write_text('{"runs": [1, 2')  # cut short
    (tmp_path / "list.json").write_text("[1, 2]")
    monkeypatch.setattr(rhn.results, "folder", lambda: tmp_path)
    with pytest.raises(ValueError, match=r"'cut.json'.*not valid JSON"):
        rhn.results.load("cut.json")
    with pytest.raises(ValueError, match=r"'list.json'.*holds a list"):
        rhn.results.load("list.json")


def test_load_sweep_takes_a_record_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing of the repository around
    record = experiments.load_sweep("adding_models.json")
    assert record == rhn.results.load("adding_models.json")
    assert len(record["runs"]) == 25  # five models, five seeds
    # a file of that name in the working directory comes first
    (tmp_path / "adding_models.json").write_text("{}")
    with pytest.raises(ValueError, match="not a sweep record"):
        experiments.load_sweep("adding_models.json")
    (tmp_path / "adding_models.json").write_text("{")
    with pytest.raises(ValueError, match="adding_models.json.*not valid JSON"):
        experiments.load_sweep("adding_models.json")
    with pytest.raises(FileNotFoundError, match="no file 'missing.json'.*no record"):
        experiments.load_sweep("missing.json")


def _write(folder: Path, name: str, record: dict) -> None:
    import json

    (folder / name).write_text(json.dumps(record))


def test_settings_of_a_sweep_count_the_rhn_s_depth_and_bias_only(tmp_path, monkeypatch):
    monkeypatch.setattr(rhn.results, "folder", lambda: tmp_path)
    base = {
        "task": "adding",
        "seq_len": 100,
        "num_params": 9649,
        "lr": 0.005,
        "steps": 1000,
        "batch_size": 64,
    }
    runs = [
        {
            "seed": 0,
            "config": {**base, "model": "lstm", "depth": 4, "transform_bias": -2.0},
        },
        {
            "seed": 1,
            "config": {**base, "model": "rhn", "depth": 2, "transform_bias": -3.0},
        },
        {
            "seed": 0,
            "config": {**base, "model": "rhn", "depth": 1, "transform_bias": -3.0},
        },
    ]
    _write(tmp_path, "s.json", {"runs": runs})
    got = rhn.results.settings("s.json")
    # the LSTM's unused depth 4 and bias -2 are not the RHN's settings
    assert got["depth"] == [1, 2] and got["transform_bias"] == [-3.0]
    assert got["models"] == ["lstm", "rhn"] and got["seeds"] == [0, 1]
    assert (
        got["seq_len"] == [100] and got["lr"] == [0.005] and got["task"] == ["adding"]
    )


def test_settings_of_a_study_read_its_models_and_plural_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(rhn.results, "folder", lambda: tmp_path)
    study = {
        "seq_len": 60,
        "lrs": [0.01, 0.001],
        "seeds": [2, 0],
        "depth": 7,
        "models": {
            "LSTM": ["lstm", {}],
            "RHN": ["rhn", {"depth": 3, "transform_bias": -4.0}],
        },
    }
    _write(tmp_path, "m.json", {"settings": study})
    got = rhn.results.settings("m.json")
    # the RHN model's own depth wins over a study-wide one
    assert got["depth"] == [3] and got["transform_bias"] == [-4.0]
    assert got["lr"] == [0.001, 0.01] and got["seeds"] == [0, 2]
    assert got["models"] == ["lstm", "rhn"] and got["num_params"] == []
    _write(
        tmp_path,
        "d.json",
        {
            "settings": {
                "depths": [1, 8],
                "transform_bias": -3.0,
                "models": ["rhn", "dtrnn"],
            }
        },
    )
    assert rhn.results.settings("d.json")["depth"] == [1, 8]
    _write(tmp_path, "x.json", {"rows": []})
    with pytest.raises(ValueError, match=r"name: 'x.json' holds neither"):
        rhn.results.settings("x.json")


def test_settings_of_the_shipped_records_match_their_runs():
    got = rhn.results.settings("chorales_models.json")
    runs = experiments.load_sweep("chorales_models.json")["runs"]
    rhn_runs = [r["config"] for r in runs if r["config"]["model"] == "rhn"]
    assert got["depth"] == sorted({c["depth"] for c in rhn_runs})
    assert got["transform_bias"] == sorted({c["transform_bias"] for c in rhn_runs})
    assert got["lr"] == sorted({r["config"]["lr"] for r in runs})


def test_settings_table_rows_per_chapter_and_stars_off_default_settings():
    """Each record of rhn.results.RECORDS exists; a chapter's table has its
    records' rows; an asterisk marks exactly an RHN setting off the defaults."""
    assert all(name in rhn.results.names() for _, _, name in rhn.results.RECORDS)
    every = rhn.results.settings_table()
    assert len(every.rows) == len(rhn.results.RECORDS)
    race = rhn.results.settings_table(9)
    assert race.header[0] == "result" and len(race.rows) == 1
    (row,) = race.rows
    assert list(row[3:5]) == ["3*", "-4*"]  # the race's RHN: D = 3, b_T = -4
    rows = {r[0]: r for r in rhn.results.settings_table(12).rows}
    # the package's RHN: no asterisk; the bias sweep's -2, -1, 0: one
    assert list(rows["five models, chorales"][3:5]) == ["2", "-3"]
    assert list(rows["RHN biases, chorales"][3:5]) == ["2", "-2, -1, 0*"]
    # the chorales train on whole pieces, so T is no window length
    assert {r[1] for r in rows.values()} == {"whole"}
    assert race.rows[0][1] == "50"  # the race's adding problem, T = 50
    with pytest.raises(ValueError, match=r"chapter must be one of \[6, 9, 10, 11"):
        rhn.results.settings_table(3)
