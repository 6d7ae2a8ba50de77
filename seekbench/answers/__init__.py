"""Answers: judging final answers (EM, an LLM judge, or a panel with a tiebreaker) and evidence sets.

``judge_answers`` decides whether each trace's final answer is correct and
writes the decision into the trace's ``correct`` field (source ``em``,
``judge`` or ``panel``, every vote in ``detail``). LLM answer judges are judge
files with ``kind = "answer"`` in ``judges/``, on the step judges' client,
cache, retry and cost stack. ``LLMCoverageMatcher`` decides which
reference statements a trajectory establishes (the LLM matcher of
``seekbench.metrics.reference_step_coverage``). ``parse_verdict`` reads a judge's Yes/No reply
and refuses anything ambiguous. ``read_infodeepseek`` imports InfoDeepSeek
result and score files as canonical traces with an evidence set in
``metadata.evidence_set`` (see :data:`EVIDENCE_SET_KEY`).

>>> from seekbench.answers import parse_verdict
>>> parse_verdict("Yes.").value
True
"""

from ..traces import EVIDENCE_COLUMNS, EVIDENCE_SET_KEY, evidence_set_of, evidence_set_table, is_false_premise
from ._answer_judge import (
    EM_JUDGE,
    AnswerItem,
    AnswerJudge,
    ExactMatchJudge,
    LLMAnswerJudge,
    Vote,
    load_answer_judge,
    load_answer_template,
    render_answer_prompt,
)
from ._coverage_judge import LLMCoverageMatcher, load_coverage_template, parse_coverage_reply
from ._infodeepseek_io import (
    InfoDeepSeekImport,
    infodeepseek_record_to_trace,
    is_infodeepseek_file,
    read_infodeepseek,
)
from ._panel import (
    AnswerJudgeResult,
    Panel,
    PanelDecision,
    judge_answers,
    majority_vote,
)
from ._verdict import Verdict, parse_verdict

__all__ = [
    "EM_JUDGE",
    "EVIDENCE_COLUMNS",
    "EVIDENCE_SET_KEY",
    "AnswerItem",
    "AnswerJudge",
    "AnswerJudgeResult",
    "ExactMatchJudge",
    "InfoDeepSeekImport",
    "LLMCoverageMatcher",
    "LLMAnswerJudge",
    "Panel",
    "PanelDecision",
    "Verdict",
    "Vote",
    "evidence_set_of",
    "evidence_set_table",
    "infodeepseek_record_to_trace",
    "is_false_premise",
    "is_infodeepseek_file",
    "judge_answers",
    "load_answer_judge",
    "load_answer_template",
    "load_coverage_template",
    "majority_vote",
    "parse_coverage_reply",
    "parse_verdict",
    "read_infodeepseek",
    "render_answer_prompt",
]
