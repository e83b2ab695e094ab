"""One atom over a batch: each row's outcome from its field's tag and child.

Shape-independent, so it is compiled once (and cached on disk by numba) and
serves every filter: the per-filter kernels (``kernel.py``) only combine the
outcome columns. Modes and parameters are ``atoms.py``'s; outcomes are
0 false, 1 true, 2 unknown, 3 failure, 4 back to the per-message engine.
A tag outside 0..25 or a child whose validity bit is clear goes back.
"""
from __future__ import annotations

import math

from numba import njit

ARGS = ("t", "i", "iv", "u", "uv", "f", "fv", "c", "cv", "b", "bv",
        "m", "k", "bt", "ii", "uu", "dd", "st", "vi", "oi", "vu", "ou", "vf", "of")
"""The arguments after ``out``: a field's arrays (``columns.FieldArrays``), then
the atom's modes, constants, boolean table, intervals, string table, values."""


@njit(cache=True, nogil=True)
def atom_outcomes(out, t, i, iv, u, uv, f, fv, c, cv, b, bv, m, k, bt, ii, uu, dd, st,
                  vi, oi, vu, ou, vf, of):   # pragma: no cover - compiled
    for r in range(t.shape[0]):
        tag = (t[r])
        mode = m[tag] if tag < 26 else 6
        if (tag == 11 or tag == 12) and mode != 6 and ((fv[r >> 3] >> (r & 7)) & 1):
            xf = f[r]
            shift = 26 + 4 * (tag - 11)
            if xf - xf == 0.0 and xf != 0.0:
                pass
            elif xf != xf:
                tag = shift
            elif xf == 0.0 and math.copysign(1.0, xf) < 0.0:
                tag = shift + 1
            elif xf == math.inf:
                tag = shift + 2
            elif xf == -math.inf:
                tag = shift + 3
            mode = m[tag]
        if mode == 0:
            out[r] = (k[tag])
        elif mode == 1:
            code = c[r]
            if ((cv[r >> 3] >> (r & 7)) & 1) and code >= 0 and code < st.shape[1]:
                out[r] = (st[0 if tag == 16 else (1 if tag == 20 else 2), code])
            else:
                out[r] = 4
        elif mode == 2:
            if (bv[r >> 3] >> (r & 7)) & 1:
                out[r] = bt[(b[r >> 3] >> (r & 7)) & 1]
            else:
                out[r] = 4
        elif mode == 3:
            if ((iv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xi = i[r]
                hi = ii.shape[0]
                if hi <= 4:
                    out[r] = 0
                    for j in range(hi):
                        if ii[j, 0] <= xi and xi <= ii[j, 1]:
                            out[r] = 1
                else:
                    lo = 0
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if ii[mid, 0] <= xi:
                            lo = mid + 1
                        else:
                            hi = mid
                    out[r] = 1 if lo > 0 and xi <= ii[lo - 1, 1] else 0
        elif mode == 4:
            if ((uv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xu = u[r]
                hi = uu.shape[0]
                if hi <= 4:
                    out[r] = 0
                    for j in range(hi):
                        if uu[j, 0] <= xu and xu <= uu[j, 1]:
                            out[r] = 1
                else:
                    lo = 0
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if uu[mid, 0] <= xu:
                            lo = mid + 1
                        else:
                            hi = mid
                    out[r] = 1 if lo > 0 and xu <= uu[lo - 1, 1] else 0
        elif mode == 5:
            if ((fv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xf = f[r]
                hi = dd.shape[0]
                if hi <= 4:
                    out[r] = 0
                    for j in range(hi):
                        if dd[j, 0] <= xf and xf <= dd[j, 1]:
                            out[r] = 1
                else:
                    lo = 0
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if dd[mid, 0] <= xf:
                            lo = mid + 1
                        else:
                            hi = mid
                    out[r] = 1 if lo > 0 and xf <= dd[lo - 1, 1] else 0
        elif mode == 7:
            if ((iv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xi = i[r]
                lo = 0
                hi = vi.shape[0]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if vi[mid] < xi:
                        lo = mid + 1
                    else:
                        hi = mid
                out[r] = (oi[lo]) if lo < vi.shape[0] and vi[lo] == xi else 4
        elif mode == 8:
            if ((uv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xu = u[r]
                lo = 0
                hi = vu.shape[0]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if vu[mid] < xu:
                        lo = mid + 1
                    else:
                        hi = mid
                out[r] = (ou[lo]) if lo < vu.shape[0] and vu[lo] == xu else 4
        elif mode == 9:
            if ((fv[r >> 3] >> (r & 7)) & 1) == 0:
                out[r] = 4
            else:
                xf = f[r]
                lo = 0
                hi = vf.shape[0]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if vf[mid] < xf:
                        lo = mid + 1
                    else:
                        hi = mid
                out[r] = (of[lo]) if lo < vf.shape[0] and vf[lo] == xf else 4
        else:
            out[r] = 4
