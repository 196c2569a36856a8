"""Theory checked on fitted routers: the routing identity and the recoverability asymmetry.

Two exact statements about *any* per-prompt choice, here applied to routers fitted through
:mod:`oraclegap.deploy.routers` on a calibration part and committing one member per test prompt:

* the routing identity of arXiv 2609.32996 (Prop. 2): at every threshold tau,
  C_orac(tau) - C_r(tau) = D(tau) e_D(r, tau), where D is the share of disagreement prompts
  (some member covers the prompt, another does not) and e_D the share of them on which the router
  picked a member below tau (:func:`routing_identity`);
* the recoverability asymmetry of arXiv 2607.03436 (Thm 2): a single-commit router, whose choice
  does not depend on the draw it is scored on, scores mean_i p_{i r(i)} <= O_repro =
  mean_i max_m p_im in expectation, whatever the joint law of the members' draws (a); best-of-K on
  the per-prompt maximiser, with K = M fresh draws (the single-draw oracle's budget), scores
  mean_i [1 - (1 - max_m p_im)^M] >= mean_i [1 - prod_m (1 - p_im)], the single-draw oracle of an
  *independent* pool (b) -- not necessarily that of a dependent pool (:func:`recoverability`).

:func:`coupled_draws` samples Bernoulli(p_im) draws under three joint laws with identical
marginals -- independent, comonotone (one uniform per prompt and draw shared by all members:
maximal positive dependence, under which the single-draw oracle equals O_repro) and antithetic
(the shared uniform shifted by m/M for member m: negative dependence, which raises the
single-draw oracle towards the Frechet upper bound min(1, sum_m p_im)) -- so the cap can be seen
not to depend on the law while the single-draw oracle does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_rng, check_int, check_prob
from ..pool import Pool, check_pool
from ..stats.coverage import routing_account
from .compose import GREEDY_BOUND, coverage_lattice, greedy_pool, outcome_matrix
from .features import RouterInputs, router_inputs
from .routers import make_router

__all__ = [
    "COUPLINGS",
    "FittedChoices",
    "fit_choices",
    "routing_identity",
    "coupled_draws",
    "Recoverability",
    "recoverability",
    "Theorem8Check",
    "theorem8_checks",
    "theorem8_study",
    "disjoint_rescue_instance",
    "greedy_worst_case",
]

#: Joint laws of the members' draws in :func:`coupled_draws` (same Bernoulli(p_im) marginals).
COUPLINGS = ("independent", "comonotone", "antithetic")


@dataclasses.dataclass(frozen=True, repr=False)
class FittedChoices(Result):
    """Routers fitted on the prompts ``cal`` and the member each commits to on the prompts ``test``
    (``choices[family]`` int[len(test)], positions in the pool's policy order)."""

    cal: np.ndarray
    test: np.ndarray
    choices: dict
    source: str

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({f: c for f, c in self.choices.items()}, index=pd.Index(self.test, name="prompt"))


def _targets(pool: Pool) -> np.ndarray:
    """Per-policy training targets: correctness (k = 1) or success rates c_im / k (k > 1)."""
    return pool.verdicts[:, :, 0].astype(float) if pool.k == 1 else pool.rates()


def fit_choices(pool: Pool, families, *, test_fraction: float = 0.5, seed=0, embed: str = "auto",
                inputs: RouterInputs | None = None) -> FittedChoices:
    """Fit each router family on a random calibration part of ``pool`` (targets: correctness at
    k = 1, success rates at k > 1; the pool's costs when it has them) and record the member it
    commits to on every remaining (test) prompt. ``inputs`` default to
    ``routers.router_inputs(pool, embed=embed)``."""
    check_pool(pool)
    fams = [families] if isinstance(families, str) else list(families)
    if not fams:
        raise ValueError("families must name at least one router family")
    test_fraction = check_prob(test_fraction, "test_fraction", open_low=True, open_high=True)
    n = pool.n_prompts
    if n < 2:
        raise ValueError(f"the pool has {n} prompt(s); a calibration/test split needs at least 2")
    m = min(max(int(round(test_fraction * n)), 1), n - 1)
    perm = as_rng(seed).permutation(n)
    test, cal = np.sort(perm[:m]), np.sort(perm[m:])
    X = router_inputs(pool, embed=embed) if inputs is None else inputs
    if not isinstance(X, RouterInputs) or len(X) != n:
        raise ValueError(f"inputs must be RouterInputs with one row per prompt ({n})")
    Y = _targets(pool)
    cost = None if pool.cost is None else pool.cost[cal]
    Xc, Xt = X.take(cal), X.take(test)
    choices = {f: np.asarray(make_router(f).fit(Xc, Y[cal], cost=cost).predict(Xt), dtype=np.int64) for f in fams}
    return FittedChoices(cal, test, choices, X.source)


def routing_identity(pool: Pool, fitted: FittedChoices, taus) -> pd.DataFrame:
    """The routing identity on the test prompts, one row per (family, tau): C_orac, the best
    member's coverage C_best, the router's C_r, D, e_D, L, the break-even error L/D, the gain
    C_r - C_best, and the residual (C_orac - C_r) - D e_D (zero up to rounding for any choice)."""
    counts = pool.counts()[fitted.test]
    rows = []
    for fam, ch in fitted.choices.items():
        for tau in np.atleast_1d(np.asarray(taus, dtype=float)):
            a = routing_account(counts, ch, float(tau), k=pool.k)
            rows.append({"family": fam, "tau": float(tau), "k": pool.k, "oracle": a.oracle, "best": a.best, "routed": a.routed,
                         "D": a.D, "e_D": a.e_D, "L": a.L, "break_even": a.break_even, "gain": a.gain,
                         "residual": a.identity_residual})
    return pd.DataFrame(rows)


def coupled_draws(p, k: int, coupling: str = "independent", seed=0) -> np.ndarray:
    """Draws R bool[n, M, k] with R_imj ~ Bernoulli(p_im) under a joint law across members.

    ``"independent"``: R_imj = 1[U_imj < p_im] with every U independent uniform; ``"comonotone"``:
    R_imj = 1[U_ij < p_im], one uniform per prompt and draw shared by all members; ``"antithetic"``:
    R_imj = 1[frac(U_ij + m / M) < p_im], the shared uniform shifted per member. Each U (shifted or
    not) is uniform, so every marginal is Bernoulli(p_im); draws j are independent."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape or np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"p must be a non-empty [n, M] array of probabilities in [0, 1], got shape {p.shape}")
    k = check_int(k, "k", minimum=1)
    if coupling not in COUPLINGS:
        raise ValueError(f"coupling must be one of {COUPLINGS}, got {coupling!r}")
    rng = as_rng(seed)
    n, M = p.shape
    if coupling == "independent":
        U = rng.random((n, M, k))
    else:
        U = np.broadcast_to(rng.random((n, 1, k)), (n, M, k))
        if coupling == "antithetic":
            U = np.mod(U + (np.arange(M) / M)[None, :, None], 1.0)
    return U < p[:, :, None]


@dataclasses.dataclass(frozen=True, repr=False)
class Recoverability(Result):
    """Thm 2 of 2607.03436 on the test prompts of a simulated pool with known rates p.

    ``scores``: one row per (router, coupling) with the committed expected score mean_i p_{i r(i)}
    (``committed``), the mean of ``n_fresh`` fresh draws of the committed member under that coupling
    (``fresh``, with its standard error ``se``), and best-of-K on the router's own choice
    (``best_of_K_choice``, closed form). Routers: the fitted families and ``"maximiser"``, the
    per-prompt argmax of p (not deployable: it attains the cap). Scalars on the same prompts:
    ``O_repro``, ``O_exp_independent`` (1 - prod_m (1 - p_im), averaged), ``best_of_K`` (closed form)
    with its fresh-draw estimate and s.e., and ``O_exp`` per coupling (the seed-aligned single-draw
    oracle on the fresh draws, mean_ij max_m R_imj, with its s.e.).
    """

    K: int
    n_test: int
    n_fresh: int
    O_repro: float
    O_exp_independent: float
    best_of_K: float
    best_of_K_fresh: float
    best_of_K_se: float
    O_exp: dict
    O_exp_se: dict
    scores: pd.DataFrame
    source: str

    def frame(self) -> pd.DataFrame:
        return self.scores


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    """Mean of 0/1 outcomes and a conservative s.e., sqrt(m (1 - m) / N) (>= the s.e. of a mean of
    independent Bernoulli variables with unequal p and the same mean)."""
    m = float(x.mean())
    return m, float(np.sqrt(m * (1 - m) / x.size))


def recoverability(pool: Pool, p, families, *, n_fresh: int = 400, K: int | None = None, test_fraction: float = 0.5,
                   seed=0, embed: str = "auto") -> Recoverability:
    """Fit ``families`` on a calibration part of ``pool`` (whose draws follow the known rates ``p``
    [n, M]), then on the test prompts compare every committed choice with O_repro, scoring it on
    ``n_fresh`` fresh draws under each of :data:`COUPLINGS`, and best-of-K (K = M by default, the
    single-draw oracle's budget) on the per-prompt maximiser with the independent-pool oracle.
    ``n_fresh`` must be a multiple of K (fresh draws are grouped into best-of-K replicates)."""
    p = np.asarray(p, dtype=float)
    check_pool(pool)
    if p.shape != pool.shape[:2]:
        raise ValueError(f"p must have the pool's shape [n={pool.n_prompts}, M={pool.n_policies}], got {p.shape}")
    M = p.shape[1]
    K = M if K is None else check_int(K, "K", minimum=1)
    n_fresh = check_int(n_fresh, "n_fresh", minimum=K)
    if n_fresh % K:
        raise ValueError(f"n_fresh={n_fresh} must be a multiple of K={K} (fresh draws form best-of-K replicates)")
    rng = as_rng(seed)
    fitted = fit_choices(pool, families, test_fraction=test_fraction, seed=rng, embed=embed)
    pt = p[fitted.test]
    n = pt.shape[0]
    top = pt.argmax(axis=1)
    choices = {**fitted.choices, "maximiser": top}
    rows, O_exp, O_se = [], {}, {}
    for coupling in COUPLINGS:
        F = coupled_draws(pt, n_fresh, coupling, rng)  # [n, M, n_fresh]
        O_exp[coupling], O_se[coupling] = _mean_se(np.asarray(F.any(axis=1)))
        if coupling == "independent":
            B = F[np.arange(n), top].reshape(n, n_fresh // K, K).any(axis=2)  # best-of-K replicates of the maximiser
            bok_fresh, bok_se = _mean_se(B)
        for fam, ch in choices.items():
            fresh, se = _mean_se(F[np.arange(n), ch])
            committed = pt[np.arange(n), ch]
            rows.append({"router": fam, "coupling": coupling, "committed": float(committed.mean()), "fresh": fresh, "se": se,
                         "best_of_K_choice": float((1 - (1 - committed) ** K).mean())})
    return Recoverability(
        K, n, n_fresh, float(pt.max(axis=1).mean()), float((1 - np.prod(1 - pt, axis=1)).mean()),
        float((1 - (1 - pt.max(axis=1)) ** K).mean()), bok_fresh, bok_se, O_exp, O_se, pd.DataFrame(rows), fitted.source,
    )


# ====================================================================== Thm 8 of 002 (pool construction)
@dataclasses.dataclass(frozen=True, repr=False)
class Theorem8Check(Result):
    """Thm 8 checked on a whole lattice: normalisation, monotonicity (every single-element step),
    diminishing returns (every pair j, k and set S without them) and the greedy guarantee per size."""

    n: int
    K: int
    anchor: int
    normalised: bool
    monotone_checks: int
    monotone_violations: int
    submodular_checks: int
    submodular_violations: int
    sizes: np.ndarray
    greedy: np.ndarray
    optimum: np.ndarray

    @property
    def ratios(self) -> np.ndarray:
        return np.where(self.optimum > 0, self.greedy / np.maximum(self.optimum, 1), 1.0)

    @property
    def holds(self) -> bool:
        return (
            self.normalised
            and self.monotone_violations == 0
            and self.submodular_violations == 0
            and bool(np.all(self.ratios >= GREEDY_BOUND - 1e-12))
        )

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"size": self.sizes, "greedy_count": self.greedy, "optimum_count": self.optimum, "ratio": self.ratios, "n": self.n}
        )


def theorem8_checks(X, anchor="best", *, rows=None) -> Theorem8Check:
    """Check Thm 8 on the empirical F_b of ``X``: F_b(empty) = 0; F_b(S + j) >= F_b(S) for every S
    and j; F_b(S + j) - F_b(S) >= F_b(S + k + j) - F_b(S + k) for every S and distinct j, k not in
    S; and greedy >= (1 - 1/e) x exhaustive optimum for every size (K - 1 <= 20)."""
    lat = coverage_lattice(X, anchor, rows=rows)
    c = lat.counts
    k = len(lat.candidates)
    masks = np.arange(1 << k)
    mono_n = mono_v = sub_n = sub_v = 0
    for j in range(k):
        bj = 1 << j
        without_j = masks[(masks & bj) == 0]
        gain_j = c[without_j | bj] - c[without_j]
        mono_n += without_j.size
        mono_v += int((gain_j < 0).sum())
        for t in range(k):
            if t == j:
                continue
            bt = 1 << t
            S = without_j[(without_j & bt) == 0]
            sub_n += S.size
            sub_v += int((c[S | bj] - c[S] < c[S | bt | bj] - c[S | bt]).sum())
    X2, _ = outcome_matrix(X)
    sizes = np.arange(1, k + 1)
    g = greedy_pool(X2, lat.anchor, k, rows=rows)
    greedy_counts = np.cumsum(g.gains)
    opt = np.array([lat.optimum(int(s))[0] for s in sizes])
    return Theorem8Check(lat.n, k + 1, lat.anchor, bool(c[0] == 0), mono_n, mono_v, sub_n, sub_v, sizes, greedy_counts, opt)


def theorem8_study(n_instances: int = 200, *, n_range=(5, 80), K_range=(3, 9), seed=0) -> pd.DataFrame:
    """Thm 8 on random outcome matrices: one row per instance (kind, n, K, checks, violations, the
    smallest greedy/optimum ratio over sizes). Kinds: independent members with random accuracies;
    members sharing an item difficulty (a latent-class mixture); sparse rescuers (most members
    rarely right)."""
    n_instances = check_int(n_instances, "n_instances", minimum=1)
    rng = as_rng(seed)
    rows = []
    kinds = ("independent", "shared difficulty", "sparse")
    for i in range(n_instances):
        kind = kinds[i % len(kinds)]
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        K = int(rng.integers(K_range[0], K_range[1] + 1))
        if kind == "independent":
            P = np.broadcast_to(rng.uniform(0.05, 0.95, K), (n, K))
        elif kind == "shared difficulty":
            cls = rng.integers(0, 3, n)
            P = rng.uniform(0.02, 0.98, (3, K))[cls]
        else:
            P = np.broadcast_to(rng.uniform(0.01, 0.2, K), (n, K)).copy()
            P[:, 0] = 0.5
        X = rng.random((n, K)) < P
        chk = theorem8_checks(X, int(rng.integers(0, K)))
        rows.append(
            {
                "instance": i,
                "kind": kind,
                "n": n,
                "K": K,
                "normalised": chk.normalised,
                "monotone_checks": chk.monotone_checks,
                "monotone_violations": chk.monotone_violations,
                "submodular_checks": chk.submodular_checks,
                "submodular_violations": chk.submodular_violations,
                "min_ratio": float(chk.ratios.min()),
                "greedy_optimal_all_sizes": bool(np.all(chk.greedy == chk.optimum)),
            }
        )
    return pd.DataFrame(rows)


def disjoint_rescue_instance(sizes: Sequence[int], *, n_anchor_right: int = 0, seed=0) -> np.ndarray:
    """An outcome matrix where greedy is provably optimal: the anchor (column 0) is wrong on
    sum(sizes) items, candidate j (column j + 1) rescues its own ``sizes[j]`` of them and no other,
    so F_b is additive and the best s-set is the s largest rescue sets; ``n_anchor_right`` extra
    items are solved by everyone. Rows are shuffled with ``seed``."""
    sz = np.asarray(sizes, dtype=np.int64)
    if sz.ndim != 1 or sz.size < 1 or (sz < 0).any():
        raise ValueError("sizes must be a non-empty list of non-negative rescue-set sizes")
    n = int(sz.sum()) + check_int(n_anchor_right, "n_anchor_right", minimum=0)
    X = np.zeros((n, sz.size + 1), dtype=bool)
    start = 0
    for j, s in enumerate(sz):
        X[start : start + s, j + 1] = True
        start += s
    X[start:, :] = True
    return X[as_rng(seed).permutation(n)]


def greedy_worst_case(s: int, scale: int = 1) -> tuple[np.ndarray, float, float]:
    """The classical instance on which greedy max-coverage approaches 1 - (1 - 1/s)^s of the optimum.

    Items form an s x s grid of cells plus leftovers: optimal model O_j (column j) rescues column
    j; greedy model G_i rescues row i, whose cells have weight c_i = s^(s-i) (s-1)^(i-1) (times
    ``scale`` duplicated items), plus one private item so that greedy strictly prefers G_i; each
    column also has (s-1)^s * scale items only O_j rescues. The anchor (column 0) is wrong
    everywhere. Returns (X, greedy count, optimum count) computed from the construction:
    greedy = s * scale * (s^s - (s-1)^s) + s, optimum = s * scale * s^s.
    """
    s = check_int(s, "s", minimum=2, maximum=6)
    scale = check_int(scale, "scale", minimum=1)
    c = np.array([s ** (s - i) * (s - 1) ** (i - 1) for i in range(1, s + 1)], dtype=np.int64) * scale
    left = (s - 1) ** s * scale
    n = int(s * (c.sum() + left) + s)
    K = 1 + 2 * s  # anchor, G_1..G_s, O_1..O_s
    X = np.zeros((n, K), dtype=bool)
    r = 0
    for j in range(s):  # column j
        for i in range(s):
            X[r : r + c[i], 1 + i] = True
            X[r : r + c[i], 1 + s + j] = True
            r += c[i]
        X[r : r + left, 1 + s + j] = True
        r += left
    for i in range(s):
        X[r, 1 + i] = True
        r += 1
    greedy = s * scale * (s**s - (s - 1) ** s) + s
    optimum = s * scale * s**s
    return X, float(greedy), float(optimum)
