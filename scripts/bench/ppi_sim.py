"""Simulated coverage of judge-corrected (PPI++) metrics on the 190 human-labeled SeekBench traces.

Human labels are the truth: each agent's full-data human value of each metric is the target.
Each judge (``rules`` and ``learned``, both offline) labels every trace. ``learned`` is the shipped
model, which is trained on these 190 traces' human labels (docs/judges.md): its labels here are
in-sample, so its widths are optimistic; ``rules`` (no training) is the honest case. For n = 20,
40 and 80 human-labeled traces in total (drawn uniformly at random from all 190, seeded, so about
n / 5 per agent: the per-agent n varies from draw to draw), R draws each; per metric, over agents and draws:

- coverage of the corrected 95% interval of the full-data human value: seekbench's default
  (``interval="auto"``: Wilson at the effective sample size for the 0/1 metrics, Student t for RQI
  and CE), Student t for every metric (``"t"``, the default before) and ppi-python's CLT interval
  (``"clt"``);
- median width of the corrected intervals (``"auto"`` and ``"t"``) and of two human-only intervals
  on the same subset: the classical interval of the same construction (Student t of the human values, the lambda = 0
  limit of the corrected interval) and the one the summary shows (Wilson for 0/1 metrics; for RQI
  and CE the same t interval, the bootstrap being too slow to repeat here);
- bias of the judge-only estimate (judge on all traces minus the human value): mean over agents
  and the largest in absolute value.

Run (about three minutes per 100 draws on a quiet machine)::

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


JUDGES = ("rules", "learned")


def value_tables(data: Path, judge_name: str = "rules") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-trace metric values of all traces from human labels (inline) and from the judge ``judge_name``."""
    from seekbench.cli._main import main
    from seekbench.labels import load_annotations
    from seekbench.traces import attach_labels, build_tables, read_traces

    traces = read_traces([str(data)]).traces
    human_steps, table = build_tables(traces)
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/{judge_name}.jsonl"
        if main(["annotate", str(data), "--judge", judge_name, "-o", out]) != 0:
            raise SystemExit(f"annotate --judge {judge_name} failed")
        judge_steps = attach_labels(human_steps, load_annotations(out).records)

    def values(steps):
        return ppi_trace_values(trace_statistics(steps, table), trace_audit(steps, table))

    return values(judge_steps), values(human_steps)


def human_only_widths(y: np.ndarray) -> tuple[float, float]:
    """Widths of the human values' Student t interval, and of the interval the summary shows (Wilson for 0/1)."""
    if len(y) < 2:
        return np.nan, np.nan
    from scipy.special import stdtrit

    t = 2 * stdtrit(len(y) - 1, 0.975) * y.std(ddof=1) / np.sqrt(len(y))
    if np.isin(y, (0.0, 1.0)).all():
        lo, hi = wilson_interval(float(y.sum()), len(y))
        return t, hi - lo
    return t, t


def simulate(judge: pd.DataFrame, human: pd.DataFrame, *, draws: int, seed: int) -> pd.DataFrame:
    metrics = [m for m in PPI_METRICS if m != "accuracy"]  # correctness is not a label: no judge error to correct
    truth = human.groupby("agent")[metrics].mean()
    rng = np.random.default_rng(seed)
    rows = []
    for n in SIZES:
        for d in range(draws):
            lab = rng.choice(len(human), n, replace=False)
            h = human.iloc[np.sort(lab)]
            res = {
                i: corrected_metrics(judge, h, metrics=metrics, interval=i, n_boot=0).summary
                for i in ("auto", "t", "clt")
            }
            for (_, r), (_, t), (_, c) in zip(*(res[i].iterrows() for i in ("auto", "t", "clt")), strict=True):
                target = truth.loc[r["agent"], r["metric"]]
                y = h.loc[h["agent"] == r["agent"], r["metric"]].dropna().to_numpy()
                w_t, w_shown = human_only_widths(y)
                rows.append(
                    {
                        "n": n,
                        "draw": d,
                        "agent": r["agent"],
                        "metric": r["metric"],
                        "n_agent": r["n_labeled"],
                        "defined": not np.isnan(r["corrected"]),
                        "covered": r["corrected_ci_low"] <= target <= r["corrected_ci_high"],
                        "covered_t": t["corrected_ci_low"] <= target <= t["corrected_ci_high"],
                        "covered_clt": c["corrected_ci_low"] <= target <= c["corrected_ci_high"],
                        "width": r["corrected_ci_high"] - r["corrected_ci_low"],
                        "width_t": t["corrected_ci_high"] - t["corrected_ci_low"],
                        "width_human_t": w_t,
                        "width_human_shown": w_shown,
                    }
                )
    return pd.DataFrame(rows)


