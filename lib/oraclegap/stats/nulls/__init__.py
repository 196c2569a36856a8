"""Is an oracle gap sampling noise? The re-deal and margin-preserving nulls (arXiv 2609.32996,
Section 3.2 and Appendices B.1, C.1 and C.5).

Data. A pool gives success counts ``c[i, m]`` out of ``k`` responses for prompt i and policy
m. Every statistic below is a function of the count table, with raw-frequency coverage
(``c >= need(tau, k)``, see :mod:`oraclegap.stats.coverage`):

* ``L``    oracle gap C_orac(tau) - C_best(tau);
* ``D``    disagreement, the fraction of prompts where some but not all members are covered;
* ``oracle_minus_mixture``  C_orac(tau) - C_mix(tau) (mixture: pooled count >= need(tau, M k));
* ``pass1``  Pass@1 oracle gap  mean_i max_m c_im/k - max_m mean_i c_im/k  (no threshold).

Two reference laws for the count table, both conditioning on every prompt's total
s_i = sum_m c_im, so a prompt whose responses are all wrong or all right (a *degenerate*
prompt) is fixed and adds no randomisation variance:

* **re-deal** (plain null): all members share one success probability per prompt. Given s_i,
  the M k outcomes of prompt i are exchangeable, so the per-member counts follow the
  multivariate hypergeometric law of dealing s_i successes into M groups of k. We draw those
  counts directly (sequential hypergeometric draws from precomputed alias tables), never by
  shuffling responses, so the cost per draw does not depend on k.
* **margin-preserving**: logit q_im = a_i + b_m (App. C.1). Conditioning on the prompt totals
  and the member totals t_m = sum_i c_im removes a and b; the conditional law of the table is
  P(c) proportional to prod_{i,m} C(k, c_im) over tables with those margins and cells in
  [0, k]. We sample it with a Markov chain of 2x2 moves on prompts p != q and members a != b
  (c[p,a] - t, c[p,b] + t, c[q,a] + t, c[q,b] - t), proposed only among prompts that can move.
  The default move is a *heat-bath* move, which draws t from its exact conditional law given
  the other cells (the whole feasible range at once); ``move="metropolis"`` gives the paper's
  +-1 transfer accepted by the weight ratio. Both leave the law above invariant and connect
  the tables with given margins. By default the chain discards its first 60 n M proposals
  and then keeps one table every 2 n M proposals (n prompts, M members), split over
  ``n_chains`` independent chains. :func:`exact_margin_law` enumerates the law for tiny tables.

Assumption: independent draws. Both nulls treat the k responses of every (prompt, member)
cell as independent draws, independent across members too. Pools sampled with *seed-aligned*
draws (draw j of a prompt uses the same random seed under every member: common random numbers,
paper 001's protocol) break the second part: near-identical members then give near-identical
verdicts draw by draw, their counts move together, the observed gap falls below what
independent sampling would give, and both tests become conservative (p-values too large); members
that share nothing but the seed (different models, different tokenizers) may show no coupling. Sample
every member with its own seeds (``oraclegap.rollouts.generate(draw_seeds="per-policy")``) for
these tests; :func:`draw_alignment` measures the coupling, :func:`disjoint_draws` removes it from
an aligned pool with enough draws, and :func:`null_tests` adds a note to its result when the
pool says it is seed-aligned.

Every test returns a :class:`NullTest`: the statistic, tau, the observed value, the null
draws, their mean, the 90% band (5th-95th percentile, a range of randomised statistics, not an
interval for the population gap), the upper-tail p (fraction of draws at least as large as
observed; ``p_convention="plus-one"`` gives (1 + #)/(1 + B)), the lower-tail p (fraction at
most as large) and the excess, observed minus null mean.

Around the two nulls: :func:`excess_bootstrap` (prompt bootstrap of the excess, recomputing the
null on each resample), :func:`split_half` (select on half the responses, score on the other
half), :func:`pool_size_curve` (statistics averaged over all member subsets of each size and
the re-deal null of their rise), :func:`member_spread` (spread of member coverage against
labels permuted within prompts) and :func:`similarity` (App. B.1 pairwise diagnostics). A family
of these tests is adjusted by :func:`oraclegap.stats.multiplicity.benjamini_hochberg`.

Randomness. Every function takes ``seed`` (an int or a ``numpy.random.Generator``); the
generator supplies 64-bit keys for the compiled kernels' SplitMix64 streams, one stream per
re-deal draw and per chain, so the same seed gives the same draws whatever the thread count
or batch size.

Layout. The package has layers, each importing only the ones before it: :mod:`._kernels`
(compiled kernels: random streams, alias tables, re-deal batches, chains); :mod:`.tables` (input
preparation, stream keys, statistics of count tables); :mod:`.limits` (cost bounds, progress);
:mod:`.results` (the result types); :mod:`.redeal_null` and :mod:`.margin_null` (the two nulls, the
exact margin law, the effective sample size); :mod:`.run` (:func:`null_tests`, the degenerate cases,
the cost model); :mod:`.quality` and :mod:`.diagnostics` (excess bootstrap, split-half, pool-size
curve, spread, alignment, similarity, the Table 1 layout). Every name below is importable from
``oraclegap.stats.nulls`` itself.
"""

