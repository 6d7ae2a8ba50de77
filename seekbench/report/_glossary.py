"""What each table header means: readable names for raw column names, a definition for each, and the glossary.

Tables keep their raw column names in the CSV files (scripts read those); the HTML shows the
readable name with the definition on hover (``title``) and lists every header the page uses in
a glossary section, so a reader never has to guess what ``n_rule`` or ``ERF(8)`` counts.
"""

from __future__ import annotations

import html
import re

#: Raw column name -> the header a reader sees.
RENAME = {
    "n_traces": "traces",
    "n_steps": "steps",
    "tool_calls": "tool calls",
    "searches_before_answer": "searches before answer",
    "duplicate_query_rate": "duplicate-query rate",
    "duplicate_visit_rate": "duplicate-visit rate",
    "runs_max": "runs",
    "em": "EM",
    "f1": "F1",
    "source_data": "data",
    "step_kind": "step kind",
    "reference_share": "reference share",
    "rater_share": "rater share",
    "n_records": "records",
    "n_labeled": "labeled",
    "n_unscored": "unscored",
    "n_rule": "by rule",
    "n_calls": "model calls",
    "cost_usd": "cost (USD)",
    "cost_per_trace": "cost / trace (USD)",
    "latency_s_per_trace": "latency / trace (s)",
    "input_tokens_per_trace": "input tokens / trace",
    "output_tokens_per_trace": "output tokens / trace",
    "tokens_per_trace": "tokens / trace",
    "top_unscored_reason": "main reason unscored",
    "kendall_tau": "Kendall's tau",
    "p_value": "p",
    "n_agents": "agents",
    "same_ranking": "same ranking",
    "n_episodes": "episodes",
    "n_documents": "documents",
    "self_estimate_error": "self-estimate error",
    "mean_query_diversity": "query diversity",
    "empty_query_share": "empty queries",
    "low_evidence_answer": "low-evidence answer",
    "not_recovered": "not recovered",
    "repeated_queries": "traces with repeated queries",
    "n_states": "states",
    "n_cal": "calibration states",
    "n_test": "test states",
    "q_hat_full": "q_hat (all states)",
    "r2": "raw R²",
    "stopped_share": "stopped",
    "completeness_at_stop": "completeness at stop",
    "final_completeness": "final completeness",
    "steps_saved": "steps saved",
    "completeness_lost": "completeness lost",
    "stop_valid": "stop valid",
    "disagreement_rate": "disagreement rate",
    "interference_rate": "interference rate",
    "pending_acc": "pending ACC",
    "pending_ia": "pending IA",
    "pending_ic": "pending IC",
    "partial_eta2": "partial eta²",
    "eta2": "eta²",
}

_CI = "with its 95% bootstrap CI over whole traces"

