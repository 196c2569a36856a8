"""The generated part of the harness page (``harness.qmd``): what each committed harness fixture reads as.

Every number is computed from the fixtures in ``data/harness/`` through the importers
(:func:`oraclegap._harness.fixture`), so the page cannot drift from what ``oraclegap audit`` would read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import _harness
from ..stats.nulls import draw_alignment

PAGE = "harness.qmd"
BEGIN = "<!-- generated: harness fixtures (python -m oraclegap.book pages) -->"
END = "<!-- end of generated harness fixtures -->"

#: What each fixture is, in words (the numbers beside it are computed).
WHAT = {
    "lm-eval-default-seed": "lm-eval, `repeats: 4`, lm-eval's default seeds, default `take_first` filter",
    "lm-eval-per-model-seed": "lm-eval, `repeats: 4`, `--seed S,S,S,S` with S different per model",
    "lm-eval-per-draw": "lm-eval, `repeats: 4`, one filter pipeline per draw, `--limit 12`",
    "inspect": "inspect_ai, `--epochs 4`, `--seed` per model, `--limit 12`, JSON logs",
    "lighteval": "lighteval, `pass@k` with k = 1 and n = 4, a `seed` per model, `--save-details`",
    "opencompass": "OpenCompass, a custom dataset with `n = 4` copies, `EMEvaluator`, `--dump-eval-details`",
}


def same_text_share(pool) -> list[float]:
    """Per pair of models: the share of (prompt, draw) at which both gave the same response text."""
    a = pool.answers
    M = a.shape[1]
    return [float((a[:, i] == a[:, j]).mean()) for i in range(M) for j in range(i + 1, M)]


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def versions() -> dict:
    f = _harness.fixture_dir() / "versions.json"
    return json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}


def section() -> str:
    """The fixture table and the alignment sentence, as Markdown."""
    rows = ["| fixture | what was run | prompts x models x draws | mean success per model | alignment |",
            "|---|---|---|---|---|"]
    pools = {}
    for name in _harness.FIXTURES:
        p = _harness.fixture(name)
        pools[name] = p
        means = ", ".join(f"{m} {v:.3f}" for m, v in zip(p.policy_names, p.verdicts.mean(axis=(0, 2)), strict=True))
        rows.append(f"| `{name}` | {WHAT.get(name, '')} | {p.n_prompts} x {p.n_policies} x {p.k} | {means} | "
                    f"{p.alignment} |")
    v = versions()
    ran = ", ".join(f"{k} {v[k]}" for k in ("lm_eval", "inspect_ai", "lighteval", "opencompass", "transformers",
                                             "torch") if k in v)
    out = ["\n".join(rows), ""]
    if ran:
        out.append(f"The fixtures were made with {ran} on CPU, offline (`data/harness/make_fixtures.py`).")
        out.append("")
    a, b = same_text_share(pools["lm-eval-default-seed"]), same_text_share(pools["lm-eval-per-model-seed"])
    more = "more" if np.mean(a) > np.mean(b) else "not more"
    out.append(
        f"Seed alignment, measured on the two lm-eval runs: with lm-eval's default seeds two models gave the same "
        f"response at the same (prompt, draw) in {_pct(min(a))} to {_pct(max(a))} of cases (mean {_pct(np.mean(a))}) "
        f"across the {len(a)} pairs of models; with a seed per model, in {_pct(min(b))} to {_pct(max(b))} "
        f"(mean {_pct(np.mean(b))}): common random numbers made matching responses {more} common, which is why the "
        "importer marks a default-seed run seed-aligned.")
    out.append("")
    out.append(_measured(pools))
    return "\n".join(out) + "\n"


def _measured(pools: dict) -> str:
    """The audit's own check of the alignment (matched verdict agreement of same-index draws against within-cell
    shuffles, :func:`oraclegap.stats.nulls.draw_alignment`) on every fixture with two or more models."""
    parts = []
    for name, p in pools.items():
        if p.n_policies < 2 or p.k < 2:
            continue
        da = draw_alignment(p, n_draws=999, seed=0)
        coupled = da.test.p <= 0.05
        parts.append(f"`{name}` (declared {p.alignment}): {da.test.observed:.3f} against {da.expected:.3f}, "
                     f"p = {da.test.p:.3f}, {'coupled' if coupled else 'not detectably coupled'}")
    return ("The audit measures the alignment whatever the importer declares: the share of model pairs, prompts "
            "and draws whose same-index verdicts agree, against within-cell shuffles that keep every count "
            "(999 shuffles, plus-one p-value, level 0.05) -- " + "; ".join(parts) + ".")


def page_text(root: Path) -> str:
    """``harness.qmd`` with its generated section brought up to date."""
    text = (Path(root) / PAGE).read_text(encoding="utf-8")
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"{PAGE} lacks the markers {BEGIN!r} ... {END!r}")
    return text[: i + len(BEGIN)] + "\n" + section() + text[j:]
