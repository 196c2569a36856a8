"""Running the null tests of :mod:`oraclegap.stats.nulls`: :func:`null_tests` (each statistic at
each threshold against the re-deal and/or the margin-preserving null), the degenerate cases it
skips (:func:`degenerate_tests`), its notes (thresholds that repeat a test, seed-aligned pools:
:data:`ALIGNMENT_NOTE`) and its cost, estimated before any work (:func:`null_cost`).
"""

from __future__ import annotations

import numpy as np

from ..._validate import as_rng, check_int
from ..coverage import DEFAULT_TAUS
from .limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_PROPOSALS, NullCost
from .margin_null import _MOVES, _default_steps, _margin_cost, _run_margin, effective_sample_size
from .redeal_null import _redeal_cost, _redeal_stats_chunked
from .results import _P_CONVENTIONS, ChainDiagnostics, NullTest, NullTests, SkippedTest
from .sequential import SequentialStop
from .tables import (
    NULLS,
    STATISTICS,
    _check_choice,
    _check_nulls,
    _check_statistics,
    _keys,
    _observed_stats,
    _prepare,
    _Prepared,
    _PresetKeys,
    _stat_columns,
)

_CERTIFY_HINT = ("the selection-valid certificates apply at k = 1: `oraclegap certify POOL` "
                 "(oraclegap.stats.certify.selection_valid_gap)")


def _sequential_stop(sequential: SequentialStop | None, wanted: list, observed: np.ndarray, T: int,
                     n_draws: int):
    """(looks, stop) for one null's draws: None, None without a rule or a test it decides; else the
    rule's looks and a function of (draws so far [B, S], chain labels or None) that is true once
    Holm's rejections over the distinct tests of the rule's statistics are settled (tests at
    thresholds with one need(tau, k) have the same draws and are one test; chain draws are
    scaled by their effective sample size)."""
    if sequential is None:
        return None, None
    cols = [_stat_columns(st, T)[j] for st, j, _ in wanted if st in sequential.statistics]
    if not cols:
        return None, None

    def stop(stats: np.ndarray, chains) -> bool:
        d = stats[:, cols]
        _, first = np.unique(np.vstack([observed[cols], d]), axis=1, return_index=True)
        d = d[:, np.sort(first)]
        obs = observed[cols][np.sort(first)]
        ess = (None if chains is None else
               [effective_sample_size(d[:, i], chains) for i in range(d.shape[1])])
        return sequential.decided(d, obs, n_draws, ess)

    return sequential.looks(n_draws), stop


def degenerate_tests(x, taus=DEFAULT_TAUS, *, k: int | None = None, nulls=NULLS,
                     statistics=STATISTICS) -> dict:
    """Which (statistic, tau, null) tests are degenerate by construction, with the reason.

    A null conditions on some totals of the count table; a statistic that is a function of
    those totals has a point-mass null (p = 1 whatever the data). The cases, exactly:

    * no prompt has both a success and a failure: both nulls fix the whole table;
    * fewer than two such prompts: the margin-preserving chain has no move;
    * k = 1: every statistic is a function of the prompt and member totals (C_m is a member
      total, C_orac = #{s_i >= 1}, C_mix = #{s_i >= need(tau, M)}, D = #{1 <= s_i < M}), so the
      margin-preserving null is a point mass for all of them, and the re-deal (which keeps the
      prompt totals) for D and oracle-minus-mixture;
    * need(tau, k) = 1 (tau <= 1/k): C_orac = #{s_i >= 1} and C_mix are functions of the prompt
      totals, so oracle-minus-mixture has a point-mass null under both.

    Returns ``{(statistic, tau, null): (reason, short label, what applies instead)}`` (tau None
    for ``pass1``).
    """
    prep = _prepare(x, taus, k)
    return _degenerate(prep, _check_statistics(statistics), _check_nulls(nulls))


