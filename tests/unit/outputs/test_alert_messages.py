"""What alerts and the gate send out stays text and fits (issue 53): the Slack text escapes `<`, `>`, `&`
(`<!channel>` pings no one); Markdown from the data neither links nor mentions (a WORD JOINER after `@`,
`:` of `://` and `www`); an alert page and gate.md stay under GitHub's 65,536 characters whatever the
data, an ack note shown once; a webhook URL that cannot parse is refused when the settings are read."""

from __future__ import annotations

import re

import duckdb
import pytest
from markdown_it import MarkdownIt

from pipeline.config import SettingsError, load
from pipeline.outputs.alerts.messages import markdown_message, text_message
from pipeline.outputs.gate.comment import render
from pipeline.outputs.markdown import GITHUB_LIMIT, md_text, md_text_sql

HOSTILE = [
    "see https://evil.example/x?a=1 and HTTP://X.Y",
    "www.example.com WWW.Example.org",
    "ping @octocat and @org/team, mail a.b+c@example.com",
    "mailto:x@y.z xmpp:q@r.s ftp://files.example",
    "<!channel> <@U123> <http://x|y> & *bold* [l](http://z) `c` | pipe",
]
# GitHub's autolink extension (cmark-gfm: www., http(s)://, ftp://, e-mail) and its @mentions
AUTOLINKS = [
    re.compile(r"(?i)\b(?:https?|ftp)://"),
    re.compile(r"(?i)(?:^|[\s*_~(])www\."),
    re.compile(r"(?<![\w`])@[A-Za-z0-9]"),
    re.compile(r"[\w.+-]+@[A-Za-z0-9-]+\.[A-Za-z]"),
]


def _links(text: str) -> list[str]:
    return [p.pattern for p in AUTOLINKS if p.search(text)]


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_text_neither_links_nor_mentions_and_sql_agrees(value):
    text = md_text(value)
    assert _links(text) == [], text
    assert text.replace("\u2060", "").replace("\\", "") == value.replace("\\", "")  # reads the same
    html = MarkdownIt("commonmark").render(text)
    assert "<a " not in html and "<strong>" not in html
    try:  # markdown-it's linkify, when linkify-it-py is installed
        html = MarkdownIt("commonmark", {"linkify": True}).enable("linkify").render(text)
        assert "<a " not in html
    except ModuleNotFoundError:
        pass
    with duckdb.connect() as con:
        assert con.execute(f"select {md_text_sql('$v')}", {"v": value}).fetchone()[0] == text


def _alert(note: str | None = None, line: str = "3b79375..4444fdf on H100: 1 sweep of 1 kernel slower") -> dict:
    status = "acknowledged" if note else "open"
    return {"alert_id": "a1b2c3", "status": status, "line": line + (f" — acknowledged: {note}" if note else " — open"),
            "axis": "commit", "direction": "regression", "kind": "step", "recovered_at": None, "note": note,
            "cause": "code", "cause_evidence": "suspects " + HOSTILE[0], "opened_run": 1, "changed_run": 2}  # fmt: skip


def test_slack_text_escapes_what_would_ping_or_link():
    text = text_message(_alert(note=HOSTILE[4]))
    assert "<" not in text and ">" not in text and "&lt;!channel&gt;" in text and "&amp; " in text
    long = text_message(_alert(note="n" * 100_000))
    assert len(long) < 4_000 and "more characters" in long


def test_an_alert_page_fits_github_and_shows_a_long_note_once():
    note = "swapped the host: " + "x" * 120_000
    members = [("k" * 400 + str(i), "full", "speed", "liger", "{}", "a", "b", 1.5, "regression", "step")
               for i in range(5_000)]  # fmt: skip
    suspects = [("c" * 40, "2025-01-01", "@octocat fixed " + "s" * 500, ["k"]) for _ in range(2_000)]
    page = markdown_message(_alert(note=note), suspects, members)
    assert len(page) <= GITHUB_LIMIT
    assert page.count("swapped the host") == 1 and "more characters" in page
    assert "more flagged pairs" in page and "more suspects" in page and page.count("| k") > 10
    assert _links(page) == []
    small = markdown_message(_alert(note="bench host swapped"), [], members[:3])
    assert small.count("bench host swapped") == 1 and "more flagged pairs" not in small


def test_gate_md_from_hostile_names_neither_links_nor_mentions():
    row = {"verdict": "regression", "kernel": HOSTILE[2], "pass": "full", "metric": "speed", "provider": HOSTILE[0],
           "config": HOSTILE[1], "ratio": 1.5, "threshold": 0.1, "threshold_source": "noise", "base_runs": 1,
           "candidate_runs": 1, "suspects": [{"sha": "a" * 40, "subject": HOSTILE[3]}]}  # fmt: skip
    doc = {"status": "fail", "counts": {"regression": 1}, "results": [row], "gpu": "@gpu www.x.y", "sweeps": 1,
           "base": {"label": "https://b", "kind": "commit", "runs": 1}, "candidate": {"files": ["@f.csv"]}}  # fmt: skip
    md = render(doc)
    assert _links(md) == [] and "octocat" in md


@pytest.mark.parametrize("url", ["http://[::1", "http://host:port/x", "ftp://x/y", "hooks.slack.com/x", "https://"])
def test_a_webhook_url_that_cannot_parse_is_refused_when_the_settings_are_read(monkeypatch, url):
    monkeypatch.setenv("LIGER_ALERT_WEBHOOK", url)
    with pytest.raises(SettingsError, match="LIGER_ALERT_WEBHOOK"):
        load()
