"""Chat-template text split into role turns, and a file of several transcripts into transcripts.

Rollout dumps and inference logs hold the model's context as rendered text: Qwen / ChatML
(``<|im_start|>role ... <|im_end|>``), Llama 3 (``<|start_header_id|>role<|end_header_id|>``),
Phi (``<|user|>``) and DeepSeek (``<｜User｜>``) markers. A turn runs from its marker to the
next one. Text before the first marker has the role the caller says (``assistant`` for a
``response`` field, ``user`` for a ``prompt``). A ``system`` turn after an assistant turn, or
``<|begin_of_text|>``, starts a new transcript (Search-R1's example file holds several).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MARKER = re.compile(
    r"<\|im_start\|>[ \t]*(?P<chatml>[A-Za-z_]+)?[ \t]*\n?"
    r"|<\|start_header_id\|>[ \t]*(?P<llama>[A-Za-z_]+)[ \t]*<\|end_header_id\|>[ \t]*\n{0,2}"
    r"|<\|(?P<phi>system|user|assistant)\|>[ \t]*\n?"
    r"|<｜(?P<deepseek>User|Assistant)｜>"
    r"|(?P<bot><\|begin_of_text\|>)"
)
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "gpt": "assistant",
    "model": "assistant",
    "tool": "tool",
    "ipython": "tool",
    "function": "tool",
    "observation": "tool",
}
#: End-of-turn and padding tokens: dropped from turn text.
END_TOKENS = re.compile(
    r"<\|im_end\|>|<\|eot_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>"
    r"|<｜end▁of▁sentence｜>|<\|begin_of_text\|>"
)


class Turn(NamedTuple):
    """One turn: ``role`` (system, user, assistant, tool), its text span ``[start, end)`` after the marker."""

    role: str
    start: int
    end: int
    new_transcript: bool = False


def has_markers(text: str) -> bool:
    """True when ``text`` holds chat-template role markers."""
    return _MARKER.search(text) is not None


def split_turns(text: str, first_role: str) -> list[Turn]:
    """The non-blank turns of ``text``; text before the first marker has role ``first_role``."""
    turns: list[Turn] = []
    pos, role = 0, first_role
    fresh, assistant_seen = False, False  # the next turn starts a transcript / this transcript has answered

    def flush(end: int) -> None:
        nonlocal fresh, assistant_seen
        if text[pos:end].strip():
            if fresh:
                assistant_seen = False
            turns.append(Turn(role, pos, end, fresh))
            fresh = False
            assistant_seen = assistant_seen or role == "assistant"

    for m in _MARKER.finditer(text):
        flush(m.start())
        name = m.group("chatml") or m.group("llama") or m.group("phi") or m.group("deepseek")
        if m.group("bot") is not None or name is not None:
            if name is not None:
                role = _ROLES.get(name.lower(), "user")
            if assistant_seen and (m.group("bot") is not None or role == "system"):
                fresh = True
        pos = m.end()
    flush(len(text))
    return turns


def transcripts(turns: list[Turn]) -> list[list[Turn]]:
    """Group turns into transcripts at each turn that starts a new one."""
    out: list[list[Turn]] = []
    for t in turns:
        if t.new_transcript or not out:
            out.append([])
        out[-1].append(t)
    return out
