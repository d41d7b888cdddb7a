"""HTML and markdown tables rendered inside DuckDB.

A report table can list thousands of flagged sweeps; building its rows in SQL
(``string_agg``) keeps the cost in DuckDB's vectorized engine instead of a
Python loop over every row. Values are escaped by the temp macros that
``install_macros`` defines on the (read-only) connection.
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass

from pipeline.outputs.markdown import md_text_sql

__all__ = [
    "Column",
    "install_macros",
    "render_table",
    "ratio_sql",
    "percent_sql",
    "number_sql",
    "config_html_sql",
    "CHIP_CHARS",
]

# a config chip (`key=value`) shows at most this many characters; the full JSON is one click away
CHIP_CHARS = 28

_MACROS = (
    # HTML text and attribute escape: & first, then the characters that open markup or end a quote
    """create or replace temp macro html_text(s) as
        replace(replace(replace(replace(coalesce(cast(s as varchar), ''),
            '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;')""",
    # cell text that may wrap after `_` and `,` (long kernel and provider names have no spaces)
    """create or replace temp macro html_wrap(s) as
        replace(replace(html_text(s), '_', '_<wbr>'), ',', ',<wbr>')""",
    # a markdown cell: text, never markup (a pipe would split the cell, a newline end the row, `<b>` or
    # `[x](y)` render): pipeline/outputs/markdown.py's one rule
    f"create or replace temp macro md_text(s) as {md_text_sql('s')}",
    # `key=value` of one config key, cut to CHIP_CHARS characters (an ellipsis marks the cut)
    """create or replace temp macro config_kv(j, k) as
        k || '=' || coalesce(json_extract_string(j, '$."' || replace(k, '"', '\\"') || '"'), 'null')""",
    f"""create or replace temp macro config_chip(t) as
        '<span class="chip" title="' || html_text(t) || '">'
        || html_text(case when length(t) > {CHIP_CHARS} then left(t, {CHIP_CHARS - 1}) || '…' else t end)
        || '</span>'""",
    # a JSON config as chips; the whole JSON in a <details> below them (not JSON objects: the text)
    """create or replace temp macro config_html(j) as
        case
            when j is null or trim(j) in ('', '{}') then '<span class="none">{}</span>'
            when not coalesce(json_valid(j) and json_type(j) = 'OBJECT', false)
                then '<code class="json">' || html_text(j) || '</code>'
            else '<details class="config"><summary>'
                || array_to_string(list_transform(json_keys(j), lambda k: config_chip(config_kv(j, k))), ' ')
                || '</summary><code class="json">' || html_text(j) || '</code></details>'
        end""",
)


def install_macros(con) -> None:
    for sql in _MACROS:
        con.execute(sql)


def ratio_sql(expr: str) -> str:
    return f"printf('×%.3f', {expr})"


def percent_sql(expr: str, sign: str = "") -> str:
    return f"printf('{sign}%.1f %%', 100 * ({expr}))"


def config_html_sql(expr: str) -> str:
    """HTML for a config JSON column: `key=value` chips, the full JSON on demand (<details>)."""
    return f"config_html({expr})"


def number_sql(expr: str) -> str:
    return f"cast({expr} as varchar)"


@dataclass(frozen=True)
class Column:
    """One column: ``text`` is a SQL expression over a source row (escaped on output);
    ``html`` optionally replaces it in HTML with already-safe markup; ``css`` names a class."""

    label: str
    text: str
    html: str | None = None
    css: str | None = None


def render_table(
    con,
    source_sql: str,
    columns: tuple[Column, ...],
    order_by: str,
    *,
    params: list | None = None,
    limit: int | None = None,
    table_id: str | None = None,
) -> tuple[str, str, int, int]:
    """(html, markdown, rows shown, rows in total) of ``source_sql``, ordered, at most ``limit`` rows."""
    params = list(params or [])
    total = con.execute(f"select count(*) from ({source_sql})", params).fetchone()[0]
    if total == 0:
        return "<p><em>none</em></p>", "_none_\n", 0, 0
    cells_html = " || ".join(
        "'<td"
        + (f" class=\"' || html_text({c.css}) || '\"" if c.css else "")
        + ">' || "
        + (f"coalesce({c.html}, '')" if c.html else f"html_wrap({c.text})")
        + " || '</td>'"
        for c in columns
    )
    cells_md = " || ' | ' || ".join(f"md_text({c.text})" for c in columns)
    limit_sql = f"limit {int(limit)}" if limit is not None else ""
    html_rows, md_rows, shown = con.execute(
        f"""
        with src as ({source_sql}),
        picked as (
            select *, row_number() over (order by {order_by}) as _report_row
            from src order by {order_by} {limit_sql}
        )
        select
            string_agg('<tr>' || {cells_html} || '</tr>', chr(10) order by _report_row),
            string_agg('| ' || {cells_md} || ' |', chr(10) order by _report_row),
            count(*)
        from picked
        """,
        params,
    ).fetchone()
    head_html = "".join(f"<th>{_escape(c.label)}</th>" for c in columns)
    attr = f' id="{_escape(table_id)}"' if table_id else ""
    html = f"<table{attr}><thead><tr>{head_html}</tr></thead><tbody>\n{html_rows}\n</tbody></table>"
    head_md = "| " + " | ".join(c.label for c in columns) + " |\n|" + "|".join("---" for _ in columns) + "|\n"
    return html, head_md + md_rows + "\n", shown, total


def _escape(text: str) -> str:
    return _html.escape(text, quote=True)
