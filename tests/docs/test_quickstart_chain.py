"""The docs run as written: each page's commands, taken from its Markdown, run in order in an empty folder.

A reader types the README's Quickstart, ``docs/index.md`` or ``docs/getting-started.md`` top to
bottom: each ```` ```bash ```` line and each ```` ```python ```` block runs here, in a fresh
folder per page, for real (``seekbench`` is the package under test, in a subprocess), and must
exit 0. The pages create every file they read (``seekbench samples`` writes the shipped sample
files under the names they use), so a renamed file or option in a page fails this test.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import seekbench
from seekbench.testing import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]

#: The text before a page's first ``## `` heading.
INTRO = ""

#: Page -> (file, the ``## `` section holding its chain, INTRO, or None for the whole page). The rest of
#: index.md is for the docs' authors (``mkdocs serve`` in a clone), not a chain for a reader.
PAGES = {
    "README Quickstart": (ROOT / "README.md", "Quickstart"),
    "docs/index.md": (ROOT / "docs" / "index.md", INTRO),
    "docs/getting-started.md": (ROOT / "docs" / "getting-started.md", None),
}

#: The only lines not run, and why: installing is what the wheel stage of .ci/run does for real, in a
#: fresh venv; here the package under test is already importable.
SKIPPED = {
    "installs": re.compile(r"^(python -m )?pip install\b"),
}

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Step:
    """One thing a reader runs: a shell line (``bash``) or a whole Python block (``python``)."""

    lang: str
    code: str


def section(text: str, title: str | None) -> str:
    """The ``## title`` section of a Markdown text (up to the next ``## `` heading), what comes before
    the first ``## `` heading (INTRO), or all of it (None)."""
    if title is None:
        return text
    if title == INTRO:
        return re.split(r"^## ", text, maxsplit=1, flags=re.M)[0]
    match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if match is None:
        raise AssertionError(f"no '## {title}' section")
    return match.group(1)


def steps(markdown: str) -> list[Step]:
    """The bash lines (continuations joined; blank and comment lines dropped) and Python blocks, in order."""
    out: list[Step] = []
    for lang, body in _FENCE.findall(markdown):
        if lang == "python":
            out.append(Step("python", body))
        elif lang in ("bash", "sh", "shell"):
            for line in re.sub(r"[ \t]*\\\n\s*", " ", body).splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append(Step("bash", line.strip()))
    return out


def skip_reason(step: Step) -> str | None:
    return next((why for why, rule in SKIPPED.items() if step.lang == "bash" and rule.match(step.code)), None)


def _shims(bin_dir: Path) -> None:
    """``seekbench`` and ``python`` on PATH as the interpreter running the tests (the console script
    may not be installed where the tests run, e.g. with PYTHONPATH pointing at a checkout)."""
    bin_dir.mkdir()
    for name, argv in (("seekbench", f'"{sys.executable}" -m seekbench'), ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def chain_env(tmp: Path, base_url: str) -> dict[str, str]:
    """The environment the pages' commands run in, and nothing a reader would not have beside it:
    the shims first on PATH; this checkout's seekbench importable; the judge cache in ``tmp``; and
    OPENAI_BASE_URL at the bundled OpenAI-compatible server, so a line that names an OpenAI judge
    (``OPENAI_API_KEY=... seekbench annotate ...``) runs as written, offline, with no real key."""
    _shims(tmp / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SEEKBENCH_"))}
    package_root = str(Path(seekbench.__file__).resolve().parents[1])
    env |= {
        "PATH": f"{tmp / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p),
        "SEEKBENCH_CACHE": str(tmp / "judge_cache.sqlite"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "OPENAI_BASE_URL": base_url,
    }
    return env


def run_chain(chain: list[Step], work: Path, env: dict[str, str]) -> tuple[Step, subprocess.CompletedProcess] | None:
    """Run the steps in order in ``work``; the first that exits non-zero, with its process, or None."""
    work.mkdir()
    for step in chain:
        if skip_reason(step):
            continue
        argv = ["bash", "-c", step.code] if step.lang == "bash" else [sys.executable, "-c", step.code]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return step, proc
    return None


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def _chain(page: str) -> list[Step]:
    path, title = PAGES[page]
    return steps(section(path.read_text(encoding="utf-8"), title))


@pytest.mark.slow
@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_runs_as_written(page, server, tmp_path):
    chain = _chain(page)
    ran = [s for s in chain if not skip_reason(s)]
    assert any(s.code.startswith("seekbench ") for s in ran), f"{page}: no seekbench command found"
    failed = run_chain(chain, tmp_path / "work", chain_env(tmp_path, server.base_url))
    if failed is not None:
        step, proc = failed
        pytest.fail(
            f"{page}: `{step.code.strip()[:200]}` exited {proc.returncode}\n"
            f"stderr: {proc.stderr[-2000:]}\nstdout: {proc.stdout[-1000:]}"
        )


def test_the_chains_convert_a_search_r1_run_and_report_on_a_judges_labels():
    """What issue 24 found broken stays in the chains that test it: convert a Search-R1 run, label it
    with a judge, report on those labels; and split inline labels into a set that validates."""
    for page in ("README Quickstart", "docs/getting-started.md"):
        ran = [s.code.split("#")[0].split() for s in _chain(page) if s.lang == "bash" and not skip_reason(s)]
        assert ["seekbench", "samples"] in ran, page
        converted = next(c[c.index("-o") + 1] for c in ran if c[:3] == ["seekbench", "convert", "run.jsonl"])
        labeled = next(c[c.index("-o") + 1] for c in ran if c[:3] == ["seekbench", "annotate", converted])
        assert any(c[:3] == ["seekbench", "report", converted] and labeled in c for c in ran), page
        assert any("--labels-out" in c for c in ran), page


def test_a_broken_line_fails_the_chain(server, tmp_path):
    """What the page test catches: an annotation set renamed in one line but not in the next."""
    page = (
        "## Quickstart\n\n```bash\nseekbench samples   # the files\n"
        "seekbench convert release.jsonl \\\n    -o t.jsonl --labels-out labels.jsonl\n"
        "seekbench validate --annotations label.jsonl\n```\n\n## Next\n\n```bash\nfalse\n```\n"
    )
    chain = steps(section(page, "Quickstart"))
    assert [s.code for s in chain] == [
        "seekbench samples   # the files",
        "seekbench convert release.jsonl -o t.jsonl --labels-out labels.jsonl",
        "seekbench validate --annotations label.jsonl",
    ]
    failed = run_chain(chain, tmp_path / "work", chain_env(tmp_path, server.base_url))
    assert failed is not None
    step, proc = failed
    assert step.code.endswith("label.jsonl") and proc.returncode == 2
    assert "label.jsonl" in proc.stderr and "Traceback" not in proc.stderr


def test_install_lines_are_the_only_lines_skipped():
    skipped = {s.code for page in PAGES for s in _chain(page) if skip_reason(s)}
    assert skipped and all(re.match(r"(python -m )?pip install ", c) for c in skipped), skipped
    assert skip_reason(Step("bash", "seekbench convert run.jsonl -o pip.jsonl")) is None
