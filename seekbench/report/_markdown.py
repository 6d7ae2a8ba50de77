"""Render the report as Markdown (figures linked from figures/)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..analysis import Analysis
from ._comparison_section import comparison_markdown
from ._explorer_section import audit_section
from ._figures import NO_CALIBRATION
from ._glossary import markdown_glossary, term
from ._markdown_text import md_text
from ._page import markdown_page
from ._tables import display_table, fmt, fmt_p, option_text, recovery_test_text, undefined_reasons
from ._toc import markdown_toc


def _md_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table: every header and cell through :func:`md_text`, numbers through :func:`fmt`."""
    cols = [md_text(term(c)[0]) for c in df.columns]  # the header the HTML shows, defined in the glossary
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(md_text(fmt(r[c])) for c in df.columns) + " |")
    return "\n".join(lines)


def render_markdown(
    analysis: Analysis,
    figure_files: dict[str, str],
    *,
    explorer: bool = True,
    sections: Sequence[str] = (),
    lead: Sequence[str] = (),
    legend: dict[str, str] | None = None,
) -> str:
    """The report page as Markdown, in the order of the HTML page: contents, the comparison of the
    agents, ``lead`` (e.g. judge agreement), the metrics, and ``sections`` appended at the end.
    ``legend``: ``{full agent name: label}`` (the agents as the page names them)."""
    a = analysis
    c = a.process
    prov = a.provenance
    mt = display_table(c.summary.groups, c.by)
    meta = (
        f"seekbench {prov.seekbench_version}, generated {prov.generated}; {a.n_traces} traces; "
        f"labels: {md_text(prov.inputs.get('labels', 'inline'))}"
        + (f" ({md_text(prov.inputs['labeled_steps'])})" if "labeled_steps" in prov.inputs else "")
        + "."
    )
    out = (
        [comparison_markdown(a.comparison, _md_table, figure_files.get("comparison"), legend)]
        if a.comparison is not None
        else []
    )
    out += [*lead]
    out += [
        "## Per-group metrics\n",
        f"95% bootstrap CIs over whole traces; {md_text(undefined_reasons(c.summary.warnings))}.\n",
        _md_table(mt),
        "\n## Evidence recovery\n",
        f"![ERF]({figure_files['erf']})\n",
        f"![ERF, Kaplan-Meier (overstates recovery; comparison only)]({figure_files['erf_km']})\n",
    ]
    if c.recovery_test is not None:
        rt = c.recovery_test
        out.append(
            f"{recovery_test_text(str(getattr(rt, 'test', 'test')))}: statistic {fmt(getattr(rt, 'statistic', None))}, "
            f"p {fmt_p(getattr(rt, 'p_value', None))}\n"
        )
    out += [
        "## Groundedness and calibration\n",
        f"![RQI by type]({figure_files['rqi_heatmap']})\n",
        f"![Calibration]({figure_files['calibration']})\n" if "calibration" in figure_files else NO_CALIBRATION + "\n",
        f"![Evidence prevalence]({figure_files['prevalence']})\n",
        audit_section(a.audit, explorer=explorer)[1],
        "\n## Options\n",
        "\n".join(f"- {md_text(k)}: {md_text(option_text(v))}" for k, v in prov.options.items()),
    ]
    if any(c.unusable.values()):
        out.append("\nNot usable: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.unusable.items() if v))
    body = "\n".join(out) + "\n" + "".join(sections)
    body += markdown_glossary(body)
    return markdown_page("seekbench process audit", meta, markdown_toc(body) + "\n" + body)
