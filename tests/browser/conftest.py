"""Fixtures of the browser tests: Chromium, the served site, one page visit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from .common import CHROMIUM, OUT, SITE, Visit
from .server import serve


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    with serve(SITE) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: `apt-get install chromium` (make browser)")
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-quic",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def visit(browser: Browser, base_url: str, request) -> Iterator[Visit]:  # noqa: ANN001
    v = Visit(browser, base_url, request.param)
    yield v
    v.close()
