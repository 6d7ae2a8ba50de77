"""Corpus format, loading with file:line errors, SeekerGym filters, and building from Markdown/HTML folders."""

from __future__ import annotations

import json

import pytest
from _env_helpers import make_document

from seekbench._errors import UserInputError
from seekbench.env import QualityFilter, build_corpus, goal_passages, load_corpus, parse_html, parse_markdown, write_corpus

LONG = ("This paragraph is long enough to count as a full passage under the SeekerGym short-passage rule, "
        "which asks for at least forty-eight tokens, about one hundred and ninety-two characters of text.")


def _write_lines(path, objs):
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs), encoding="utf-8")
    return path


def test_roundtrip_and_goal_passages(tmp_path, pets_doc):
    path = tmp_path / "c.jsonl"
    assert write_corpus(path, [pets_doc, make_document("d1")]) == 2
    docs = load_corpus(path)
    assert [d["doc_id"] for d in docs] == ["d0", "d1"]
    assert [p["id"] for p in goal_passages(docs[0])] == [f"p{i}" for i in range(6)]


@pytest.mark.parametrize("bad, line, fragment", [
    ('{"doc_id": ', 2, "malformed JSON"),
    ({"doc_id": "x"}, 2, "required"),
    ({**make_document("x"), "sections": []}, 2, "sections"),
    ({**make_document("d0")}, 2, "already used on line 1"),
])
def test_load_errors_name_file_and_line(tmp_path, pets_doc, bad, line, fragment):
    path = _write_lines(tmp_path / "c.jsonl", [pets_doc, bad])
    with pytest.raises(UserInputError) as e:
        load_corpus(path)
    msg = e.value.one_line()
    assert f"c.jsonl:{line}" in msg and fragment in msg and "\n" not in msg


def test_repeated_passage_id_is_an_error(tmp_path, pets_doc):
    pets_doc["sections"][1]["passages"][0]["id"] = "p0"
    path = _write_lines(tmp_path / "c.jsonl", [pets_doc])
    with pytest.raises(UserInputError, match=r"c\.jsonl:1.*passage id 'p0'.*unique"):
        load_corpus(path)


def test_empty_corpus_is_an_error(tmp_path):
    (tmp_path / "c.jsonl").write_text("\n")
    with pytest.raises(UserInputError, match="no documents"):
        load_corpus(tmp_path / "c.jsonl")


def test_quality_filter_boundaries():
    doc = make_document(sections={"S": [LONG] * 9 + ["short"]})  # 10 passages, 1 short: ratio 0.1
    assert QualityFilter(min_passages=10, max_short_ratio=0.1).reason(doc) is None  # exactly at the limit passes
    assert "short-passage ratio 0.10 > 0.09" in QualityFilter(min_passages=10, max_short_ratio=0.09).reason(doc)
    assert QualityFilter(min_passages=11).reason(doc) == "10 passages < minimum 11"
    assert QualityFilter(min_passages=1, max_passages=9).reason(doc) == "10 passages > maximum 9"
    with pytest.raises(UserInputError):
        QualityFilter(max_short_ratio=1.5)


def test_build_from_jsonl_reports_rejections(tmp_path, pets_doc):
    big = make_document("big", sections={"A": [LONG] * 7, "B": [LONG] * 6})
    path = _write_lines(tmp_path / "c.jsonl", [pets_doc, big])
    build = build_corpus(path)
    assert [d["doc_id"] for d in build.documents] == ["big"]
    assert build.rejected == [{"doc_id": "d0", "source": "test", "reason": "6 passages < minimum 12"}]
    assert "kept 1 of 2" in build.summary() and "d0: 6 passages < minimum 12" in build.summary()


def test_parse_markdown_structure():
    text = ("---\ntopic: zoology\n---\n# Pets\n\nLead *one*.\n\nLead [two](http://x).\n\n## Cats\n\nCats purr.\n\n"
            "```python\nprint('code is dropped')\n```\n\n- item one\n- item two\n  continued\n\n| a | b |\n|---|---|\n\n"
            "Dogs\n----\n\nDogs bark.\n\n    indented code\n")
    d = parse_markdown(text)
    assert d.title == "Pets" and d.meta == {"topic": "zoology"}
    assert d.lead == ["Lead one.", "Lead two."]
    assert d.sections == [("Cats", ["Cats purr.", "item one\nitem two continued"]), ("Dogs", ["Dogs bark."])]


