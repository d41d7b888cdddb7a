"""The dashboard (`make site`) in a real browser: Debian's headless Chromium driven by Playwright.

The site is built from the warehouse of the shipped data (tests/conftest.py `shipped_warehouse`) and
opened from file://. Playwright only drives the system browser (`executable_path`); it never downloads
one. `.ci/run` installs `chromium` when it is missing.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from pipeline.common.duck import open_readonly
from pipeline.outputs.site import write_site
from tests.fixtures.site import HOSTILE_KERNEL, build_site_db

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
WIDTH = 1400
EXTERNAL_LOAD = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)
PLOT_STATE = """() => {
    const d = document.querySelector('#plot');
    return {metas: [...new Set(d.data.map(t => t.meta))], names: d.data.map(t => t.name).filter(n => n),
            ys: d.data.map(t => Array.from(t.y)), title: document.querySelector('#sweep-title').textContent};
}"""


@pytest.fixture(scope="module")
def shipped_site(shipped_warehouse, tmp_path_factory) -> Path:
    started = time.perf_counter()
    index = write_site(shipped_warehouse / "liger.duckdb", tmp_path_factory.mktemp("site") / "site")
    print(f"site built in {time.perf_counter() - started:.2f} s; index.html {index.stat().st_size:,} bytes")
    return index


@pytest.fixture(scope="module")
def browser():
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "chromium missing: .ci/run installs it"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page that records console errors, page errors, dialogs and every non-file request."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.on(
            "request", lambda r: None if r.url.startswith(("file:", "data:", "about:")) else self.requests.append(r.url)
        )

    def open(self, path: Path, fragment: str = "") -> None:
        self.page.goto(path.as_uri() + fragment, wait_until="load")
        self.page.wait_for_selector("body[data-ready='1']")

    def assert_clean(self) -> None:
        assert not self.errors, self.errors
        assert not self.requests, self.requests
        assert self.page.evaluate("document.scrollingElement.scrollWidth") <= WIDTH


def test_pages_load_nothing_external(shipped_site):
    pages = sorted(shipped_site.parent.glob("*.html"))
    assert len(pages) > 10  # index + one page per release
    for page in pages:
        text = page.read_text()
        assert not EXTERNAL_LOAD.search(text), page.name
        assert "http" not in text, page.name
    assert shipped_site.read_text().count("<script src='plotly.min.js'></script>") == 1


def test_kernel_filter_rebuilds_the_plot(shipped_site, shipped_warehouse, browser):
    w = Watched(browser)
    page = w.page
    w.open(shipped_site)
    before = page.evaluate(PLOT_STATE)
    assert len(before["metas"]) >= 1 and before["names"]
    # the page opens on the newest flagged change of 0.8.5, with its evidence
    assert set(page.locator("#evidence .badge").all_inner_texts()) & {"regression", "transient", "inconclusive"}
    assert page.locator("#evidence td", has_text="beyond noise").count() >= 1

    kernels = page.eval_on_selector("#f-kernel", "s => [...s.options].map(o => [o.value, o.text])")
    assert len(kernels) > 10
    current = page.eval_on_selector("#f-kernel", "s => s.value")
    other_value, other_text = next((v, t) for v, t in kernels if v != current and t != "group_norm")
    page.select_option("#f-kernel", other_value)
    page.wait_for_function(
        "t => document.querySelector('#sweep-title').textContent.startsWith(t)", arg=other_text + " "
    )
    after = page.evaluate(PLOT_STATE)
    assert after["metas"] != before["metas"] and after["ys"] != before["ys"]
    assert after["title"].startswith(other_text + " ")
    # dependent options: the passes offered are exactly the chosen kernel's liger-family passes
    modes = page.eval_on_selector("#f-mode", "s => [...s.options].map(o => o.text)")
    with open_readonly(shipped_warehouse / "liger.duckdb") as con:
        expected = {
            r[0]
            for r in con.execute(
                "select distinct kernel_operation_mode from series_versions where is_liger and kernel_name = ?",
                [other_text],
            ).fetchall()
        }
    assert set(modes) == expected
    # the reference provider is drawn dashed on the same axes when the sweep has one
    dashes = page.evaluate("document.querySelector('#plot').data.map(t => t.line && t.line.dash)")
    refs = page.eval_on_selector("#f-ref", "s => [...s.options].filter(o => o.value).length")
    assert ("dash" in dashes) == (refs > 0 and page.eval_on_selector("#f-ref", "s => s.value") != "")

    # the log-y toggle re-renders the same data on a linear axis
    page.uncheck("#f-log")
    assert page.evaluate("document.querySelector('#plot').layout.yaxis.type") == "linear"

    # overview: one row per liger-family sweep of the GPU; a click plots that sweep
    rows = page.locator("#overview-table tbody tr")
    assert rows.count() > 0
    target = rows.nth(rows.count() - 1)
    sweep = int(target.get_attribute("data-sweep"))
    target.click()
    assert page.evaluate(PLOT_STATE)["metas"][0] == sweep
    w.assert_clean()
    page.close()


def test_release_page_links_into_the_dashboard(shipped_site, browser):
    w = Watched(browser)
    page = w.page
    w.page.goto((shipped_site.parent / "release-0.8.5.html").as_uri(), wait_until="load")
    moved = page.locator("table#moved tbody tr")
    assert moved.count() >= 1
    assert set(page.locator("table#moved .badge").all_inner_texts()) & {"transient", "inconclusive"}
    assert "0.8.5" in page.locator("#summary").inner_text()
    href = moved.first.locator("a").get_attribute("href")
    assert re.fullmatch(r"index\.html#s=\d+", href)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= WIDTH
    w.open(shipped_site, "#" + href.split("#")[1])
    assert page.evaluate(PLOT_STATE)["metas"][0] == int(href.split("=")[1])
    w.assert_clean()
    page.close()


def test_hostile_names_render_as_text(tmp_path, browser):
    index = write_site(build_site_db(tmp_path / "site.duckdb", commits=True, suspects=True), tmp_path / "site")
    w = Watched(browser)
    page = w.page
    w.open(index)
    kernels = page.eval_on_selector("#f-kernel", "s => [...s.options].map(o => o.text)")
    assert HOSTILE_KERNEL in kernels
    page.select_option("#f-kernel", label=HOSTILE_KERNEL)
    page.wait_for_function("() => document.querySelector('#sweep-title').textContent.includes('alert')")
    assert page.locator("#sweep-title").inner_text().startswith(HOSTILE_KERNEL)
    assert page.evaluate("document.scripts.length") == 3  # plotly.min.js, the payload, the dashboard
    assert page.locator("#suspects").is_visible()
    assert "touched <rms_norm.py>" in page.locator("#suspects td").all_inner_texts()
    assert page.evaluate("document.querySelector('#plot').layout.xaxis.ticktext").count("aaaaaaaa (v0.10.0)") == 1
    w.assert_clean()
    page.close()
