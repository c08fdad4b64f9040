"""Exact, floating-point-safe samplers of discrete noise, vectorised over replicas.

Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020,
arXiv:2004.00010; "CKS20" below) give three exact samplers built from fair integer draws only:

* Algorithm 1 -- Bernoulli(exp(-gamma)) for a rational gamma (:func:`bernoulli_exp`);
* Algorithm 2 -- the discrete Laplace distribution, P[Y = y] ~ exp(-|y| / t)
  (:func:`discrete_laplace`);
* Algorithm 3 -- the discrete Gaussian N_Z(0, sigma^2), P[Y = y] ~ exp(-y^2 / (2 sigma^2)),
  by rejection from the discrete Laplace (:func:`discrete_gaussian`).

With Algorithm 1's coins, :func:`exponential_choice` samples the exponential mechanism (McSherry
and Talwar 2007) exactly, by rejection from uniform proposals.

This module implements them with numpy integer arithmetic only: no floating-point number is
formed anywhere in the sampling, every probability is a ratio of integers and every coin is an
exact comparison of uniform integers. The reference implementations read for it sample one
arbitrary-precision scalar at a time (OpenDP's Rust ``sample_bernoulli_exp``,
``sample_discrete_laplace``, ``sample_discrete_gaussian``, after Steinke's
``discretegauss.py``) or draw their coins with floats (diffprivlib's ``GaussianDiscrete``,
``np.random.binomial(1, gamma / k)``). Here:

* Everything is vectorised: a call samples an array of shape ``(R, *S)`` for R replicas, with
  Python loops only over rejection rounds and continuations (never over elements).
* Every number is a uint64/int64 below 2**64. Products that could overflow are never formed:
  Bernoulli(a / (b K)) is drawn as Bernoulli(a / b) AND Bernoulli(1 / K), or as one uniform
  below K b only when K b < 2**64 is guaranteed by the parameters; the discrete Gaussian's
  acceptance exponent is split into three terms (``_gauss_accept``). Elements whose numbers
  would still overflow (tails of astronomically small probability) take an exact slow path
  with Python integers.
* Coins are compared lazily where that saves words: Bernoulli(U / (k t)) with t <= 2**48 is
  decided by a 16-bit chunk x against floor(U 2**16 / (k t)), and only a tie (probability
  2**-16) draws the exact remainder -- the same Bernoulli, exactly, with 16 bits instead of 64
  (``_u_attempts``).

Randomness and reproducibility
------------------------------
Replica r draws raw 64-bit words from ``rngs[r]`` only (``bit_generator.random_raw``) into a
pool of its own, and consumes them in a canonical per-replica order: every draw request names a
set of pending elements (in C order of S), and replica r's pending elements take the next
unused words of replica r's pool, in element order. How many words a replica draws from its
generator and which word serves which purpose depend only on that replica's own words, on S and
on the parameters -- never on the other replicas or on R (the number of attempts per element in
a rejection round is a function of the round's index only). Hence row r of the output, and the
state ``rngs[r]`` is left in, are bit-identical whether replica r is sampled alone or among any
number of others. Large batches are processed in chunks of replicas (free: replicas are
independent) and of elements (chunk boundaries fixed by S alone).

A uniform integer in [0, n) is ``w % n`` for a word w >= 2**64 mod n (exact rejection; a
rejected word is replaced by the next word of the same pool). A Bernoulli(exp(-1)) coin (CKS20
Algorithm 1 at gamma = 1) is read off a uniform digit e in [0, 6!): its trials
A_k ~ Bernoulli(1/k), k = 2..6, are the nested events "k! divides e" (each has probability 1/k
given the previous ones), so the stopping index K is the first k with k! not dividing e and the
coin is "K is odd"; e = 0 (K > 6) continues with fresh Bernoulli(1/k), k >= 7. One word gives
four such digits (w mod 720**4, in base 720), looked up in tables.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Union

import numpy as np

__all__ = ["bernoulli_exp", "discrete_laplace", "discrete_gaussian", "exponential_choice",
           "exponential_choices", "exponential_exponents", "MAX_INT", "MAX_SIGMA2"]

#: Exclusive upper bound of every integer parameter (scales, numerators, denominators).
MAX_INT = 2**62
#: Largest sigma^2 accepted by :func:`discrete_gaussian`: its Laplace scale is then
#: floor(sigma) + 1 <= 2**28 + 1, and every intermediate of the common path fits in 2**62.
MAX_SIGMA2 = 2**56

_U64 = np.uint64
_I64_MAX = 2**63 - 1

# --------------------------------------------------------------------------------------------
# Tables (built once from the exact definitions; looked up with integer indices)
# --------------------------------------------------------------------------------------------

_FACT6 = 720


def _digit_table() -> np.ndarray:
    tab = np.empty(_FACT6, dtype=np.int8)
    for e in range(_FACT6):
        k = 2
        while k <= 6 and e % math.factorial(k) == 0:
            k += 1
        tab[e] = 2 if k > 6 else k & 1
    return tab


#: Status of a Bernoulli(exp(-1)) trial from its digit e in [0, 720): 0 failure, 1 success,
#: 2 undetermined (e = 0: the trial goes on with fresh Bernoulli(1/k), k >= 7).
_TAB = _digit_table()

#: Two trials from v in [0, 720**2): 3 s(v % 720) + s(v // 720).
_N2 = _FACT6 * _FACT6
_P2 = (3 * _TAB[np.arange(_N2) % _FACT6] + _TAB[np.arange(_N2) // _FACT6]).astype(np.int8)


def _four_trial_tables() -> tuple[np.ndarray, np.ndarray]:
    """For four trial statuses, index 27 s1 + 9 s2 + 3 s3 + s4: the number of leading
    successes, and how the run ends (0 at a failure, 1 after four successes, 2 at an
    undetermined trial)."""
    lead = np.zeros(81, dtype=np.int64)
    kind = np.zeros(81, dtype=np.int64)
    for idx in range(81):
        s = (idx // 27, (idx // 9) % 3, (idx // 3) % 3, idx % 3)
        n = 0
        end = 1
        for si in s:
            if si == 1:
                n += 1
                continue
            end = 0 if si == 0 else 2
            break
        lead[idx], kind[idx] = n, end
    return lead, kind


_LEAD4, _KIND4 = _four_trial_tables()
#: Packed: leading successes | end kind << 3.
_PK4 = (_LEAD4 | (_KIND4 << 3)).astype(np.int8)

#: CKS20 Algorithm 1 for gamma = U / t over its first three trials, indexed by
#: [u1 < U] | [u2 < U] << 1 | [u3 < U] << 2 with u1, u2, u3 uniform below t, 2t, 3t
#: (A_k ~ Bernoulli(U / (k t)) = [u_k < U], nested): 0 K even (reject), 1 K odd (accept),
#: 2 A_1 .. A_3 all succeeded (go on at k = 4).
_CH = np.array([1 if not (i & 1) else (0 if not (i & 2) else (1 if not (i & 4) else 2))
                for i in range(8)], dtype=np.int8)

def _chain_table(n: int) -> np.ndarray:
    """CKS20 Algorithm 1 over its first n trials (nested: A_k is consulted only if A_1 ..
    A_{k-1} succeeded), indexed by the bits [candidate A_k holds] << (k - 1): 1 if the
    stopping index K (first failed trial) is odd (accept), 0 if even (reject), 2 if all n
    trials succeeded (go on at k = n + 1)."""
    tab = np.empty(1 << n, dtype=np.int8)
    for i in range(1 << n):
        lead = next((k for k in range(n) if not (i >> k) & 1), n)  # K - 1 if lead < n
        tab[i] = 2 if lead == n else (1 if lead % 2 == 0 else 0)
    return tab


#: Three trials: the wide attempt ([u_k < U], u_k uniform below k t, k = 1, 2, 3).
_CH = _chain_table(3)
#: Four trials: the narrow attempt (16-bit chunks, k = 1..4).
_CH4 = _chain_table(4)
#: The same indexed by the reversed bits b3 | b2 << 1 | b1 << 2 | b0 << 3, which is what the
#: multiply-shift (4 bytes of 0/1 in a little-endian uint32) * 0x08040201 >> 24 gives.
_CH4R = _CH4[[int(f"{i:04b}"[::-1], 2) for i in range(16)]]
_LITTLE = sys.byteorder == "little"

# A run word: four trial digits, w mod 720**4 (w >= 2**64 mod 720**4); the phase-2 word: the
# sign and four trial digits, w mod 2 * 720**4.
_N4 = _N2 * _N2
_N2U, _N4U, _NS4U = _U64(_N2), _U64(_N4), _U64(2 * _N4)
_THR4, _THRS4 = _U64(2**64 % _N4), _U64(2**64 % (2 * _N4))

#: Multipliers of t for the words U, u1, u2, u3 of an attempt.
_BMUL = np.array([1, 1, 2, 3], dtype=np.uint64)[:, None]
#: _gauss_accept sends the elements with m >= _SLOW_M to the exact slow path (m^2 < 2**62).
_SLOW_M = 1 << 31
#: Largest t for the 2-word attempt (U 2**16 < 2**64).
_NARROW = 2**48
#: Largest t with 6 t < 2**64 (then one rejection threshold, 2**64 mod 6t, serves t, 2t, 3t).
_T6MAX = (2**64 - 1) // 6

#: Elements per element chunk (a constant: chunk boundaries must not depend on R).
_ELEM_CHUNK = 1 << 14
#: Target number of (replica, element) pairs per replica chunk.
_PAIR_CHUNK = 1 << 16


def _attempts(rnd: int) -> int:
    """Attempts per pending element in rejection round ``rnd`` of the U phase: a function of
    the round's index alone, so a replica's word consumption never depends on the others."""
    return 1 if rnd < 2 else min(1 << (rnd - 1), 64)


# --------------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------------


def _as_generators(rngs: object) -> list[np.random.BitGenerator]:
    if isinstance(rngs, np.random.Generator):
        return [rngs.bit_generator]
    if isinstance(rngs, (str, bytes)) or not isinstance(rngs, (Sequence, np.ndarray)):
        raise TypeError("rngs must be a numpy.random.Generator or a sequence of them, got "
                        f"{type(rngs).__name__}")
    gens = list(np.ravel(np.asarray(rngs, dtype=object))) if isinstance(rngs, np.ndarray) \
        else list(rngs)
    if not gens:
        raise ValueError("rngs must hold at least one numpy.random.Generator (got none)")
    generator = np.random.Generator
    if not all(type(g) is generator for g in gens):  # the common case without isinstance
        for i, g in enumerate(gens):
            if not isinstance(g, generator):
                raise TypeError(f"rngs[{i}] must be a numpy.random.Generator, got "
                                f"{type(g).__name__}")
    return [g.bit_generator for g in gens]


def _as_int_array(x: object, name: str, minimum: int, maximum: int) -> np.ndarray:
    """``x`` as an int64 array with minimum <= x <= maximum, or a TypeError/ValueError naming
    ``name``. Floats (integral ones and NaN included) and booleans are refused."""
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an integer or an array of integers, got "
                        f"{type(x).__name__}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an integer or an array of integers ({err})") from None
    if arr.dtype == object:
        flat = arr.ravel().tolist()
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                   for v in flat):
            raise TypeError(f"{name} must hold integers only")
        if flat and (min(flat) < minimum or max(flat) > maximum):
            raise ValueError(f"{name} must lie in [{minimum}, {maximum}]; got values in "
                             f"[{min(flat)}, {max(flat)}]")
        return np.array(flat, dtype=np.int64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        nan = arr.dtype.kind in "fc" and bool(np.isnan(arr).any())
        raise TypeError(f"{name} must have an integer dtype, got {arr.dtype}"
                        + (" (with NaN)" if nan else ""))
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < minimum or hi > maximum:
            raise ValueError(f"{name} must lie in [{minimum}, {maximum}]; got values in "
                             f"[{lo}, {hi}]")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------------------------
# The word stream: per-replica pools consumed in canonical order
# --------------------------------------------------------------------------------------------


class _Stream:
    """Raw 64-bit words of R bit generators, one pool per replica (row).

    ``take(rows, k)``: ``rows`` lists the replica of each requesting element, sorted (elements
    in canonical order); request i gets the next k unused words of its replica's pool, in
    order. A row that runs out draws ``max(deficit, grow)`` more words from its own generator:
    how many words a generator gives depends only on its own row's consumption.
    """

    def __init__(self, bitgens: Sequence[np.random.BitGenerator], grow: int) -> None:
        self.bg = list(bitgens)
        self.R = len(self.bg)
        self.grow = int(grow)
        self.cap = 0
        self.pool = np.empty((self.R, 0), dtype=np.uint64)
        self.flat = self.pool.reshape(-1)
        self.filled = np.zeros(self.R, dtype=np.int64)
        self.off = np.zeros(self.R, dtype=np.int64)
        self.rowids = np.arange(self.R, dtype=np.int64)
        self.rowbase = np.zeros(self.R, dtype=np.int64)

    def ensure(self, need: np.ndarray, grow: int | None = None, headroom: int = 0) -> None:
        """Make row r hold at least need[r] words (drawn in order from generator r): a short
        row draws max(its deficit, grow) words."""
        short = np.flatnonzero(need > self.filled)
        if short.size == 0:
            return
        grow = self.grow if grow is None else int(grow)
        extra = np.maximum(need[short] - self.filled[short], grow)
        live = self.filled - self.off
        live[short] += extra
        if int((self.off + live).max()) > self.cap:
            self._realloc(int(live.max()) + headroom)
        pool, bg, filled = self.pool, self.bg, self.filled
        if short.size == self.R and np.all(filled == filled[0]) and np.all(extra == extra[0]):
            f, e = int(filled[0]), int(extra[0])
            for r in range(self.R):
                pool[r, f:f + e] = bg[r].random_raw(e)
        else:
            for r, f, e in zip(short.tolist(), filled[short].tolist(), extra.tolist()):
                pool[r, f:f + e] = bg[r].random_raw(e)
        filled[short] += extra

    def _realloc(self, cap: int) -> None:
        """A pool of at least ``cap`` words per row; consumed words are dropped."""
        cap += cap // 4 + 64
        pool = np.empty((self.R, cap), dtype=np.uint64)
        keep = self.filled - self.off
        if self.cap and keep.max() > 0:
            if np.all(self.off == self.off[0]) and np.all(keep == keep[0]):
                o, k = int(self.off[0]), int(keep[0])
                pool[:, :k] = self.pool[:, o:o + k]
            else:
                for r in np.flatnonzero(keep).tolist():
                    o, k = int(self.off[r]), int(keep[r])
                    pool[r, :k] = self.pool[r, o:o + k]
        self.pool, self.flat, self.cap = pool, pool.reshape(-1), cap
        self.filled, self.off = keep, np.zeros(self.R, dtype=np.int64)
        self.rowbase = self.rowids * cap

    def take(self, rows: np.ndarray, k: int) -> np.ndarray:
        """Words of shape (k, len(rows)): column i holds request i's k words in order.
        ``rows`` must be sorted."""
        m = rows.size
        if m == 0 or k == 0:
            return np.empty((k, m), dtype=np.uint64)
        counts = np.bincount(rows, minlength=self.R)
        counts *= k
        self.ensure(self.off + counts)
        starts = np.cumsum(counts)
        starts -= counts
        base = self.rowbase + self.off - starts
        addr = np.take(base, rows)
        addr += np.arange(0, m * k, k, dtype=np.int64)
        self.off += counts
        out = np.empty((k, m), dtype=np.uint64)
        for j in range(k):  # one gather per slot (much faster than a 2-d fancy index)
            np.take(self.flat, addr, out=out[j])
            if j + 1 < k:
                addr += 1
        return out

    def take_all(self, n: int, k: int) -> np.ndarray:
        """Every row requests n elements x k words; row r's next n k words are read as k
        slots of n elements (slot-major). Shape (k, R n), columns in (row, element) order."""
        self.ensure(self.off + n * k)
        o = int(self.off[0])
        if np.all(self.off == o):
            words = self.pool[:, o:o + n * k].reshape(self.R, k, n)
        else:
            words = self.flat[(self.rowbase + self.off)[:, None]
                              + np.arange(n * k, dtype=np.int64)].reshape(self.R, k, n)
        self.off += n * k
        out = np.empty((k, self.R, n), dtype=np.uint64)
        np.copyto(out, words.transpose(1, 0, 2))
        return out.reshape(k, self.R * n)


def _thr(n: np.ndarray) -> np.ndarray:
    """2**64 mod n for uint64 n >= 1: the words below it are rejected before ``w % n``."""
    n = np.asarray(n, dtype=np.uint64)
    return (_U64(0) - n) % n


def _fix(st: _Stream, rows: np.ndarray, w: np.ndarray, bad: np.ndarray,
         still_bad: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Replace the words flagged in ``bad`` (shape (k, p), like ``w``) by the next words of
    their rows' pools, requested in (column, slot) order, until ``still_bad(new, slots, cols)``
    is false."""
    cols, slots = np.nonzero(bad.T)
    while cols.size:
        new = st.take(rows[cols], 1)[0]
        w[slots, cols] = new
        keep = still_bad(new, slots, cols)
        cols, slots = cols[keep], slots[keep]