def test_parse_html_structure():
    text = ("<html><head><title>T</title><meta name='topic' content='zoology'><style>x{}</style></head><body>"
            "<nav>menu</nav><h1>Pets</h1><p>Lead &amp; more.</p><h2>Cats</h2><p>Cats <b>purr</b>.</p>"
            "<pre>code</pre><table><tr><td>cell</td></tr></table><ul><li>one</li><li>two</li></ul>"
            "<figure><figcaption>caption</figcaption></figure><script>var x;</script><h3>Kittens</h3><p>Small.</p>"
            "</body></html>")
    d = parse_html(text)
    assert d.title == "Pets" and d.meta["topic"] == "zoology"
    assert d.lead == ["Lead & more."]
    assert d.sections == [("Cats", ["Cats purr.", "one\ntwo"]), ("Kittens", ["Small."])]


def _md_doc(title, n, *, short=0, lead=True):
    body = [f"# {title}", ""] + (["The lead paragraph says what the document covers.", ""] if lead else [])
    for i in range(n):
        body += [f"## Part {i}", "", LONG if i >= short else "Too short.", ""]
    return "\n".join(body)


def test_build_from_markdown_folder_with_filters_reported(tmp_path):
    root = tmp_path / "docs"
    (root / "birds").mkdir(parents=True)
    (root / "good.md").write_text(_md_doc("Good", 12))
    (root / "birds" / "owls.md").write_text(_md_doc("Owls", 13))
    (root / "few.md").write_text(_md_doc("Few", 5))
    (root / "shorty.md").write_text(_md_doc("Shorty", 12, short=3))
    (root / "nolead.md").write_text(_md_doc("No lead", 12, lead=False))
    (root / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (root / ".hidden.md").write_text(_md_doc("Hidden", 12))
    build = build_corpus(root)
    assert {d["doc_id"]: d["topic"] for d in build.documents} == {"birds/owls": "birds", "good": "general"}
    reasons = {r["doc_id"]: r["reason"] for r in build.rejected}
    assert reasons["few"] == "5 passages < minimum 12"
    assert reasons["shorty"].startswith("short-passage ratio 0.25 > 0.1")
    assert reasons["nolead"].startswith("no abstract")
    assert reasons["latin1"].startswith("unreadable: invalid UTF-8")
    assert build.n_input == 6
    owls = next(d for d in build.documents if d["doc_id"] == "birds/owls")
    assert owls["title"] == "Owls" and owls["abstract"].startswith("The lead paragraph")
    assert [s["title"] for s in owls["sections"]][:2] == ["Part 0", "Part 1"]
    assert [p["id"] for p in goal_passages(owls)] == [f"p{i}" for i in range(13)]


def test_merge_short_rescues_fragmented_documents(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    body = ["# Frag", "", "Lead.", "", "## One", ""] + ["Short one. " * 3, ""] * 30 + ["## Two", ""] + [LONG, ""] * 12
    (root / "frag.md").write_text("\n".join(body))
    assert build_corpus(root).documents == []
    merged = build_corpus(root, merge_short=True)
    assert [d["doc_id"] for d in merged.documents] == ["frag"]
    assert QualityFilter().short_ratio(merged.documents[0]) <= 0.1


def test_build_from_html_folder(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    paras = "".join(f"<h2>Part {i}</h2><p>{LONG}</p>" for i in range(12))
    (root / "page.html").write_text(f"<h1>Page</h1><p>Lead text.</p>{paras}<script>evil()</script>")
    (root / "notes.md").write_text(_md_doc("Notes", 12))
    build = build_corpus(root, fmt="html")
    assert [d["doc_id"] for d in build.documents] == ["page"]
    assert len(goal_passages(build.documents[0])) == 12
    with pytest.raises(UserInputError, match="needs a folder"):
        build_corpus(root / "page.html", fmt="html")
    with pytest.raises(UserInputError, match="no such file"):
        build_corpus(tmp_path / "missing")


def test_cli_build_corpus(env_cli, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text(_md_doc("Good", 12))
    (root / "few.md").write_text(_md_doc("Few", 3))
    out = tmp_path / "corpus.jsonl"
    r = env_cli("env", "build-corpus", root, "-o", out)
    assert r.code == 0, r
    assert "kept 1 of 2" in r.out and "few: 3 passages < minimum 12" in r.out
    assert [d["doc_id"] for d in load_corpus(out)] == ["good"]
    r = env_cli("env", "build-corpus", root, "-o", out, "--min-passages", "50")
    assert r.code == 2 and r.err.count("\n") == 1 and "every document was rejected" in r.err
    r = env_cli("env", "build-corpus", "-o", out)
    assert r.code == 2 and "give a SOURCE" in r.err
    r = env_cli("env", "build-corpus", root, "-o", out, "--min-passages", "2", "--json")
    assert r.code == 0 and json.loads(r.out)["kept"] == 2
