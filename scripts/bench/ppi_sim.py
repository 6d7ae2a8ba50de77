"""Simulated coverage of judge-corrected (PPI++) metrics on the 190 human-labeled SeekBench traces.

Human labels are the truth: each agent's full-data human value of each metric is the target.
The ``rules`` judge (offline) labels every trace. For n = 20, 40 and 80 human-labeled traces in
total (drawn uniformly at random from all 190, seeded, so about n / 5 per agent: the per-agent n
varies from draw to draw), R draws each; per metric, over agents and draws:

- coverage of the corrected 95% interval (``interval="t"``, seekbench's default) of the full-data
  human value, and of ppi-python's CLT interval (``interval="clt"``);
- median width of the corrected interval and of the human-only interval on the same subset
  (Wilson for 0/1 metrics, Student t for RQI and CE: the classical interval of the same sample);
- bias of the judge-only estimate (judge on all traces minus the human value): mean over agents
  and the largest in absolute value.

Run (about a minute per 100 draws)::

    PYTHONPATH=. python scripts/bench/ppi_sim.py [--data ../shared/data/seekbench_human_190.jsonl] [--draws 500]

and it writes scripts/bench/results/ppi_sim.md.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from seekbench.metrics import (
    PPI_METRICS,
    corrected_metrics,
    ppi_trace_values,
    trace_audit,
    trace_statistics,
    wilson_interval,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "seekbench_human_190.jsonl"
OUT = Path(__file__).resolve().parent / "results" / "ppi_sim.md"
SIZES = (20, 40, 80)


def value_tables(data: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-trace metric values of all traces from human labels (inline) and from the rules judge."""
    from seekbench.cli._main import main
    from seekbench.labels import load_annotations
    from seekbench.traces import attach_labels, build_tables, read_traces

    traces = read_traces([str(data)]).traces
    human_steps, table = build_tables(traces)
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/rules.jsonl"
        if main(["annotate", str(data), "--judge", "rules", "-o", out]) != 0:
            raise SystemExit("annotate --judge rules failed")
        judge_steps = attach_labels(human_steps, load_annotations(out).records)

    def values(steps):
        return ppi_trace_values(trace_statistics(steps, table), trace_audit(steps, table))

    return values(judge_steps), values(human_steps)


def human_only_width(y: np.ndarray) -> float:
    """Width of the classical interval of the human values: Wilson for 0/1, Student t otherwise."""
    if len(y) < 2:
        return np.nan
    if np.isin(y, (0.0, 1.0)).all():
        lo, hi = wilson_interval(float(y.sum()), len(y))
        return hi - lo
    from scipy.stats import t

    return 2 * t.ppf(0.975, len(y) - 1) * y.std(ddof=1) / np.sqrt(len(y))


def simulate(judge: pd.DataFrame, human: pd.DataFrame, *, draws: int, seed: int) -> pd.DataFrame:
    metrics = [m for m in PPI_METRICS if m != "accuracy"]  # correctness is not a label: no judge error to correct
    truth = human.groupby("agent")[metrics].mean()
    rng = np.random.default_rng(seed)
    rows = []
    for n in SIZES:
        for d in range(draws):
            lab = rng.choice(len(human), n, replace=False)
            h = human.iloc[np.sort(lab)]
            res = {i: corrected_metrics(judge, h, metrics=metrics, interval=i, n_boot=0).summary for i in ("t", "clt")}
            for (_, r), (_, c) in zip(res["t"].iterrows(), res["clt"].iterrows(), strict=True):
                target = truth.loc[r["agent"], r["metric"]]
                y = h.loc[h["agent"] == r["agent"], r["metric"]].dropna().to_numpy()
                rows.append(
                    {
                        "n": n,
                        "draw": d,
                        "agent": r["agent"],
                        "metric": r["metric"],
                        "n_agent": r["n_labeled"],
                        "defined": not np.isnan(r["corrected"]),
                        "covered": r["corrected_ci_low"] <= target <= r["corrected_ci_high"],
                        "covered_clt": c["corrected_ci_low"] <= target <= c["corrected_ci_high"],
                        "width": r["corrected_ci_high"] - r["corrected_ci_low"],
                        "width_human": human_only_width(y),
                    }
                )
    return pd.DataFrame(rows)


def bias_table(judge: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    metrics = [m for m in PPI_METRICS if m != "accuracy"]
    diff = judge.groupby("agent")[metrics].mean() - human.groupby("agent")[metrics].mean()
    return pd.DataFrame({"mean_bias": diff.mean(), "max_abs_bias": diff.abs().max()})


def render(sim: pd.DataFrame, bias: pd.DataFrame, *, draws: int, seed: int) -> str:
    cut = sim[~sim["defined"]].groupby(["n", "metric"]).size()
    ok = sim[sim["defined"]]
    g = ok.groupby(["metric", "n"], sort=False)
    table = pd.DataFrame(
        {
            "coverage (t)": g["covered"].mean(),
            "coverage (clt)": g["covered_clt"].mean(),
            "median width corrected": g["width"].median(),
            "median width human only": g["width_human"].median(),
            "estimates": g.size(),
        }
    ).reset_index()
    lines = [
        "# Judge-corrected metrics (PPI++): simulated coverage on the 190 human-labeled traces",
        "",
        f"`PYTHONPATH=. python scripts/bench/ppi_sim.py --draws {draws} --seed {seed}`. Truth: each agent's "
        "full-data human value. Judge: `rules`. n = human-labeled traces **in total** (about n/5 per agent, "
        "varying by draw), drawn uniformly at random. Coverage and widths pool the 5 agents over the draws; "
        "an agent with fewer than 2 labeled traces, or a metric undefined for it (recovery by turn 8 "
        "for the two agents with a cut-off trace), gives no estimate and is left out of the counts.",
        "",
        "| metric | n | coverage (t, default) | coverage (clt, ppi-python) | median width corrected "
        "| median width human only | estimates |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['metric']} | {r['n']} | {r['coverage (t)']:.3f} | {r['coverage (clt)']:.3f} | "
            f"{r['median width corrected']:.3f} | {r['median width human only']:.3f} | {r['estimates']} |"
        )
    lines += [
        "",
        "Bias of the judge-only estimate (rules judge on all 190 traces minus the human value), over the 5 agents:",
        "",
        "| metric | mean bias | largest absolute bias |",
        "|---|---:|---:|",
        *(f"| {m} | {r['mean_bias']:+.3f} | {r['max_abs_bias']:.3f} |" for m, r in bias.iterrows()),
    ]
    if len(cut):
        lines += ["", "Estimates left out (undefined): " + ", ".join(f"n={n} {m}: {k}" for (n, m), k in cut.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    judge, human = value_tables(args.data)
    sim = simulate(judge, human, draws=args.draws, seed=args.seed)
    text = render(sim, bias_table(judge, human), draws=args.draws, seed=args.seed)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
