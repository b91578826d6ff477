"""The matrix as text (terminal), Markdown and a self-contained HTML page."""

from __future__ import annotations

import html
import time
from pathlib import Path

from compat.runner import FAIL, NA, PASS, UNSUPPORTED, Matrix, Result
from compat.scenarios import BY_NAME

SYMBOL = {PASS: "pass", FAIL: "FAIL", NA: "n/a", UNSUPPORTED: "unsupported"}
MD_SYMBOL = {PASS: "✅", FAIL: "❌", NA: "–", UNSUPPORTED: "⛔"}


def _cell_text(r: Result | None) -> str:
    if r is None:
        return "?"
    if r.status in (PASS, FAIL):
        return f"{SYMBOL[r.status]} {r.seconds:.1f}s"
    return SYMBOL[r.status]


def _when(m: Matrix) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(m.started))


def summary(m: Matrix) -> str:
    c = m.counts()
    parts = [f"{c.get(PASS, 0)} passed", f"{c.get(FAIL, 0)} failed"]
    if c.get(UNSUPPORTED):
        parts.append(f"{c[UNSUPPORTED]} unsupported by the broker")
    parts.append(f"{c.get(NA, 0)} not applicable")
    return ", ".join(parts) + f" in {m.seconds:.0f}s"


def text(m: Matrix) -> str:
    width = max(len(s) for s in m.scenarios)
    cols = [max(len(c), 11) for c in m.clients]
    lines = [f"Compatibility matrix: {m.target} at {m.bootstrap} ({_when(m)})", ""]
    lines.append("  ".join([" " * width] + [c.ljust(w) for c, w in zip(m.clients, cols, strict=False)]))
    for s in m.scenarios:
        row = [s.ljust(width)]
        for c, w in zip(m.clients, cols, strict=False):
            row.append(_cell_text(m.results.get((s, c))).ljust(w))
        lines.append("  ".join(row).rstrip())
    lines += ["", summary(m)]
    fails = m.failures()
    if fails:
        lines += ["", "Failures:"]
        lines += [f"  {s} / {c}: {r.reason}" for s, c, r in fails]
    unsup = sorted({r.reason for r in m.results.values() if r.status == UNSUPPORTED})
    if unsup:
        lines += ["", "Unsupported (not run): " + "; ".join(unsup)]
    lines += [f"  note: {n}" for n in m.notes]
    return "\n".join(lines)


