"""What the browser tests share: where the site is, and one visit to a page.

The fixtures that use them (``browser``, ``base_url``, ``visit``) are in
``conftest.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Browser, Page

from .assets import CONTENT_TYPES, local_file

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RHN_SITE", ROOT / "_build" / "html")).resolve()
OUT = ROOT / "test-output" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class Visit:
    """One page, with its uncaught errors and the requests that left the site."""

    def __init__(self, browser: Browser, base_url: str, page_path: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.base_url = base_url
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.route("**/*", self._route)
        url = base_url + page_path
        self.redirect = 'http-equiv="refresh"' in (SITE / page_path).read_text().lower()
        self.page.goto(url, wait_until="load")
        if self.redirect:
            # the root index.html only redirects to the book's first page
            self.page.wait_for_url(lambda now: now != url, timeout=10000)
            self.page.wait_for_load_state("load")

    def _route(self, route) -> None:  # noqa: ANN001 - playwright's Route
        url = route.request.url
        if url.startswith(self.base_url) or url.startswith("data:"):
            route.continue_()
            return
        try:
            path = local_file(url)
        except LookupError as err:
            self.blocked.append(str(err))
            route.abort()
            return
        if path is None:
            self.blocked.append(url)
            route.abort()
            return
        route.fulfill(
            path=path,
            headers={
                "Access-Control-Allow-Origin": "*",
                "Content-Type": CONTENT_TYPES.get(path.suffix, "text/plain"),
            },
        )

    def close(self) -> None:
        self.context.close()