from __future__ import annotations

# The compiled kernels and the `_alias`/`_prepare` helpers are reachable as `nulls.NAME` for the
# tests (F401: imported to re-export, outside __all__).
from ._kernels import (  # noqa: F401
    _alias,
    build_alias,
    many_table_stats,
    redeal_stats,
    redeal_stats_parallel,
    redeal_tables,
    run_block_chains,
    run_block_chains_parallel,
    run_chains,
    run_chains_parallel,
    size_curve_observed,
    size_curve_redeal,
    spread_draws,
)
from .diagnostics import (  # noqa: F401
    DrawAlignment,
    ExcessBootstrap,
    GapTable,
    MemberCoverage,
    PoolSizeCurve,
    Similarity,
    SplitHalf,
    disjoint_draws,
    draw_alignment,
    excess_bootstrap,
    gap_table,
    member_coverage,
    member_spread,
    pool_size_curve,
    sampler_tv,
    similarity,
    split_half,
    warm_up,
)
from .limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_PROPOSALS, NullCost
from .margin_null import (
    ChainSample,
    ExactMarginLaw,
    effective_sample_size,
    exact_margin_law,
    margin_chain,
)
from .redeal_null import redeal
from .results import ChainDiagnostics, NullTest, NullTests, SkippedTest, tests_frame
from .run import ALIGNMENT_NOTE, alignment_note, degenerate_tests, null_cost, null_tests
from .tables import (  # noqa: F401
    NULLS,
    STATISTICS,
    TableStatistics,
    _prepare,
    degenerate_prompts,
    table_statistics,
)

__all__ = [
    "STATISTICS",
    "NULLS",
    "NullTest",
    "NullTests",
    "ChainDiagnostics",
    "TableStatistics",
    "ChainSample",
    "ExactMarginLaw",
    "ExcessBootstrap",
    "SplitHalf",
    "PoolSizeCurve",
    "Similarity",
    "tests_frame",
    "table_statistics",
    "degenerate_prompts",
    "degenerate_tests",
    "SkippedTest",
    "NullCost",
    "null_cost",
    "DEFAULT_MAX_PROPOSALS",
    "DEFAULT_MAX_BYTES",
    "redeal",
    "margin_chain",
    "exact_margin_law",
    "null_tests",
    "effective_sample_size",
    "excess_bootstrap",
    "split_half",
    "pool_size_curve",
    "member_spread",
    "MemberCoverage",
    "member_coverage",
    "DrawAlignment",
    "draw_alignment",
    "alignment_note",
    "ALIGNMENT_NOTE",
    "disjoint_draws",
    "similarity",
    "warm_up",
    "GapTable",
    "gap_table",
    "sampler_tv",
]
