"""Markdown text from the data: names, reasons and configs are text, never markup (no link, emphasis,
HTML, heading or table cell break). The one escaping rule of every Markdown output (the report, its
tables rendered in DuckDB, the alert pages, gate.md).

GitHub also links text no CommonMark rule marks: URLs (``https://…``, ``www.…``, e-mail addresses)
and ``@mentions`` (which notify people). A backslash does not stop those, so a WORD JOINER (U+2060,
invisible, no width) goes after every ``@``, after the ``:`` of ``://`` and after a ``www`` before a
dot: the text reads the same, and no autolink or mention rule matches it (docs/guarantees.md)."""

from __future__ import annotations

import re

__all__ = ["GITHUB_LIMIT", "MD_SPECIAL", "fit_lines", "md_clip", "md_code", "md_text", "md_text_sql"]

# every character CommonMark may read as markup (a backslash before any ASCII punctuation is literal)
MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~$&])")
_BACKTICKS = re.compile(r"`+")
WORD_JOINER = "\u2060"
# what GitHub would turn into a link or a mention: a word joiner goes after each match's first group
AUTOLINK = re.compile(r"(?i)(@|:(?=//)|\bwww(?=\.))")


def md_text(value) -> str:
    """``value`` as literal Markdown text, on one line."""
    text = "" if value is None else str(value)
    text = AUTOLINK.sub(r"\1" + WORD_JOINER, text)
    return MD_SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


def md_code(value) -> str:
    """``value`` as one inline code span: its fence is longer than any run of backticks inside it, so
    nothing in it ends the span (a code span shows every other character as it is)."""
    text = ("" if value is None else str(value)).replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_text_sql(expr: str) -> str:
    """:func:`md_text` in DuckDB SQL over the column expression ``expr`` (the same characters)."""
    pattern = MD_SPECIAL.pattern.replace("'", "''")
    # RE2 has no lookahead: AUTOLINK's three rules spelled out, with the same matches
    text = f"coalesce(cast({expr} as varchar), '')"
    text = f"replace(replace({text}, '@', '@' || chr(8288)), '://', ':' || chr(8288) || '//')"
    text = f"regexp_replace({text}, '(?i)\\b(www)\\.', '\\1' || chr(8288) || '.', 'g')"
    return f"replace(replace(regexp_replace({text}, '{pattern}', '\\\\\\1', 'g'), chr(10), ' '), chr(13), ' ')"


# GitHub refuses an issue, comment or step summary over 65,536 characters: every Markdown output
# meant for it (gate.md, the alert pages) cuts its lists to fit, each saying "… N more"
GITHUB_LIMIT = 65_536


def md_clip(value, limit: int) -> str:
    """:func:`md_text` of ``value``, at most about ``limit`` characters: a longer text is cut and says
    how many characters were left out (escaping at most doubles a character, so the cut is on the raw
    text, never inside an escape)."""
    text = "" if value is None else str(value)
    escaped = md_text(text)
    if len(escaped) <= limit:
        return escaped
    keep = max(limit // 2 - 32, 0)
    return f"{md_text(text[:keep])}… ({len(text) - keep:,} more characters)"


def fit_lines(rows: list[str], budget: int) -> tuple[list[str], int]:
    """The leading ``rows`` whose lines fit in ``budget`` characters, and how many were left out."""
    kept, used = [], 0
    for row in rows:
        if used + len(row) + 1 > budget:
            break
        kept.append(row)
        used += len(row) + 1
    return kept, len(rows) - len(kept)
