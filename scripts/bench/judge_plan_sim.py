"""Does `seekbench judge plan` plan enough traces? A simulation on the 190 human-labeled traces.

For each of ``--pilots`` pilots (``--pilot-size`` traces drawn at random, seeded), the plan
is made as ``seekbench judge plan`` makes it (the pilot's human labels as the reference,
the judges' labels of every trace): per judge and field, the CI half-width of kappa now
and the additional traces needed for ``--target``; per pair of judges, the same for the
difference in kappa. Then the follow-up: draw the planned number of additional traces from
the traces outside the pilot, recompute the CI on pilot + follow-up (percentile bootstrap
over whole traces, B = 2000) and count how often its half-width is at most the target.
A plan larger than the traces left cannot be followed up here and is counted apart.

Also, per ranking order of the unlabeled traces, how the kappa measured on the pilot plus
the next ``--next`` ranked traces compares with the kappa on all 190 (bias and spread).

    PYTHONPATH=. python scripts/bench/judge_plan_sim.py                 # writes scripts/bench/results/judge_plan_sim.md
    PYTHONPATH=. python scripts/bench/judge_plan_sim.py --pilots 20 --fields grounding --out /tmp/sim.md

The data is ../shared/data/seekbench_human_190.jsonl (Apache-2.0, the SeekBench release),
read in place; judge labels come from the offline judges (``rules``, ``learned``), no key.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from seekbench.agreement._align import field_labels, rater_sets
from seekbench.agreement._next_traces import rank_traces, trace_disagreements
from seekbench.agreement._plan_counts import (
    cluster_bootstrap_ci,
    compared_items,
    kappa_difference_statistic,
    kappa_statistic,
    trace_counts,
)
from seekbench.agreement._plan_rows import plan_row
from seekbench.agreement._strata import split_rule_derived, step_kinds, strata
from seekbench.annotate import annotate
from seekbench.labels import AnnotationSet, load_annotations
from seekbench.traces import read_traces

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
OUT = REPO / "scripts" / "bench" / "results" / "judge_plan_sim.md"


@dataclass
class Stratum:
    """One planned quantity: a judge's kappa, or two judges' difference, on one (field, kind)."""

    name: str
    field: str
    kind: str
    ids: np.ndarray  # trace ids with items, all 190
    counts: np.ndarray  # their per-trace count rows
    pair: bool  # two judges' difference, else one judge's kappa

    @property
    def statistic(self):  # built where it is used: a closure does not cross to a worker process
        q = len(field_labels(self.field))
        return kappa_difference_statistic(q) if self.pair else kappa_statistic(q)


def judge_labels(traces: list[dict], judges: list[str], folder: Path) -> list[AnnotationSet]:
    out = []
    for j in judges:
        path = folder / f"{j}.jsonl"
        annotate(traces, j, path, cache=folder / "cache.sqlite", progress=False)
        out.append(load_annotations(path))
    return out


def build_strata(human: AnnotationSet, judge_sets: list[AnnotationSet], traces, fields) -> tuple[list[Stratum], dict]:
    sets = rater_sets(human, tuple(judge_sets))
    ref_name, *names = list(sets)
    judges = {n: split_rule_derived(sets[n])[0] for n in names}
    kinds = step_kinds(traces, *sets.values())
    found = strata([sets[ref_name], *judges.values()], fields, kinds)
    out = []
    items = {(j, f, k): compared_items(sets[ref_name], judges[j], f, k, kinds) for j in judges for f, k in found}
    for (j, f, k), it in items.items():
        if len(it):
            ids, counts = trace_counts(it, f)
            out.append(Stratum(j, f, k, np.array(ids), counts, pair=False))
    for a_i, a in enumerate(names):
        for b in names[a_i + 1 :]:
            for f, k in found:
                both = items[(a, f, k)].merge(
                    items[(b, f, k)][["trace_id", "step", "rater"]], on=["trace_id", "step"], suffixes=("", "_b")
                )
                if len(both):
                    ids, counts = trace_counts(both, f, ("rater", "rater_b"))
                    out.append(Stratum(f"{a} - {b}", f, k, np.array(ids), counts, pair=True))
    return out, {"ref": sets[ref_name], "judges": judges, "kinds": kinds, "strata": found}


def _one_pilot(p: int, strata_list, all_ids, args) -> list[dict]:
    """One pilot's plans and follow-ups (its own generator: pilots run in any order, in parallel)."""
    rng = np.random.default_rng([args.seed, p])
    projection = {"n_boot": 200, "n_worlds": 100, "assurance": args.assurance, "alpha": 0.05, "spread": args.spread}
    pilot = set(rng.choice(all_ids, args.pilot_size, replace=False))
    rest = np.array(sorted(set(all_ids) - pilot))
    rows = []
    for s in strata_list:
        counts = s.counts[np.isin(s.ids, list(pilot))]
        ci = cluster_bootstrap_ci(counts, s.statistic, n_boot=2000, seed=p, alpha=0.05)
        plan = plan_row(counts, s.statistic, np.array(ci), args.pilot_size, args.target, {**projection, "seed": p})
        row = {"stratum": s.name, "field": s.field, "kind": s.kind, "pilot": p, "half_now": plan["half_width"]}
        k = plan["traces_needed"]
        row["planned"] = k
        if not np.isfinite(k) or k == 0:
            row["outcome"] = "no plan" if not np.isfinite(k) else "met already"
        elif k > len(rest):
            row["outcome"] = "beyond the data"
        else:
            extra = set(rng.choice(rest, int(k), replace=False))
            final = s.counts[np.isin(s.ids, list(pilot | extra))]
            lo, hi = cluster_bootstrap_ci(final, s.statistic, n_boot=2000, seed=10_000 + p, alpha=0.05)
            row["half_after"] = (hi - lo) / 2
            row["outcome"] = "reached" if (hi - lo) / 2 <= args.target else "missed"
        rows.append(row)
    return rows