#: Header a reader sees -> its definition.
TERMS = {
    # the disagreement examples of the agreement section
    "trace": "The trace's id; with the explorer written beside the report it opens the whole trace.",
    "step text": "What the label is about (reasoning text, query or documents), clipped; the explorer shows it all.",
    "reference label": "The label the reference rater gave the step.",
    "judge label": "The label the judge gave the same step.",
    "judge's explanation": "Why the judge chose its label, when its label carries an explanation.",
    "agent": "The agent (system) that produced the traces.",
    "group": "The group of traces (the --by columns joined by ' / ').",
    "dataset": "The dataset the question came from.",
    "traces": "Number of traces (one agent answering one question once).",
    "steps": "Number of steps (or, in the agreement tables, steps of that kind labeled by both).",
    "RQI": f"Reasoning quality index: share of reasoning steps grounded in retrieved evidence, {_CI}; higher is "
    "better.",
    "CE": f"Calibration error of the answer decision: distance from answering exactly when E = 2, {_CI}; 0 is best.",
    "overconfident": f"Share of answered traces whose answer came with evidence state E < 2, {_CI}; lower is better.",
    "overcautious": f"Share of traces that reached E = 2 but did not answer within H turns of it, {_CI}; lower is "
    "better.",
    "ERF(8)": f"Evidence recovery by turn 8: share of traces that reached E = 2 or answered correctly by turn 8 "
    f"(Aalen-Johansen), {_CI}; higher is better.",
    "median recovery turn": (
        "Turn by which half of the traces recovered (ERF reaches 0.5); 'not reached' if the curve stays "
        "below 0.5; 'n/a (no ERF)' if the curve is undefined (no trace with a labeled observation)."
    ),
    "accuracy": "Share of traces answered correctly (judged correctness where known, else exact match); higher is "
    "better.",
    "EM": "Exact match of the answer with a gold answer after SQuAD normalisation, mean over traces.",
    "F1": "Token F1 of the answer against the best gold answer, mean over traces.",
    "tool calls": "Tool calls per trace (mean).",
    "searches before answer": "Search calls before the answer, per trace (mean).",
    "duplicate-query rate": "Share of a trace's queries repeating an earlier query of the same trace (mean over "
    "traces); lower is better. Not the audit flag 'traces with repeated queries'.",
    "duplicate-visit rate": "Share of a trace's visited documents visited before in the same trace (mean); lower "
    "is better.",
    "questions": "Distinct questions the agent answered.",
    "runs": "Most runs of one question by this agent (Pass@k needs more than one).",
    "pass@k": "Probability that at least one of k runs of a question is correct (unbiased estimator); "
    "pass@1 is the mean accuracy over runs.",
    "n_pass@k": "Questions with at least k runs (the denominator of pass@k).",
    "flagged": "Share of the agent's traces raising at least one audit flag.",
    "ungrounded": "Audit flag: share of traces whose reasoning is mostly ungrounded (threshold in the options).",
    "low-evidence answer": "Audit flag: share of traces that answered with evidence state below the threshold.",
    "not recovered": "Audit flag: share of traces that never recovered evidence (E = 2) within the horizon.",
    "traces with repeated queries": "Audit flag: share of traces in which at least the threshold number of queries "
    "(default 2) repeat an earlier query of the trace. Not the duplicate-query rate.",
    "mean score": "Mean audit score of the agent's traces (documented in the audit section; higher = worse).",
    "worst traces (score)": "The agent's worst traces by audit score, linked to the trace explorer.",
    "data": "Correctness decided by the dataset's own field.",
    "human": "Correctness decided by a human label.",
    "judge": "Correctness decided by an answer judge.",
    "panel": "Correctness decided by a panel of answer judges.",
    "unknown": "Traces whose correctness nobody decided.",
    "rater": "Who produced the labels compared with the reference (a judge, a person or a panel).",
    "field": "The label field compared (e.g. grounding, reasoning_type); 'all (pooled)' pools the rater's rows.",
    "n": "Number of items (steps, states or episodes) the row is computed on.",
    "excluded": "Steps left out of the comparison (reasons in the exclusions table).",
    "raw agreement": "Share of steps on which the rater gave the reference's label.",
    "kappa [95% CI]": "Cohen's kappa (agreement beyond chance) with its 95% bootstrap CI; 1 = perfect, 0 = chance.",
    "AC1 [95% CI]": "Gwet's AC1 (agreement beyond chance, robust to one dominant label) with its 95% bootstrap CI.",
    "note": "Why a value is undefined or needs care.",
    "step kind": "Kind of step: reasoning, search, search_result or answer.",
    "reason": "Why the items were left out.",
    "label": "The label value.",
    "reference share": "Share of the stratum's steps the reference gave this label.",
    "rater share": "Share of the stratum's steps the rater gave this label.",
    "pooled": "Share over both sources together.",
    "kind": "How the rater's labels were made (judge, rule, human, panel).",
    "records": "Label records the rater wrote.",
    "labeled": "Records carrying a label.",
    "unscored": "Records or states without a usable label or estimate (left out, counted).",
    "by rule": "Labels the judge derived by rule (InitialQuery, RepeatQuery), not by asking a model.",
    "model calls": "Requests sent to a model.",
    "cost (USD)": "Total cost recorded in label provenance; n/a = not recorded.",
    "cost / trace (USD)": "Recorded cost per trace; n/a = not recorded.",
    "latency / trace (s)": "Recorded model time per trace; n/a = not recorded.",
    "input tokens / trace": "Prompt tokens per trace; n/a = not recorded.",
    "output tokens / trace": "Completion tokens per trace; n/a = not recorded.",
    "tokens / trace": "Prompt plus completion tokens per trace; n/a = not recorded.",
    "main reason unscored": "The most common reason a record was left unscored.",
    "metric": "The process metric compared.",
    "reference": "The metric computed from the reference labels.",
    "judged": "The metric computed from the rater's labels.",
    "difference [95% CI]": "Judged minus reference, with a paired bootstrap 95% CI over the agent's traces.",
    "Kendall's tau": "Rank correlation of the agents' order under the reference and under the rater; 1 = same order.",
    "p": "p-value of the test in the row.",
    "agents": "Number of agents ranked.",
    "same ranking": "Whether the rater orders the agents exactly as the reference does.",
    "episodes": "Seeking-environment episodes (one agent, one document, one belief representation).",
    "documents": "Distinct documents searched.",
    "belief": "Belief representation shown to the agent (trajectory, deduplicated, oracle).",
    "completeness [95% CI]": "Mean final completeness (share of a document's goal passages retrieved) with a "
    "95% t-interval over episodes; higher is better.",
    "self-estimate error": "Mean |c - c_hat| between true completeness and the agent's own estimate of it; lower "
    "is better.",
    "query diversity": "Mean 1 - max cosine of a query to the episode's earlier queries; higher = more varied.",
    "empty queries": "Share of queries that retrieved no goal passage.",
    "q_hat": "Conformal half-width: the interval [c_hat - q_hat, c_hat + q_hat] covers the true completeness "
    "with probability 1 - alpha; lower is tighter.",
    "coverage": "Share of test states whose true completeness lies inside the conformal interval; target 1 - alpha.",
    "coverage [95% CI]": "Test coverage of the conformal interval (mean over splits) with the Clopper-Pearson "
    "95% CI of split 0; target 1 - alpha.",
    "interval width": "Mean width of the clipped conformal interval on the test half; lower is tighter.",
    "self-estimates": "Steps at which the agent estimated its own completeness (the conformal states).",
    "estimator": "The completeness estimator calibrated.",
    "states": "Belief states scored.",
    "cal / test": "Mean calibration / test states per split.",
    "split 0 coverage [95% CI]": "Coverage on the test half of split 0, seed 0, with its Clopper-Pearson 95% CI.",
    "width": "Mean interval width on the test half; lower is tighter.",
    "raw R²": "R² of c_hat against the true completeness on the test half, without refitting.",
    "q_hat (all states)": "q_hat calibrated on every scored state (used by the stopping rule).",
    "bin": "Bin of true completeness.",
    "stopped": "Share of episodes the stopping rule stopped early.",
    "completeness at stop": "True completeness when the rule stopped (final if it never stopped).",
    "final completeness": "Completeness at the episode's last step.",
    "steps saved": "Steps left in the episode when the rule stopped.",
    "completeness lost": "Final completeness minus completeness at stop.",
    "stop valid": "Share of stops whose true completeness reached delta.",
    "answers": "Answers the answer judges saw.",
    "decided": "Answers the judges decided (correct or not).",
    "compared": "Answers on which every primary judge gave a verdict.",
    "disagreements": "Answers on which the primary judges disagreed.",
    "disagreement rate": "Disagreements / compared.",
    "tiebreaks": "Times the tiebreaker judge was asked.",
    "yes share": "Share of a judge's votes saying 'correct'.",
    "ACC": "InfoDeepSeek accuracy with all observations.",
    "IA@k": "Share correct from the top-k evidence.",
    "EEU": "Effective evidence utilisation: max IA@k / ACC.",
    "IC": "Information compactness; lower is more compact.",
    "interference rate": "Share of questions right without retrieval that became wrong with it.",
    "pending ACC": "Judgments pending for ACC (left out of its denominator).",
    "pending IA": "Judgments pending for IA@k.",
    "pending IC": "Judgments pending for IC.",
    "factor": "Term of the ANOVA model.",
    "eta²": "Share of the total sum of squares this factor explains.",
    "partial eta²": "SS / (SS + SS_residual) of this factor.",
}

