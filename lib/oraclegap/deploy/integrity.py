"""Integrity of a pool before any inference.

Published router tables carry problems that no statistic downstream can undo; each check here
returns a small frozen result with ``.frame()``:

* :func:`check_duplicates` -- duplicated prompts. *Exact* duplicates agree after normalisation
  (Unicode case folding, every run of whitespace one space, stripped ends). *Near* duplicates
  have a TF-IDF cosine of at least ``near_threshold`` (default :data:`NEAR_THRESHOLD` = 0.9):
  scikit-learn's ``TfidfVectorizer`` on word unigrams and bigrams (single characters and digits
  count as words) of the normalised texts,
  sublinear tf, L2-normalised rows, so the cosine is a dot product (computed in row blocks, never
  as an n x n matrix). Groups are the connected components of exact and near pairs. A group
  whose prompts fall on both sides of the calibration/test split the routers use
  (:func:`~oraclegap.deploy.evaluate.make_protocol` with the same ``split``/``cv``/``seed``;
  under cross-fitting, in different folds) is *leakage*: a router is scored on a prompt it was
  fitted on. :func:`deduplicate` keeps the first prompt of each group.
* :func:`check_outcome_alignment` -- where the pool has answers and a gold column, the verdicts
  are recomputed (:func:`answers_match`) and every disagreement with the recorded ones listed.
* :func:`check_aggregation` -- k = 1 data whose repeated rows were merged with a max (recorded in
  ``meta`` by an importer or a user; it turns pass@1 into pass@r and inflates the oracle), and
  members whose draws are identical (cached responses: identical verdicts on every draw, and
  identical answers when there are answers), and cells whose k draws are identical answers.
* :func:`constant_baselines` -- the best constant member selected on calibration, the task-wise
  best (per dataset level, selected on calibration) and, for reference, the best member and the
  oracle in hindsight, scored on the evaluated prompts of the same protocol.

:func:`integrity_checks` runs them all and returns an :class:`IntegrityReport` (the audit's
integrity section: ``.frame()`` one row per check, ``.findings`` the sentences).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._result import Result
from .._validate import check_int, literal_list
from ..pool import Pool, check_pool
from .evaluate import Protocol, make_protocol, outcome_matrix

__all__ = [
    "NEAR_THRESHOLD",
    "GOLD_COLUMNS",
    "normalize_prompt",
    "answers_match",
    "DuplicateCheck",
    "AlignmentCheck",
    "AggregationCheck",
    "Baselines",
    "IntegrityReport",
    "check_duplicates",
    "deduplicate",
    "check_outcome_alignment",
    "check_aggregation",
    "constant_baselines",
    "integrity_checks",
]

#: Default TF-IDF cosine at or above which two prompts are near duplicates.
NEAR_THRESHOLD = 0.9
#: Prompt-table columns taken as the gold answer (the first present).
GOLD_COLUMNS = ("gold", "ground_truth", "gold_answer", "reference", "target", "label")
_BLOCK = 512


def normalize_prompt(text) -> str:
    """The key of exact duplicates: NFKC, case-folded, whitespace runs collapsed, ends stripped."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def _protocol(pool: Pool, split, cv, seed, test=None):
    if test is not None:  # the caller's own calibration/test split (e.g. the audit's quick router)
        t = np.asarray(test)
        n = pool.n_prompts
        if t.dtype == bool:
            if t.shape != (n,):
                raise ValueError(f"test must be a boolean mask of the {n} prompts or their positions, got shape {t.shape}")
            t = np.flatnonzero(t)
        elif t.dtype.kind not in "iu" or (t.size and (t.min() < 0 or t.max() >= n)) or len(np.unique(t)) != t.size:
            raise ValueError(f"test must be a boolean mask of the {n} prompts or distinct positions in 0..{n - 1}")
        t = np.sort(t.astype(np.int64))
        cal = np.setdiff1d(np.arange(n), t)
        if not t.size or not cal.size:
            raise ValueError("test must leave prompts on both sides (calibration and test)")
        return Protocol("split", "given", ((cal, t),), t, None)
    if split is None and cv is None:
        split = "test" if "test" in pool.splits and len(pool.splits) > 1 else None
        cv = None if split else 5
    return make_protocol(pool, cv=cv, split=split, seed=seed)