def simulate(strata_list, all_ids, args) -> pd.DataFrame:
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        jobs = [pool.submit(_one_pilot, p, strata_list, all_ids, args) for p in range(args.pilots)]
        for i, job in enumerate(jobs):
            rows += job.result()
            print(f"pilot {i + 1}/{args.pilots}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return pd.DataFrame(rows)


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def full_half_widths(strata_list) -> dict:
    """The CI half-width on all the traces, per stratum (what labeling everything gives)."""
    out = {}
    for s in strata_list:
        lo, hi = cluster_bootstrap_ci(s.counts, s.statistic, n_boot=2000, seed=0, alpha=0.05)
        out[(s.name, s.field, s.kind)] = (hi - lo) / 2
    return out


def summary(sim: pd.DataFrame, full: dict) -> pd.DataFrame:
    out = []
    for (name, f, k), g in sim.groupby(["stratum", "field", "kind"], sort=False):
        ev = g[g["outcome"].isin(["reached", "missed"])]
        hit = int((ev["outcome"] == "reached").sum())
        lo, hi = wilson(hit, len(ev))
        out.append(
            {
                "judge(s)": name,
                "field (steps)": f"{f} ({k})",
                "half-width now (median)": g["half_now"].median(),
                "half-width on all": full[(name, f, k)],
                "planned traces (median)": g["planned"].median(),
                "followed up": len(ev),
                "beyond the data": int((g["outcome"] == "beyond the data").sum()),
                "met already": int((g["outcome"] == "met already").sum()),
                "no plan": int((g["outcome"] == "no plan").sum()),
                "reached target": hit,
                "share reached [95% CI]": f"{hit / len(ev):.2f} [{lo:.2f}, {hi:.2f}]" if len(ev) else "n/a",
                "half-width after (median)": ev["half_after"].median() if len(ev) else float("nan"),
            }
        )
    return pd.DataFrame(out)


def order_check(ctx: dict, traces: list[dict], all_ids, args) -> pd.DataFrame:
    """Kappa on pilot + the next N ranked traces, per order, against kappa on all the traces."""
    rng = np.random.default_rng(args.seed + 1)
    first = next(iter(ctx["judges"]))
    field_kind = ("grounding", "reasoning")
    full_items = compared_items(ctx["ref"], ctx["judges"][first], *field_kind, ctx["kinds"])
    q = len(field_labels(field_kind[0]))
    ids, counts = trace_counts(full_items, field_kind[0])
    ids = np.array(ids)
    stat = kappa_statistic(q)
    truth = float(stat(counts.sum(axis=0)))
    ref_rec = ctx["ref"].records
    rows = []
    for p in range(args.order_pilots):
        pilot = set(rng.choice(all_ids, args.pilot_size, replace=False))
        ref = AnnotationSet(ref_rec[ref_rec["trace_id"].astype(str).isin(pilot)].reset_index(drop=True), name="h")
        per = trace_disagreements(ref, ctx["judges"], traces, ctx["strata"], ctx["kinds"])
        for order in ("stratified", "disagreement", "random"):
            ranked = rank_traces(per, order=order, seed=p)["trace_id"].tolist()[: args.next]
            sel = counts[np.isin(ids, list(pilot | set(ranked)))]
            lo, hi = cluster_bootstrap_ci(sel, stat, n_boot=1000, seed=p, alpha=0.05)
            rows.append({"order": order, "kappa": float(stat(sel.sum(axis=0))), "half": (hi - lo) / 2})
    df = pd.DataFrame(rows)
    return (
        pd.DataFrame(
            [
                {
                    "order": o,
                    f"kappa on pilot + next {args.next} (mean)": g["kappa"].mean(),
                    f"bias vs all {len(all_ids)}": g["kappa"].mean() - truth,
                    "spread (sd over pilots)": g["kappa"].std(ddof=1),
                    "CI half-width (median)": g["half"].median(),
                }
                for o, g in df.groupby("order", sort=False)
            ]
        ),
        truth,
        first,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--judges", default="rules,learned")
    ap.add_argument("--fields", default="reasoning_type,grounding,search_type,clarity,sufficiency")
    ap.add_argument("--pilots", type=int, default=100)
    ap.add_argument("--pilot-size", type=int, default=30)
    ap.add_argument("--target", type=float, default=0.10)
    ap.add_argument("--assurance", type=float, default=0.9)
    ap.add_argument("--spread", type=float, default=2.0, help="widening of the worlds' spread (plan_annotation's)")
    ap.add_argument("--next", type=int, default=40, help="traces labeled after the pilot in the order check")
    ap.add_argument("--order-pilots", type=int, default=20, help="pilots of the order check (0: skip it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="processes running pilots (results do not depend on it)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.time()
    traces = read_traces(args.data).traces
    human = AnnotationSet.from_traces(traces)
    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        judge_sets = judge_labels(traces, judges, Path(tmp))
    strata_list, ctx = build_strata(human, judge_sets, traces, [f.strip() for f in args.fields.split(",")])
    all_ids = np.array(sorted(str(t["trace_id"]) for t in traces))
    sim = simulate(strata_list, all_ids, args)
    full = full_half_widths(strata_list)
    table = summary(sim, full)
    defined = [h for h in full.values() if np.isfinite(h) and h > 0]
    ev = sim[sim["outcome"].isin(["reached", "missed"])]
    overall = (ev["outcome"] == "reached").mean() if len(ev) else float("nan")
    lines = [
        "# `seekbench judge plan`: simulated follow-ups on the 190 human-labeled traces",
        "",
        f"Command: `PYTHONPATH=. python scripts/bench/judge_plan_sim.py --pilots {args.pilots} "
        f"--pilot-size {args.pilot_size} --target {args.target} --assurance {args.assurance} --spread {args.spread} "
        f"--fields {args.fields} --order-pilots {args.order_pilots} --seed {args.seed}` "
        "",
        "",
        f"Pilots of {args.pilot_size} traces drawn at random (seeded) from the {len(all_ids)}; judges "
        f"{', '.join(judges)} (the offline judges as shipped). Per pilot and row: the plan (additional traces "
        f"for a 95% CI half-width <= {args.target}, assurance {args.assurance}), then the follow-up: the planned "
        "number of traces drawn from the rest, the CI recomputed on pilot + follow-up (percentile bootstrap over "
        "whole traces, B = 2000), reached or missed. A plan larger than the traces left is counted as "
        "'beyond the data', not followed up.",
        "",
        f"Target {args.target}, not the command's default 0.05: labeling all {len(all_ids)} traces gives "
        f"half-widths of {min(defined):.3f} to {max(defined):.3f} (column 'half-width on all'), so 0.05 "
        "cannot be reached in this data, and a target near those values leaves many plans beyond the traces left.",
        "",
        f"**All rows followed up: {int((ev['outcome'] == 'reached').sum())} of {len(ev)} reached the target "
        f"({overall:.2f}).**",
        "",
        table.to_markdown(index=False, floatfmt=".3f"),
        "",
    ]
    if args.order_pilots:
        orders, truth, first = order_check(ctx, traces, all_ids, args)
        lines += [
            f"## Ranking orders: kappa of `{first}` on grounding (reasoning) from the pilot plus the next "
            f"{args.next} traces",
            "",
            f"{args.order_pilots} pilots; kappa on all {len(all_ids)} traces: {truth:.3f}. `stratified` (the "
            "default) keeps the pick representative; `disagreement` takes the traces the judges most likely got "
            "wrong first.",
            "",
            orders.to_markdown(index=False, floatfmt=".3f"),
            "",
        ]
    lines.append(f"({time.time() - t0:.0f} s in all.)\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
