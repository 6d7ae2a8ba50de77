"""The pooled agreement row: kappa and AC1 over every stratum, each keeping its own chance agreement."""

from __future__ import annotations

import numpy as np

from ._ac1 import ac1_parts


def stratified_agreement(blocks: list[np.ndarray], qs: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pooled (p_o, kappa, AC1) over strata from per-stratum confusion stacks ``(B, q, q)``.

    p_o and the chance agreements are n-weighted means of the strata's (a label of one stratum
    never matches another's by chance), then kappa = (p_o - p_e) / (1 - p_e); ``qs`` are the
    strata's label counts for AC1's chance term.
    """
    n = sum(b.sum(axis=(1, 2)) for b in blocks)
    agree = sum(np.trace(b, axis1=1, axis2=2) for b in blocks)
    pe_c = np.zeros_like(n)
    pe_g = np.zeros_like(n)
    for b, q in zip(blocks, qs, strict=True):
        nf = b.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            rc = (b.sum(axis=2) * b.sum(axis=1)).sum(axis=1)
            pe_c += np.where(nf > 0, rc / np.where(nf > 0, nf, 1.0), 0.0)
            pe_g += np.where(nf > 0, nf * np.nan_to_num(ac1_parts(b, q)[1]), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / n
        pe_c, pe_g = pe_c / n, pe_g / n
        kappa = np.where((n > 0) & (1.0 - pe_c > 1e-12), (po - pe_c) / (1.0 - pe_c), np.nan)
        ac1 = np.where(n > 0, (po - pe_g) / (1.0 - pe_g), np.nan)
    return po, kappa, ac1