def _fold_of(proto, n: int) -> np.ndarray:
    """Per prompt: 0 calibration / 1 test for a split, the fold number under cross-fitting."""
    fold = np.zeros(n, dtype=np.int64)
    if proto.mode == "split":
        fold[proto.folds[0][1]] = 1
    else:
        for f, (_, tst) in enumerate(proto.folds):
            fold[tst] = f
    return fold


# ====================================================================== duplicates
@dataclasses.dataclass(frozen=True, repr=False)
class DuplicateCheck(Result):
    """Duplicated prompts: counts, the groups (``groups``: prompt_id, group, kind, fold) and leakage."""

    n_prompts: int
    n_with_text: int
    near_threshold: float | None
    protocol: str
    n_exact_groups: int
    n_exact_duplicates: int  # prompts beyond the first of each exact group
    n_near_pairs: int  # pairs at cosine >= threshold that are not exact duplicates
    n_groups: int  # groups of exact and near duplicates together
    n_duplicates: int  # prompts beyond the first of each group
    n_leaking_groups: int
    n_leaking_prompts: int  # prompts of a leaking group outside the group's first fold
    groups: pd.DataFrame = dataclasses.field(repr=False)
    keep: np.ndarray = dataclasses.field(repr=False)  # first prompt of each group, and every unduplicated prompt
    keep_exact: np.ndarray = dataclasses.field(repr=False)

    @property
    def leakage(self) -> bool:
        """Whether some duplicate group crosses the calibration/test split (or the folds)."""
        return self.n_leaking_groups > 0

    def frame(self) -> pd.DataFrame:
        """One row of counts."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("groups", "keep", "keep_exact")}
        return pd.DataFrame([{**d, "leakage": self.leakage}])


def _near_pairs(texts: list[str], threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(i, j) with i < j and TF-IDF cosine >= threshold, block by block over rows."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        X = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit_transform(texts).tocsr()
    except ValueError:  # only stop words / empty vocabulary
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    XT = X.T.tocsc()
    I, J = [], []
    for s in range(0, X.shape[0], _BLOCK):  # one sparse-dense block of _BLOCK rows at a time
        sim = (X[s : s + _BLOCK] @ XT).toarray()
        r, c = np.nonzero(sim >= threshold - 1e-12)
        r = r + s
        keep = c > r
        I.append(r[keep])
        J.append(c[keep])
    return np.concatenate(I), np.concatenate(J)


def check_duplicates(pool: Pool, *, near: bool = True, near_threshold: float = NEAR_THRESHOLD, split=None, cv=None,
                     seed: int = 0, test=None) -> DuplicateCheck:
    """Exact and near duplicates of the pool's prompt texts and whether they cross the split the
    routers use (``split``/``cv``/``seed`` as in :func:`~oraclegap.deploy.evaluate.evaluate_routers`;
    default: the pool's ``test`` split when it has one, else 5-fold cross-fitting with seed 0);
    ``test`` (a boolean mask or positions of the test prompts) gives the split directly."""
    check_pool(pool)
    if isinstance(near_threshold, bool) or not isinstance(near_threshold, (int, float)) or not 0 < near_threshold <= 1:
        raise ValueError(f"near_threshold must be a cosine in (0, 1], got {near_threshold!r}")
    n = pool.n_prompts
    proto = _protocol(pool, split, cv, check_int(seed, "seed", minimum=0), test) if n >= 2 else None
    fold = _fold_of(proto, n) if proto is not None else np.zeros(n, dtype=np.int64)
    keys = np.asarray([normalize_prompt(t) for t in pool.prompts["text"]], dtype=object)
    has = keys != ""
    idx = np.flatnonzero(has)
    codes = np.full(n, -1, dtype=np.int64)
    if idx.size:
        codes[idx] = pd.factorize(pd.Series(keys[idx], dtype=object))[0]
    # exact pairs: each prompt to the first of its key
    first_of = np.full(max(int(codes.max()) + 1, 0), -1, dtype=np.int64)
    if idx.size:
        uniq, first = np.unique(codes[idx], return_index=True)
        first_of[uniq] = idx[first]
    ex_i = idx[first_of[codes[idx]] != idx]
    ex_j = first_of[codes[ex_i]] if ex_i.size else ex_i
    ni = nj = np.zeros(0, dtype=np.int64)
    if near and idx.size > 1:
        # one representative per exact group: near pairs between distinct texts
        reps = np.flatnonzero(has & (first_of[np.maximum(codes, 0)] == np.arange(n)))
        a, b = _near_pairs([keys[i] for i in reps], float(near_threshold))
        ni, nj = reps[a], reps[b]
    rows = np.concatenate([ex_i, ni])
    cols = np.concatenate([ex_j, nj])
    G = coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    _, comp = connected_components(G, directed=False)
    sizes = np.bincount(comp, minlength=n)
    dup = sizes[comp] > 1
    comp_first = np.full(comp.max() + 1, n, dtype=np.int64)
    np.minimum.at(comp_first, comp, np.arange(n))
    keep = comp_first[comp] == np.arange(n)
    exact_sizes = np.bincount(codes[idx], minlength=len(first_of)) if idx.size else np.zeros(0, dtype=np.int64)
    keep_exact = np.ones(n, dtype=bool)
    keep_exact[ex_i] = False
    # leakage: a group with prompts in more than one fold (calibration and test)
    gl = comp[dup]
    fl = fold[dup]
    n_folds = pd.Series(fl).groupby(gl).nunique() if gl.size else pd.Series(dtype=int)
    leaking = set(n_folds.index[n_folds.to_numpy() > 1].tolist())
    leak_mask = dup & np.isin(comp, list(leaking))
    first_fold = fold[comp_first[comp].clip(max=n - 1)]
    n_leak_prompts = int((leak_mask & (fold != first_fold)).sum())
    kind = np.where(~keep_exact | np.isin(np.arange(n), ex_j), "exact", "near")
    gid = pd.factorize(comp[dup])[0]
    groups = pd.DataFrame({"prompt_id": np.asarray(pool.prompt_ids, dtype=object)[dup], "group": gid,
                           "kind": kind[dup], "fold": fold[dup], "leaking": leak_mask[dup]})
    return DuplicateCheck(
        n_prompts=n, n_with_text=int(has.sum()), near_threshold=float(near_threshold) if near else None,
        protocol=proto.describe() if proto is not None else "none (one prompt)",
        n_exact_groups=int((exact_sizes > 1).sum()), n_exact_duplicates=int(ex_i.size), n_near_pairs=int(ni.size),
        n_groups=int(len(np.unique(comp[dup]))), n_duplicates=int(dup.sum() - len(np.unique(comp[dup]))),
        n_leaking_groups=len(leaking), n_leaking_prompts=n_leak_prompts, groups=groups, keep=keep, keep_exact=keep_exact,
    )


def deduplicate(pool: Pool, check: DuplicateCheck | None = None, *, include_near: bool = False) -> Pool:
    """The pool with the first prompt of each duplicate group kept (exact groups only unless
    ``include_near``); the removed prompt ids are recorded in ``meta['deduplicated']``."""
    check = check_duplicates(pool, near=include_near) if check is None else check
    if check.n_prompts != pool.n_prompts:
        raise ValueError("check was computed on another pool (its prompt count differs)")
    keep = check.keep if include_near else check.keep_exact
    if include_near and check.near_threshold is None:
        raise ValueError("include_near=True needs a check computed with near=True")
    out = pool.select(prompts=keep)
    removed = [pid for pid, k in zip(pool.prompt_ids, keep, strict=True) if not k]
    rule = f"exact (normalised) and near (TF-IDF cosine >= {check.near_threshold:g})" if include_near else "exact (normalised)"
    return dataclasses.replace(out, meta={**out.meta, "deduplicated": {"rule": rule, "removed": len(removed),
                                                                       "removed_ids": removed[:1000]}})


# ====================================================================== outcome alignment
_CHOICE = re.compile(r"^\(?([a-j])\)?[.:)]?$")
_ANSWER_IS = re.compile(r"answer\s*(?:is|:)\s*\(?([a-j])\)?\b")


def _norm_answer(x) -> str:
    lst = literal_list(x) if isinstance(x, str) else None
    if lst:
        x = lst[0]
    s = normalize_prompt(x)
    return s.strip(" .,:;!\"'`")


def answers_match(answer, gold) -> bool:
    """Whether a response ``answer`` matches ``gold``: equal after normalisation (case folding,
    whitespace, surrounding punctuation, a one-element list literal such as ``"['D']"`` read as
    its element); for a gold choice letter A-J, the answer's choice letter (``"D"``, ``"(D)"``,
    ``"D."``, or "the answer is (D)")."""
    a, g = _norm_answer(answer), _norm_answer(gold)
    if not g:
        return False
    if a == g:
        return True
    choice = _CHOICE.match(g)
    if choice:
        letter = choice.group(1)
        m = _CHOICE.match(a) or _ANSWER_IS.search(a)
        return m is not None and m.group(1) == letter
    return False


@dataclasses.dataclass(frozen=True, repr=False)
class AlignmentCheck(Result):
    """Recorded verdicts against verdicts recomputed from the answers and the gold column."""

    gold_column: str | None
    n_checked: int
    n_disagree: int
    rule: str
    disagreements: pd.DataFrame = dataclasses.field(repr=False)
    reason: str = ""

    @property
    def share(self) -> float:
        """Share of checked responses whose recorded verdict differs from the recomputed one."""
        return self.n_disagree / self.n_checked if self.n_checked else float("nan")

    def frame(self) -> pd.DataFrame:
        """One row: the gold column, counts and the share of disagreements."""
        return pd.DataFrame([{"gold_column": self.gold_column, "n_checked": self.n_checked, "n_disagree": self.n_disagree,
                              "share": self.share, "rule": self.rule, "reason": self.reason}])


def check_outcome_alignment(pool: Pool, gold_column: str | None = None, *, match=None) -> AlignmentCheck:
    """Recompute each response's verdict from its answer and the prompt's gold answer (``gold_column``,
    default the first of :data:`GOLD_COLUMNS` present) with ``match(answer, gold)`` (default
    :func:`answers_match`) and list the responses where it differs from the recorded verdict.
    Skipped (``n_checked = 0``, ``reason`` set) without answers or a gold column."""
    rule = "answers_match (normalised equality; choice letters)" if match is None else getattr(match, "__name__", "match")
    match = answers_match if match is None else match
    empty = pd.DataFrame(columns=["prompt_id", "policy", "draw", "answer", "gold", "recorded", "recomputed"])
    if gold_column is not None and gold_column not in pool.prompts.columns:
        raise ValueError(f"gold_column {gold_column!r} is not a prompt column; columns: {list(pool.prompts.columns)}")
    col = gold_column or next((c for c in GOLD_COLUMNS if c in pool.prompts.columns and pool.prompts[c].notna().any()), None)
    if pool.answers is None or col is None:
        why = "the pool has no answers" if pool.answers is None else f"no gold column (one of {', '.join(GOLD_COLUMNS)})"
        return AlignmentCheck(col, 0, 0, rule, empty, why)
    gold = pool.prompts[col].to_numpy(dtype=object)
    n, M, k = pool.shape
    has_gold = np.asarray([normalize_prompt(g) != "" for g in gold])
    has_ans = np.vectorize(lambda a: isinstance(a, str) and a.strip() != "", otypes=[bool])(pool.answers)
    mask = has_gold[:, None, None] & has_ans
    ii, mm, jj = np.nonzero(mask)
    # one match per distinct (answer, gold) text pair: answers repeat across draws and members
    pairs = pd.DataFrame({"a": pool.answers[ii, mm, jj], "g": gold[ii]})
    codes, uniq = pd.factorize(pd.MultiIndex.from_frame(pairs))
    verdict_of = np.array([bool(match(a, g)) for a, g in uniq], dtype=bool) if len(uniq) else np.zeros(0, bool)
    recomputed = verdict_of[codes] if codes.size else np.zeros(0, bool)
    recorded = pool.verdicts[ii, mm, jj]
    off = recomputed != recorded
    names, ids = np.asarray(pool.policy_names, dtype=object), np.asarray(pool.prompt_ids, dtype=object)
    dis = pd.DataFrame({"prompt_id": ids[ii[off]], "policy": names[mm[off]], "draw": jj[off],
                        "answer": pool.answers[ii[off], mm[off], jj[off]], "gold": gold[ii[off]],
                        "recorded": recorded[off], "recomputed": recomputed[off]})
    return AlignmentCheck(col, int(ii.size), int(off.sum()), rule, dis)


# ====================================================================== aggregation
@dataclasses.dataclass(frozen=True, repr=False)
class AggregationCheck(Result):
    """Warnings about how the outcomes were aggregated: max-merged k = 1 data, identical members."""

    merged_with_max: bool
    merged_note: str
    identical_members: tuple  # groups (tuples of names) of members with identical draws
    identical_on: str  # "verdicts and answers" or "verdicts"
    constant_cells_share: float  # k > 1 with answers: share of cells whose k answers are all equal (NaN otherwise)
    warnings: tuple

    def frame(self) -> pd.DataFrame:
        """One row per warning (an empty frame with the column ``warning`` when there is none)."""
        return pd.DataFrame({"warning": list(self.warnings)})


def _merged_with_max(meta: dict) -> str:
    for key, val in meta.items():
        text = f"{key}={val}".lower() if isinstance(val, (str, int, float, bool)) else ""
        if ("merge" in key.lower() or "aggregat" in key.lower() or "duplicate" in key.lower()) and "max" in text:
            return f"meta[{key!r}] = {val!r}"
    return ""


def check_aggregation(pool: Pool, *, min_draws: int = 20) -> AggregationCheck:
    """Max-merged k = 1 data (``meta`` names a merge/aggregation/duplicate rule with ``max``) and
    members whose draws are identical on all n x k draws (at least ``min_draws`` of them, so that
    two members agreeing by chance on a tiny pool are not flagged), on answers too when present."""
    n, M, k = pool.shape
    note = _merged_with_max(pool.meta) if k == 1 else ""
    V = pool.verdicts.reshape(n * k, M) if k == 1 else pool.verdicts.transpose(0, 2, 1).reshape(n * k, M)
    keys = [np.packbits(V[:, m]).tobytes() for m in range(M)]
    on = "verdicts"
    if pool.answers is not None:
        A = pool.answers.transpose(0, 2, 1).reshape(n * k, M)
        keys = [keys[m] + pd.util.hash_array(A[:, m].astype(str).astype(object)).tobytes() for m in range(M)]
        on = "verdicts and answers"
    codes, _ = pd.factorize(pd.Series(keys, dtype=object))
    groups = []
    if n * k >= min_draws:
        for c in np.unique(codes):
            members = np.flatnonzero(codes == c)
            if members.size > 1:
                groups.append(tuple(pool.policy_names[j] for j in members))
    share = float("nan")
    if pool.answers is not None and k > 1:
        A3 = pool.answers.astype(str)
        share = float((A3 == A3[:, :, :1]).all(axis=2).mean())
    warns = []
    if note:
        warns.append(f"k = 1 outcomes were merged with a max ({note}): a prompt counts as solved when any repeat was "
                     "right, which inflates every member and the oracle more")
    for g in groups:
        warns.append(f"members {', '.join(g)} have identical {on} on all {n * k} draws: cached or copied responses, "
                     "not independent members")
    if share == share and share == 1.0:
        warns.append(f"every cell's {k} answers are identical: the draws look cached (one response repeated), so k "
                     "repeats carry no sampling noise")
    return AggregationCheck(bool(note), note, tuple(groups), on, share, tuple(warns))


# ====================================================================== constant baselines
@dataclasses.dataclass(frozen=True, repr=False)
class Baselines(Result):
    """Constant and per-dataset baselines on the evaluated prompts of one protocol."""

    protocol: str
    metric: str
    n_eval: int
    table: pd.DataFrame

    def frame(self) -> pd.DataFrame:
        """One row per baseline: name, score on the evaluated prompts, the member(s) chosen."""
        return self.table.copy()


def constant_baselines(pool: Pool, *, tau=None, split=None, cv=None, seed: int = 0, dataset_column: str | None = None,
                       test=None) -> Baselines:
    """The best constant member selected on calibration, the task-wise best (per level of
    ``dataset_column``, default the pool's ``dataset``/``task``/``category``, selected on
    calibration; unseen or empty levels fall back to the constant), the best member in hindsight
    and the oracle, scored on the evaluated prompts of the protocol (see :func:`check_duplicates`)."""
    O, _ = outcome_matrix(pool, tau)
    n, M = O.shape
    proto = _protocol(pool, split, cv, check_int(seed, "seed", minimum=0), test)
    names = pool.policy_names
    col = dataset_column
    if col is None:
        col = next((c for c in ("dataset", "task", "category") if c in pool.prompts.columns
                    and pool.prompts[c].notna().all() and pool.prompts[c].astype(str).nunique() > 1), None)
    elif col not in pool.prompts.columns:
        raise ValueError(f"dataset_column {col!r} is not a prompt column; columns: {list(pool.prompts.columns)}")
    lev = None if col is None else pd.factorize(pool.prompts[col].astype(str))[0]
    const = np.zeros(n, dtype=bool)
    task = np.zeros(n, dtype=bool)
    picked = []
    for cal, tst in proto.folds:
        mean = O[cal].mean(axis=0)
        b = int(np.argmax(mean))
        const[tst] = O[tst, b]
        picked.append(names[b])
        if lev is not None:
            L = int(lev.max()) + 1
            sums = np.zeros((L, M))
            np.add.at(sums, lev[cal], O[cal].astype(float))
            cnt = np.bincount(lev[cal], minlength=L)
            best_l = np.where(cnt > 0, np.argmax(sums / np.maximum(cnt, 1)[:, None], axis=1), b)
            task[tst] = O[tst, best_l[lev[tst]]]
    ev = proto.eval_idx
    Oe = O[ev]
    rows = [{"baseline": "best constant (selected on calibration)", "score": float(const[ev].mean()),
             "chosen": ", ".join(sorted(set(picked)))}]
    if lev is not None:
        rows.append({"baseline": f"task-wise best (per {col!r}, selected on calibration)", "score": float(task[ev].mean()),
                     "chosen": f"{int(lev.max()) + 1} levels"})
    bm = int(np.argmax(Oe.mean(axis=0)))
    rows.append({"baseline": "best member in hindsight (evaluated prompts)", "score": float(Oe[:, bm].mean()), "chosen": names[bm]})
    rows.append({"baseline": "oracle (evaluated prompts)", "score": float(Oe.any(axis=1).mean()), "chosen": "per prompt"})
    metric = "accuracy" if pool.k == 1 else f"coverage@{tau:g}"
    return Baselines(proto.describe(), metric, int(ev.size), pd.DataFrame(rows))


# ====================================================================== all together
@dataclasses.dataclass(frozen=True, repr=False)
class IntegrityReport(Result):
    """Every integrity check of one pool: ``frame()`` one row per check, ``findings`` sentences."""

    duplicates: DuplicateCheck
    alignment: AlignmentCheck
    aggregation: AggregationCheck
    baselines: Baselines | None
    baselines_note: str = ""

    @property
    def findings(self) -> tuple:
        """Sentences for the problems found (empty when every check passed)."""
        d, a = self.duplicates, self.alignment
        out = []
        if d.n_groups:
            near = (f" and {d.n_near_pairs} near-duplicate pairs (TF-IDF cosine >= {d.near_threshold:g})"
                    if d.near_threshold is not None and d.n_near_pairs else "")
            out.append(f"{d.n_exact_duplicates} exact duplicate prompts (after normalisation){near}: {d.n_duplicates} prompts "
                       f"repeat another of {d.n_groups} groups")
        if d.leakage:
            out.append(f"leakage: {d.n_leaking_groups} duplicate groups cross the calibration/test split ({d.protocol}); "
                       f"{d.n_leaking_prompts} prompts are scored with a copy in the fitting data -- deduplicate first")
        if a.n_disagree:
            out.append(f"outcome alignment: {a.n_disagree} of {a.n_checked} recorded verdicts disagree with the answers "
                       f"checked against '{a.gold_column}' ({100 * a.share:.1f}%)")
        out.extend(self.aggregation.warnings)
        return tuple(out)

    def frame(self) -> pd.DataFrame:
        """One row per check: check, status (ok / warning / leakage / skipped), count, detail."""
        d, a, g = self.duplicates, self.alignment, self.aggregation
        rows = [
            {"check": "exact duplicates", "status": "warning" if d.n_exact_duplicates else ("ok" if d.n_with_text else "skipped"),
             "count": d.n_exact_duplicates, "detail": f"{d.n_exact_groups} groups; {d.n_with_text} of {d.n_prompts} prompts have text"},
            {"check": "near duplicates", "status": "skipped" if d.near_threshold is None or not d.n_with_text
             else ("warning" if d.n_near_pairs else "ok"), "count": d.n_near_pairs,
             "detail": "off" if d.near_threshold is None else f"TF-IDF cosine >= {d.near_threshold:g}"},
            {"check": "duplicates across the split", "status": "leakage" if d.leakage else ("ok" if d.n_with_text else "skipped"),
             "count": d.n_leaking_prompts, "detail": f"{d.n_leaking_groups} groups; {d.protocol}"},
            {"check": "outcome alignment", "status": "skipped" if not a.n_checked else ("warning" if a.n_disagree else "ok"),
             "count": a.n_disagree, "detail": a.reason or f"{a.n_checked} responses checked against '{a.gold_column}'"},
            {"check": "max-merged k = 1 data", "status": "warning" if g.merged_with_max else "ok", "count": int(g.merged_with_max),
             "detail": g.merged_note or "no max merge recorded"},
            {"check": "identical members", "status": "warning" if g.identical_members else "ok", "count": len(g.identical_members),
             "detail": "; ".join(", ".join(x) for x in g.identical_members) or f"compared on {g.identical_on}"},
        ]
        return pd.DataFrame(rows)


def integrity_checks(pool: Pool, *, tau=None, split=None, cv=None, seed: int = 0, near: bool = True,
                     near_threshold: float = NEAR_THRESHOLD, gold_column: str | None = None, test=None) -> IntegrityReport:
    """Every check above on ``pool``; ``split``/``cv``/``seed`` name the routers' protocol (see
    :func:`check_duplicates`; ``test`` the test prompts of a split made elsewhere, e.g. the audit's
    quick router), ``tau`` the coverage threshold of the baselines for k > 1 (without
    it the baselines are skipped for k > 1 pools, and ``baselines_note`` says so)."""
    dup = check_duplicates(pool, near=near, near_threshold=near_threshold, split=split, cv=cv, seed=seed, test=test)
    ali = check_outcome_alignment(pool, gold_column)
    agg = check_aggregation(pool)
    base, note = None, ""
    if pool.k > 1 and tau is None:
        note = f"the pool has k={pool.k}: pass tau for the baselines (coverage at tau)"
    elif pool.n_prompts < 2 or pool.n_policies < 2:
        note = "baselines need at least two prompts and two policies"
    else:
        base = constant_baselines(pool, tau=tau, split=split, cv=cv, seed=seed, test=test)
    return IntegrityReport(dup, ali, agg, base, note)
