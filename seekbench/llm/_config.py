"""Judge files: one TOML file per judge in ``judges/``, read with :mod:`tomllib` and checked.

A judge file names the model, the endpoint, the environment variable holding
the API key, the decoding parameters, the prices and the prompt. API keys are
never stored in a config object: only the *name* of the variable is, and the
provider reads it when it connects.

``kind = "openai"`` judges label trace steps; ``kind = "answer"`` judges decide
whether a final answer is correct (:mod:`seekbench.answers`). Both are LLMs on
an OpenAI-compatible endpoint and share every key; an answer judge may also
name a ``false_premise_prompt`` (and its ``false_premise_prompt_version``),
used for questions flagged as resting on a false premise.
"""

from __future__ import annotations

import os
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from .._errors import SeekbenchWarning, UserInputError
from .._resources import judges_dir
from ._secrets import mask_credentials

#: The shipped judge files (package data ``seekbench/judges/``), searched after the user's directories.
PACKAGE_JUDGES_DIR = judges_dir()

#: How the variable a judge found by name reads its key from must end (``api_key_env``).
KEY_VARIABLE_SUFFIXES = ("_API_KEY", "_TOKEN")

#: Environment variable listing extra directories of judge files (``os.pathsep``-separated).
JUDGES_PATH_ENV = "SEEKBENCH_JUDGES_PATH"

OFFLINE_KINDS = ("rules", "learned")
LLM_KINDS = ("openai", "answer")
KINDS = (*LLM_KINDS, *OFFLINE_KINDS)

_TEXT_KEYS = (
    "name",
    "kind",
    "description",
    "model",
    "base_url",
    "base_url_env",
    "api_key_env",
    "max_tokens_param",
    "reasoning_effort",
    "prompt",
    "prompt_version",
    "response_format",
)
_INT_KEYS = ("seed", "max_tokens", "context_tokens", "max_repairs", "max_attempts")
#: Numbers a file may write as integers, kept as floats in a :class:`JudgeConfig`.
_FLOAT_KEYS = (
    "temperature",
    "price_input_per_mtok",
    "price_output_per_mtok",
    "batch_discount",
    "timeout_s",
    "retry_budget_s",
    "backoff_base_s",
    "backoff_max_s",
    "poll_interval_s",
)
#: Keys that may not be negative (all floats but the temperature, and the repairs).
_NON_NEGATIVE = (*_FLOAT_KEYS[1:], "max_repairs")
_OPENAI_KEYS: dict[str, type | tuple[type, ...]] = {
    **dict.fromkeys(_TEXT_KEYS, str),
    **dict.fromkeys(_INT_KEYS, int),
    **dict.fromkeys(_FLOAT_KEYS, (int, float)),
    "published": bool,
}
#: Keys only an answer judge (``kind = "answer"``) may have.
_ANSWER_KEYS: dict[str, type | tuple[type, ...]] = {"false_premise_prompt": str, "false_premise_prompt_version": str}
_REQUIRED = ("name", "kind", "model", "prompt", "prompt_version", "price_input_per_mtok", "price_output_per_mtok")


@dataclass(frozen=True)
class JudgeConfig:
    """One LLM judge on an OpenAI-compatible endpoint, as its TOML file describes it.

    Parameters mirror the file's keys. ``temperature`` and ``seed`` are None
    when the file omits them (some models, e.g. reasoning models, refuse a
    temperature); then they are not sent.

    Attributes
    ----------
    path : Path
        The judge file.
    prompt_path : Path
        The prompt template, resolved against the judge file's directory.
    """

    name: str
    model: str
    prompt_path: Path
    prompt_version: str
    price_input_per_mtok: float
    price_output_per_mtok: float
    path: Path | None = None
    kind: Literal["openai", "answer"] = "openai"
    description: str = ""
    base_url: str | None = None
    base_url_env: str = "OPENAI_BASE_URL"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = 0.0
    seed: int | None = None
    max_tokens: int = 4096
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    reasoning_effort: str | None = None
    batch_discount: float = 0.5
    context_tokens: int = 128_000
    response_format: Literal["json_schema", "json_object", "text", "auto"] = "json_schema"
    max_repairs: int = 2
    max_attempts: int = 8
    timeout_s: float = 120.0
    #: Seconds one item (one request and its retries) may take in all; past it the item fails.
    retry_budget_s: float = 600.0
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    poll_interval_s: float = 30.0
    published: bool = False
    false_premise_prompt_path: Path | None = None
    false_premise_prompt_version: str | None = None

    def resolved_base_url(self) -> str | None:
        """The endpoint: ``base_url`` from the file, else the ``base_url_env`` variable, else None (OpenAI)."""
        return self.base_url or os.environ.get(self.base_url_env) or None

    def decoding(self, *, repair: int = 0, max_tokens: int | None = None) -> dict[str, Any]:
        """The decoding parameters sent with a request (and hashed into the cache key).

        A repair (``repair`` > 0) always changes the request: the seed moves on by
        ``repair`` (or, for a judge without a seed, a temperature of
        ``0.1 * repair`` is sent), so a deterministic server does not answer the
        same thing again. ``max_tokens`` overrides the answer budget (never above
        the file's ``max_tokens``).
        """
        cap = self.max_tokens if max_tokens is None else max(1, min(max_tokens, self.max_tokens))
        out: dict[str, Any] = {self.max_tokens_param: cap}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.seed is not None:
            out["seed"] = self.seed + repair
        elif repair:
            out["temperature"] = round((self.temperature or 0.0) + 0.1 * repair, 3)
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        return out

    def with_overrides(self, **changes: Any) -> JudgeConfig:
        """A copy with some fields replaced (e.g. ``base_url`` for a local server in tests)."""
        import dataclasses

        return dataclasses.replace(self, **changes)