def _degenerate(prep: _Prepared, statistics, nulls) -> dict:
    out = {}
    na, kk = int(prep.active.size), prep.k
    for null in nulls:
        for st in statistics:
            taus = [None] if st == "pass1" else [float(t) for t in prep.taus]
            for j, tau in enumerate(taus):
                why = None
                if na == 0:
                    why = ("every prompt is all wrong or all right, so both nulls fix the whole table: the null is a "
                           "point mass at the observed value (p = 1 by construction)",
                           "point mass: no prompt can move", "no randomisation test can inform about this pool")
                elif null == "margin" and na < 2:
                    why = ("fewer than two prompts have both successes and failures, so no margin-preserving move "
                           "exists: the null is a point mass (p = 1 by construction)",
                           "point mass: < 2 movable prompts", "the re-deal null, which moves single prompts")
                elif kk == 1 and null == "margin":
                    why = ("at k = 1 every statistic is a function of the prompt totals and the member totals, which "
                           "the margin-preserving null holds fixed: the null is a point mass (p = 1 by construction)",
                           "point mass at k=1", _CERTIFY_HINT)
                elif kk == 1 and st in ("D", "oracle_minus_mixture"):
                    why = (f"at k = 1 {st} is a function of the prompt totals, which the re-deal holds fixed: the null "
                           "is a point mass (p = 1 by construction)", "point mass at k=1", _CERTIFY_HINT)
                elif st == "oracle_minus_mixture" and int(prep.needs[j]) == 1:
                    why = (f"at tau = {tau:g} <= 1/k (k = {kk}) one success covers a prompt, so the oracle's and the "
                           "mixture's coverage are functions of the prompt totals, which both nulls hold fixed: the "
                           "null is a point mass (p = 1 by construction)", "point mass: tau <= 1/k",
                           f"L and D at this tau, or oracle_minus_mixture at a tau above 1/k = {1 / kk:.4g}")
                if why is not None:
                    out[(st, tau, null)] = why
    return out


def _nan_tau(tau) -> float:
    """Internal keys use None for the threshold-free ``pass1``; results carry NaN."""
    return float("nan") if tau is None else float(tau)


def _tau_notes(prep: _Prepared, statistics) -> tuple:
    """Notes on thresholds that give the same count rule (the same test repeated)."""
    notes = []
    th = [s for s in ("L", "D") if s in statistics]
    if th and prep.taus.size > 1:
        groups: dict[int, list[float]] = {}
        for t, nd in zip(prep.taus, prep.needs, strict=True):
            groups.setdefault(int(nd), []).append(float(t))
        for nd, ts in groups.items():
            if len(ts) > 1:
                notes.append(f"tau = {', '.join(f'{t:g}' for t in ts)} each need {nd} success{'es' if nd > 1 else ''} of "
                             f"k = {prep.k}: {' and '.join(th)} {'is' if len(th) == 1 else 'are'} the same test at each of them")
    return tuple(notes)


#: The note :func:`null_tests` adds to its result for a pool with ``alignment == "seed-aligned"``.
ALIGNMENT_NOTE = ("the pool is seed-aligned (draw j used the same sampling seed under every member): both nulls assume "
                  "draws independent across members, so where the shared seeds couple the members' draws they are "
                  "conservative (the observed gap is pulled below its null, p-values too large); nulls.draw_alignment "
                  "measures the coupling (matched agreement above its shuffle band), and sampling each member with its "
                  "own seeds (draw_seeds='per-policy') removes it")


def alignment_note(x) -> str | None:
    """:data:`ALIGNMENT_NOTE` when ``x`` is a Pool marked ``alignment == "seed-aligned"``, else None."""
    return ALIGNMENT_NOTE if getattr(x, "alignment", None) == "seed-aligned" else None


