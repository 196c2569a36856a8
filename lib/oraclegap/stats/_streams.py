"""Counter-based random streams for compiled kernels: SplitMix64 states started from a 64-bit key
and an index, so that draw t of stream (key, index) is the same whatever thread, block or order
computes it. Used by the nulls' re-deals and chains (:mod:`oraclegap.stats.nulls`) and by 001's
within-cell permutations (:mod:`oraclegap.stats.noise`).

SplitMix64 (Steele, Lea and Flood, 2014) advances a 64-bit state by a fixed odd gamma and
outputs a bijective mix of it; streams keyed by a hash of (key, index) start at effectively
independent points of its 2^64 period.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True)
def _mix64(z):
    """SplitMix64's output function (a bijection of 64-bit words)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def _stream_start(key, index):
    """Starting state of the stream for ``index`` under ``key`` (both uint64)."""
    return _mix64(key ^ _mix64(np.uint64(index) * _GAMMA + _GAMMA))


@njit(cache=True)
def _u64(s):
    """Advance a SplitMix64 state; return (new state, 64 random bits)."""
    s += _GAMMA
    return s, _mix64(s)


@njit(cache=True)
def _double(s):
    """(new state, uniform double in [0, 1))."""
    s, z = _u64(s)
    return s, np.float64(z >> _S11) * _INV53


@njit(cache=True)
def _int_below(s, n):
    """(new state, integer in [0, n)) by Lemire's multiply-shift on 32 random bits, without
    rejection: value v has probability within n / 2^32 of 1/n (the nulls' streams, kept as drawn)."""
    s, z = _u64(s)
    return s, np.int64(((z >> _S32) * np.uint64(n)) >> _S32)


@njit(cache=True)
def _int_below_exact(s, n):
    """(new state, uniform integer in [0, n)) for 1 <= n < 2^32, every value with probability
    exactly 1/n: Lemire's multiply-shift on the upper 32 bits of each output, redrawing the few
    outputs that fall in the biased zone (the division that locates it runs only near it)."""
    n64 = np.uint64(n)
    s, z = _u64(s)
    prod = (z >> _S32) * n64
    if (prod & _LOW32) < n64:
        threshold = (_TWO32 - n64) % n64
        while (prod & _LOW32) < threshold:
            s, z = _u64(s)
            prod = (z >> _S32) * n64
    return s, np.int64(prod >> _S32)
