"""Write a report directory: report.html, report.md, figures/*.png, tables/*.csv (each file atomically).

The folder also holds ``seekbench-manifest.json``: for each writer (report, conformal, agreement) the
files its last run wrote. A new run of a writer removes the files its previous run wrote and this one
did not (a table that no longer applies, a figure of an agent no longer in the input), and never
touches a file it did not write.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._csv import csv_text
from .._io import write_bytes, write_text
from ..analysis import Analysis
from ._agent_labels import agent_label_table, relabeled, short_labels
from ._agent_order import file_order, in_file_order, rows_in_order
from ._comparison_figure import comparison_png
from ._explorer_page import write_explorer
from ._explorer_section import audit_tables
from ._figures import process_figures as _figures
from ._html import render_html
from ._markdown import render_markdown

MANIFEST = "seekbench-manifest.json"


@dataclass
class ReportFiles:
    directory: Path
    html: Path
    markdown: Path
    figures: list[Path]
    tables: list[Path]
    explorer: Path | None = None


def _add_seeking_sections(analysis: Analysis, full: Analysis, figures, html_parts, md_parts, tables) -> None:
    """Outcome and efficiency, completeness (for seeking episodes) and conformal coverage sections.

    Rendered from ``analysis`` (agents under their labels); the CSV tables from ``full`` (full names).
    """
    from ._completeness_section import completeness_section
    from ._outcome_section import outcome_section

    relabeled_view = full is not analysis
    outcome = outcome_section(analysis.outcome)
    if outcome is not None:
        html, md, tabs = outcome
        html_parts.append(html)
        md_parts.append("\n" + md)
        tables.update((outcome_section(full.outcome) or outcome)[2] if relabeled_view else tabs)

    section = completeness_section(analysis.completeness)
    for part in [section] if section is not None else []:
        html, md, figs, tabs = part
        html_parts.append(html)
        md_parts.append("\n" + md)
        figures.update(figs)
        tables.update((completeness_section(full.completeness) or part)[3] if relabeled_view else tabs)
    if analysis.conformal is not None:
        from ._conformal_section import conformal_section

        html, md, figs, tabs = conformal_section(analysis.conformal)
        html_parts.append(html)
        md_parts.append("\n" + md)
        figures.update(figs)
        tables.update(conformal_section(full.conformal)[3] if relabeled_view else tabs)


def record_written(out_dir: str | os.PathLike, writer: str, paths) -> list[Path]:
    """Record ``paths`` as what ``writer`` wrote in ``out_dir``; remove its previous run's files not among them.

    Returns the removed files. Only files listed under ``writer`` in the manifest and lying inside
    ``out_dir`` are ever removed; an unreadable manifest removes nothing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.csv", "b.csv", "mine.txt"):
    ...     _ = (d / name).write_text("x")
    >>> record_written(d, "report", [d / "a.csv", d / "b.csv"])
    []
    >>> [p.name for p in record_written(d, "report", [d / "a.csv"])]
    ['b.csv']
    >>> sorted(p.name for p in d.iterdir())
    ['a.csv', 'mine.txt', 'seekbench-manifest.json']
    """
    out = Path(out_dir)
    root = out.resolve()
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        old = manifest.get(writer, []) if isinstance(manifest, dict) else []
    except (OSError, ValueError):
        manifest, old = {}, []
    if not isinstance(manifest, dict):
        manifest = {}
    new = sorted({Path(p).resolve().relative_to(root).as_posix() for p in paths})
    removed = []
    for rel in old if isinstance(old, list) else []:
        if not isinstance(rel, str) or rel in new:
            continue
        p = (out / rel).resolve()
        if p.is_file() and p.is_relative_to(root) and p != (root / MANIFEST):
            p.unlink()
            removed.append(out / rel)
    manifest[writer] = new
    write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return removed


def write_report(
    analysis: Analysis, out_dir: str | os.PathLike, *, labels: Mapping[str, str] | None = None
) -> ReportFiles:
    """Render an analysis and write it under ``out_dir``.

    Parameters
    ----------
    analysis : Analysis
        From :func:`seekbench.analysis.analyze`. Its agreement, completeness and conformal
        parts add their sections when present; its explorer data adds the trace explorer
        (explorer.html, explorer-data/) and links the audit to it.
    out_dir : path
        Created if missing; existing report files are replaced atomically.
    labels : mapping, optional
        ``{full agent name: short label}`` for the figures and the page's tables, over the labels
        derived automatically for names longer than 24 characters (:func:`short_labels`). The CSV
        tables keep the full names; ``tables/agents.csv`` maps each label to its agent.
    """
    out = Path(out_dir)
    full = in_file_order(analysis)  # one agent order in every table, figure and CSV: the input's
    order = file_order(full)
    names = short_labels(order, overrides=labels)
    analysis = relabeled(full, names)  # what the page and the figures show; the CSV tables keep full names
    content = analysis.process
    explorer = full.explorer is not None
    figures = _figures(content)
    if analysis.comparison is not None:
        figures = {"comparison": comparison_png(analysis.comparison), **figures}
    extra_html: list[str] = []
    extra_tables: dict[str, pd.DataFrame] = {}
    extra_md: list[str] = []
    lead_html: list[str] = []
    lead_md: list[str] = []
    if full.comparison is not None:
        from ._comparison_section import comparison_tables

        extra_tables.update(
            {k: rows_in_order(v, order, within="metric") for k, v in comparison_tables(full.comparison).items()}
        )
    # right after the comparison: can the labels be trusted?
    if analysis.agreement is not None and full.agreement is not None:
        from ._agreement_report import (
            agreement_figures,
            agreement_markdown,
            agreement_tables,
            render_agreement_section,
        )

        agr_figs = agreement_figures(analysis.agreement)
        lead_html.append(render_agreement_section(analysis.agreement, agr_figs, explorer=explorer))
        lead_md.append(agreement_markdown(analysis.agreement, explorer=explorer))
        figures.update(agr_figs)
        extra_tables.update(agreement_tables(full.agreement))
    if analysis.judge_records:  # beside the metrics the judges' labels feed (no table: the record is the file)
        from ._judge_records_section import judge_records_html, judge_records_markdown

        lead_html.append(judge_records_html(analysis.judge_records))
        lead_md.append(judge_records_markdown(analysis.judge_records))
    if full.corrected is not None and analysis.corrected is not None:
        from ._corrected_section import corrected_html, corrected_markdown, corrected_tables

        lead_html.append(corrected_html(analysis.corrected))  # agents under their labels; the CSVs: full names
        lead_md.append(corrected_markdown(analysis.corrected))
        extra_tables.update(corrected_tables(full.corrected))
    _add_seeking_sections(analysis, full, figures, extra_html, extra_md, extra_tables)
    fig_paths = []
    for name, data in figures.items():
        p = out / "figures" / f"{name}.png"
        write_bytes(p, data)
        fig_paths.append(p)
    csv = full.process
    tables = {
        "agents": agent_label_table(full, names),
        "metrics": csv.metrics_table,
        "audit": full.audit.table,
        "erf": csv.erf_table,
        "rqi_by_type": csv.rqi_by_type.rename_axis("reasoning_type").reset_index(),
        "calibration": csv.calibration.rename_axis("E").reset_index(),
        "evidence_prevalence": csv.prevalence.rename_axis("group").reset_index(),
        **audit_tables(full.audit),
        **extra_tables,
    }
    table_paths = []
    for name, df in tables.items():
        p = out / "tables" / f"{name}.csv"
        write_text(p, csv_text(df))
        table_paths.append(p)
    md = out / "report.md"
    write_text(
        md,
        render_markdown(
            analysis,
            {k: f"figures/{k}.png" for k in figures},
            explorer=explorer,
            sections=extra_md,
            lead=lead_md,
            legend=names,
        ),
    )
    explorer_page, explorer_paths = None, []
    if full.explorer is not None:
        written = write_explorer(full.explorer, out, labels=names)
        explorer_page = written.html
        explorer_paths = written.paths
    html_path = out / "report.html"
    write_text(
        html_path, render_html(analysis, figures, explorer=explorer, sections=extra_html, lead=lead_html, legend=names)
    )
    record_written(out, "report", [*fig_paths, *table_paths, md, html_path, *explorer_paths])
    return ReportFiles(out, html_path, md, fig_paths, table_paths, explorer_page)