def _cost(prep: _Prepared, nulls, n_tests: int, skip: dict, statistics, n_draws: int, burn: int, thin: int,
          n_chains: int) -> NullCost:
    per_null = {nl: any((st, tau, nl) not in skip for st in statistics
                        for tau in ([None] if st == "pass1" else [float(t) for t in prep.taus]))
                for nl in nulls}
    proposals, margin_bytes = (_margin_cost(prep, n_draws, burn, thin, n_chains)
                               if per_null.get("margin") else (0, 0))
    redeal_cells, redeal_bytes = _redeal_cost(prep, n_draws) if per_null.get("redeal") else (0, 0)
    bytes_ = margin_bytes + redeal_bytes
    bytes_ += n_tests * n_draws * 8 * 2  # each test keeps its draws (and a copy while it is built)
    return NullCost(int(proposals), int(redeal_cells), int(bytes_))


def null_cost(x, taus=DEFAULT_TAUS, *, k: int | None = None, nulls=NULLS, statistics=STATISTICS,
              n_draws: int = 2000, burn_in: int | None = None, thin: int | None = None, n_chains: int = 4,
              skip_degenerate: bool = True) -> NullCost:
    """The :class:`NullCost` of :func:`null_tests` with these arguments, computed without running it."""
    prep = _prepare(x, taus, k)
    statistics = _check_statistics(statistics)
    nulls = _check_nulls(nulls)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_chains = check_int(n_chains, "n_chains", minimum=1)
    burn, th = _default_steps(prep.n, prep.M, burn_in, thin)
    skip = _degenerate(prep, statistics, nulls) if skip_degenerate else {}
    n_tests = sum(1 for nl in nulls for st in statistics
                  for tau in ([None] if st == "pass1" else [float(t) for t in prep.taus]) if (st, tau, nl) not in skip)
    return _cost(prep, nulls, n_tests, skip, statistics, n_draws, burn, th, n_chains)


