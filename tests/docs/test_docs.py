"""The documentation: the generated CLI reference covers every command, and help texts point into docs/."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from seekbench.cli._main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hook():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_parsers(parser: argparse.ArgumentParser, name: str = "seekbench"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _all_parsers(sub, f"{name} {sub_name}")


PARSERS = list(_all_parsers(build_parser()))


def test_every_command_and_option_is_in_the_cli_reference():
    page = _hook().cli_reference()
    assert len(PARSERS) > 15
    for name, parser in PARSERS:
        assert f"`{name}` {{#{name.replace(' ', '-')}}}" in page, name
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in page, (name, flag)


def test_a_new_command_appears_without_editing_the_docs():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    extra = sub.add_parser("brand-new", help="added by some other module")
    extra.add_argument("--knob", default=3, help="turns things")
    page = _hook().cli_reference(parser)
    assert "## `seekbench brand-new` {#seekbench-brand-new}" in page
    assert "| `--knob KNOB` | turns things; default `3` |" in page


def _help_texts():
    for name, parser in PARSERS:
        yield name, parser.format_help()


@pytest.mark.parametrize("name,text", list(_help_texts()), ids=[n for n, _ in PARSERS])
def test_help_points_into_the_docs_never_outside_the_repo(name, text):
    text = " ".join(text.split())
    assert "shared/" not in text and "metrics.md" not in text.replace("docs/metrics", ""), name
    for ref in re.findall(r"docs/[\w./-]+\.md", text):
        assert (ROOT / ref).is_file(), f"{name} --help names {ref}, which does not exist"


def test_readme_points_into_the_docs_never_outside_the_repo():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "shared/spec" not in readme and "metrics.md" not in readme.replace("docs/metrics", "")
    refs = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert refs, "README links no documentation page"
    for ref in refs:
        assert (ROOT / ref).is_file(), ref


def test_every_nav_page_exists():
    nav = re.findall(r":\s+([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    generated = {"cli.md", "changelog.md"}
    assert generated <= set(nav)
    for page in set(nav) - generated:
        assert (DOCS / page).is_file(), page


def test_every_public_package_has_an_api_page():
    import pkgutil

    import seekbench

    packages = {"seekbench"} | {
        m.name
        for m in pkgutil.walk_packages(seekbench.__path__, "seekbench.")
        if m.ispkg and not any(p.startswith("_") for p in m.name.split("."))
    }
    documented = set()
    for page in (DOCS / "api").glob("*.md"):
        documented |= set(re.findall(r"^::: ([\w.]+)\s*$", page.read_text(), flags=re.M))
    missing = packages - documented
    assert not missing, missing


# The shared metric contract is read here only as test data: the user's documentation is docs/.
CONTRACT = ROOT.parent / "shared" / "spec" / "metrics.md"


def _contract() -> str:
    import os

    if not CONTRACT.is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"metric contract not found at {CONTRACT} (required under CI=true)")
        pytest.skip("metric contract not available")
    return CONTRACT.read_text(encoding="utf-8")


def _docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))


def test_every_contract_section_has_a_docs_page():
    sections = re.findall(r"^## (\d+)\. ", _contract(), flags=re.M)
    index = (DOCS / "metrics" / "index.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d+) \| [^|]+ \| (.+) \|$", index, flags=re.M))
    assert sections and set(sections) == set(table), (sections, sorted(table))
    for number, pages in table.items():
        for link in re.findall(r"\]\(([^)#]+)", pages):
            assert (DOCS / "metrics" / link).resolve().is_file(), (number, link)


def test_every_contract_option_is_documented():
    options = set(re.findall(r'`(\w+)="(\w+)"`', _contract()))
    assert len(options) > 10
    docs = _docs_text()
    missing = [f'{k}="{v}"' for k, v in sorted(options) if f'"{v}"' not in docs and f"`{v}`" not in docs]
    assert not missing, missing


def test_every_metric_page_states_a_direction():
    for page in ["rqi", "erf", "ce", "coverage"]:
        text = (DOCS / "metrics" / f"{page}.md").read_text(encoding="utf-8")
        assert "**Direction.**" in text and ("higher is better" in text or "lower is better" in text), page
    index = (DOCS / "metrics" / "index.md").read_text(encoding="utf-8")
    glance = index.split("## At a glance", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in glance.splitlines()
        if line.startswith("| ") and not line.startswith("| metric")
    ]
    assert len(rows) >= 20
    for metric, _range, better, _ideal, page in rows:
        assert better.startswith(("higher", "lower", "close")) and page.startswith("["), metric


def test_the_build_check_finds_public_names_without_an_api_entry(tmp_path):
    import seekbench.labels

    docs, site = tmp_path / "docs", tmp_path / "site"
    (docs / "api").mkdir(parents=True)
    (docs / "api" / "labels.md").write_text("# labels\n\n::: seekbench.labels\n")
    (site / "api" / "labels").mkdir(parents=True)
    names = list(seekbench.labels.__all__)
    shown = "".join(f'<h2 id="seekbench.labels.{n}">' for n in names[1:])
    (site / "api" / "labels" / "index.html").write_text(shown)
    assert _hook().public_names_missing(site, docs) == [f"seekbench.labels.{names[0]}"]
