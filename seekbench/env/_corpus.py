"""Seeking-environment corpora: load, validate, build (from JSONL or a folder of Markdown/HTML), filter, write.

A corpus is JSONL, one document per line (``schemas/corpus.schema.json``):
``{"doc_id", "title", "abstract", "topic", "sections": [{"title", "passages":
[{"id", "text"}]}], "source"}``. The goal passages of a document are all the
passages of all its sections (SeekerGym section 2.1).

Quality filters follow SeekerGym's (appendix B.1): a minimum number of
passages and a maximum share of short passages, a passage being short when
it has fewer than ``short_tokens`` tokens, estimated as ``len(text) // 4`` as
the paper does. Every rejected document is reported with its reason; nothing
is dropped silently.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from jsonschema.exceptions import best_match

from .._errors import UserInputError
from .._io import iter_jsonl, read_text, write_jsonl
from .._schemas import validator
from ..traces import json_path
from ._markup import ParsedDocument, parse_html, parse_markdown

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def goal_passages(document: dict) -> list[dict]:
    """All passages of all sections of ``document``, in document order (the goal set), as the raw
    passage dicts of the corpus file; :func:`seekbench.env.conformal.document_goal_passages`
    gives them as typed ``GoalPassage`` records with their section."""
    return [p for s in document["sections"] for p in s["passages"]]


def validate_document(doc: object, *, file: str | None = None, line: int | None = None) -> None:
    """Raise :class:`UserInputError` naming the first problem of one corpus document.

    Checks ``schemas/corpus.schema.json``, then that passage ids are unique within the document.
    """
    err = best_match(validator("corpus").iter_errors(doc))
    if err is not None:
        where = json_path(err.absolute_path)
        raise UserInputError(f"{err.message[:200]}; see schemas/corpus.schema.json", file=file, line=line, path=where)
    doc = cast(dict, doc)  # the schema just checked requires a JSON object
    seen: dict[str, str] = {}
    for si, sec in enumerate(doc["sections"]):
        for pi, p in enumerate(sec["passages"]):
            here = f"$.sections[{si}].passages[{pi}].id"
            if p["id"] in seen:
                raise UserInputError(
                    f"passage id {p['id']!r} of document {doc['doc_id']!r} repeats {seen[p['id']]}; "
                    "passage ids must be unique within a document",
                    file=file,
                    line=line,
                    path=here,
                )
            seen[p["id"]] = here


def load_corpus(path: str | os.PathLike) -> list[dict]:
    """Read and validate a corpus JSONL file.

    Parameters
    ----------
    path : path
        One document per line (``schemas/corpus.schema.json``).

    Returns
    -------
    list of dict
        The documents, in file order.

    Raises
    ------
    UserInputError
        Malformed JSON, a schema violation, a repeated passage id or doc_id, or no
        document at all; the message names the file and line.
    """
    name = str(path)
    docs: list[dict] = []
    lines: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        if isinstance(obj, UserInputError):
            raise obj
        validate_document(obj, file=name, line=lineno)
        obj = cast(dict, obj)  # validate_document just checked it against the schema: a JSON object
        if obj["doc_id"] in lines:
            raise UserInputError(
                f"doc_id {obj['doc_id']!r} was already used on line {lines[obj['doc_id']]}; doc_ids must be unique",
                file=name,
                line=lineno,
                path="$.doc_id",
            )
        lines[obj["doc_id"]] = lineno
        docs.append(obj)
    if not docs:
        raise UserInputError("the corpus has no documents", file=name)
    return docs


def write_corpus(path: str | os.PathLike, documents: list[dict]) -> int:
    """Validate and write documents as corpus JSONL (atomically); return how many were written."""
    for i, doc in enumerate(documents):
        validate_document(doc, file=f"document {i}")
    return write_jsonl(path, documents)


def estimate_tokens(text: str) -> int:
    """SeekerGym's token estimate, ``len(text) // 4`` (tables 5 and 7 of the paper)."""
    return len(text) // 4


