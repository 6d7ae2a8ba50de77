"""Helpers for the answer-judge tests: reading scripted requests, making traces."""

from __future__ import annotations

import json


def candidate_of(request: dict) -> str:
    """The candidate answer in an answer-judge request (the JSON string between the candidate fences)."""
    user = request["messages"][-1]["content"]
    block = user.split("<<<CANDIDATE_JSON\n", 1)[1].split("\nCANDIDATE_JSON>>>", 1)[0]
    return json.loads(block)


def is_false_premise_request(request: dict) -> bool:
    return "rests on a false premise" in request["messages"][0]["content"]


def make_trace(tid: str, answer: str | None, *, gold=("gold",), agent="agent-x", qid=None, metadata=None,
               correct=None) -> dict:
    t = {"schema_version": "1.0", "trace_id": tid, "agent": agent, "question_id": qid or f"q-{tid}",
         "question": f"question of {tid}?", "gold_answers": list(gold), "final_answer": answer,
         "steps": [{"index": 0, "kind": "answer", "text": answer}] if answer else []}
    if metadata is not None:
        t["metadata"] = metadata
    if correct is not None:
        t["correct"] = correct
    return t


# InfoDeepSeek files in the released code's formats (see seekbench/answers/_infodeepseek_io.py)
PAGES = [{"url": "https://a", "content": "Palau ... 1994"}, {"url": "https://b", "content": "ranking 221"}]


def record(i, *, fp=False, pages=PAGES, answers=None, offline="Palau, 1994", domain=("history",)):
    return {"id": i, "certainty": True, "multi_hop": i % 2 == 0, "long_tail": False, "false_premise": fp,
            "domain": list(domain), "advantage_language": ["English"], "query_en": f"Question {i}?",
            "answer_en": f"Answer {i}.", "query_zh": f"问题{i}", "answer_zh": f"答案{i}",
            "sources": ["https://a", "https://b"],
            "result": {"response": f"Response {i}", "more_info": {
                "ranked_webpages": pages,
                "answer_at_k": answers if answers is not None else {str(k + 1): f"a{k + 1}" for k in range(len(pages))},
                "offline_response": offline}}}


def write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# Four questions of a score file (the evaluator judged every answer; -1 = still pending):
#   id  response  k-scores          offline answer / score  pages |S|
#   0   True      k1 F, k2 T        "Palau, 1994" / True    2     2
#   1   False     k1 F, k2 F        "Palau, 1994" / True    2     2
#   2   -1        k1 -1, k2 T       None / False            2     2    (no offline answer: not in the base)
#   3   False     k1 F (no pages)   "x" / False             0     2
SCORES = [
    ({"k1": False, "k2": True}, True, True),
    ({"k1": False, "k2": False}, False, True),
    ({"k1": -1, "k2": True}, -1, False),
    ({"k1": False}, False, False),
]


def score_file(tmp_path):
    recs = []
    for i, (ks, resp, off) in enumerate(SCORES):
        r = record(i, fp=(i == 1), offline=None if i == 2 else ("x" if i == 3 else "Palau, 1994"),
                   pages=[] if i == 3 else PAGES, answers={"1": None, "2": None, "3": None, "4": None, "5": None}
                   if i == 3 else None)
        r["result"] = {"response": r["result"]["response"], "more_info": r["result"]["more_info"]}
        r.update(answer_at_k_score=ks, response_score=resp, off_response_score=off)
        recs.append(r)
    name = "InfoDeepSeek_v1_result_en_deepseek-chat_5_5_wotool_True_ddg_deepseek-chat_score.jsonl"
    return write(tmp_path / name, recs)