def null_tests(
    x,
    taus=DEFAULT_TAUS,
    *,
    k: int | None = None,
    nulls=NULLS,
    statistics=STATISTICS,
    n_draws: int = 2000,
    seed=0,
    burn_in: int | None = None,
    thin: int | None = None,
    n_chains: int = 4,
    move: str = "heatbath",
    p_convention: str = "plus-one",
    progress: bool = False,
    batch: int | None = None,
    skip_degenerate: bool = True,
    max_proposals: int | None = DEFAULT_MAX_PROPOSALS,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    sequential: SequentialStop | None = None,
) -> NullTests:
    """Test each statistic at each threshold against the re-deal and/or margin-preserving null.

    ``x``: a Pool, verdicts [n, M, k], or counts [n, M] with ``k=``. ``statistics`` is a subset
    of :data:`STATISTICS`; ``pass1`` is tested once (no threshold). ``burn_in``/``thin`` default
    to 60 n M and 2 n M proposals (n = all prompts), proposals go to movable prompts only, and
    the ``n_draws`` retained tables are split over ``n_chains`` chains.

    Degenerate nulls. A statistic that is a function of what a null holds fixed has a
    point-mass null: p = 1 by construction, no evidence either way (:func:`degenerate_tests`
    lists the cases; at k = 1 they include every statistic under the margin-preserving null).
    Such tests are not run: they are reported in ``.skipped`` as :class:`SkippedTest` objects
    with the reason and what applies instead (at k = 1: the selection-valid certificates).
    ``skip_degenerate=False`` runs them anyway (draws equal to the observed value, ``p =
    p_lower = 1``, excess 0).

    Cost. The work (chain proposals plus re-dealt cells) and the memory for the draws are
    estimated first (:func:`null_cost`); above ``max_proposals`` or ``max_bytes`` the call is
    refused with a ``ValueError`` (None removes a bound). The compiled kernels run in short
    pieces, so Ctrl-C interrupts a long run. ``batch`` (draws per chain per call) only affects
    the progress display; results do not depend on it.

    Sequential stopping. With ``sequential`` (a
    :class:`~oraclegap.stats.nulls.sequential.SequentialStop`) each null's draws are taken in
    looks and stop once Holm's rejections over the distinct tests of the statistics it names are
    settled; ``n_draws`` is then the most draws a null takes, and every test of that null reports
    the draws taken (``NullTest.n_draws``).

    Independence. Both nulls assume draws independent across members. For a Pool marked
    ``alignment == "seed-aligned"`` the result's ``notes`` start with :data:`ALIGNMENT_NOTE`
    (the tests are conservative on such draws; see the module docstring).
    """
    prep = _prepare(x, taus, k)
    statistics = _check_statistics(statistics)
    nulls = _check_nulls(nulls)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_chains = check_int(n_chains, "n_chains", minimum=1)
    _check_choice(move, "move", _MOVES)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    if batch is not None:
        check_int(batch, "batch", minimum=1)
    if sequential is not None and not isinstance(sequential, SequentialStop):
        raise TypeError(f"sequential must be a SequentialStop or None, "
                        f"got {type(sequential).__name__}")
    for name, bound in (("max_proposals", max_proposals), ("max_bytes", max_bytes)):
        if bound is not None:
            check_int(bound, name, minimum=1)
    burn, th = _default_steps(prep.n, prep.M, burn_in, thin)
    skip = _degenerate(prep, statistics, nulls) if skip_degenerate else {}

    def taus_of(st):
        return [None] if st == "pass1" else [float(t) for t in prep.taus]

    wanted = {nl: [(st, j, tau) for st in statistics for j, tau in enumerate(taus_of(st)) if (st, tau, nl) not in skip]
              for nl in nulls}
    n_tests = sum(len(v) for v in wanted.values())
    _cost(prep, nulls, n_tests, skip, statistics, n_draws, burn, th, n_chains).check(max_proposals, max_bytes)
    redeal_key, chain_key = (seed.redeal, seed.chain) if isinstance(seed, _PresetKeys) else _keys(as_rng(seed))
    observed = _observed_stats(prep)
    T = prep.taus.size
    tests: list[NullTest] = []
    skipped: list[SkippedTest] = []
    chain_diag = None
    for null in nulls:
        for st in statistics:
            for j, tau in enumerate(taus_of(st)):
                if (st, tau, null) in skip:
                    reason, short, instead = skip[(st, tau, null)]
                    col = _stat_columns(st, T)[j]
                    skipped.append(SkippedTest(st, _nan_tau(tau), null, float(observed[col]), reason, short, instead))
        if not wanted[null]:
            continue
        looks, stop = _sequential_stop(sequential, wanted[null], observed, T, n_draws)
        if null == "redeal":
            if prep.active.size == 0:
                stats = np.tile(observed, (n_draws, 1))
            else:
                stats = _redeal_stats_chunked(prep, redeal_key, n_draws, batch, progress, looks,
                                              stop)
            chain_id, acc = None, None
        else:
            stats, _, chain_id, moves, proposals = _run_margin(
                prep, chain_key, n_draws, burn, th, n_chains, move, False, progress, batch,
                looks=looks, stop=stop)
            acc = int(moves.sum()) / proposals if proposals else 0.0
        ess_map = {}
        for st, j, tau in wanted[null]:
            col = _stat_columns(st, T)[j]
            if null == "redeal":
                ess = float(stats.shape[0])
            else:
                ess = effective_sample_size(stats[:, col], chain_id) if proposals else float("nan")
                ess_map[(st, _nan_tau(tau))] = ess
            tests.append(NullTest(st, _nan_tau(tau), null, float(observed[col]), stats[:, col], p_convention,
                                  ess, acc if null == "margin" else None))
        if null == "margin":
            assert chain_id is not None and acc is not None  # set by the margin branch above
            per_chain = np.bincount(chain_id)
            chain_acc = tuple(float(m) / (burn + th * int(d)) if proposals else 0.0
                              for m, d in zip(moves, per_chain, strict=True))
            chain_diag = ChainDiagnostics(move, per_chain.size, burn, th, int(prep.active.size), proposals, acc,
                                          chain_acc, ess_map)
    note = alignment_note(x)
    return NullTests(tuple(tests), chain_diag, prep.n, prep.M, prep.k, int(prep.n - prep.active.size),
                     tuple(skipped), ((note,) if note else ()) + _tau_notes(prep, statistics))
