"""The pre-routing audit: one call (or ``oraclegap audit POOL --out DIR``) that answers, with the
numbers behind it, whether a pool's oracle gap is worth a router.

:func:`run_audit` computes every number; :class:`AuditResult` holds them as one JSON-ready dict
(``.to_json()``, written as ``audit.json``) beside the library result objects they came from.
:func:`write_audit` writes ``audit.json``, executes the parameterised report notebook shipped
inside the package (``oraclegap/notebooks/audit.py``, which only *displays* ``audit.json``) and
renders it to ``report.html``, all in a temporary folder beside the target that is moved into
place at the end, so the report and ``audit.json`` agree by construction and a failed run leaves
nothing half-written. In an existing folder only the files an earlier audit wrote (its hidden
manifest ``.oraclegap-audit.json``) are replaced; nothing else there is touched.

Sections (all from the library; seeds derived from one ``seed``, see :data:`SEED_OFFSETS`):

* pool summary -- shape, alignment, degenerate prompts, member rates, metadata present;
* coverage -- oracle, best member, mixture, D, L and the break-even router error L/D at each
  threshold (:func:`oraclegap.stats.coverage.coverage`; arXiv 2609.32996 Sec. 2);
* nulls (k > 1) -- the re-deal and margin-preserving tests of L at each threshold
  (:func:`oraclegap.stats.nulls.null_tests`), Holm-adjusted over thresholds within each null, the
  prompt-bootstrap interval of the re-deal excess at the primary threshold, and the power this
  design has against a diffuse effect of a useful size (:func:`oraclegap.stats.studies.power`)
  with the planner over responses per prompt and prompts (:func:`~oraclegap.stats.studies.plan_power`
  on the sizes of :func:`plan_grid`; the power is judged by its Wilson interval, :func:`power_state`);
  at k = 1 no null that needs k > 1 applies and the certificates carry the inference. Both nulls
  assume draws independent across members: on a seed-aligned pool (draw j sampled with one seed
  under every member) the section measures the coupling (:func:`oraclegap.stats.nulls.draw_alignment`,
  matched against shuffled agreement) and, when matched agreement lies above the shuffle band,
  says the tests are conservative there;
* certificates -- the selection-valid (Thm 4) and paired intervals of the outcome-oracle gap of
  paper 002 on k = 1 outcomes, or on "covered at tau" outcomes at each threshold (k > 1), at
  level 1 - alpha / T simultaneously over the T thresholds, and how many prompts would certify it;
* single-draw noise (k > 1) -- paper 001's decomposition O_exp = O_repro + Delta with intervals
  and the best-of-K check (:mod:`oraclegap.stats.noise`);
* a quick held-out router -- nearest neighbours on the pool's embeddings (``embed_knn``) or text
  (``tfidf_knn``) through :mod:`oraclegap.deploy.routers`, fitted on a calibration half and
  compared on the other half with the calibration-selected member by paired inference
  (:func:`oraclegap.stats.certify.paired_comparison`, exact McNemar, Holm over thresholds);
* the verdict in plain words and what to collect next (:func:`verdict`; the rules are the table
  :data:`~oraclegap.audit.verdict.RULES`, listed in :mod:`oraclegap.audit.verdict` and in the README;
  on seed-aligned draws whose coupling is measurable it adds the independence caveat and
  recommends per-policy draws).

The package, one job a module, each importing only the ones listed after it:

* :mod:`~oraclegap.audit.write` -- files: ``audit.json``, the report notebook and page, the
  directory rules (:func:`write_audit`, :func:`load_numbers`, :func:`owned_files`, :func:`check_out`);
  beside it :mod:`~oraclegap.audit.study`, the verdict study: audits of simulated pools of known
  truth counted as a confusion table with Wilson intervals (:func:`verdict_study`);
* :mod:`~oraclegap.audit.compute` -- one builder per section returning a typed
  :class:`~oraclegap.audit.compute.Section`, :func:`run_audit`, :func:`summary`, :func:`draws_sweep`;
* :mod:`~oraclegap.audit.planners` -- the useful effect and the certificate planner;
* :mod:`~oraclegap.audit.display` -- :func:`texts`, :func:`frames`, the ``plot_*`` figures;
* :mod:`~oraclegap.audit.verdict` -- the verdict rules as an ordered table of named predicates;
  their prose in :mod:`~oraclegap.audit.verdict_text`;
* :mod:`~oraclegap.audit.settings` -- settings, seeds, the planners' grids, JSON values.

Every public name (and the private ones the tests use) is re-exported here, so
``from oraclegap.audit import run_audit`` and ``oraclegap.audit.verdict(numbers)`` work as before.
(``oraclegap.audit.verdict`` is the function; the module of that name is reached with
``from oraclegap.audit.verdict import RULES`` or ``sys.modules["oraclegap.audit.verdict"]``.)
"""

