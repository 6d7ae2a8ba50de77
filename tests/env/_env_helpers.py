"""Helpers shared by the seeking-environment tests (a unique module name: no clash with other conftests)."""

from __future__ import annotations


def make_document(doc_id: str = "d0", *, topic: str = "animals", sections: dict | None = None) -> dict:
    """A small hand-written corpus document (sections: title -> list of passage texts)."""
    sections = sections or {
        "Cats": ["Cats are small carnivorous mammals kept as pets for their companionship and hunting of mice.",
                 "A cat sleeps for most of the day and hunts at dawn and dusk, when mice are active."],
        "Dogs": ["Dogs were domesticated from wolves and are loyal companions trained for herding and guarding.",
                 "A dog barks to warn its owner and wags its tail when happy."],
        "Birds": ["Birds have feathers and hollow bones, and most species can fly long distances when migrating.",
                  "Parrots are birds that can imitate human speech and live for decades."],
    }
    n, secs = 0, []
    for title, texts in sections.items():
        secs.append({"title": title, "passages": [{"id": f"p{n + i}", "text": t} for i, t in enumerate(texts)]})
        n += len(texts)
    return {"doc_id": doc_id, "title": "Pets", "abstract": "An overview of cats, dogs and birds kept as pets.",
            "topic": topic, "sections": secs, "source": "test"}