#: One row of factors: one value per element (shape (p,)) or one shared value (scalar).
Row = Union[np.ndarray, np.uint64]


def _sel(x, idx: np.ndarray):
    """x at the elements idx (a shared scalar row stays as it is)."""
    return x if np.ndim(x) == 0 else np.take(x, idx)


def _umod(w: np.ndarray, n) -> np.ndarray:
    """w mod n; for a scalar n through floor division, which numpy does with libdivide."""
    if np.ndim(n) == 0:
        q = w // n
        q *= n
        return w - q
    return w % n


def _thr1(n):
    """2**64 mod n for a row n (scalar or array)."""
    if np.ndim(n) == 0:
        return _U64(2**64 % int(n))
    return _thr(n)


def _uniforms(st: _Stream, rows: np.ndarray, bounds: Sequence[Row]) -> np.ndarray:
    """Independent uniforms in [0, bounds[j][i]) (uint64 >= 1; row j per element or shared),
    one word each: w mod n for w >= 2**64 mod n, a rejected word replaced by the next word
    of its row's pool. Shape (len(bounds), p)."""
    c, p = len(bounds), rows.size
    w = st.take(rows, c)
    thr = [_thr1(b) for b in bounds]
    bad = np.empty((c, p), dtype=bool)
    for j in range(c):
        np.less(w[j], thr[j], out=bad[j])
    if bad.any():
        def still_bad(new, sl, co):
            return np.array([int(x) < int(thr[j] if np.ndim(thr[j]) == 0 else thr[j][i])
                             for x, j, i in zip(new.tolist(), sl.tolist(), co.tolist())],
                            dtype=bool)

        _fix(st, rows, w, bad, still_bad)
    for j in range(c):
        w[j] = _umod(w[j], bounds[j])
    return w


