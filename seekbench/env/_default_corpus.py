"""The embedded default corpus, built at run time from documentation that ships with Python.

No document text is stored in seekbench: the corpus is assembled each time
from ``pydoc_data.topics`` (the language reference as ``help()`` shows it)
and from the docstrings of standard-library modules and their public
functions and classes. Each document gets a title, an abstract (its opening
paragraph), a topic, and sections of paragraph passages. Code examples,
grammar productions and tables are dropped, and paragraphs shorter than
about 48 tokens are joined to the next one of their section (SeekerGym's
short-passage threshold), so the documents pass the quality filters.

The text depends on the Python version (recorded in each document's
``source``); under ``python -OO`` docstrings are stripped and only the
pydoc documents remain.
"""

from __future__ import annotations

import importlib
import inspect
import platform
import re
import textwrap

from .._errors import UserInputError
from ._corpus import CorpusBuild, QualityFilter, merge_short_passages

#: Paragraphs shorter than this many characters (~48 tokens) are joined to the next one.
MIN_PASSAGE_CHARS = 192
#: At most this many goal passages per document (sections are added while they fit).
MAX_PASSAGES = 60

#: (doc_id, title or None for the topic's own, topic, pydoc topic keys; several keys make one section each)
PYDOC_DOCUMENTS: tuple[tuple[str, str | None, str, tuple[str, ...]], ...] = (
    ("pydoc/compound", None, "statements", ("compound",)),
    (
        "pydoc/simple-statements",
        "Simple statements",
        "statements",
        ("assert", "pass", "del", "return", "yield", "raise", "break", "continue", "global", "nonlocal"),
    ),
    ("pydoc/assignment", None, "statements", ("assignment",)),
    ("pydoc/import", None, "statements", ("import",)),
    ("pydoc/specialnames", None, "data model", ("specialnames",)),
    ("pydoc/types", None, "data model", ("types",)),
    ("pydoc/execmodel", None, "data model", ("execmodel",)),
    (
        "pydoc/primaries",
        "Primaries and atoms",
        "expressions",
        ("atom-identifiers", "atom-literals", "attribute-references", "subscriptions", "slicings", "calls"),
    ),
    (
        "pydoc/operators",
        "Operators",
        "expressions",
        ("power", "unary", "binary", "shifting", "bitwise", "comparisons", "booleans", "lambda"),
    ),
    ("pydoc/typesseq", None, "built-in types", ("typesseq", "typesseq-mutable")),
    ("pydoc/typesmapping", None, "built-in types", ("typesmapping",)),
    ("pydoc/string-methods", None, "built-in types", ("string-methods",)),
    ("pydoc/formatstrings", None, "built-in types", ("formatstrings",)),
)

#: (module, topic)
MODULE_DOCUMENTS: tuple[tuple[str, str], ...] = (
    ("re", "text processing"),
    ("difflib", "text processing"),
    ("textwrap", "text processing"),
    ("json", "data formats"),
    ("configparser", "data formats"),
    ("statistics", "numbers"),
    ("random", "numbers"),
    ("argparse", "development tools"),
    ("doctest", "development tools"),
    ("unittest", "development tools"),
    ("logging", "development tools"),
    ("shutil", "files and processes"),
    ("subprocess", "files and processes"),
    ("tempfile", "files and processes"),
)

_UNDERLINE = re.compile(r"^([*=\-~^])\1{2,}$")
_LEVEL = {"*": 0, "=": 1, "-": 2, "~": 3, "^": 3}
_CODE_MARKS = (">>>", "::=", "+--", "+==", "...:")


def _is_prose(block: str) -> bool:
    """A paragraph of sentences, not code, grammar, a table or a bare list of names."""
    lines = [ln for ln in block.split("\n") if ln.strip()]
    if not lines or any(ln.lstrip().startswith(_CODE_MARKS) or ln.lstrip().startswith("|") for ln in lines):
        return False
    text = " ".join(ln.strip() for ln in lines)
    words = text.split()
    if len(words) < 5:
        return False
    alpha = sum(bool(re.fullmatch(r"[A-Za-z][A-Za-z'’,.;:()\-]*", w)) for w in words) / len(words)
    list_item = re.match(r"^(\d{1,2}\.|[-*•])\s", text) is not None
    return alpha >= 0.6 and (list_item or text.rstrip()[-1:] in ".:;?!)")


