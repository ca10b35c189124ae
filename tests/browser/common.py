"""What the browser tests share: where the site is, and one visit to a page.

The fixtures that use them (``browser``, ``base_url``, ``visit``) are in
``conftest.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RHN_SITE", ROOT / "_build" / "html")).resolve()
OUT = ROOT / "test-output" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class Visit:
    """One page, with its uncaught errors and the requests that left the site.

    Every request for a file outside the site is refused and recorded in
    ``blocked``; ``requested`` lists the site's files the page loaded.
    """

    def __init__(
        self,
        browser: Browser,
        base_url: str,
        page_path: str,
        viewport: tuple[int, int] = (1280, 900),
        **context: object,
    ) -> None:
        width, height = viewport
        self.context = browser.new_context(
            viewport={"width": width, "height": height}, **context
        )
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.base_url = base_url
        self.requested: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        # console.error messages (the theme reports a bad setting this way)
        self.console_errors: list[str] = []
        self.page.on(
            "console",
            lambda m: self.console_errors.append(m.text) if m.type == "error" else None,
        )
        self.page.on("requestfinished", lambda r: self.requested.append(r.url))
        self.page.route("**/*", self._route)
        url = base_url + page_path
        self.redirect = (
            'http-equiv="refresh"'
            in (SITE / page_path.split("?")[0]).read_text().lower()
        )
        self.page.goto(url, wait_until="load")
        if self.redirect:
            # the root index.html only redirects to the book's first page
            self.page.wait_for_url(lambda now: now != url, timeout=10000)
            self.page.wait_for_load_state("load")

    def _route(self, route) -> None:  # noqa: ANN001 - playwright's Route
        # the site serves everything it needs, MathJax included: any request
        # that leaves it is recorded (the tests fail on it) and refused
        url = route.request.url
        if url.startswith((self.base_url, "data:", "blob:")):
            route.continue_()
            return
        self.blocked.append(url)
        route.abort()

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> Visit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