def judge_dirs() -> list[Path]:
    """Directories searched for ``NAME.toml`` (first wins): ``$SEEKBENCH_JUDGES_PATH``, ``./judges``, the shipped."""
    dirs = [Path(p) for p in os.environ.get(JUDGES_PATH_ENV, "").split(os.pathsep) if p]
    dirs += [Path.cwd() / "judges", PACKAGE_JUDGES_DIR]
    out: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def find_judge_file(name_or_path: str | os.PathLike) -> Path:
    """Resolve ``--judge NAME`` (or a path to a ``.toml`` file) to the judge file."""
    direct = Path(name_or_path)
    if direct.suffix == ".toml" or direct.is_file():
        if not direct.is_file():
            raise UserInputError("judge file not found", file=str(direct))
        return direct
    for d in judge_dirs():
        candidate = d / f"{name_or_path}.toml"
        if candidate.is_file():
            return candidate
    names = ", ".join(sorted({p.stem for d in judge_dirs() for p in d.glob("*.toml")})) or "none found"
    raise UserInputError(
        f"unknown judge {str(name_or_path)!r}; available judges: {names} (or pass the path of a judge .toml file)"
    )


def read_judge_table(path: str | os.PathLike) -> dict[str, Any]:
    """Read a judge file as a plain dict (any kind), with a user error for bad TOML or a bad ``kind``."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise UserInputError(f"invalid TOML: {e}", file=str(path)) from e
    except OSError as e:
        raise UserInputError(f"cannot read judge file: {e.strerror}", file=str(path)) from e
    kind = table.get("kind")
    if kind not in KINDS:
        raise UserInputError(f"kind is {kind!r}; use one of {', '.join(KINDS)}", file=str(path), path="kind")
    table.setdefault("name", path.stem)
    return table


def load_judge_config(name_or_path: str | os.PathLike) -> JudgeConfig | dict[str, Any]:
    """Load a judge: a :class:`JudgeConfig` for ``kind = "openai"`` or ``"answer"``, the raw table for offline kinds.

    Parameters
    ----------
    name_or_path : str or path
        A judge name (``gpt-4.1-mini``, looked up in :func:`judge_dirs`) or a ``.toml`` path.

    Returns
    -------
    JudgeConfig or dict
        Offline judges (``rules``, ``learned``) are returned as their table
        (with ``path`` added) for :func:`seekbench.annotate.offline.load_offline_judge`.
    """
    path = find_judge_file(name_or_path)
    named_by_path = Path(name_or_path).suffix == ".toml" or Path(name_or_path).is_file()
    cfg = _load(path, named_by_path=named_by_path)
    if isinstance(cfg, JudgeConfig):
        notice = shadowing_notice(cfg)
        if notice:
            warnings.warn(notice, SeekbenchWarning, stacklevel=2)
    return cfg


def _load(path: Path, *, named_by_path: bool) -> JudgeConfig | dict[str, Any]:
    table = read_judge_table(path)
    if table["kind"] in OFFLINE_KINDS:
        return {**table, "path": str(path)}
    cfg = _openai_config(table, path)
    if not named_by_path and not cfg.api_key_env.endswith(KEY_VARIABLE_SUFFIXES):
        # A judge found by name may come from ./judges of whatever folder the command runs in: it
        # must not be able to send an arbitrary variable (AWS_SECRET_ACCESS_KEY, ...) as a bearer token.
        raise UserInputError(
            f"api_key_env is {cfg.api_key_env!r}: a judge found by name may only read a variable ending in "
            f"{' or '.join(KEY_VARIABLE_SUFFIXES)}; rename the variable, or name the judge by its path "
            f"(--judge {path}) to use it anyway",
            file=str(path),
            path="api_key_env",
        )
    return cfg


def shadowing_notice(cfg: JudgeConfig) -> str | None:
    """The line a run prints when its judge file replaces a shipped judge of the same name (None: it does not).

    It names the file, the host requests go to and the variable the key is read from, so a
    ``./judges/gpt-4.1-mini.toml`` left in a working folder cannot redirect requests unseen.
    """
    path = cfg.path
    if path is None or not (PACKAGE_JUDGES_DIR / path.name).is_file():
        return None
    if path.resolve().parent == PACKAGE_JUDGES_DIR.resolve():
        return None
    url = cfg.resolved_base_url()
    host = (urlparse(url).netloc if url else "") or "api.openai.com"
    return (
        f"judge {path.stem!r} is read from {path}, not the shipped file: requests go to "
        f"{mask_credentials(host)} with the key from ${cfg.api_key_env}"
    )


def _openai_config(table: dict[str, Any], path: Path) -> JudgeConfig:
    file = str(path)
    known = {**_OPENAI_KEYS, **(_ANSWER_KEYS if table.get("kind") == "answer" else {})}
    for key, value in table.items():
        if key not in known:
            raise UserInputError(
                f"unknown key {key!r} in an {table.get('kind')} judge file; known keys: {', '.join(sorted(known))}",
                file=file,
                path=key,
            )
        want = known[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise UserInputError(f"{key} has the wrong type ({type(value).__name__})", file=file, path=key)
    for key in _REQUIRED:
        if key not in table:
            raise UserInputError(f"missing required key {key!r}", file=file, path=key)
    choices = {
        "response_format": ("json_schema", "json_object", "text", "auto"),
        "max_tokens_param": ("max_completion_tokens", "max_tokens"),
    }
    for key, allowed in choices.items():
        if key in table and table[key] not in allowed:
            raise UserInputError(f"{key} is {table[key]!r}; use one of {', '.join(allowed)}", file=file, path=key)
    for key in _NON_NEGATIVE:
        if key in table and table[key] < 0:
            raise UserInputError(f"{key} must be >= 0", file=file, path=key)
    for key in ("max_tokens", "context_tokens", "max_attempts"):
        if key in table and table[key] < 1:
            raise UserInputError(f"{key} must be >= 1", file=file, path=key)
    prompt_path = (path.parent / table["prompt"]).resolve()
    if not prompt_path.is_file():
        raise UserInputError(
            f"prompt template {table['prompt']!r} not found (looked at {prompt_path})", file=file, path="prompt"
        )
    kwargs = {k: v for k, v in table.items() if k not in ("prompt", "false_premise_prompt")}
    if "false_premise_prompt" in table:
        fp_path = (path.parent / table["false_premise_prompt"]).resolve()
        if not fp_path.is_file():
            raise UserInputError(
                f"prompt template {table['false_premise_prompt']!r} not found (looked at {fp_path})",
                file=file,
                path="false_premise_prompt",
            )
        kwargs["false_premise_prompt_path"] = fp_path
    for key in _FLOAT_KEYS:
        if key in kwargs:
            kwargs[key] = float(kwargs[key])
    kwargs.setdefault("temperature", None)
    return JudgeConfig(prompt_path=prompt_path, path=path, **kwargs)


@dataclass(frozen=True)
class JudgeInfo:
    """One line of ``seekbench judge list``."""

    name: str
    kind: str
    model: str | None
    path: Path
    endpoint: str | None = None
    key_env: str | None = None
    key_set: bool | None = None
    prices: tuple[float, float] | None = None
    published: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def list_judges() -> list[JudgeInfo]:
    """Every judge file found in :func:`judge_dirs` (first directory wins on a name clash).

    A file that does not load is listed with kind ``invalid`` and the error in ``extra``.
    """
    seen: dict[str, JudgeInfo] = {}
    for d in judge_dirs():
        for p in sorted(d.glob("*.toml")):
            if p.stem in seen:
                continue
            try:
                cfg = _load(p, named_by_path=False)
            except UserInputError as e:
                seen[p.stem] = JudgeInfo(p.stem, "invalid", None, p, extra={"error": e.one_line()})
                continue
            if isinstance(cfg, JudgeConfig):
                # Listed with the endpoint kind "openai"; an answer judge says so in ``extra``.
                seen[p.stem] = JudgeInfo(
                    cfg.name,
                    "openai",
                    cfg.model,
                    p,
                    endpoint=cfg.base_url or f"${cfg.base_url_env}",
                    key_env=cfg.api_key_env,
                    key_set=bool(os.environ.get(cfg.api_key_env)),
                    prices=(cfg.price_input_per_mtok, cfg.price_output_per_mtok),
                    published=cfg.published,
                    extra={"judges": "answers"} if cfg.kind == "answer" else {},
                )
            else:
                seen[p.stem] = JudgeInfo(
                    str(cfg.get("name", p.stem)),
                    cfg["kind"],
                    cfg.get("model"),
                    p,
                    published=bool(cfg.get("published", False)),
                )
    return sorted(seen.values(), key=lambda j: (j.kind != "openai", j.name))