def bias_table(judge: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    metrics = [m for m in PPI_METRICS if m != "accuracy"]
    diff = judge.groupby("agent")[metrics].mean() - human.groupby("agent")[metrics].mean()
    return pd.DataFrame({"mean_bias": diff.mean(), "max_abs_bias": diff.abs().max()})


def _summary_rows(sim: pd.DataFrame) -> pd.DataFrame:
    ok = sim[sim["defined"]]
    g = ok.groupby(["metric", "n"], sort=False)
    return pd.DataFrame(
        {
            "cov": g["covered"].mean(),
            "cov_t": g["covered_t"].mean(),
            "cov_clt": g["covered_clt"].mean(),
            "w": g["width"].median(),
            "w_tc": g["width_t"].median(),
            # the ratio of the median widths: the done-when compares medians
            "r_shown": (g["width"].median() / g["width_human_shown"].median()),
            "r_tc": (g["width_t"].median() / g["width_human_shown"].median()),
            "w_t": g["width_human_t"].median(),
            "w_shown": g["width_human_shown"].median(),
            "k": g.size(),
        }
    ).reset_index()


def render(results: dict, *, draws: int, seed: int) -> str:
    """``results``: {judge: (simulation rows, bias table)} as Markdown."""
    lines = [
        "# Judge-corrected metrics (PPI++): simulated coverage on the 190 human-labeled traces",
        "",
        f"`PYTHONPATH=. python scripts/bench/ppi_sim.py --draws {draws} --seed {seed}` "
        "(written by the script; do not edit). Truth: each agent's full-data human value. n = human-labeled "
        "traces **in total**, drawn uniformly at random from the 190, so about n/5 per agent (5 agents of "
        "34-40 traces), varying by draw; each agent's metric is corrected with its own labeled traces. "
        'Coverage and widths pool the 5 agents over the draws ("estimates"); an agent with fewer than 2 '
        "labeled traces, or a metric undefined for it (recovery by turn 8 for the two agents with a cut-off "
        "trace), gives no estimate. Coverage (auto) is seekbench's default interval (Wilson at the effective "
        "sample size n_eff = theta (1 - theta) / se0^2 for the 0/1 metrics, Student t for RQI and CE); "
        "coverage (t) the Student t interval for every metric (the default before; Wilson for a 0/1 metric "
        "without spread in either); coverage (clt) ppi-python's normal interval, on the same draws. Widths: "
        "median over estimates; corrected (auto) and corrected (t) as the coverages; human only (t) is the "
        "classical interval of the same human values (the lambda = 0 limit of t), human only (shown) the one "
        "the summary shows (Wilson for 0/1 metrics, t for RQI and CE); ratio = median corrected (auto) width / "
        "median human only (shown) width (below 1: narrower). "
        "Accuracy is left out: correctness on these traces does not come from the step labels. The shipped "
        "`learned` judge is trained on these traces' human labels: its rows are in-sample (optimistic); "
        "`rules` is not trained.",
    ]
    for judge, (sim, bias) in results.items():
        per_agent = sim[sim["metric"] == "rqi"].groupby("n")["n_agent"].describe()
        lines += [
            "",
            f"## Judge `{judge}`",
            "",
            "| metric | n | coverage (auto) | coverage (t) | coverage (clt) | width corrected (auto) "
            "| width corrected (t) | width human only (t) | width human only (shown) | ratio (auto) "
            "| ratio (t) | estimates |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for _, r in _summary_rows(sim).iterrows():
            lines.append(
                f"| {r['metric']} | {r['n']} | {r['cov']:.3f} | {r['cov_t']:.3f} | {r['cov_clt']:.3f} | "
                f"{r['w']:.3f} | {r['w_tc']:.3f} | {r['w_t']:.3f} | {r['w_shown']:.3f} | {r['r_shown']:.3f} | "
                f"{r['r_tc']:.3f} | {r['k']} |"
            )
        lines += [
            "",
            "Labeled traces per agent: "
            + "; ".join(
                f"n = {n}: median {row['50%']:.0f}, min {row['min']:.0f}, max {row['max']:.0f}"
                for n, row in per_agent.iterrows()
            )
            + ".",
            "",
            f"Bias of the judge-only estimate (`{judge}` on all 190 traces minus the human value), over the 5 agents:",
            "",
            "| metric | mean bias | largest absolute bias |",
            "|---|---:|---:|",
            *(f"| {m} | {r['mean_bias']:+.3f} | {r['max_abs_bias']:.3f} |" for m, r in bias.iterrows()),
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--judges", default=",".join(JUDGES), help="comma-separated offline judges (default: rules,learned)"
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    results = {}
    for name in args.judges.split(","):
        judge, human = value_tables(args.data, name)
        results[name] = (simulate(judge, human, draws=args.draws, seed=args.seed), bias_table(judge, human))
    text = render(results, draws=args.draws, seed=args.seed)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