def _words_mod(st: _Stream, rows: np.ndarray, w: np.ndarray, n: np.uint64,
               thr: np.uint64) -> np.ndarray:
    """w mod n for a (1, p) block of words, the words below 2**64 mod n being replaced by the
    next words of their rows (the mod of a scalar uses libdivide)."""
    w = w[0]
    bad = w < thr
    if bad.any():
        w = w.copy()[None, :]
        _fix(st, rows, w, bad[None, :], lambda new, sl, co: new < thr)
        w = w[0]
    q = w // n
    q *= n
    return w - q


def _pair_codes(v: np.ndarray) -> np.ndarray:
    """For v in [0, 720**4): the four trial statuses of its digits (v mod 720, then the next
    base-720 digits), as the index 27 s1 + 9 s2 + 3 s3 + s4."""
    hi = v // _N2U
    lo = v - hi * _N2U
    x = np.take(_P2, lo.view(np.int64))
    x *= 9
    x += np.take(_P2, hi.view(np.int64))
    return x


# --------------------------------------------------------------------------------------------
# CKS20 Algorithm 1 and runs of Bernoulli(exp(-1)) trials
# --------------------------------------------------------------------------------------------


def _chain(st: _Stream, rows: np.ndarray, nums: Sequence[Row], dens: Sequence[Row], k0: int,
           big: int, steps: int = 2) -> np.ndarray:
    """The stopping index K of CKS20 Algorithm 1 for gamma = prod_j nums[j] / dens[j] (uint64
    rows, per element or shared, each factor <= 1), for elements whose trials A_1 .. A_{k0-1}
    all succeeded: the first k >= k0 with A_k = 0, where A_k ~ Bernoulli(gamma / k) is the AND
    of independent Bernoulli(nums[j] / dens[j]) and Bernoulli(1 / k). When k big < 2**64
    (``big``: a bound on dens[-1] fixed by the parameters alone -- never by the pending set,
    which spans the replicas) the last two are one uniform below k dens[-1] compared with
    nums[-1]; otherwise Bernoulli(1/k) takes a word of its own -- no product that could
    overflow is formed. Words for ``steps`` trials are drawn at a time (4 ``steps`` after the
    first request). Bernoulli(exp(-gamma)) is "K is odd"."""
    c, p = len(nums), rows.size
    K = np.empty(p, dtype=np.int64)
    pend = np.arange(p)
    k = k0
    first = True
    while pend.size:
        r = rows if first else np.take(rows, pend)
        num = list(nums) if first else [_sel(x, pend) for x in nums]
        den = list(dens) if first else [_sel(x, pend) for x in dens]
        layout = []
        bounds: list = []
        for kk in range(k, k + steps):
            merge = c > 0 and kk >= 2 and big * kk < 2**64
            extra = kk >= 2 and not merge
            layout.append((kk, extra))
            bounds += den[:-1] if merge else den
            if merge:
                bounds.append(den[-1] * _U64(kk))
            if extra:
                bounds.append(_U64(kk))
        u = _uniforms(st, r, bounds)
        alive = np.ones(pend.size, dtype=bool)
        row = 0
        for kk, extra in layout:
            ok = alive.copy()
            for j in range(c):
                ok &= u[row + j] < num[j]
            if extra:
                ok &= u[row + c] == 0
            K[pend[alive & ~ok]] = kk
            alive = ok
            row += c + extra
        pend = pend[alive]
        k += steps
        if first:
            first, steps = False, 4 * steps
    return K


def _e1_finish(st: _Stream, rows: np.ndarray) -> np.ndarray:
    """Finish Bernoulli(exp(-1)) trials whose digit was 0 (A_1 .. A_6 succeeded): True on
    success."""
    return (_chain(st, rows, [], [], 7, 0, steps=3) & 1).astype(bool)