@dataclass(frozen=True)
class QualityFilter:
    """SeekerGym-style document filters; defaults are the paper's Wikipedia values (appendix B.1.1).

    Parameters
    ----------
    min_passages : int, default 12
        Reject documents with fewer goal passages.
    max_passages : int or None, default None
        Reject documents with more goal passages (None: no limit).
    short_tokens : int, default 48
        A passage with fewer estimated tokens is short.
    max_short_ratio : float, default 0.1
        Reject documents whose share of short passages exceeds this.
    """

    min_passages: int = 12
    max_passages: int | None = None
    short_tokens: int = 48
    max_short_ratio: float = 0.1

    def __post_init__(self) -> None:
        if self.min_passages < 1:
            raise UserInputError("the minimum number of passages must be at least 1")
        if self.max_passages is not None and self.max_passages < self.min_passages:
            raise UserInputError("the maximum number of passages is below the minimum")
        if not 0.0 <= self.max_short_ratio <= 1.0:
            raise UserInputError("the maximum short-passage ratio must be in [0, 1]")

    def short_ratio(self, document: dict) -> float:
        """Share of the document's goal passages with fewer than ``short_tokens`` estimated tokens."""
        ps = goal_passages(document)
        return sum(estimate_tokens(p["text"]) < self.short_tokens for p in ps) / len(ps) if ps else 1.0

    def reason(self, document: dict) -> str | None:
        """Why ``document`` is rejected, or None when it passes."""
        n = len(goal_passages(document))
        if n < self.min_passages:
            return f"{n} passages < minimum {self.min_passages}"
        if self.max_passages is not None and n > self.max_passages:
            return f"{n} passages > maximum {self.max_passages}"
        ratio = self.short_ratio(document)
        if ratio > self.max_short_ratio:
            return (
                f"short-passage ratio {ratio:.2f} > {self.max_short_ratio:g} "
                f"(short: < {self.short_tokens} tokens ~ {4 * self.short_tokens} characters)"
            )
        return None


@dataclass
class CorpusBuild:
    """The documents kept by a build and the report of what was rejected and why.

    Attributes
    ----------
    documents : list of dict
        Kept documents (valid corpus documents).
    rejected : list of dict
        ``{"doc_id", "source", "reason"}`` per rejected document or unreadable file.
    n_input : int
        Documents (or files) considered.
    """

    documents: list[dict]
    rejected: list[dict] = field(default_factory=list)
    n_input: int = 0
    filters: QualityFilter | None = None

    def summary(self) -> str:
        """A short human-readable report: kept, rejected by reason, passage statistics, what to change."""
        lines = [f"kept {len(self.documents)} of {self.n_input} documents"]
        if self.documents:
            ns = sorted(len(goal_passages(d)) for d in self.documents)
            topics = Counter(d["topic"] for d in self.documents)
            lines.append(
                f"passages per document: min {ns[0]}, median {ns[len(ns) // 2]}, max {ns[-1]}; "
                f"{len(topics)} topics: " + ", ".join(f"{t} ({n})" for t, n in sorted(topics.items()))
            )
        if self.rejected:
            lines.append(f"rejected {len(self.rejected)}:")
            lines += [f"  {r['doc_id']}: {r['reason']}" for r in self.rejected[:50]]
            if len(self.rejected) > 50:
                lines.append(f"  ... and {len(self.rejected) - 50} more")
            if any("passages <" in r["reason"] or "short-passage" in r["reason"] for r in self.rejected):
                lines.append(
                    "to keep more, loosen --min-passages / --max-short-ratio / --short-tokens, or pass --merge-short"
                )
        return "\n".join(lines)


def merge_short_passages(paragraphs: list[str], *, min_chars: int) -> list[str]:
    """Join each paragraph shorter than ``min_chars`` to the next one (the last to the previous one).

    >>> merge_short_passages(["Short.", "A longer paragraph here.", "End."], min_chars=10)
    ['Short. A longer paragraph here. End.']
    """
    out: list[str] = []
    pending = ""
    for para in paragraphs:
        text = f"{pending} {para}".strip() if pending else para
        if len(text) < min_chars:
            pending = text
        else:
            out.append(text)
            pending = ""
    if pending:
        if out:
            out[-1] = f"{out[-1]} {pending}"
        else:
            out.append(pending)
    return out


def document_from_parsed(
    parsed: ParsedDocument, *, doc_id: str, topic: str, source: str, merge_short_chars: int | None = None
) -> tuple[dict | None, str | None]:
    """A corpus document from a parsed file, with passage ids ``p0..pN``; or ``(None, reason)``.

    The lead paragraphs are the abstract (front-matter/meta ``abstract`` or
    ``description`` when there is no lead); empty sections are dropped.
    """
    meta = parsed.meta
    title = meta.get("title") or parsed.title or doc_id
    abstract = " ".join(parsed.lead).strip() or meta.get("abstract", "") or meta.get("description", "")
    if not abstract:
        return None, "no abstract: no text before the first section heading (or front-matter 'abstract')"
    sections, n = [], 0
    for sec_title, paras in parsed.sections:
        if merge_short_chars:
            paras = merge_short_passages(paras, min_chars=merge_short_chars)
        passages = []
        for text in paras:
            passages.append({"id": f"p{n}", "text": text})
            n += 1
        if passages:
            sections.append({"title": sec_title, "passages": passages})
    if not sections:
        return None, "no sections with text (no heading after the title, or only code and tables)"
    return {
        "doc_id": meta.get("doc_id") or doc_id,
        "title": title,
        "abstract": abstract,
        "topic": meta.get("topic") or topic,
        "sections": sections,
        "source": source,
    }, None


