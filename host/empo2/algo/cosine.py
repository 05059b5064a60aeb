"""Cosine similarity of unit vectors whose bits depend on the two vectors alone.

Memory retrieval (keep cosine > 0.5) and the novelty reward (a visit when cosine ≥ 0.9) both turn
a cosine into a decision. A plain float32 product ``Q @ K.T`` is not fit for that: BLAS picks its
kernel by the shape of Q (one query row and two take different code paths), by the CPU's vector
width and by its thread count, and each kernel sums the 384 products in another order. Measured on
an Intel Xeon: a query scored alone and the same query scored beside a second one differ in the
last bit, enough to flip a strict threshold that sits at the value.

Here every component is first rounded to a fixed-point integer, ``round(x · 2**22)``, held in
float64. For unit rows every partial sum of the products is then an integer of magnitude at most
about ``2**44``, far below ``2**53``: each addition and fused multiply-add in any BLAS kernel is
exact, so the sum is the same integer whatever order, kernel, batch or CPU computed it. Scaling it
back by ``2**-44`` is exact too. The price is the rounding of each component, at most ``2**-23``
(about 1.2e-7, the size of float32's own rounding), so a cosine moves by at most
``2**-23 · (|q|₁ + |k|₁)``, under 5e-6 at 384 dimensions: far below any threshold's meaning.

    sims = cosine(queries, keys)   # (m, d), (n, d) unit rows -> (m, n) float64, bit-exact
"""

from __future__ import annotations

import numpy as np

FRACTION_BITS = 22
# Rows longer than this could push a partial sum past 2**53; unit rows are 1 ± 1e-6.
MAX_NORM = 1.5


def fixed_point(rows: np.ndarray) -> np.ndarray:
    """(n, d) floats -> (n, d) float64 integers round(x · 2**22), rows checked to be unit-sized."""
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"cosine takes (rows, dim) arrays, got shape {rows.shape}")
    if rows.size and float(np.max(np.einsum("ij,ij->i", rows, rows))) > MAX_NORM**2:
        raise ValueError("cosine takes L2-normalised rows; a row is longer than 1.5")
    return np.rint(np.ldexp(rows, FRACTION_BITS))


def cosine(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Cosine of each query row to each key row: (m, d), (n, d) -> (m, n) float64.

    Row i of the result has the same bits whatever other rows `queries` holds, in whatever order,
    on any x86-64 CPU (module docstring).
    """
    q, k = fixed_point(queries), fixed_point(keys)
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"queries have {q.shape[1]} dimensions, keys {k.shape[1]}")
    return np.ldexp(q @ k.T, -2 * FRACTION_BITS)