def _e1_run(st: _Stream, rows: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """The number of successes of independent Bernoulli(exp(-1)) trials before the first
    failure, counted up to ``limit`` (int64 >= 0; no trial is drawn beyond it). One word gives
    four trial digits, two from each 32-bit half."""
    cnt = np.zeros(rows.size, dtype=np.int64)
    pend = np.flatnonzero(limit > 0)
    while pend.size:
        r = rows[pend]
        v = _words_mod(st, r, st.take(r, 1), _N4U, _THR4)
        pk = np.take(_PK4, _pair_codes(v)).astype(np.int64)
        gained = pk & 7
        kind = pk >> 3
        rem = limit[pend] - cnt[pend]
        reached = gained >= rem
        cnt[pend] += np.minimum(gained, rem)
        more = ~reached & (kind == 1)
        mid = np.flatnonzero(~reached & (kind == 2))
        if mid.size:
            succ = _e1_finish(st, r[mid])
            cnt[pend[mid[succ]]] += 1
            more[mid[succ]] = True
        pend = pend[more]
        pend = pend[cnt[pend] < limit[pend]]
    return cnt


def _bern_exp_parts(st: _Stream, rows: np.ndarray, whole: np.ndarray,
                    terms: Sequence[tuple[list, list, int]]) -> np.ndarray:
    """Bernoulli(exp(-gamma)) for gamma = whole + sum of terms, each term (nums, dens, big) a
    product of factors nums[j] / dens[j] in [0, 1] (rows per element or shared; ``big``
    bounds dens[-1], see ``_chain``): the AND of ``whole`` Bernoulli(exp(-1)) trials (CKS20's
    reduction for gamma > 1) and one CKS20 Algorithm 1 per term.

    The first trial A_1 of every term is drawn in one request (one word per factor); the
    terms whose A_1 succeeded go on with ``_chain`` from k = 2, term after term, for the
    elements whose previous coins all succeeded."""
    p = rows.size
    out = np.zeros(p, dtype=bool)
    alive = None  # all
    if whole.size and whole.max() > 0:
        alive = np.flatnonzero(_e1_run(st, rows, whole) == whole)
        if alive.size == 0:
            return out

    def sel(x):
        return x if alive is None else _sel(x, alive)

    ra = sel(rows)
    u = _uniforms(st, ra, [sel(d) for _, dens, _ in terms for d in dens])
    first = []
    row = 0
    for nums, _, _ in terms:
        a1 = np.ones(ra.size, dtype=bool)
        for x in nums:
            a1 &= u[row] < sel(x)
            row += 1
        first.append(a1)
    ok = np.ones(ra.size, dtype=bool)
    for (nums, dens, big), a1 in zip(terms, first):
        go = np.flatnonzero(a1 & ok)
        if go.size:
            ids = go if alive is None else alive[go]
            K = _chain(st, rows[ids], [_sel(x, ids) for x in nums],
                       [_sel(x, ids) for x in dens], 2, big)
            ok[go] = (K & 1) == 1
    if alive is None:
        return ok
    out[alive] = ok
    return out


# --------------------------------------------------------------------------------------------
# CKS20 Algorithm 2: discrete Laplace
# --------------------------------------------------------------------------------------------


class _Scale:
    """The scales t of a set of elements, shared (``scalar``) or one per element, with the
    rejection thresholds of an attempt's words.

    ``narrow`` (every t <= 2**48): an attempt is 2 words, U and four 16-bit chunks; otherwise
    4 words, U and uniforms below t, 2t, 3t (one threshold, 2**64 mod 6t, when 6t < 2**64)."""

    def __init__(self, t: np.ndarray, scalar: bool) -> None:
        self.t = t  # uint64, shape (1,) if scalar else (q,)
        self.scalar = scalar
        # Fixed at construction from the chunk's parameters; subsets keep them (choices made
        # on a pending set, which spans the replicas, would break batch independence).
        self.tmax = tmax = int(t.max())
        self.narrow = tmax <= _NARROW
        if self.narrow:
            self.thr = _thr(t)
        elif tmax <= _T6MAX:
            self.thr = _thr(_U64(6) * t)  # all of t, 2t, 3t divide 6t
        else:
            self.thr = _thr(_BMUL * t)  # (4, 1) or (4, q)
        self.width = 2 if self.narrow else 4

    def _new(self, t: np.ndarray, thr: np.ndarray) -> _Scale:
        new = _Scale.__new__(_Scale)
        new.t, new.thr, new.scalar, new.narrow, new.width, new.tmax = (
            t, thr, False, self.narrow, self.width, self.tmax)
        return new

    def sub(self, idx: np.ndarray) -> _Scale:
        if self.scalar:
            return self
        return self._new(np.take(self.t, idx), np.take(self.thr, idx, axis=-1))

    def repeat(self, a: int) -> _Scale:
        if self.scalar or a == 1:
            return self
        return self._new(np.repeat(self.t, a), np.repeat(self.thr, a, axis=-1))


def _u_attempts(st: _Stream, r: np.ndarray, sc: _Scale, blk: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """One attempt of the first loop of CKS20 Algorithm 2 (s = 1) per column of ``blk``
    (uint64, (sc.width, q)): U = w0 mod t, accepted with Bernoulli(exp(-U/t)) by Algorithm 1,
    whose trials are A_k ~ Bernoulli(U / (k t)), nested. Returns (U, accepted).

    Narrow scales (t <= 2**48): A_k = [x_k < U 2**16 / (k t)] for the k-th 16-bit chunk x_k of
    word 1 (k = 1..4), that is [x_k < h_k] with h_k = floor(U 2**16 / (k t)) = h_1 // k, or on a
    tie (x_k = h_k, probability 2**-16) Bernoulli(rho_k / (k t)), rho_k = U 2**16 - h_k k t
    (one more word). Wide scales: A_k = [u_k < U] for u1, u2, u3 uniform below t, 2t, 3t
    (words 1-3; k t < 2**64). Either way Algorithm 1 goes on with ``_chain`` after the trials
    of the block (Bernoulli(U/t) AND Bernoulli(1/k) as one uniform below k t)."""
    words = blk[:1] if sc.narrow else blk  # the chunk word of a narrow attempt is never rejected
    bad = words < sc.thr
    if bad.any():
        blk = np.array(blk, copy=True)
        thr = np.broadcast_to(sc.thr, words.shape)
        _fix(st, r, blk, bad, lambda new, sl, co: new < thr[sl, co])
    if sc.narrow:
        t = sc.t
        if sc.scalar:  # division by a broadcast scalar: numpy uses libdivide
            q = blk[0] // t
            q *= t
            U = blk[0] - q
        else:
            U = blk[0] % t
        Us = U << _U64(16)
        h1 = Us // t
        # H[:, k-1] = h_k = floor(U 2**16 / (k t)) = h_1 // k < 2**16; x[:, k-1] = chunk k.
        H = np.empty((U.size, 4), dtype=np.uint16)
        H[:, 0] = h1
        np.right_shift(h1, _U64(1), out=H[:, 1], casting="unsafe")
        np.floor_divide(h1, _U64(3), out=H[:, 2], casting="unsafe")
        np.right_shift(h1, _U64(2), out=H[:, 3], casting="unsafe")
        x = np.ascontiguousarray(blk[1]).view(np.uint16).reshape(U.size, 4)
        if not _LITTLE:  # pragma: no cover - chunk k is bits 16(k-1) .. 16k - 1 of the word
            x = x[:, ::-1]
        lt = x < H
        tie = x == H
        if tie.any():  # resolve A_k exactly: Bernoulli(rho_k / (k t)), in (column, k) order
            cols, ks = np.nonzero(tie)
            kt = (ks.astype(np.uint64) + _U64(1)) * (t[0] if sc.scalar else t[cols])
            rho = Us[cols] - H[cols, ks].astype(np.uint64) * kt
            v = _uniforms(st, r[cols], [kt])[0]
            lt[cols, ks] = v < rho
        if _LITTLE:  # the four booleans (bytes of a uint32) as 4 bits, reversed
            bits = lt.view(np.uint32)[:, 0] * np.uint32(0x08040201)
            bits >>= np.uint32(24)
            ch = np.take(_CH4R, bits)
        else:  # pragma: no cover
            lt8 = lt.view(np.uint8)
            ch = np.take(_CH4, lt8[:, 0] | (lt8[:, 1] << 1) | (lt8[:, 2] << 2)
                         | (lt8[:, 3] << 3))
        k_next = 5
    else:
        if sc.scalar:
            bnd = _BMUL * sc.t
            u = blk // bnd
            u *= bnd
            np.subtract(blk, u, out=u)
        else:
            u = blk % (_BMUL * sc.t)
        U = u[0]
        lt = (u[1:] < U).view(np.uint8)
        idx = lt[1] << 1
        idx |= lt[0]
        idx |= lt[2] << 2
        ch = np.take(_CH, idx)
        k_next = 4
    acc = ch == 1
    cont = np.flatnonzero(ch == 2)
    if cont.size:  # A_1 .. A_{k_next - 1} succeeded: Algorithm 1 goes on
        acc[cont] = _u_chain(st, r[cont], U[cont], sc.t[0] if sc.scalar else sc.t[cont],
                             k_next, sc.tmax)
    return U, acc


def _u_chain(st: _Stream, r: np.ndarray, U: np.ndarray, t, k0: int, tmax: int) -> np.ndarray:
    """Algorithm 1 for gamma = U/t from trial k0 on (A_1 .. A_{k0-1} succeeded): True if the
    stopping index K is odd. Four trials at once, A_k = [u_k < U] for u_k uniform below k t
    when (k0 + 3) tmax < 2**64 (always for t <= 2**48); otherwise, and after those four
    trials, the general ``_chain``."""
    if (k0 + 3) * tmax >= 2**64:
        return (_chain(st, r, [U], [t], k0, tmax, steps=4) & 1) == 1
    ks = range(k0, k0 + 4)
    u = _uniforms(st, r, [t * _U64(k) for k in ks])
    lt = u < U
    # K = k0 + (number of leading successes); A_{k0} .. A_{k0+3} all true: go on.
    lead = lt[0].astype(np.int64)
    run = lt[0].copy()
    for j in (1, 2, 3):
        run &= lt[j]
        lead += run
    K = k0 + lead
    more = np.flatnonzero(run)
    if more.size:
        K[more] = _chain(st, r[more], [U[more]], [_sel(t, more)], k0 + 4, tmax, steps=4)
    return (K & 1) == 1


def _u_phase(st: _Stream, rows: np.ndarray, sc: _Scale, blk: np.ndarray) -> np.ndarray:
    """U of CKS20 Algorithm 2 for every element: uniform in [0, t), accepted with
    Bernoulli(exp(-U/t)). ``blk`` holds the first attempt's words (4, p); then rejection
    rounds on the pending elements (in element order), with ``_attempts(round)`` attempts per
    element in a round (the first accepted one counts)."""
    U, ok = _u_attempts(st, rows, sc, blk)
    pos = np.flatnonzero(~ok)
    r, s = rows[pos], sc.sub(pos)
    rnd = 1
    while pos.size:
        A = _attempts(rnd)
        p = pos.size
        W = s.width
        blk = st.take(r, W * A)
        if A > 1:
            blk = blk.reshape(A, W, p).transpose(1, 2, 0).reshape(W, p * A)
            Ua, oka = _u_attempts(st, np.repeat(r, A), s.repeat(A), blk)
            oka = oka.reshape(p, A)
            first = oka.argmax(axis=1)
            done = oka[np.arange(p), first]
            Ua = Ua.reshape(p, A)[np.arange(p), first]
        else:
            Ua, done = _u_attempts(st, r, s, blk)
        di = np.flatnonzero(done)
        U[pos[di]] = Ua[di]
        ki = np.flatnonzero(~done)
        pos, r, s = pos[ki], r[ki], s.sub(ki)
        rnd += 1
    return U


def _v_phase(st: _Stream, rows: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """V (successes of Bernoulli(exp(-1)) trials before the first failure) and the sign B of
    CKS20 Algorithm 2 from one word per element (w, shape (1, p)): v = w mod 2 * 720**4 gives
    B = [v >= 720**4] and four trial digits (v mod 720**4 in base 720); longer runs continue
    with ``_e1_run``."""
    v = _words_mod(st, rows, w, _NS4U, _THRS4)
    neg = v >= _N4U
    v -= neg * _N4U
    x = _pair_codes(v)
    pk = np.take(_PK4, x)
    V = (pk & 7).astype(np.uint64)
    und = np.flatnonzero(pk >= 8)
    if und.size:  # four successes, or an undetermined trial: the run goes on
        Vk = V[und].astype(np.int64)
        go = pk[und] < 16  # kind 1: four successes
        mid = np.flatnonzero(~go)
        if mid.size:
            s = _e1_finish(st, rows[und[mid]])
            Vk[mid] += s
            go[mid] = s
        gi = np.flatnonzero(go)
        if gi.size:
            Vk[gi] += _e1_run(st, rows[und[gi]], np.full(gi.size, _I64_MAX, dtype=np.int64))
        V[und] = Vk
    return V, neg


def _dlap(st: _Stream, rows: np.ndarray, sc: _Scale, n_all: int | None = None) -> np.ndarray:
    """Discrete Laplace samples, CKS20 Algorithm 2 with s = 1, for elements with replica
    ``rows`` (sorted, canonical order) and scales ``sc``: U from the first loop, then V and B
    (from the last word of the element's first block: its first U attempt takes the others);
    (B = 1, X = 0) restarts the element with a new block. ``n_all``: the request is every
    element of every row of the stream, n_all per row (read contiguously)."""
    out = np.empty(rows.size, dtype=np.int64)
    pos = np.arange(rows.size)
    r, s = rows, sc
    while pos.size:
        # The first words of every element: its first U attempt, then 1 for V and B.
        W = s.width
        blk = st.take_all(n_all, W + 1) if n_all is not None else st.take(r, W + 1)
        n_all = None
        U = _u_phase(st, r, s, blk[:W])
        V, neg = _v_phase(st, r, blk[W:])
        t = s.t
        if int(V.max()) and int(t.max()) * (int(V.max()) + 1) > _I64_MAX:
            if np.any(V > (_U64(_I64_MAX) - U) // t):
                raise OverflowError(
                    "a discrete Laplace sample exceeds the int64 range (|Y| >= 2**63); this "
                    "happens with probability about exp(-2**63 / t) per draw, use a smaller "
                    "scale")
        X = V * t
        X += U
        X = X.view(np.int64)
        rej = neg & (X == 0)
        np.negative(X, out=X, where=neg)
        if not rej.any():
            out[pos] = X
            break
        keep = np.flatnonzero(~rej)
        out[pos[keep]] = X[keep]
        again = np.flatnonzero(rej)
        pos, r, s = pos[again], r[again], s.sub(again)
    return out


# --------------------------------------------------------------------------------------------
# CKS20 Algorithm 3: discrete Gaussian
# --------------------------------------------------------------------------------------------


def _isqrt(a: np.ndarray) -> np.ndarray:
    """floor(sqrt(a)) for int64 a >= 0 by integer Newton iteration (no floats)."""
    a = np.asarray(a, dtype=np.int64)
    bits = np.zeros(a.shape, dtype=np.int64)
    v = a.copy()
    for s in (32, 16, 8, 4, 2, 1):
        big = v >= (1 << s)
        bits[big] += s
        v[big] >>= s
    bits += v > 0
    x = np.left_shift(np.int64(1), (bits + 1) // 2)  # 2**ceil(bits / 2) > sqrt(a)
    while True:  # Newton from above decreases to floor(sqrt(a)) and stops there
        y = (x + a // np.maximum(x, 1)) // 2
        if np.all(y >= x):
            break
        x = np.minimum(x, y)
    return np.where(a == 0, 0, x)


def _gauss_accept(st: _Stream, rows: np.ndarray, Y: np.ndarray, a: np.ndarray,
                  t: np.ndarray, amax: int, tmax: int, shared: bool) -> np.ndarray:
    """Bernoulli(exp(-(|Y| - a/t)^2 / (2a))) of CKS20 Algorithm 3, exactly, for sigma^2 = a.

    With w = |Y| t - a and |w| = m t + rho (0 <= rho < t) the exponent w^2 / (2 a t^2) is
    m^2 / (2a) + m rho / (a t) + rho^2 / (2 a t^2), and the coin is the AND of exact coins:

    * m^2 / (2a) = I1 + r1 / (2a): I1 Bernoulli(exp(-1)) trials, Algorithm 1 on r1 / (2a);
    * m rho / (a t): if m <= a, Algorithm 1 with the factors (m / a)(rho / t); otherwise (only
      for small a in practice) the fraction m rho / (a t) = I2 + r2 / (a t);
    * rho^2 / (2 a t^2) <= 1 / (2a): Algorithm 1 with the factors (rho / t)(rho / t)(1 / (2a)).

    Elements for which a number would reach 2**62 (|Y| t, m^2, a t or m rho; with
    a <= MAX_SIGMA2 = 2**56 and t <= 2**28 + 1 this needs m >= 2**31, hence gamma >= 32) are
    handled exactly with Python integers, after the others and from the same pool: gamma as a
    Fraction, min(32, floor(gamma)) Bernoulli(exp(-1)) trials (vectorised), and for the
    survivors (probability <= exp(-32)) ``_slow_bern_exp`` on the rest. Candidates with
    m >= 2**31 have probability about exp(-2**31 / t) (below exp(-2**10) for sigma <= 2**21,
    about 3e-4 at sigma^2 = 2**56).
    """
    p = rows.size
    absY = np.abs(Y)
    slow = absY > (MAX_INT - 1) // t
    aw = np.abs(np.where(slow, 0, absY) * t - a)
    m, rho = np.divmod(aw, t)
    slow |= m >= _SLOW_M
    small_m = m <= a
    if not small_m.all():
        at_ok = a <= (MAX_INT - 1) // t
        mr_ok = rho <= (MAX_INT - 1) // np.maximum(m, 1)
        slow |= ~small_m & ~(at_ok & mr_ok)
    out = np.zeros(p, dtype=bool)
    fast = np.flatnonzero(~slow) if slow.any() else None
    if fast is None or fast.size:
        if fast is None:
            fr, fm, frho, fa, ft, fsm = rows, m, rho, a, t, small_m
        else:
            fr, fm, frho, fa, ft, fsm = (rows[fast], m[fast], rho[fast], a[fast], t[fast],
                                         small_m[fast])
        u = np.uint64
        fm, frho, fa, ft = fm.astype(u), frho.astype(u), fa.astype(u), ft.astype(u)
        # Rows of denominators: shared scalars when sigma^2 is (libdivide, one threshold).
        a_r, t_r = (_U64(amax), _U64(tmax)) if shared else (fa, ft)
        d1 = a_r + a_r
        whole, r1 = np.divmod(fm * fm, d1)
        whole = whole.astype(np.int64)
        sm_all = bool(fsm.all())
        if sm_all:
            n2, d2, rho2, t2r = fm, a_r, frho, t_r
        else:  # m > a: the term m rho / (a t) = q2 + r2 / (a t), a t < 2**62
            at = fa * ft
            q2, r2 = np.divmod(np.where(fsm, 0, fm) * frho, np.where(fsm, 1, at))
            whole += q2.astype(np.int64)
            n2, d2 = np.where(fsm, fm, r2), np.where(fsm, fa, at)
            rho2, t2r = np.where(fsm, frho, 1).astype(u), np.where(fsm, ft, 1).astype(u)
        # amax, tmax: the chunk's largest a and t (not the pending set's: see _chain).
        if amax * tmax < 2**56:  # (n2 / d2)(rho / t) as one factor; d2 t <= a t
            t2 = ([n2 * rho2], [a_r * t_r if shared else d2 * t2r], amax * tmax)
        else:
            t2 = ([n2, rho2], [d2, t2r], tmax)
        t1 = ([r1], [d1], 2 * amax)
        # rho^2 / (2 a t^2) = (rho^2 / t^2)(1 / (2a)); t^2 <= (2**28 + 1)**2 < 2**64.
        t3 = ([frho * frho, _U64(1)], [t_r * t_r, d1], 2 * amax)
        res = _bern_exp_parts(st, fr, whole, (t1, t2, t3))
        if fast is None:
            out = res
        else:
            out[fast] = res
    if fast is not None:
        idx = np.flatnonzero(slow)
        gammas = [Fraction((int(absY[i]) * int(t[i]) - int(a[i])) ** 2,
                           2 * int(a[i]) * int(t[i]) ** 2) for i in idx.tolist()]
        pre = np.array([min(32, g.numerator // g.denominator) for g in gammas], dtype=np.int64)
        alive = np.flatnonzero(_e1_run(st, rows[idx], pre) == pre)
        for j in alive.tolist():
            out[idx[j]] = _slow_bern_exp(st, int(rows[idx[j]]), gammas[j] - int(pre[j]))
    return out


def _dgauss(st: _Stream, rows: np.ndarray, a: np.ndarray, scalar: bool,
            n_all: int | None = None) -> np.ndarray:
    """Discrete Gaussian samples (CKS20 Algorithm 3) with sigma^2 = a (int64 >= 1, shape (1,)
    if ``scalar`` else one per element): candidates Y ~ discrete Laplace(floor(sigma) + 1),
    accepted by ``_gauss_accept``; in rejection round i each pending element gets
    ``_attempts(i)`` candidates (the first accepted one counts)."""
    t = _isqrt(a) + 1
    out = np.empty(rows.size, dtype=np.int64)
    pos = np.arange(rows.size)
    r = rows
    aa, tt = (np.broadcast_to(a, rows.shape), np.broadcast_to(t, rows.shape)) if scalar \
        else (a, t)
    sc = _Scale(t.astype(np.uint64), scalar)
    amax = int(a.max())
    rnd = 0
    while pos.size:
        A = _attempts(rnd)
        p = pos.size
        if A > 1:
            rr, sa, ar, tr = np.repeat(r, A), sc.repeat(A), np.repeat(aa, A), np.repeat(tt, A)
        else:
            rr, sa, ar, tr = r, sc, aa, tt
        Y = _dlap(st, rr, sa, n_all)
        n_all = None
        ok = _gauss_accept(st, rr, Y, ar, tr, amax, sc.tmax, scalar)
        if A > 1:
            ok = ok.reshape(p, A)
            first = ok.argmax(axis=1)
            ok = ok[np.arange(p), first]
            Y = Y.reshape(p, A)[np.arange(p), first]
        if rnd == 0 and ok.all():
            return Y
        di = np.flatnonzero(ok)
        out[pos[di]] = Y[di]
        ki = np.flatnonzero(~ok)
        pos, r, aa, tt, sc = pos[ki], r[ki], aa[ki], tt[ki], sc.sub(ki)
        rnd += 1
    return out


# --------------------------------------------------------------------------------------------
# Exact scalar slow path (Python integers), for astronomically rare elements
# --------------------------------------------------------------------------------------------


def _slow_uniform(st: _Stream, row: int, n: int) -> int:
    """Uniform integer in [0, n) for any Python int n >= 1, from ``row``'s pool: k words make
    an integer in [0, 2**(64k)), rejected below 2**(64k) mod n."""
    k = n.bit_length() // 64 + 1
    thr = (1 << (64 * k)) % n
    rows = np.full(k, row, dtype=np.int64)
    while True:
        x = 0
        for wd in st.take(rows, 1)[0].tolist():
            x = (x << 64) | int(wd)
        if x >= thr:
            return x % n


def _slow_e1(st: _Stream, row: int) -> bool:
    """One Bernoulli(exp(-1)) trial (CKS20 Algorithm 1, gamma = 1) with Python integers."""
    s = int(_TAB[_slow_uniform(st, row, _FACT6)])
    if s != 2:
        return s == 1
    k = 7
    while _slow_uniform(st, row, k) == 0:
        k += 1
    return bool(k & 1)


def _slow_bern_exp(st: _Stream, row: int, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for a rational gamma >= 0 with Python integers: floor(gamma)
    Bernoulli(exp(-1)) trials, then CKS20 Algorithm 1 on the fractional part."""
    whole = gamma.numerator // gamma.denominator
    frac = gamma - whole
    i = 0
    while i < whole:
        if not _slow_e1(st, row):
            return False
        i += 1
    num, den = frac.numerator, frac.denominator
    k = 1
    while _slow_uniform(st, row, den * k) < num:
        k += 1
    return bool(k & 1)


# --------------------------------------------------------------------------------------------
# Chunked driver and the public API
# --------------------------------------------------------------------------------------------

Kernel = Callable[[_Stream, int, np.ndarray], np.ndarray]


def _run(kernel: Kernel, bitgens: list, params: np.ndarray, words_per_elem: float,
         words_sd: float, per_replica: bool = False) -> np.ndarray:
    """``kernel(stream, Rc, p)`` for replica chunks (Rc replicas) and element chunks (params
    p, flat), results of shape (Rc * len(p),) in (replica, element) order. A replica's stream
    carries over from one element chunk to the next; before each element chunk every row is
    topped up to about the expected need plus 2.5 standard deviations (a function of the
    chunk's parameters only: a row that still runs short draws more from its own generator,
    which costs a Python call per row). With ``per_replica`` the params have a leading replica
    axis (R, *S) and the kernel gets each chunk's (Rc, p) block."""
    R = len(bitgens)
    shape = params.shape[1:] if per_replica else params.shape
    flat = params.reshape(R, -1) if per_replica else params.reshape(-1)
    n = flat.shape[-1]
    out = np.empty((R, n), dtype=np.int64)
    if n == 0:
        return out.reshape((R, *shape))
    ec = min(n, _ELEM_CHUNK)
    rc = max(1, _PAIR_CHUNK // ec)
    for r0 in range(0, R, rc):
        gens = bitgens[r0:r0 + rc]
        st = _Stream(gens, grow=int(words_sd * math.sqrt(ec)) + 32)
        for j0 in range(0, n, ec):
            pj = flat[r0:r0 + len(gens), j0:j0 + ec] if per_replica else flat[j0:j0 + ec]
            nc = pj.shape[-1]
            need = int(words_per_elem * nc + 2.5 * words_sd * math.sqrt(nc)) + 16
            st.ensure(st.off + need, grow=0, headroom=need // 2)
            res = kernel(st, len(gens), pj)
            out[r0:r0 + len(gens), j0:j0 + nc] = res.reshape(len(gens), nc)
    return out.reshape((R, *shape))


def _rows(Rc: int, nc: int) -> np.ndarray:
    return np.repeat(np.arange(Rc, dtype=np.int64), nc)


def _laplace_kernel(st: _Stream, Rc: int, pj: np.ndarray) -> np.ndarray:
    nc = pj.shape[-1]  # pj: (nc,) shared by the Rc replicas, or (Rc, nc) one row each
    flat = pj.reshape(-1)
    scalar = bool(np.all(flat == flat[0]))
    t = flat[:1] if scalar else (flat if pj.ndim == 2 else np.tile(pj, Rc))
    return _dlap(st, _rows(Rc, nc), _Scale(t.astype(np.uint64), scalar), nc)


def _gauss_kernel(st: _Stream, Rc: int, pj: np.ndarray) -> np.ndarray:
    scalar = bool(np.all(pj == pj[0]))
    a = pj[:1] if scalar else np.tile(pj, Rc)
    return _dgauss(st, _rows(Rc, pj.size), a, scalar, pj.size)


def bernoulli_exp(num: object, den: object,
                  rngs: np.random.Generator | Sequence[np.random.Generator]) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) per element; num >= 0, den >= 1 integer arrays of shape S
    (broadcastable), int64 values < 2**62.

    CKS20 (arXiv:2004.00010) Algorithm 1 on the fractional part gamma = r / den (r = num mod
    den): K = 1; while Bernoulli(gamma / K): K += 1; return K odd, with Bernoulli(gamma / K)
    drawn as Bernoulli(r / den) AND Bernoulli(1 / K); and for gamma > 1 the AND with
    floor(num / den) independent Bernoulli(exp(-1)) trials. Returns a bool array of shape
    (R, *S); row r uses ``rngs[r]`` only.

    Parameters
    ----------
    num : int or array_like of int
        Numerators, >= 0 and < 2**62 (floats are refused).
    den : int or array_like of int
        Denominators, >= 1 and < 2**62, broadcastable with ``num``.
    rngs : numpy.random.Generator or sequence of them
        One generator per replica: row r of the output draws from ``rngs[r]`` only.

    Returns
    -------
    ndarray of bool
        Shape (R, *S).

    Raises
    ------
    TypeError
        If ``num`` or ``den`` is not of an integer type, or ``rngs`` holds no generators.
    ValueError
        If a value is out of range or the shapes do not broadcast.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.discrete import bernoulli_exp
    >>> bernoulli_exp([0, 1, 3], 2, np.random.default_rng(0))
    array([[ True, False, False]])
    >>> float(bernoulli_exp(np.ones(100_000, dtype=int), 1, np.random.default_rng(0)).mean())
    0.36918
    """
    gens = _as_generators(rngs)
    n_arr = _as_int_array(num, "num", 0, MAX_INT - 1)
    d_arr = _as_int_array(den, "den", 1, MAX_INT - 1)
    try:
        n_b, d_b = np.broadcast_arrays(n_arr, d_arr)
    except ValueError:
        raise ValueError(f"num and den must broadcast to one shape, got shapes {n_arr.shape} "
                         f"and {d_arr.shape}") from None
    pairs = np.stack([n_b.reshape(-1), d_b.reshape(-1)], axis=1)
    index = np.arange(pairs.shape[0], dtype=np.int64).reshape(n_b.shape)

    def kernel(st: _Stream, Rc: int, pj: np.ndarray) -> np.ndarray:
        chunk = pairs[pj]
        nd = np.tile(chunk, (Rc, 1))
        whole, r = np.divmod(nd[:, 0], nd[:, 1])
        dmax = int(chunk[:, 1].max())
        den = _U64(dmax) if int(chunk[:, 1].min()) == dmax else nd[:, 1].astype(np.uint64)
        term = ([r.astype(np.uint64)], [den], dmax)
        return _bern_exp_parts(st, _rows(Rc, pj.size), whole, (term,)).astype(np.int64)

    return _run(kernel, gens, index, words_per_elem=2.0, words_sd=2.0).astype(bool)


def discrete_laplace(scale: object,
                     rngs: np.random.Generator | Sequence[np.random.Generator], *,
                     per_replica: bool = False) -> np.ndarray:
    """Exact discrete Laplace: P[Y = y] proportional to exp(-|y| / t), t = scale (integer >= 1,
    < 2**62).

    CKS20 (arXiv:2004.00010) Algorithm 2 with s = 1: U uniform in [0, t) accepted with
    Bernoulli(exp(-U/t)) (Algorithm 1), V the number of Bernoulli(exp(-1)) successes before the
    first failure, X = U + t V, sign B ~ Bernoulli(1/2), reject (B = 1, X = 0), return
    (1 - 2B) X. ``scale`` has shape S; returns int64 of shape (R, *S), row r from ``rngs[r]``
    only. Raises OverflowError if a sample does not fit int64 (probability about
    exp(-2**63 / t) per draw: never below t = 2**56, about 2% per draw at t = 2**61).

    With ``per_replica`` the scales have shape (R, *S), row r for replica r (each replica its
    own scales, as under a per-replica allocation rule). Row r of the output, and the state
    ``rngs[r]`` is left in, are then those of ``discrete_laplace(scale[r], [rngs[r]])``: the
    replicas whose scales are all narrow (<= 2**48) are sampled together, where the only
    choice made from the whole chunk's scales, how ``_chain`` draws trial k >= 2**16, concerns
    an event of probability below 1 / (2**16)!; any other replica is sampled alone.

    Parameters
    ----------
    scale : int or array_like of int
        The scale t of each element, >= 1 and < 2**62; shape S (or (R, *S) with
        ``per_replica``).
    rngs : numpy.random.Generator or sequence of them
        One generator per replica: row r of the output draws from ``rngs[r]`` only.
    per_replica : bool, default False
        ``scale`` has a leading axis of one row per replica.

    Returns
    -------
    ndarray of int64
        Shape (R, *S).

    Raises
    ------
    TypeError
        If ``scale`` is not of an integer type.
    ValueError
        If a scale is out of range, or ``per_replica`` scales have no leading axis of R rows.
    OverflowError
        If a sample does not fit int64 (only for scales near 2**62).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.discrete import discrete_laplace
    >>> discrete_laplace([1, 10, 1000], [np.random.default_rng(0), np.random.default_rng(1)])
    array([[   0,    7,   24],
           [   0,   20, -972]])
    >>> discrete_laplace(1.5, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    TypeError: scale must have an integer dtype, got float64
    """
    gens = _as_generators(rngs)
    t = _as_int_array(scale, "scale", 1, MAX_INT - 1)
    return _per_replica_laplace(t, gens) if per_replica else _laplace_run(t, gens)


def _laplace_run(t: np.ndarray, gens: list, per_replica: bool = False) -> np.ndarray:
    """The chunked driver on the discrete Laplace kernel (the word budget of narrow or wide
    scales, from the largest t)."""
    narrow = int(t.max(initial=1)) <= _NARROW
    return _run(_laplace_kernel, gens, t, words_per_elem=4.5 if narrow else 8.3,
                words_sd=3.5 if narrow else 6.3, per_replica=per_replica)


def _per_replica_laplace(t: np.ndarray, gens: list) -> np.ndarray:
    """:func:`discrete_laplace` with ``per_replica``: t of shape (R, *S)."""
    R = len(gens)
    if t.ndim == 0 or t.shape[0] != R:
        raise ValueError(f"per-replica scales need a leading axis of {R} replicas, got shape "
                         f"{t.shape}")
    out = np.empty(t.shape, dtype=np.int64)
    narrow = t.reshape(R, -1).max(axis=1, initial=1) <= _NARROW
    together = np.flatnonzero(narrow)
    if together.size:
        out[together] = _laplace_run(t[together], [gens[i] for i in together], True)
    for i in np.flatnonzero(~narrow).tolist():
        out[i] = _laplace_run(t[i], [gens[i]])[0]
    return out


def discrete_gaussian(sigma2: object,
                      rngs: np.random.Generator | Sequence[np.random.Generator]) -> np.ndarray:
    """Exact discrete Gaussian N_Z(0, sigma^2): P[Y = y] proportional to exp(-y^2 / (2 sigma^2)),
    sigma^2 = sigma2 an integer >= 1 (supported at least up to 2**44; beyond, a clear ValueError).

    CKS20 (arXiv:2004.00010) Algorithm 3: t = floor(sigma) + 1 (exact integer square root),
    Y ~ discrete Laplace(t) (Algorithm 2), accepted with
    Bernoulli(exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))), drawn exactly as the AND of three
    Bernoulli(exp(-.)) coins so that no intermediate exceeds 2**62 (``_gauss_accept``).
    sigma2 may be up to MAX_SIGMA2 = 2**56; larger values raise ValueError. Returns int64 of
    shape (R, *S), row r from ``rngs[r]`` only.

    Parameters
    ----------
    sigma2 : int or array_like of int
        The variance parameter sigma^2 of each element, in [1, 2**56]; shape S.
    rngs : numpy.random.Generator or sequence of them
        One generator per replica: row r of the output draws from ``rngs[r]`` only.

    Returns
    -------
    ndarray of int64
        Shape (R, *S).

    Raises
    ------
    TypeError
        If ``sigma2`` is not of an integer type.
    ValueError
        If a value is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.discrete import discrete_gaussian
    >>> discrete_gaussian([1, 100, 10**6], np.random.default_rng(0))
    array([[  1,   5, 774]])
    >>> round(float(discrete_gaussian(np.full(100_000, 4), np.random.default_rng(0)).var()), 2)
    3.99
    """
    gens = _as_generators(rngs)
    a = _as_int_array(sigma2, "sigma2", 1, MAX_SIGMA2)
    return _run(_gauss_kernel, gens, a, words_per_elem=13.5, words_sd=9.0)


#: Significant bits of the exponential mechanism's coefficient (:func:`exponential_choice`),
#: and the largest power of two of its denominator (coins below 2**48 avoid slow rejections).
EXP_COEFFICIENT_BITS = 40
EXP_DEN_BITS = 48


def exponential_choice(gaps: Sequence[int] | np.ndarray, coefficient: object,
                       widths: Sequence[int] | np.ndarray, rng: np.random.Generator,
                       groups: np.ndarray | None = None) -> np.ndarray:
    """Exact exponential-mechanism draws: in each group of candidates, index i with probability
    proportional to exp(-c * gaps[i]), c = ``coefficient`` (McSherry and Talwar 2007; book
    chapters 1 and 6).

    ``gaps`` are non-negative integers (Python ints or an int64 array), the groups' candidates
    one after the other (``widths[j]`` candidates for group j), each gap the candidate's utility
    distance to its group's best, in integer units. One draw per group, or one per entry of
    ``groups`` (group indices) if given. Returns the chosen index within its group.

    Rejection from uniform proposals: a proposal i is accepted with Bernoulli(exp(-x_i)), drawn
    exactly by :func:`bernoulli_exp` (CKS20 Algorithm 1), so the first accepted proposal has
    exactly P[i] proportional to exp(-x_i); no probability is ever formed in floating point and
    every candidate stays possible. Round r draws min(width, 2**r) proposals for each draw still
    pending and keeps the first accepted (the same sequence of independent trials, batched).
    The exponent is x_i = C gaps[i] / 2**p with
    C = floor(c 2**p) (exact, from c's binary fraction) and p about 40 - log2 c, at most 48:
    c is rounded *down* by less than 2**-39 of itself (for c >= 2**-8; by less than 2**-48
    otherwise), which only flattens the distribution (the mechanism at a slightly smaller
    epsilon).
    An exponent above 2**62 - 1 is replaced by 2**62 - 1: that is the exponential mechanism of
    the utility max(q_i, q* - (2**62 - 1) / c), which has the same sensitivity. A group whose
    best candidate has gap 0 accepts a proposal with probability >= 1 / width.

    **Time and random-number use depend on the private scores.** A proposal is accepted with
    probability p = (1 / w) sum_i exp(-x_i) (w the group's width), a function of every gap, so
    the number of proposals, of rounds and of coins, hence the words taken from ``rng`` and
    the running time, vary with the scores. Only the returned index is covered by the
    mechanism's epsilon: an attacker who times the call (or counts the words it used) sees,
    besides the index, a draw whose distribution depends on p: the number of proposals is
    geometric with mean about 1 / p, so the time says how many candidates score near the best
    (p near 1: many; p near 1 / w: one), and each rejected proposal's coins depend on its own
    exponent. The draws are bounded in distribution, not in number: the gaps have minimum 0,
    so p >= 1 / w, and a round of min(w, 2**r) proposals all fail with probability at most
    (1 - 1 / w)**min(w, 2**r); once the batches reach w (after ceil(log2 w) rounds), each
    further round fails with probability at most (1 - 1 / w)**w <= 1 / e, so more than
    ceil(log2 w) + j rounds happen with probability at most e**-j whatever the scores; per
    proposal, the Bernoulli(exp(-whole)) trials stop at the first failure (fewer than
    1 / (1 - 1 / e), about 1.6, on average) and the fractional part's at most e on average.
    Equalising the time (a fixed number of proposals and coins per call, whatever the
    outcome) would change which words serve which draw, hence every committed release drawn
    after one, and is not done: the samplers are meant for a data holder who runs the fit
    where its duration is not observed. The words used do not leak through the outputs: every
    later draw reads fresh, independent words, so its distribution does not depend on how
    many came before (with a secret seed; a known seed voids every guarantee anyway).

    Parameters
    ----------
    gaps : sequence of int or ndarray of int
        Every group's candidates' gaps (>= 0), one group after the other.
    coefficient : float or fractions.Fraction
        c (>= 0), read exactly.
    widths : sequence of int or ndarray of int
        The number of candidates of each group (each >= 1).
    rng : numpy.random.Generator
        The source of the draws.
    groups : ndarray of int or None, default None
        The group of each draw (None: one draw per group).

    Returns
    -------
    ndarray of int64
        The index chosen within its group, one per draw.

    Raises
    ------
    TypeError
        If ``rng`` is not a numpy Generator.
    ValueError
        If a group has no candidate, the widths do not add up to the number of gaps, or a gap
        or the coefficient is negative.

    Examples
    --------
    Two groups of 3 and 2 candidates, then six draws from the first group:

    >>> from fractions import Fraction
    >>> import numpy as np
    >>> from dpkmeans.privacy.discrete import exponential_choice
    >>> exponential_choice([3, 0, 1, 0, 2], Fraction(1, 2), [3, 2], np.random.default_rng(0))
    array([1, 0])
    >>> exponential_choice([3, 0, 1], 0.5, [3], np.random.default_rng(0),
    ...                    groups=np.zeros(6, dtype=np.int64))
    array([2, 1, 1, 1, 2, 2])
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    gen = rng
    wid = np.asarray(widths, dtype=np.int64).reshape(-1)
    if wid.size == 0 or np.any(wid < 1):
        raise ValueError("every group needs at least one candidate")
    starts = np.concatenate([[0], np.cumsum(wid)[:-1]]).astype(np.int64)
    whole, rem, den = exponential_exponents(gaps, coefficient)
    if whole.size != int(wid.sum()):
        raise ValueError(f"gaps holds {whole.size} candidates, the widths {int(wid.sum())}")
    group = np.arange(wid.size, dtype=np.int64) if groups is None \
        else np.asarray(groups, dtype=np.int64).reshape(-1)
    out = np.full(group.size, -1, dtype=np.int64)
    pending = np.arange(group.size, dtype=np.int64)
    batch = 1  # proposals per pending draw: 1, 2, 4, ... up to its width
    while pending.size:
        w = wid[group[pending]]
        b = np.minimum(w, batch)
        batch = min(2 * batch, int(wid.max()))
        owner = np.repeat(np.arange(pending.size), b)
        proposal = gen.integers(0, np.repeat(w, b), dtype=np.int64)  # exact bounded integers
        cand = starts[group[pending]][owner] + proposal
        coins = np.ones(cand.size, dtype=bool)  # exp(-x) = exp(-whole) exp(-rem / den)
        part = whole[cand]
        some = np.flatnonzero(part)
        if some.size:
            coins[some] = bernoulli_exp(part[some], 1, [gen])[0]
        some = np.flatnonzero(coins & (rem[cand] > 0))
        if some.size:
            coins[some] = bernoulli_exp(rem[cand[some]], den, [gen])[0]
        heads = np.flatnonzero(coins)
        who = owner[heads]
        first = np.ones(heads.size, dtype=bool)
        first[1:] = who[1:] != who[:-1]  # proposals in order: the first head of each owner
        out[pending[who[first]]] = proposal[heads[first]]
        done = np.zeros(pending.size, dtype=bool)
        done[who] = True
        pending = pending[~done]
    return out


def exponential_choices(gaps: Sequence[np.ndarray], coefficient: object,
                        widths: Sequence[int] | np.ndarray,
                        rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`exponential_choice` for R replicas at once, one draw per group each: row r of the
    result is ``exponential_choice(gaps[r], coefficient, widths, rngs[r])``, and ``rngs[r]`` is
    left in the same state, bit for bit (tested).

    The rounds of rejection run in step over the replicas, and each replica's generator sees the
    calls of its own sequential run in the same order: its uniform proposals
    (``Generator.integers``, one call a round, as there), then its Bernoulli(exp(-whole))
    coins, then its Bernoulli(exp(-rem / den)) coins, each batched over the replicas that have
    as many coins in that round (:func:`_bernoulli_exp_rows`: a replica's words do not depend
    on the replicas beside it). Used by the categorical modes of k-prototypes, R replicas an
    iteration (book chapter 11; docs/design.md, "Privacy rules").

    Parameters
    ----------
    gaps : sequence of ndarray of int
        Replica r's gaps, every group's candidates one after the other (as
        :func:`exponential_choice`).
    coefficient : float or fractions.Fraction
        c (>= 0), read exactly.
    widths : sequence of int or ndarray of int
        The number of candidates of each group (each >= 1), shared by the replicas.
    rngs : sequence of numpy.random.Generator
        One generator per replica.

    Returns
    -------
    ndarray of int64
        The index chosen within each group, shape (R, groups).

    Raises
    ------
    TypeError
        If an element of ``rngs`` is not a numpy Generator.
    ValueError
        If ``gaps`` and ``rngs`` differ in length, a group has no candidate, a replica's gaps
        do not hold the widths' candidates, or a gap or the coefficient is negative.

    Examples
    --------
    >>> from fractions import Fraction
    >>> import numpy as np
    >>> from dpkmeans.privacy.discrete import exponential_choices
    >>> exponential_choices([np.array([3, 0, 1, 0, 2])] * 2, Fraction(1, 2), [3, 2],
    ...                     [np.random.default_rng(0), np.random.default_rng(1)])[0]
    array([1, 0])
    """
    gens = list(rngs)
    for i, g in enumerate(gens):
        if not isinstance(g, np.random.Generator):
            raise TypeError(f"rngs[{i}] must be a numpy.random.Generator, got "
                            f"{type(g).__name__}")
    R = len(gens)
    if len(gaps) != R:
        raise ValueError(f"gaps holds {len(gaps)} replicas, rngs {R}")
    wid = np.asarray(widths, dtype=np.int64).reshape(-1)
    if wid.size == 0 or np.any(wid < 1):
        raise ValueError("every group needs at least one candidate")
    starts = np.concatenate([[0], np.cumsum(wid)[:-1]]).astype(np.int64)
    G, width = wid.size, int(wid.sum())
    if R == 0:
        return np.empty((0, G), dtype=np.int64)
    # the exponents are elementwise (the int64 and the Python-integer paths agree), so the
    # replicas' gaps go through one call when they are all int64 arrays
    if all(isinstance(g, np.ndarray) and g.dtype == np.int64 for g in gaps):
        flat = np.concatenate([g.reshape(-1) for g in gaps])
        if flat.size != R * width:
            raise ValueError(f"gaps holds {flat.size} candidates, the widths {R} x {width}")
        whole, rem, den = exponential_exponents(flat, coefficient)
    else:
        parts = [exponential_exponents(g, coefficient) for g in gaps]
        if any(w.size != width for w, _, _ in parts):
            raise ValueError(f"a replica's gaps do not hold the widths' {width} candidates")
        whole = np.concatenate([w for w, _, _ in parts])
        rem = np.concatenate([m for _, m, _ in parts])
        den = parts[0][2]
    whole, rem = whole.reshape(R, width), rem.reshape(R, width)
    out = np.full((R, G), -1, dtype=np.int64)
    pend_rep = np.repeat(np.arange(R, dtype=np.int64), G)  # by replica, then group: as there
    pend_grp = np.tile(np.arange(G, dtype=np.int64), R)
    batch, wmax = 1, int(wid.max())
    while pend_rep.size:
        w = wid[pend_grp]
        b = np.minimum(w, batch)
        batch = min(2 * batch, wmax)
        owner = np.repeat(np.arange(pend_rep.size), b)
        highs = np.repeat(w, b)
        rep = pend_rep[owner]  # sorted: each replica's proposals are one run
        edges = np.searchsorted(rep, np.arange(R + 1))
        proposal = np.empty(owner.size, dtype=np.int64)
        for r in np.flatnonzero(edges[1:] > edges[:-1]).tolist():
            lo, hi = int(edges[r]), int(edges[r + 1])
            proposal[lo:hi] = gens[r].integers(0, highs[lo:hi], dtype=np.int64)
        cand = starts[pend_grp][owner] + proposal
        coins = np.ones(cand.size, dtype=bool)  # exp(-x) = exp(-whole) exp(-rem / den)
        part = whole[rep, cand]
        some = np.flatnonzero(part)
        if some.size:
            coins[some] = _bernoulli_exp_rows(part[some], 1, rep[some], gens)
        some = np.flatnonzero(coins & (rem[rep, cand] > 0))
        if some.size:
            coins[some] = _bernoulli_exp_rows(rem[rep[some], cand[some]], den, rep[some], gens)
        heads = np.flatnonzero(coins)
        who = owner[heads]
        first = np.ones(heads.size, dtype=bool)
        first[1:] = who[1:] != who[:-1]  # proposals in order: the first head of each owner
        out[pend_rep[who[first]], pend_grp[who[first]]] = proposal[heads[first]]
        done = np.zeros(pend_rep.size, dtype=bool)
        done[who] = True
        pend_rep, pend_grp = pend_rep[~done], pend_grp[~done]
    return out


def _bernoulli_exp_rows(num: np.ndarray, den: int, rep: np.ndarray,
                        gens: Sequence[np.random.Generator]) -> np.ndarray:
    """``bernoulli_exp(num[rep == r], den, [gens[r]])[0]`` for every replica r in ``rep``
    (sorted), in one flat bool array: the same coins and the same generator states. The
    replicas with the same number n of coins run as one per-replica batch of shape (., n):
    a replica's words depend only on its own elements and n (the module docstring)."""
    num = np.asarray(num, dtype=np.int64)
    if num.size and (int(num.min()) < 0 or int(num.max()) > MAX_INT - 1):
        raise ValueError(f"num must lie in [0, {MAX_INT - 1}]")
    if not 1 <= int(den) <= MAX_INT - 1:
        raise ValueError(f"den must lie in [1, {MAX_INT - 1}]")
    d = int(den)
    counts = np.bincount(rep, minlength=len(gens))
    first = np.cumsum(counts) - counts
    out = np.empty(num.size, dtype=bool)

    def kernel(st: _Stream, Rc: int, pj: np.ndarray) -> np.ndarray:
        whole, r = np.divmod(pj.reshape(-1), np.int64(d))  # as bernoulli_exp's kernel
        term = ([r.astype(np.uint64)], [_U64(d)], d)
        return _bern_exp_parts(st, _rows(Rc, pj.shape[-1]), whole, (term,)).astype(np.int64)

    for n in np.unique(counts[counts > 0]).tolist():
        reps = np.flatnonzero(counts == n)
        idx = (first[reps][:, None] + np.arange(n)).reshape(-1)
        bits = [gens[r].bit_generator for r in reps.tolist()]
        res = _run(kernel, bits, num[idx].reshape(reps.size, n), words_per_elem=2.0,
                   words_sd=2.0, per_replica=True)
        out[idx] = res.reshape(-1).astype(bool)
    return out


def exponential_exponents(gaps: Sequence[int] | np.ndarray,
                          coefficient: object) -> tuple[np.ndarray, np.ndarray, int]:
    """The exponents x_i = c gaps[i] of :func:`exponential_choice` as exact integers: x_i =
    whole[i] + rem[i] / den, with c rounded down to C / den, den = 2**p, p about 40 - log2 c
    (at most 48), and an exponent above 2**62 - 1 replaced by 2**62 - 1.

    Parameters
    ----------
    gaps : sequence of int or ndarray of int
        The gaps (>= 0).
    coefficient : float or fractions.Fraction
        c (>= 0), read exactly.

    Returns
    -------
    whole, rem : ndarray of int64
        The integer and fractional parts of each exponent (the latter in units of 1 / den).
    den : int
        The denominator 2**p.

    Raises
    ------
    ValueError
        If the coefficient or a gap is negative.

    Examples
    --------
    c = 1/3 is rounded down, so 3 c falls just short of 1:

    >>> from fractions import Fraction
    >>> from dpkmeans.privacy.discrete import exponential_exponents
    >>> whole, rem, den = exponential_exponents([0, 1, 3], Fraction(1, 3))
    >>> whole, int(den - rem[2])
    (array([0, 0, 0]), 2)
    """
    frac = Fraction(coefficient)  # exact: a float's binary fraction
    if frac < 0:
        raise ValueError(f"the coefficient must be >= 0, got {float(frac)}")
    bits = 0 if frac == 0 else min(EXP_DEN_BITS, max(0, EXP_COEFFICIENT_BITS - (
        frac.numerator.bit_length() - frac.denominator.bit_length())))
    C = (frac.numerator << bits) // frac.denominator
    small = isinstance(gaps, np.ndarray) and gaps.dtype.kind in "iu"
    gap_arr = gaps.reshape(-1).astype(np.int64) if small \
        else np.array([int(v) for v in np.ravel(np.asarray(gaps, dtype=object))], dtype=object)
    if gap_arr.size and gap_arr.min() < 0:
        raise ValueError("gaps must be >= 0")
    cap, mask = MAX_INT - 1, (1 << bits) - 1
    if small and int(gap_arr.max(initial=0)).bit_length() + C.bit_length() <= 62:
        x = gap_arr * np.int64(C)  # below 2**62: exact in int64, whole below the cap
        return x >> bits, x & mask, 1 << bits
    xs = [C * int(v) for v in gap_arr.tolist()]  # Python integers
    whole = np.array([min(v >> bits, cap) for v in xs], dtype=np.int64)
    rem = np.array([v & mask if (v >> bits) < cap else 0 for v in xs], dtype=np.int64)
    return whole, rem, 1 << bits
