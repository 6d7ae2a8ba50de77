"""Render the report as Markdown (figures linked from figures/)."""

from __future__ import annotations

import pandas as pd

from ._explorer_section import audit_section
from ._tables import display_table, fmt, fmt_p


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(fmt(r[c]).replace("|", "\\|") for c in df.columns) + " |")
    return "\n".join(lines)


def render_markdown(content, figure_files: dict[str, str], *, worst_n: int = 5, explorer: bool = True) -> str:
    c = content
    mt = display_table(c.summary.groups, c.by)
    out = [f"# seekbench process audit\n\nseekbench {c.version}, generated {c.generated}; "
           f"{len(c.audit)} traces; labels: {c.inputs.get('labels', 'inline')}"
           + (f" ({c.inputs['labeled_steps']})" if "labeled_steps" in c.inputs else "") + ".\n",
           "## Per-group metrics\n", "95% bootstrap CIs over whole traces; n/a = undefined.\n", _md_table(mt),
           "\n## Evidence recovery\n", f"![ERF]({figure_files['erf']})\n",
           f"![ERF, Kaplan-Meier (overstates recovery; comparison only)]({figure_files['erf_km']})\n"]
    if c.recovery_test is not None:
        rt = c.recovery_test
        out.append(f"{getattr(rt, 'test', 'test')}: statistic {fmt(getattr(rt, 'statistic', None))}, "
                   f"p {fmt_p(getattr(rt, 'p_value', None))}\n")
    out += ["## Groundedness and calibration\n", f"![RQI by type]({figure_files['rqi_heatmap']})\n",
            f"![Calibration]({figure_files['calibration']})\n", f"![Evidence prevalence]({figure_files['prevalence']})\n",
            audit_section(c.audit, audit_options=c.audit_options, worst_n=worst_n, explorer=explorer)[1],
            "\n## Options\n",
            "\n".join(f"- {k}: {v}" for k, v in c.options.items())]
    if any(c.unusable.values()):
        out.append("\nNot usable: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.unusable.items() if v))
    return "\n".join(out) + "\n"
