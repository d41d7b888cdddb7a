"""result.md: a bisect's result, ready to paste into an issue (standard library only).

Every name from the data (kernel, subjects, GPU) is text: backticks and pipes are escaped so a
subject cannot open a code span or a table cell."""

from __future__ import annotations

HEADLINES = {
    "culprit": "found a significant difference after 1 commit",
    "reproduced": "reproduced, but no single commit was isolated",
    "not_reproduced": "could not reproduce: both ends measure the same",
    "no_kernel_change": "no commit of the range touches the kernel's source",
    "inconclusive": "inconclusive: the runs neither separate nor agree",
    "harness_failed": "the harness failed at an end of the range",
}


def text(value) -> str:
    s = "" if value is None else str(value)
    for ch in ("\\", "`", "|", "*", "_", "<", ">", "[", "]"):
        s = s.replace(ch, "\\" + ch)
    return s.replace("\n", " ")


def _ratio(r: dict | None) -> str:
    if not r:
        return "not measured"
    return (
        f"×{r['to_over_from']:.3f} (TO / FROM; {100 * r['level']:.0f}% interval ×{r['low']:.3f} – ×{r['high']:.3f}, "
        f"Mann-Whitney p = {r['p_value']:.3g})"
    )


def render(result: dict, plan: dict) -> str:
    sweep = f"{result['kernel']} / {result['provider']} / {result['pass']} / {result['metric']}"
    noise = result.get("ci_noise") or {"threshold": 0.0, "source": "not known"}
    if result.get("config"):
        sweep += f" / {result['config']}"
    lines = [
        f"## Bisect {text(result['plan_id'])}: {HEADLINES[result['outcome']]}",
        "",
        f"- **outcome**: `{result['outcome']}`",
        f"- **sweep**: {text(sweep)} on {text(result.get('gpu') or 'no GPU recorded')}",
        f"- **range**: {result['from_commit'][:12]}..{result['to_commit'][:12]} "
        f"({len(result['candidates'])} candidate commit(s) touching the kernel's source)",
    ]
    if result.get("culprit"):
        lines.append(f"- **culprit**: {result['culprit']} {text(result.get('culprit_subject'))}")
    lines += [
        f"- **ratio**: {_ratio(result.get('ratio'))}",
        f"- **minimum effect**: {100 * result['min_effect']:.1f}% ({text(result['min_effect_source'])}); the runs "
        "are judged by their own spread (rank test, interval of the shift)",
        f"- **CI noise, as context**: ±{100 * noise['threshold']:.1f}% ({text(noise['source'])})",
        f"- **sweep from**: {text(result.get('sweep_source') or 'given')}",
        f"- **harness runs**: {result['harness_runs']} over {len(result['commits_run'])} commit(s) "
        f"({result['runs_per_side']} per side, at most {result['max_runs']})",
    ]
    for s in result.get("skipped") or []:
        lines.append(f"- **skipped**: {s['commit'][:12]} {text(s.get('subject'))}: {text(s.get('reason'))}")
    for note in result.get("notes") or []:
        lines.append(f"- {text(note)}")
    env = result.get("environment") or {}
    lines += ["", "| run | commit | value | |", "|---|---|---:|---|"]
    for r in result.get("runs") or []:
        value = f"{r['value']:.6g}" if r.get("value") is not None else "—"
        lines.append(f"| {r['run_id']} | {r['commit'][:12]} | {value} | {text(r.get('reason') or '')} |")
    lines += [
        "",
        "Environment: " + ", ".join(f"{k} {text(v)}" for k, v in sorted(env.items())),
        "",
        "A run's value is the geometric mean of the sweep's liger p50 over its x points. Rules: docs/bisect.md.",
        "",
    ]
    return "\n".join(lines)
