"""MkDocs hook: pages generated at build time, so they can never fall behind the code.

- ``cli.md``: the CLI reference, walked from ``seekbench.cli._main.build_parser()``; a
  command another module registers appears with no edit here.
- ``changelog.md``: ``CHANGELOG.md`` from the repository root.

The rendering lives in :func:`cli_reference` so tests can check it without MkDocs.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _escape(text: str) -> str:
    """Prose for Markdown: no raw HTML, no stray emphasis, no table breaks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("*", r"\*").replace("|", r"\|")


def _prose(text: str | None) -> str:
    """An argparse description as Markdown: plain paragraphs joined, laid-out ones kept verbatim."""
    if not text:
        return ""
    out = []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        lines = para.splitlines()
        if any(line.startswith((" ", "\t", "-", "*")) for line in lines):
            out.append("```text\n" + "\n".join(lines) + "\n```")
        else:
            out.append(_escape(" ".join(line.strip() for line in lines)))
    return "\n\n".join(out)


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    meta = ""
    if action.nargs != 0:
        meta = " " + (action.metavar if isinstance(action.metavar, str) else action.dest.upper())
    return ", ".join(f"`{o}{meta}`" for o in action.option_strings)


def _help(action: argparse.Action) -> str:
    """The help text with argparse's ``%(default)s``-style fields filled in, as ``--help`` prints it."""
    try:
        return argparse.HelpFormatter("seekbench")._expand_help(action)
    except (KeyError, TypeError, ValueError):
        return action.help or ""


def _describe(action: argparse.Action) -> str:
    text = _escape(" ".join(_help(action).split()))
    extra = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.required and action.option_strings:
        extra.append("required")
    if action.option_strings and action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
        extra.append(f"default `{action.default}`")
    return "; ".join([t for t in [text, *extra] if t])


def _commands(parser: argparse.ArgumentParser, prefix: str):
    """Yield ``(full name, parser, one-line help)`` for every command and sub-command, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub, helps.get(name)
                yield from _commands(sub, f"{prefix} {name}")


def _anchor(name: str) -> str:
    return name.replace(" ", "-")


def _section(name: str, parser: argparse.ArgumentParser, summary: str | None, level: int) -> str:
    parts = [f"{'#' * level} `{name}` {{#{_anchor(name)}}}"]
    if summary:
        parts.append(f"*{_escape(summary)}*")
    parts.append(_prose(parser.description))
    parts.append("```text\n" + parser.format_usage().strip() + "\n```")
    for group in parser._action_groups:
        rows = [
            a
            for a in group._group_actions
            if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        ]
        if not rows:
            continue
        parts.append(
            f"**{_escape(group.title or 'options').capitalize()}**\n\n| argument | meaning |\n|---|---|\n"
            + "\n".join(f"| {_flags(a)} | {_describe(a)} |" for a in rows)
        )
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        helps = {a.dest: a.help for a in action._choices_actions}
        parts.append(
            "**Commands**\n\n"
            + "\n".join(
                f"- [`{name} {c}`](#{_anchor(f'{name} {c}')}): {_escape(helps.get(c) or '')}" for c in action.choices
            )
        )
    parts.append(_prose(parser.epilog))
    return "\n\n".join(p for p in parts if p)


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole CLI reference page as Markdown."""
    if parser is None:
        from seekbench.cli._main import build_parser

        parser = build_parser()
    os.environ.setdefault("COLUMNS", "100")  # argparse wraps usage lines to the terminal width
    head = (
        "# CLI reference\n\nGenerated from the argument parsers when the documentation is built, so it "
        "matches `seekbench COMMAND --help` of this version. Exit codes: 0 done, 2 user error (one line "
        "naming file, line, trace id and field), 3 done with failures.\n\n" + _section("seekbench", parser, None, 2)
    )
    body = [
        _section(name, sub, summary, min(1 + name.count(" "), 4))
        for name, sub, summary in _commands(parser, "seekbench")
    ]
    return "\n\n".join([head, *body]) + "\n"


def on_files(files, config):
    """Add the generated pages to the build."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "cli.md", content=cli_reference()))
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files


def public_names_missing(site_dir: str | os.PathLike, docs_dir: str | os.PathLike) -> list[str]:
    """Public names (each documented package's ``__all__``) that have no anchor on its API page."""
    import importlib

    missing = []
    for page in sorted(Path(docs_dir, "api").glob("*.md")):
        html_file = Path(site_dir, "api", page.stem, "index.html")
        html = html_file.read_text(encoding="utf-8") if html_file.is_file() else ""
        for module_name in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), flags=re.M):
            module = importlib.import_module(module_name)
            for name in getattr(module, "__all__", []):
                if name.startswith("__"):  # __version__: described on the page in words
                    continue
                if f'id="{module_name}.{name}"' not in html:
                    missing.append(f"{module_name}.{name}")
    return missing


def on_post_build(config):
    """Every public function and class has an entry in the API reference (a warning fails --strict)."""
    import logging

    log = logging.getLogger("mkdocs.plugins.seekbench")
    for name in public_names_missing(config["site_dir"], config["docs_dir"]):
        log.warning("API reference: public name %s has no entry", name)
