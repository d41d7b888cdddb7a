"""Markdown text from the data: names, reasons and configs are text, never markup (no link, emphasis,
HTML, heading or table cell break). The one escaping rule of every Markdown output (the report, its
tables rendered in DuckDB, the alert pages)."""

from __future__ import annotations

import re

__all__ = ["MD_SPECIAL", "md_code", "md_text", "md_text_sql"]

# every character CommonMark may read as markup (a backslash before any ASCII punctuation is literal)
MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~$&])")
_BACKTICKS = re.compile(r"`+")


def md_text(value) -> str:
    """``value`` as literal Markdown text, on one line."""
    text = "" if value is None else str(value)
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
    return (
        f"replace(replace(regexp_replace(coalesce(cast({expr} as varchar), ''), '{pattern}', '\\\\\\1', 'g'), "
        "chr(10), ' '), chr(13), ' ')"
    )
