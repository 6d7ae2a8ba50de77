"""Building an offline judge from its judge file (``judges/rules.toml``, ``judges/learned.toml``)."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

from ..._errors import SeekbenchWarning, UserInputError
from ._judge import OfflineJudge
from ._learned import LearnedModel
from ._learned_judge import LearnedJudge
from ._rules import RulesJudge

#: Keys an offline judge table may hold (``path`` is added by the judge-file loader).
ALLOWED_KEYS = frozenset(
    {"name", "kind", "version", "description", "path", "model", "model_path", "if_missing", "seed", "published"}
)
IF_MISSING = ("train-on-sample", "error")


def load_offline_judge(config: dict) -> OfflineJudge:
    """The offline judge a judge file describes.

    Parameters
    ----------
    config : dict
        The judge file's table: ``name``, ``kind`` (``"rules"`` or ``"learned"``), ``version``;
        for ``learned``: ``model_path`` (relative to the judge file, whose path is ``config["path"]``,
        else to the working directory), ``if_missing`` (``"train-on-sample"``, the default: when the
        model file is absent, train in memory on the embedded sample traces and warn; ``"error"``),
        ``seed`` (for that fallback training).

    Returns
    -------
    OfflineJudge
        With ``name`` and ``label_traces(traces, *, rater)``.

    Raises
    ------
    UserInputError
        Unknown kind or key, unreadable model file, or a missing model with ``if_missing = "error"``.

    Examples
    --------
    >>> load_offline_judge({"name": "rules", "kind": "rules", "version": "1"})
    RulesJudge(name='rules', model='rules@1')
    """
    file = str(config["path"]) if config.get("path") else None
    unknown = sorted(set(config) - ALLOWED_KEYS)
    if unknown:
        raise UserInputError(
            f"unknown key {unknown[0]!r} for an offline judge; allowed: {', '.join(sorted(ALLOWED_KEYS - {'path'}))}",
            file=file,
            path=unknown[0],
        )
    kind = config.get("kind")
    name = str(config.get("name") or kind)
    version = str(config.get("version", "1"))
    if kind == "rules":
        return RulesJudge(name, version=version)
    if kind == "learned":
        return LearnedJudge(_learned_model(config, file), name, version=version)
    raise UserInputError(f"kind is {kind!r}; offline judges are 'rules' or 'learned'", file=file, path="kind")


def _learned_model(config: dict, file: str | None) -> LearnedModel:
    if_missing = config.get("if_missing", "train-on-sample")
    if if_missing not in IF_MISSING:
        raise UserInputError(
            f"if_missing is {if_missing!r}; use one of {', '.join(IF_MISSING)}", file=file, path="if_missing"
        )
    raw = config.get("model_path")
    if raw is not None:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = (Path(file).parent if file else Path.cwd()) / path
        if path.exists():
            return LearnedModel.load(path)
        where = f"model file {str(path)!r} not found"
    else:
        where = "no model_path given"
    if if_missing == "error":
        raise UserInputError(
            f"{where}; train one with `seekbench judge train --human FILE -o MODEL`", file=file, path="model_path"
        )
    seed = config.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UserInputError(f"seed must be an integer, got {seed!r}", file=file, path="seed")
    warnings.warn(
        f"learned judge: {where}; training on the embedded sample traces in memory "
        "(run `seekbench judge train` to save a model)",
        SeekbenchWarning,
        stacklevel=3,
    )
    return sample_model(seed)


@functools.cache
def sample_model(seed: int = 0) -> LearnedModel:
    """A learned model trained on the embedded sample traces (cached per process; no CV for speed)."""
    from ...data import sample_traces_path
    from ...traces import read_traces
    from ._human import human_labels
    from ._train import fit_with_card

    path = sample_traces_path()
    if not Path(path).exists():
        raise UserInputError(
            "the embedded sample traces are missing, so no learned model can be trained on "
            "the fly; train one with `seekbench judge train`",
            file=str(path),
        )
    traces = read_traces(path).traces
    return fit_with_card(traces, human_labels(traces), seed=seed, source=str(path))