def markdown(m: Matrix) -> str:
    out = [f"# Compatibility matrix: {m.target}", ""]
    out.append(f"Broker `{m.bootstrap}`, run {_when(m)}: **{summary(m)}**.")
    out.append("")
    out.append("Clients: " + "; ".join(m.versions.get(c, c) for c in m.clients) + ".")
    out.append("")
    out.append("✅ pass · ❌ fail · – not applicable (the client cannot express it) · "
               "⛔ the broker does not advertise the APIs the scenario needs")
    out.append("")
    out.append("| scenario | " + " | ".join(m.clients) + " |")
    out.append("|---|" + "---|" * len(m.clients))
    for s in m.scenarios:
        cells = []
        for c in m.clients:
            r = m.results.get((s, c))
            if r is None:
                cells.append("?")
            elif r.status in (PASS, FAIL):
                cells.append(f"{MD_SYMBOL[r.status]} {r.seconds:.1f}s")
            else:
                cells.append(MD_SYMBOL[r.status])
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    fails = m.failures()
    out += ["", "## Failures", ""]
    if fails:
        out += [f"- **{s}** / {c}: {r.reason.replace('|', '/')}" for s, c, r in fails]
    else:
        out.append("None.")
    unsup = sorted({r.reason for r in m.results.values() if r.status == UNSUPPORTED})
    if unsup:
        out += ["", "## Not run", ""] + [f"- {u}" for u in unsup]
    if m.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in m.notes]
    out += ["", "## Scenarios", ""]
    out += [f"- **{s}**: {BY_NAME[s].summary}" for s in m.scenarios]
    return "\n".join(out) + "\n"


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: center; font-size: 14px; }
td.s { text-align: left; font-family: monospace; }
td.pass { background: #d9f2d9; } td.fail { background: #f7c6c6; font-weight: bold; }
td.na { background: #f2f2f2; color: #888; } td.unsupported { background: #fde9c8; }
li { margin: 4px 0; } code { background: #f4f4f4; padding: 1px 3px; }
"""


def html_page(m: Matrix) -> str:
    e = html.escape
    rows = []
    for s in m.scenarios:
        cells = [f'<td class="s" title="{e(BY_NAME[s].summary)}">{e(s)}</td>']
        for c in m.clients:
            r = m.results.get((s, c))
            status = r.status if r else "na"
            cls = {NA: "na"}.get(status, status)
            tip = f' title="{e(r.reason)}"' if r and r.reason else ""
            cells.append(f'<td class="{cls}"{tip}>{e(_cell_text(r))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    fails = "".join(f"<li><b>{e(s)}</b> / {e(c)}: {e(r.reason)}</li>" for s, c, r in m.failures())
    unsup = "".join(f"<li>{e(u)}</li>" for u in sorted(
        {r.reason for r in m.results.values() if r.status == UNSUPPORTED}))
    notes = "".join(f"<li>{e(n)}</li>" for n in m.notes)
    scen = "".join(f"<li><b>{e(s)}</b>: {e(BY_NAME[s].summary)}</li>" for s in m.scenarios)
    versions = "; ".join(e(m.versions.get(c, c)) for c in m.clients)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Compatibility matrix: {e(m.target)}</title><style>{CSS}</style></head>
<body>
<h1>Compatibility matrix: {e(m.target)}</h1>
<p>Broker <code>{e(m.bootstrap)}</code>, run {e(_when(m))}: <b>{e(summary(m))}</b>.</p>
<p>Clients: {versions}.</p>
<table><tr><th>scenario</th>{''.join(f'<th>{e(c)}</th>' for c in m.clients)}</tr>
{''.join(rows)}</table>
<p>pass · FAIL · n/a: the client cannot express the scenario · unsupported: the broker does not
advertise the APIs it needs. Hover a cell for its reason.</p>
<h2>Failures</h2><ul>{fails or '<li>None.</li>'}</ul>
{f'<h2>Not run</h2><ul>{unsup}</ul>' if unsup else ''}
{f'<h2>Notes</h2><ul>{notes}</ul>' if notes else ''}
<h2>Scenarios</h2><ul>{scen}</ul>
</body></html>
"""


def write(m: Matrix, directory: Path, stem: str) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    md, page = directory / f"{stem}.md", directory / f"{stem}.html"
    md.write_text(markdown(m))
    page.write_text(html_page(m))
    return md, page


def failover_markdown(results: list) -> str:
    """compat/failover.py's results (one per cluster) side by side: the "failover" table."""
    out = ["# Failover: the kill loop on three-node clusters", ""]
    out.append(f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Each cluster loses, "
               "one at a time, the leader of its busiest partition and then its active "
               "controller (SIGKILL), each restarted and back in every ISR before the next "
               "kill, under an idempotent acks=all confluent-kafka producer and a committing "
               "consumer group; topic rf 3, min.insync.replicas=2, "
               "broker.session.timeout.ms=3000 on every cluster. On the mixed cluster (Apache "
               "Kafka and pykafkad brokers under one controller) the kills take each kind of "
               "broker in turn.")
    out.append("")
    out.append("| | " + " | ".join(r.target for r in results) + " |")
    out.append("|---|" + "---|" * len(results))

    def row(label, fn):
        out.append(f"| {label} | " + " | ".join(fn(r) for r in results) + " |")

    def secs(values, fn):
        return f"{fn(values):.2f} s" if values else "–"

    import statistics

    row("kills", lambda r: str(len(r.rounds)))
    row("time to elect a new leader (median)",
        lambda r: secs(r.election_times(), statistics.median))
    row("time to elect a new leader (max)", lambda r: secs(r.election_times(), max))
    row("time to a new active controller (median)", lambda r: secs(
        [x.controller_s for x in r.rounds if x.controller_s is not None], statistics.median))
    row("records/s offered", lambda r: f"{r.offered_per_s:.0f}")
    row("records/s before the first kill", lambda r: f"{r.steady_per_s:.0f}")
    row("records/s through the failure (kill to back in ISR)",
        lambda r: f"{r.through_failure_per_s():.0f}")
    row("longest time without an acknowledgement",
        lambda r: f"{max((x.stall_s for x in r.rounds), default=0):.2f} s")
    row("records acknowledged", lambda r: str(r.acked))
    row("lost", lambda r: str(r.lost))
    row("duplicated", lambda r: str(r.duplicated))
    row("at another offset than acknowledged, or out of order",
        lambda r: f"{r.misplaced}, {r.out_of_order}")
    row("acknowledged without an offset (librdkafka, after a request timeout)",
        lambda r: str(r.without_offset))
    row("committed offsets kept", lambda r: "yes" if r.committed_kept else "NO")
    row("replica logs byte for byte identical", lambda r: "yes" if r.replicas_identical else "NO")
    row("replica logs identical in Kafka's DumpLogSegments",
        lambda r: {None: "–", True: "yes", False: "NO"}[r.dumps_identical])
    row("CreateTopics through a survivor after the controller died (from the kill, median)",
        lambda r: ("FAILED" if not all(x.create_topics_ok for x in r.rounds
                                       if x.create_topics_ok is not None)
                   else secs([x.create_topics_s for x in r.rounds
                              if x.create_topics_s is not None], statistics.median)))
    problems = [(r.target, p) for r in results for p in r.problems]
    out += ["", "## Problems", ""]
    out += [f"- {t}: {p.replace('|', '/')}" for t, p in problems] or ["None."]
    return "\n".join(out) + "\n"


def write_failover(results: list, directory: Path, stem: str = "failover") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.md"
    path.write_text(failover_markdown(results))
    return path
