"""book/checks.md, the appendix "How this book checks itself", against the records."""

from __future__ import annotations

import re
from pathlib import Path

import rhn.results

PAGE = Path(__file__).resolve().parents[1] / "book" / "checks.md"


def test_every_shipped_record_is_listed_with_who_reads_it():
    text = PAGE.read_text()
    # one list item a group of records: "- `a.json`, `b.json`: read by ..."
    items = [line for line in text.splitlines() if line.startswith("- `")]
    listed = {
        name
        for item in items
        for name in re.findall(r"`([\w.-]+\.json)`", item.split(": read by")[0])
    }
    assert listed == set(rhn.results.names()), (
        "book/checks.md's list of records and rhn/_data/results/ differ: "
        f"{sorted(listed ^ set(rhn.results.names()))}"
    )


def test_the_commands_shown_are_the_records_own():
    """A command the page writes out in full is the one stored in the record."""
    text = PAGE.read_text()
    for name in rhn.results.names():
        record = rhn.results.load(name)
        command = record.get("command")
        if (
            not isinstance(command, str)
            or f"--out rhn/_data/results/{name}" not in text
        ):
            continue
        shown = re.search(
            r"`([^`]*--out rhn/_data/results/" + re.escape(name) + ")`", text
        )
        assert shown and shown.group(1).split() == command.split(), name


def test_the_sweeps_that_store_amp_true_are_the_ones_the_page_names():
    """checks.md: seeds 0-2 of three sweeps store amp=True, every other run of
    a sweep amp=None; every chorales run records valid_loss."""
    text = " ".join(PAGE.read_text().split())
    named = ["adding_models", "adding_depth", "order_models"]
    assert "`adding_models`, `adding_depth` and `order_models` store `amp=True`" in text
    for name in rhn.results.names():
        record = rhn.results.load(name)
        runs = record.get("runs") if isinstance(record, dict) else None
        if not runs or not isinstance(runs, list) or "config" not in runs[0]:
            continue
        for run in runs:
            old = run["seed"] in (0, 1, 2)
            amp = run["config"].get("amp")
            assert amp is (True if old and name[:-5] in named else None), name
            if name.startswith("chorales_"):
                assert "valid_loss" in run["history"], name
