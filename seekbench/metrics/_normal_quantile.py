"""The standard normal quantile of the usual confidence levels, without importing scipy."""

from __future__ import annotations

#: The standard normal quantiles ``ndtri(1 - alpha / 2)`` of the usual levels, bit for bit as
#: scipy.special.ndtri gives them (a test checks each): importing scipy.special costs about a fifth
#: of a CPU second in every process that fits a curve (each worker of a parallel summary), for one
#: number. Other levels ask scipy.
NORMAL_QUANTILES = {
    1 - a / 2: z for a, z in ((0.05, 1.959963984540054), (0.1, 1.6448536269514722), (0.01, 2.5758293035489004))
}


def normal_quantile(p: float) -> float:
    """The standard normal quantile at ``p`` (what scipy.stats.norm.ppf computes)."""
    if p in NORMAL_QUANTILES:
        return NORMAL_QUANTILES[p]
    from scipy.special import ndtri  # here: slow to import, for one number per curve

    return float(ndtri(p))
