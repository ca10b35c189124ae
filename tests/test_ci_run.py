"""``.ci/run``: ``make test`` first, then ``make portable`` (CI's variants)
and ``make colab`` side by side, and CI fails when any of the three fails.

A stand-in ``make`` on ``PATH`` records its arguments and fails for the
targets named in ``FAIL_TARGETS``; nothing is built.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE_MAKE = """#!/usr/bin/env bash
echo "$*" >> "$MAKE_LOG"
for target in $FAIL_TARGETS; do
  if [ "$1" = "$target" ]; then exit 3; fi
done
"""


PORTABLE = "portable PORTABLE_JOBS=1 PORTABLE_VARIANTS=ci"


def _ci(tmp_path: Path, fail: str) -> tuple[int, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    make = bin_dir / "make"
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    log = tmp_path / "make.log"
    env = dict(os.environ)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        MAKE_LOG=str(log),
        FAIL_TARGETS=fail,
    )
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, timeout=60
    )
    calls = log.read_text().splitlines() if log.is_file() else []
    return done.returncode, calls


def test_ci_runs_the_tests_then_portable_and_colab(tmp_path: Path) -> None:
    code, calls = _ci(tmp_path, "")
    assert code == 0
    assert calls[0] == "test"
    assert sorted(calls[1:]) == ["colab", PORTABLE]


@pytest.mark.parametrize("fail", ["portable", "colab", "portable colab"])
def test_ci_fails_when_portable_or_colab_fails(tmp_path: Path, fail: str) -> None:
    code, calls = _ci(tmp_path, fail)
    assert code != 0
    # the other one still ran to the end
    assert sorted(calls[1:]) == ["colab", PORTABLE]


def test_ci_stops_when_the_tests_fail(tmp_path: Path) -> None:
    code, calls = _ci(tmp_path, "test")
    assert code != 0 and calls == ["test"]