def _blocks(text: str) -> list[str]:
    return [b for b in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")) if b.strip()]


def _heading(block: str) -> tuple[int, str] | None:
    lines = block.strip("\n").split("\n")
    if len(lines) == 2 and _UNDERLINE.match(lines[1].strip()) and lines[0].strip():
        return _LEVEL[lines[1].strip()[0]], lines[0].strip()
    return None


def _paragraphs(blocks: list[str]) -> list[str]:
    """Prose paragraphs, whitespace-normalised; a one-line term before an indented definition prefixes it."""
    out, term = [], None
    for block in blocks:
        dedented = textwrap.dedent(block)
        is_term = (
            "\n" not in block.strip()
            and not block.startswith((" ", "\t"))
            and not _is_prose(block)
            and len(block.strip()) < 120
        )
        if is_term:
            term = block.strip()
            continue
        if _is_prose(dedented):
            text = re.sub(r"\s+", " ", dedented).strip()
            out.append(f"{term}: {text}" if term and block.startswith((" ", "\t")) else text)
        if not block.startswith((" ", "\t")):
            term = None
    return out


def parse_pydoc_topic(text: str) -> tuple[str, list[str], list[tuple[str, list[str]]]]:
    """Split one ``pydoc_data.topics`` entry into (title, intro paragraphs, [(heading, paragraphs)])."""
    text = text.split("-[ Footnotes ]-")[0]
    title, intro, sections = "", [], []
    pending: list[str] = []
    current: str | None = None

    def close() -> None:
        paras = _paragraphs(pending)
        if current is None:
            intro.extend(paras)
        else:
            sections.append((current, paras))
        pending.clear()

    for block in _blocks(text):
        head = _heading(block)
        if head is None:
            pending.append(block)
            continue
        level, name = head
        if level == 0 and not title:
            title = name
            continue
        close()
        current = name
    close()
    return title, intro, sections


def _abstract(paragraphs: list[str]) -> tuple[str, list[str]]:
    """The opening paragraph(s) as the abstract (at least ~200 characters when available), and the rest."""
    take = 1
    while take < len(paragraphs) and len(" ".join(paragraphs[:take])) < MIN_PASSAGE_CHARS and take < 3:
        take += 1
    return " ".join(paragraphs[:take]), paragraphs[take:]


def _assemble(
    doc_id: str, title: str, topic: str, abstract: str, sections: list[tuple[str, list[str]]], source: str
) -> tuple[dict | None, str | None]:
    """A corpus document (or None and why); sections with less than a passage's worth of text are left out."""
    sections = [(name, paras) for name, paras in sections if len(" ".join(paras)) >= MIN_PASSAGE_CHARS]
    if not abstract and sections:  # no lead: the first paragraphs of the first section open the document
        abstract, rest = _abstract(sections[0][1])
        sections[0] = (sections[0][0], rest)
    out, n = [], 0
    for name, paras in sections:
        paras = merge_short_passages(paras, min_chars=MIN_PASSAGE_CHARS) if paras else []
        if not paras:
            continue
        if n + len(paras) > MAX_PASSAGES:
            if n >= MAX_PASSAGES // 2:
                break
            paras = paras[: MAX_PASSAGES - n]
        out.append({"title": name, "passages": [{"id": f"p{n + i}", "text": t} for i, t in enumerate(paras)]})
        n += len(paras)
    if not out or not abstract:
        return None, f"no section with at least {MIN_PASSAGE_CHARS} characters of prose"
    return {
        "doc_id": doc_id,
        "title": title,
        "abstract": abstract,
        "topic": topic,
        "sections": out,
        "source": source,
    }, None


def pydoc_document(doc_id: str, title: str | None, topic: str, keys: tuple[str, ...]) -> tuple[dict | None, str | None]:
    """One document from one or more ``pydoc_data.topics`` entries, or ``(None, reason)``."""
    from pydoc_data.topics import topics

    source = f"pydoc_data.topics {', '.join(keys)} (Python {platform.python_version()})"
    missing = [k for k in keys if k not in topics]
    if missing:
        return None, f"pydoc_data.topics has no {', '.join(missing)} on this Python"
    parsed = [parse_pydoc_topic(topics[k]) for k in keys]
    if len(keys) == 1:
        t, intro, sections = parsed[0]
        abstract, rest = _abstract(intro)
        secs = ([("Introduction", rest)] if rest else []) + sections
        return _assemble(doc_id, title or t, topic, abstract, secs, source)
    secs, firsts = [], []
    for t, intro, sections in parsed:
        paras = intro + [p for _, ps in sections for p in ps]
        if paras:
            secs.append((t, paras))
            firsts.append(re.split(r"(?<=[.:;])\s", paras[0], maxsplit=1)[0])
    title = title or parsed[0][0] or doc_id
    abstract = f"{title}: " + " ".join(firsts[:8])
    return _assemble(doc_id, title, topic, abstract, secs, source)


def _doc_paragraphs(doc: str | None) -> list[str]:
    return _paragraphs(_blocks(doc)) if doc else []


def _members(module) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", None) or sorted(n for n in vars(module) if not n.startswith("_"))
    out: list[tuple[str, object]] = []
    for name in names:
        obj = getattr(module, name, None)
        mod = getattr(obj, "__module__", None) or ""
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and mod.split(".")[0] == module.__name__:
            out.append((name, obj))
    return out


def module_document(name: str, topic: str) -> tuple[dict | None, str | None]:
    """One document from a standard-library module: its docstring, then one section per documented member.

    Classes contribute their docstring and one section per documented public
    method. Returns ``(None, reason)`` when the module cannot be imported or has no docstring.
    """
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        return None, f"cannot import {name}: {e}"
    doc = inspect.getdoc(module)
    if not doc:
        return None, "no module docstring (docstrings stripped by python -OO?)"
    first, _, more = doc.partition("\n\n")
    abstract, rest = _abstract([re.sub(r"\s+", " ", first).strip(), *_doc_paragraphs(more)])
    sections = [("Overview", rest)] if rest else []
    for member, obj in _members(module):
        suffix = "" if inspect.isclass(obj) else "()"
        sections.append((f"{name}.{member}{suffix}", _doc_paragraphs(inspect.getdoc(obj))))
        if inspect.isclass(obj):
            for meth, fn in sorted(vars(obj).items()):
                if not meth.startswith("_") and inspect.isfunction(fn) and fn.__doc__:
                    sections.append((f"{name}.{member}.{meth}()", _doc_paragraphs(inspect.getdoc(fn))))
    title = f"The {name} module"
    return _assemble(
        f"module/{name}",
        title,
        topic,
        abstract,
        sections,
        f"docstrings of the {name} module (Python {platform.python_version()})",
    )


def default_corpus(*, filters: QualityFilter | None = None) -> CorpusBuild:
    """Build the embedded default corpus (offline, from text installed with Python).

    Parameters
    ----------
    filters : QualityFilter, optional
        Default ``QualityFilter(min_passages=8, max_short_ratio=0.2)``: the paper's
        short-passage threshold (48 tokens), a lower passage minimum for these shorter documents.

    Returns
    -------
    CorpusBuild
        About two dozen documents over ten topics, with the rejection report.

    Raises
    ------
    UserInputError
        Fewer than 4 documents could be built.

    Examples
    --------
    >>> build = default_corpus()  # doctest: +SKIP
    >>> len(build.documents) >= 20  # doctest: +SKIP
    True
    """
    filters = filters or QualityFilter(min_passages=8, max_short_ratio=0.2)
    candidates: list[tuple[str, str, tuple[dict | None, str | None]]] = []
    for doc_id, title, topic, keys in PYDOC_DOCUMENTS:
        candidates.append((doc_id, f"pydoc_data.topics {', '.join(keys)}", pydoc_document(doc_id, title, topic, keys)))
    for name, topic in MODULE_DOCUMENTS:
        candidates.append((f"module/{name}", f"module {name}", module_document(name, topic)))
    kept, rejected = [], []
    for doc_id, source, (doc, why) in candidates:
        if doc is None:
            rejected.append({"doc_id": doc_id, "source": source, "reason": why})
            continue
        reason = filters.reason(doc)
        if reason is None:
            kept.append(doc)
        else:
            rejected.append({"doc_id": doc_id, "source": source, "reason": reason})
    if len(kept) < 4:
        raise UserInputError(
            f"the default corpus has only {len(kept)} documents on this Python "
            "(docstrings stripped? run without -OO), or build your own: seekbench env build-corpus"
        )
    return CorpusBuild(kept, rejected, len(candidates), filters)
