"""The generated report in a real browser: Debian's headless Chromium driven by Playwright.

Playwright only drives the system browser (`executable_path`); it never downloads one.
`.ci/run` installs `chromium` when it is missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.outputs.report.write import write_report
from tests.fixtures.report import build_report_warehouse

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1400
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def report_html(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser_report")
    db = build_report_warehouse(root / "liger.duckdb", flaky=True)
    write_report(db, root / "reports", max_plots=6)
    return root / "reports" / "regressions.html"


def test_report_renders_in_headless_chromium(report_html):
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "chromium missing: .ci/run installs it"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report_html.as_uri(), wait_until="load")
            images = page.eval_on_selector_all(
                "img", "imgs => imgs.map(i => ({complete: i.complete, w: i.naturalWidth, h: i.naturalHeight}))"
            )
            assert len(images) == 6
            assert all(i["complete"] and i["w"] > 0 and i["h"] > 0 for i in images), images

            flagged = page.locator("table#flagged tbody tr")
            assert flagged.count() == 37
            first = flagged.first.locator("td")
            assert first.nth(14).inner_text() == "unstable"
            assert first.nth(14).evaluate("td => getComputedStyle(td).backgroundColor") != "rgba(0, 0, 0, 0)"
            assert flagged.nth(0).locator("a").get_attribute("href") == "#plot-1"
            assert page.locator("#plot-1 img").is_visible()

            coverage = page.locator("table#coverage tbody tr")
            assert coverage.count() == 3
            assert coverage.first.locator("td").nth(0).inner_text() == "0.3.0"
            assert coverage.first.is_visible() and coverage.first.bounding_box()["height"] > 0
            assert "Regressions in 0.3.0" in page.locator("#headline").inner_text()
            # no horizontal scrolling at a 1400 px window: configs are chips, long text wraps
            assert page.evaluate("document.scrollingElement.scrollWidth") <= WIDTH
            config = first.nth(7)
            assert config.locator(".chip").count() >= 1
            json_text = config.locator("code.json")
            assert not json_text.is_visible()  # the full JSON only on demand
            config.locator("summary").click()
            assert json_text.is_visible() and json_text.inner_text().startswith("{")
            assert page.evaluate("document.scrollingElement.scrollWidth") <= WIDTH
            assert not errors
        finally:
            browser.close()