_PATTERNS = (
    (re.compile(r"^pass@(\d+)$"), "pass@k"),
    (re.compile(r"^n_pass@(\d+)$"), "n_pass@k"),
    (re.compile(r"^IA@(\d+)$"), "IA@k"),
    (re.compile(r"^yes share .+$"), "yes share"),
)


def term(column: object) -> tuple[str, str | None]:
    """The header a reader sees for ``column`` and its glossary key's definition (None if unknown).

    >>> term("n_rule")
    ('by rule', 'Labels the judge derived by rule (InitialQuery, RepeatQuery), not by asking a model.')
    >>> term("pass@3")[0], term("pass@3")[1].startswith("Probability")
    ('pass@3', True)
    """
    raw = str(column)
    label = RENAME.get(raw, raw)
    if label in TERMS:
        return label, TERMS[label]
    for pattern, key in _PATTERNS:
        if pattern.match(label):
            return label, TERMS[key]
    return label, None


def header_cell(column: object, *, left: bool = False) -> str:
    """A ``<th>`` with the readable header, its definition on hover and a ``data-term`` the glossary collects."""
    label, definition = term(column)
    cls = " class='l'" if left else ""
    if definition is None:
        return f"<th{cls}>{html.escape(label)}</th>"
    return (
        f"<th{cls} data-term='{html.escape(label, quote=True)}'><abbr title='{html.escape(definition, quote=True)}'>"
        f"{html.escape(label)}</abbr></th>"
    )


_USED = re.compile(r"data-term='([^']*)'")


def glossary_section(page_parts) -> str:
    """The glossary of every header the page's tables use, in order of first use, as an HTML section."""
    seen: dict[str, str] = {}
    for part in page_parts:
        for match in _USED.finditer(str(part)):
            label = html.unescape(match.group(1))
            seen.setdefault(label, term(label)[1] or "")
    items = "".join(
        f"<dt>{html.escape(label)}</dt><dd>{html.escape(definition)}</dd>" for label, definition in seen.items()
    )
    return f"<section id='glossary'><h2>Glossary</h2><dl class='glossary'>{items}</dl></section>"


#: A Markdown table's header line (the line above its ``|---|`` rule).
_MD_HEADER = re.compile(r"^\|(.*)\|\n\|(?:---\|)+$", re.M)


def markdown_glossary(body: str) -> str:
    """The glossary of every header the Markdown tables of ``body`` use, in order of first use ("" if none):
    report.md has no hover, so each column is explained at the end of the page."""
    seen: dict[str, str] = {}
    for m in _MD_HEADER.finditer(body):
        for cell in m.group(1).split(" | "):
            label = re.sub(r"\\(.)", r"\1", cell.strip())
            definition = term(label)[1]
            if definition:
                seen.setdefault(label, definition)
    if not seen:
        return ""
    from ._markdown_text import md_text

    return "\n## Glossary\n\n" + "\n".join(f"- **{md_text(k)}**: {md_text(v)}" for k, v in seen.items()) + "\n"