def _folder_documents(
    root: Path, fmt: str, *, default_topic: str, merge_short_chars: int | None, rejected: list[dict]
) -> tuple[list[dict], int]:
    suffixes = {"markdown": MARKDOWN_SUFFIXES, "html": HTML_SUFFIXES}.get(fmt, MARKDOWN_SUFFIXES + HTML_SUFFIXES)
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in suffixes
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise UserInputError(f"no {'/'.join(s.lstrip('.') for s in suffixes)} files in this folder", file=str(root))
    docs = []
    for path in files:
        rel = path.relative_to(root)
        doc_id = rel.with_suffix("").as_posix()
        topic = rel.parts[0] if len(rel.parts) > 1 else default_topic
        try:
            text = read_text(path)
        except UserInputError as e:
            rejected.append({"doc_id": doc_id, "source": str(path), "reason": f"unreadable: {e.message}"})
            continue
        parsed = parse_html(text) if path.suffix.lower() in HTML_SUFFIXES else parse_markdown(text)
        doc, reason = document_from_parsed(
            parsed, doc_id=doc_id, topic=topic, source=str(path), merge_short_chars=merge_short_chars
        )
        if doc is None:
            rejected.append({"doc_id": doc_id, "source": str(path), "reason": reason})
        else:
            docs.append(doc)
    return docs, len(files)


def build_corpus(
    source: str | os.PathLike,
    *,
    fmt: Literal["auto", "jsonl", "markdown", "html"] = "auto",
    filters: QualityFilter | None = None,
    default_topic: str = "general",
    merge_short: bool = False,
) -> CorpusBuild:
    """Build a corpus from a corpus JSONL file or a folder of Markdown/HTML documents, then filter it.

    Parameters
    ----------
    source : path
        A ``.jsonl`` corpus file, or a folder searched recursively for Markdown/HTML files.
    fmt : {"auto", "jsonl", "markdown", "html"}
        ``auto``: a file is JSONL, a folder takes both Markdown and HTML.
    filters : QualityFilter, optional
        Default :class:`QualityFilter` (SeekerGym's Wikipedia values).
    default_topic : str
        Topic of a file directly under the folder (files in a subfolder take its name;
        front matter / ``<meta name="topic">`` overrides both).
    merge_short : bool
        Join short paragraphs (under ``4 * filters.short_tokens`` characters) to the next one
        of their section before filtering (folders only).

    Returns
    -------
    CorpusBuild
        The kept documents and the rejection report.
    """
    filters = filters or QualityFilter()
    path = Path(source)
    if not path.exists():
        raise UserInputError("no such file or folder", file=str(path))
    if fmt not in ("auto", "jsonl", "markdown", "html"):
        raise UserInputError(f"unknown corpus format {fmt!r}; use auto, jsonl, markdown or html")
    rejected: list[dict] = []
    if path.is_dir():
        if fmt == "jsonl":
            raise UserInputError("--format jsonl needs a file, got a folder", file=str(path))
        merge = 4 * filters.short_tokens if merge_short else None
        docs, n_input = _folder_documents(
            path, fmt, default_topic=default_topic, merge_short_chars=merge, rejected=rejected
        )
    else:
        if fmt in ("markdown", "html"):
            raise UserInputError(f"--format {fmt} needs a folder of documents, got a file", file=str(path))
        docs = load_corpus(path)
        n_input = len(docs)
    kept, seen = [], set()
    for doc in docs:
        if doc["doc_id"] in seen:
            rejected.append({"doc_id": doc["doc_id"], "source": doc["source"], "reason": "duplicate doc_id"})
            continue
        reason = filters.reason(doc)
        if reason is None:
            kept.append(doc)
            seen.add(doc["doc_id"])
        else:
            rejected.append({"doc_id": doc["doc_id"], "source": doc["source"], "reason": reason})
    return CorpusBuild(kept, rejected, n_input, filters)