from __future__ import annotations

from ..stats.multiplicity import holm as _holm  # noqa: F401  (the library's one Holm, as the tests check)
from .compute import (
    AuditResult,
    CoverageSection,
    Section,
    certificates_section,
    coverage_section,
    draws_sweep,
    noise_section,
    nulls_section,
    pool_section,
    power_section,
    quick_router,
    router_section,
    run_audit,
    summary,
)
from .display import frames, plot_coverage, plot_noise, plot_nulls, plot_power, texts
from .planners import CertificatePlan, EffectSize, certificate_prompts, effect_centres, useful_effect
from .settings import (
    DEFAULT_TAUS,
    FORMAT_NAME,
    FORMAT_VERSION,
    K1_PLAN,
    LUCK_SHARE,
    PLAN_K_REACH,
    PLAN_N_REACH,
    PRIMARY_TAU,
    ROUTER_MIN_PROMPTS,
    SEED_OFFSETS,
    AuditSettings,
    audit_settings,
    check_auditable,
    plan_grid,
    power_state,
    primary_tau,
    section_seeds,
)
from .study import VerdictStudy, build_study, load_study, truth_pool, verdict_study
from .verdict import RULES, VERDICTS, Facts, Rule, Verdict, first_rule, verdict
from .write import (
    AUDIT_FILES,
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    TMP_MARK,
    check_out,
    clean_stale_temporaries,
    is_audit_dir,
    load_numbers,
    notebook_source,
    owned_files,
    render_report,
    write_audit,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "DEFAULT_TAUS",
    "PRIMARY_TAU",
    "SEED_OFFSETS",
    "LUCK_SHARE",
    "ROUTER_MIN_PROMPTS",
    "PLAN_K_REACH",
    "PLAN_N_REACH",
    "K1_PLAN",
    "VERDICTS",
    "AuditSettings",
    "audit_settings",
    "section_seeds",
    "plan_grid",
    "power_state",
    "primary_tau",
    "check_auditable",
    "EffectSize",
    "useful_effect",
    "effect_centres",
    "CertificatePlan",
    "certificate_prompts",
    "quick_router",
    "Verdict",
    "verdict",
    "Rule",
    "RULES",
    "Facts",
    "first_rule",
    "Section",
    "CoverageSection",
    "pool_section",
    "coverage_section",
    "nulls_section",
    "power_section",
    "certificates_section",
    "noise_section",
    "router_section",
    "AuditResult",
    "run_audit",
    "summary",
    "draws_sweep",
    "AUDIT_FILES",
    "MANIFEST_NAME",
    "MANIFEST_FORMAT",
    "TMP_MARK",
    "load_numbers",
    "owned_files",
    "is_audit_dir",
    "check_out",
    "clean_stale_temporaries",
    "notebook_source",
    "render_report",
    "write_audit",
    "texts",
    "frames",
    "plot_coverage",
    "plot_nulls",
    "plot_power",
    "plot_noise",
    "VerdictStudy",
    "build_study",
    "load_study",
    "truth_pool",
    "verdict_study",
]

# private names the tests use, re-exported
from .settings import _jsonable, _num, _records  # noqa: E402,F401
from .write import _execute, _find_quarto  # noqa: E402,F401
