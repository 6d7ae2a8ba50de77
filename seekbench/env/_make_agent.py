"""``make_agent``: an agent from its command-line name (scripted or LLM)."""

from __future__ import annotations

from .._errors import UserInputError
from ._agents import SCRIPTED_AGENTS, Agent
from ._llm_agent import LLMAgent


def make_agent(spec: str, **llm_options) -> Agent:
    """An agent from a name: ``keyphrase``, ``sentence``, or ``llm`` / ``llm:MODEL`` (options: :class:`LLMAgent`).

    Raises
    ------
    UserInputError
        An unknown name.
    """
    head, _, arg = spec.partition(":")
    if head in SCRIPTED_AGENTS and not arg:
        return SCRIPTED_AGENTS[head]()
    if head == "llm":
        if arg:
            llm_options["model"] = arg
        return LLMAgent(**llm_options)
    raise UserInputError(
        f"unknown agent {spec!r}; use {', '.join(SCRIPTED_AGENTS)} (scripted, no LLM) "
        "or llm[:MODEL] (an OpenAI-compatible endpoint)"
    )
