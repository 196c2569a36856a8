"""Prose checks of the chapters (the scans live in :mod:`oraclegap.book.prose`, which
``python -m oraclegap.book check-params`` runs too).

No result typed by hand: every decimal number or percentage in a chapter's Markdown cells is a
claim being checked, a setting, a reference, or a published figure that the text cites (the rules
are :func:`oraclegap.book.prose.typed_numbers`'s); numbers that interpret results belong in cells
that build the sentence from computed values (``oraclegap.report.md`` / ``show_md``). Executed
chapters print no p-value of exactly 0 and no code key where a reader expects a name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from oraclegap import book
from oraclegap.book import prose
from oraclegap.book.prose import printed_problems, typed_numbers

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = book.chapter_sources(ROOT)

@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_result_typed_by_hand(src):
    problems = prose.markdown_problems(src, prose.published_values(ROOT))
    assert not problems, (
        f"{src.name}: numbers typed in Markdown cells (emit them from code with report.md/show_md, "
        "move them into the claims list, write settings as $\\tau = ...$, or register a published figure "
        "in data/paper/published_figures.csv and cite it):\n  " + "\n  ".join(problems)
    )


def test_the_scan_catches_typed_results_and_allows_the_rest():
    published = {"0.113", "14%"}
    assert typed_numbers("The plug-in gap is 0.062 at this threshold.", published) == [
        "'0.062' in: The plug-in gap is 0.062 at this threshold."
    ]
    assert typed_numbers("Power reached 50% here.", published)
    # allowed: claims list, settings in math, references, conventions, cited published figures
    ok = (
        "**Claims checked.**\n\n1. power near 0.50 at $k = 16$\n   (continued 0.25)\n\n"
        "At $\\tau = 0.10$ and $\\sigma \\in \\{0.25, 0.5, 1\\}$, see §3.2 and Table A2 (arXiv 2609.32996).\n"
        "A 95% interval at nominal 5% and a 90% band.\n"
        "The paper reports 0.113 and a share of 14%."
    )
    assert typed_numbers(ok, published) == []
    assert typed_numbers("The population gap $L(0.10)$ at the headline threshold.", published) == []
    assert typed_numbers("The paper reports 3%-6% here.", {"3%"}) == ["'6%' in: The paper reports 3%-6% here."]
    # a published value without a citation in its paragraph is still typed by hand
    assert typed_numbers("Our gap is 0.113.", published)
    # after the claims list ends, numbers are checked again
    assert typed_numbers("**Claims checked.**\n\n1. a claim 0.5\n\nThen a result 0.7.", published)


def test_published_figures_are_printed_in_the_papers(shared_dir):
    papers = shared_dir / "papers"
    if not papers.is_dir():
        pytest.skip(f"no papers folder at {papers}")
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(papers.glob("*")) if p.is_file())
    flat = re.sub(r"[${}\\]|allowbreak", "", text).replace("−", "-")
    df = pd.read_csv(ROOT / "data" / "paper" / "published_figures.csv", dtype=str)
    assert df["key"].is_unique
    missing = [f"{r.key}: {r.value}" for r in df.itertuples() if r.value.lstrip("+") not in flat]
    assert not missing, f"registered as published but not found in the papers' text: {missing}"


#: Code cells stay short (the project aims at 15 non-blank lines; a cell above this fails).
MAX_CODE_CELL_LINES = 20


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_code_cells_are_short(src):
    """Notebooks hold narrative and glue: every code cell but the parameters cell has at most
    MAX_CODE_CELL_LINES non-blank lines (cell options included); longer logic belongs in lib/."""
    long = []
    for i, cell in enumerate(book.structure._read_cells(src)):
        if cell.cell_type != "code" or "parameters" in cell.metadata.get("tags", []):
            continue
        n = sum(1 for line in cell.source.splitlines() if line.strip())
        if n > MAX_CODE_CELL_LINES:
            long.append(f"cell {i} ({n} lines): {cell.source.splitlines()[0][:80]}")
    assert not long, f"{src.name}: code cells over {MAX_CODE_CELL_LINES} non-blank lines:\n  " + "\n  ".join(long)


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_parameters_cell_reads_cleanly_in_papermill(src, caplog):
    """papermill reads each chapter's parameters cell (``--help-notebook``, and on every run) and
    warns "Unable to parse line" for a line with two ``=``, a comment's ``k = 30`` included: every
    parameter is one assignment, and all of them are found."""
    import logging

    from papermill.translators import PythonTranslator

    cells = [c for c in book.structure._read_cells(src) if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{src.name}: {len(cells)} parameters cells"
    with caplog.at_level(logging.WARNING, logger="papermill"):
        found = PythonTranslator.inspect(cells[0])
    assert not [r.message for r in caplog.records], f"{src.name}: papermill warns on the parameters cell"
    names = re.findall(r"^([A-Z_][A-Z0-9_]*)\s*=", cells[0].source, re.M)
    assert [p.name for p in found] == names


GLOSSED = ["rAUC", "GRPO", "LoRA", "Holm", "McNemar", "Wilson", "Pass@1", "Self-consistency", "DPP", "k-medoids",
           "FWER", "FDR", "TF-IDF", "SVD", "AIQ", "APGR", "LLM"]
#: Capitalised tokens of the chapters' prose that are not abbreviations to gloss: table and appendix
#: numbers, file formats, tools, the chapters' own parameter names, dataset names (one entry covers them).
NOT_ABBREVIATIONS = {"CPU", "README", "USD", "CSV", "HTML", "CLI", "JSONL", "SMALL", "ALPHA", "PLANT", "OR", "US",
                     "GSM8K", "GPQA", "FILE", "KEY", "E731", "POOL", "MMLU", "MBPP", "ARC", "MATH", "JSON", "PNG", "PDF", "GPU", "API", "ID", "IDS"}


def test_glossary_defines_every_abbreviation_the_chapters_use():
    glossary = (ROOT / "glossary.qmd").read_text(encoding="utf-8")
    heads = " ".join(re.findall(r"^\*\*([^*]+)\*\*", glossary, re.M))
    missing = [t for t in GLOSSED if t.lower() not in heads.lower()]
    assert not missing, f"glossary entries missing: {missing}"
    used = set()
    for src in CHAPTERS:
        for line in src.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                used |= set(re.findall(r"(?<![\w$\\{`-])([A-Z][A-Z0-9]{1,6})(?![\w}`-])", line))
    unglossed = sorted(t for t in used if not re.match(r"^A\d+$", t) and t not in NOT_ABBREVIATIONS
                       and t not in glossary)
    assert not unglossed, f"abbreviations in the chapters' prose without a glossary entry: {unglossed}"


def test_the_book_cites_no_tracker_issue():
    """Claims cite the paper, the section or the library function, never a tracker issue number."""
    texts = {src.name: src.read_text(encoding="utf-8") for src in CHAPTERS}
    texts |= {p.name: p.read_text(encoding="utf-8") for p in ROOT.glob("*.qmd")}
    texts["inventory.csv"] = (ROOT / "data" / "paper" / "inventory.csv").read_text(encoding="utf-8")
    hits = [f"{name}: {m.group(0)}" for name, t in texts.items()
            for m in re.finditer(r"\bissues? \d+\b|another branch", t)]
    assert not hits, hits
    assert re.search(r"\bissues? \d+\b", "as in issue 21 section 1")  # the scan can fail


#: The project's technical terms beyond abbreviations: the headword the glossary must carry (in a
#: bold headword, case-insensitive) and the pattern of the term's uses in a chapter's prose.
TERMS = {
    "matched agreement": r"matched agreement",
    "budget-matched mixture": r"budget-matched mixture",
    "cross-fitting": r"cross-fit(?:ting|ted)?\b",
    "calibration half": r"calibration half",
    "test half": r"test half",
    "separation threshold": r"separation threshold",
    "identity router": r"identity router",
    "positive control": r"positive controls?",
    "negative control": r"negative controls?",
    "union bound": r"union bound",
    "Hoeffding interval": r"Hoeffding",
    "comonotone": r"comonoton",
    "falsifier": r"falsifier",
    "power planner": r"power planner|the planner",
    "verdict study": r"verdict study",
    "knapsack": r"knapsack",
    "partial enumeration": r"partial enumeration",
    "hindsight optimum": r"hindsight (?:optimum|pool)",
    "support strata": r"support strat(?:a|um)",
    "effective pool size": r"effective pool size",
    "heat-bath move": r"heat-bath",
    "Metropolis move": r"Metropolis",
    "multivariate hypergeometric": r"multivariate hypergeometric",
    "quick router": r"quick (?:held-out )?router",
    "split-draw coverage gap": r"split-draw coverage gap",
    "apparent gap": r"apparent gap",
    "quality test": r"quality test",
    "re-deal null": r"re-deal null",
    "margin-preserving null": r"margin-preserving null",
    "winner's curse": r"winner's curse",
    "single-draw luck": r"single-draw luck",
    "reproducible ceiling": r"reproducible ceiling",
    "break-even error": r"break-even",
    "disagreement error": r"disagreement error",
    "selection-valid interval": r"selection-valid",
    "paired interval": r"paired interval",
    "family certificate": r"family certificate",
    "split-half scoring": r"split-half",
}
_APPENDIX = re.compile(r"^#{2}\s.*\{#sec-[\w-]*appendix\}", re.M)
_CAPTION = re.compile(r"^#\|\s*(?:tbl|fig)-cap:(.*(?:\n#\|\s{2,}.*)*)", re.M)


def main_line(src: Path) -> str:
    """The prose a reader meets before a chapter's appendix: its Markdown cells, and in code cells
    the string literals (sentences built from computed values) and the table and figure captions."""
    import io
    import tokenize

    parts = []
    for cell in book.structure._read_cells(src):
        if cell.cell_type == "markdown":
            if _APPENDIX.search(cell.source):
                parts.append(cell.source[:_APPENDIX.search(cell.source).start()])
                break
            parts.append(cell.source)
        elif cell.cell_type == "code":
            parts += [m.group(1).replace("#|", " ") for m in _CAPTION.finditer(cell.source)]
            try:
                tokens = list(tokenize.generate_tokens(io.StringIO(cell.source).readline))
            except (tokenize.TokenError, IndentationError, SyntaxError):
                parts.append(cell.source)
                continue
            kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
            parts += [t.string for t in tokens if t.type in kinds]
    return "\n".join(parts)


def unglossed_terms(glossary: str, texts: dict[str, str], terms: dict[str, str] = TERMS) -> list[str]:
    """Terms of ``terms`` without a glossary headword: each with the texts (chapters) whose prose
    uses it, or "no chapter's main line" for a listed term used elsewhere (an appendix, the audit)."""
    heads = " ".join(re.findall(r"^\*\*([^*]+)\*\*", glossary, re.M)).lower()
    out = []
    for head, pattern in terms.items():
        if head.lower() in heads:
            continue
        where = [name for name, text in texts.items() if re.search(pattern, text, re.I)]
        out.append(f"{head} ({', '.join(where) or 'no chapter main line'})")
    return out


def test_glossary_defines_the_technical_terms_of_the_main_lines():
    glossary = (ROOT / "glossary.qmd").read_text(encoding="utf-8")
    texts = {src.stem[:2]: main_line(src) for src in CHAPTERS}
    missing = unglossed_terms(glossary, texts)
    assert not missing, ("technical terms without a glossary entry (a bold headword in glossary.qmd), "
                         f"with the chapters whose main line uses them: {missing}")


def test_the_term_scan_reads_main_lines_and_can_fail():
    glossary = "**Re-deal null.** A null.\n\n**Heat-bath move, Metropolis move.** Two moves.\n"
    texts = {"02": "The chain uses a heat-bath move; matched agreement is high."}
    terms = {"re-deal null": "re-deal", "heat-bath move": "heat-bath", "Metropolis move": "Metropolis",
             "matched agreement": "matched agreement", "quality test": "quality test"}
    assert unglossed_terms(glossary, texts, terms) == ["matched agreement (02)", "quality test (no chapter main line)"]
    ch = next(c for c in CHAPTERS if c.name.startswith("02"))
    line = main_line(ch)
    assert "matched agreement" in line and "re-deal null" in line
    appendix_only = "Non-rejection means something only when the test had a fair chance"
    assert appendix_only in ch.read_text(encoding="utf-8") and appendix_only not in line


def test_every_listed_term_is_used_in_the_book():
    """The term list stays the book's: each term occurs in a chapter or in the audit's report text."""
    text = "\n".join(src.read_text(encoding="utf-8") for src in CHAPTERS)
    text += "".join((ROOT / "lib" / "oraclegap" / "audit" / f).read_text(encoding="utf-8")
                    for f in ("display.py", "verdict_text.py"))  # the report's and the verdict's words
    unused = [head for head, pattern in TERMS.items() if not re.search(pattern, text, re.I)]
    assert not unused, f"listed terms no chapter and no audit report uses: {unused}"


#: Symbols the chapters use that the notation page must define in the first column of a table.
NOTATION_SYMBOLS = [r"O_{\mathrm{agg}}", r"R_k", r"\Delta_{\mathrm{lower}}", r"\rho", "$J$", "$o", "c_m",
                    r"O_{\exp}", "$q", r"p_{\mathrm{re}}", "$S$"]


def undefined_symbols(notation: str, symbols: list[str] = NOTATION_SYMBOLS) -> list[str]:
    """Symbols not in the first cell of any row of the notation page's tables."""
    firsts = " ".join(m.group(1) for m in re.finditer(r"^\|([^|]*)\|", notation, re.M))
    return [s for s in symbols if s not in firsts]


def test_notation_defines_the_symbols_the_chapters_use():
    notation = (ROOT / "notation.qmd").read_text(encoding="utf-8")
    assert not undefined_symbols(notation), f"symbols without a row on the notation page: {undefined_symbols(notation)}"
    assert undefined_symbols("| $q = P(Y = 1)$ | oracle accuracy |\n| symbol | meaning |\n", ["$q", r"R_k"]) == ["R_k"]
    for heading in ("$q$ and $O_{\\exp}$", "$p$ and $p_m$", "Best-of-$M$ and best-of-$k$", "**$S$.**"):
        assert heading in notation, f"the notation page does not tell apart: {heading}"


# ---------------------------------------------------------------- what the executed chapters print
@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_executed_chapter_prints_no_zero_p_value_and_no_code_key(src):
    """In the executed chapter (chapters/NN_*.ipynb, written by the book build): no table or
    sentence prints a p-value of exactly 0 (Monte Carlo p-values are (1 + b)/(B + 1), exact ones
    print "< 0.001"), and no table shows a code key (arc_challenge, routerdc-mmlu, dpp,
    partial=3) where a reader expects a name."""
    nb = ROOT / "chapters" / f"{src.stem}.ipynb"
    if not nb.is_file():
        pytest.skip(f"{nb.relative_to(ROOT)} not executed yet (python -m oraclegap.book build --only {src.stem[:2]})")
    problems = printed_problems(prose.notebook_outputs(nb), prose.code_keys())
    assert not problems, f"{nb.name}:\n  " + "\n  ".join(dict.fromkeys(problems))


def test_the_output_scan_can_fail():
    table = ('<table><tr><th>router</th><th>McNemar p, Holm</th><th>pᵣₑ</th></tr>'
             '<tr><td>embed_\u200bknn</td><td>0.000</td><td>0.004</td></tr>'
             '<tr><td>dpp</td><td>&lt; 0.001</td><td>0.5</td></tr>'
             '<tr><td>greedy (partial=3)</td><td><code>one_per_lineage</code></td><td>1</td></tr></table>')
    found = printed_problems([("text/html", table)], {"dpp"})
    assert found == ["code key 'embed_knn' in table cell 'embed_knn'", "p-value of 0 in column 'McNemar p, Holm'",
                     "code key 'dpp' in table cell 'dpp'", "code key 'partial=3' in table cell 'greedy (partial=3)'"]
    assert printed_problems([("text/markdown", "the re-deal test gives $p_{\\mathrm{re}} = 0.000$ here")], set())
    assert printed_problems([("text/markdown", "McNemar p = 0 on GSM8K")], set())
    assert printed_problems([("text/markdown", "The test gives p = 0.000.")], set())  # at a full stop
    assert not printed_problems([("text/markdown", "It gives p = 0.05. And p = 0.004.")], set())
    assert not printed_problems([("text/markdown", "p = 0.001 and p < 0.001; `p = 0`; a gap of 0.000")], set())


def test_tables_show_names_for_code_keys():
    from oraclegap import report as R

    df = pd.DataFrame({"dataset": ["arc_challenge", "routerdc-mmlu", "`arc_challenge`", "greedy"],
                       "rule": ["dpp", "kmedoids", "embed_knn", "re-deal"]})
    html = R.table(df).to_html()
    for name in ("ARC-Challenge", "RouterDC MMLU", "DPP", "k-medoids", "embedding 15-NN", "greedy", "re-deal"):
        assert name in html, name
    assert "<code>arc_\u200bchallenge</code>" in html  # a code span stays code
    problems = printed_problems([("text/html", html)], prose.code_keys())
    assert not problems, problems
    assert printed_problems([("text/html", df.to_html())], prose.code_keys())  # unmapped, the scan fails


def test_chapter_06_rounds_its_winners_as_its_tables_print_them():
    """A half-way value (0.0625, exact in binary) prints as 0.063 in a table (report.fmt: half up)
    while pandas' .round(3) gives 0.062 (half to even); chapter 06's "highest rule to three
    decimals" must pick its winners from the table's numbers."""
    from oraclegap import report as R

    rules = ["greedy", "accuracy", "diversity", "kmedoids", "dpp"]
    ts = pd.DataFrame([{"dataset": "d", "greedy": 0.0625, "accuracy": 0.063, "diversity": 0.01, "kmedoids": 0.01,
                        "dpp": 0.01}])
    assert pd.Series([0.0625]).round(3).iloc[0] == 0.062  # the rule the chapter must not use
    shown_in_table = re.findall(r">(0\.\d{3})<", R.table(ts[["greedy"]]).to_html())
    assert shown_in_table == ["0.063"]
    src = next(c for c in CHAPTERS if c.name.startswith("06")).read_text(encoding="utf-8")
    line = next(ln for ln in src.splitlines() if ln.startswith("shown10 ="))
    ns = {"ts": ts, "rules10": rules, "fmt": R.fmt}
    exec(line, ns)
    assert ns["shown10"].loc["d", "greedy"] == float(shown_in_table[0])
    assert ns["shown10"].loc["d", "greedy"] == ns["shown10"].loc["d", "accuracy"]  # a tie, as printed


def test_a_p_value_column_named_with_its_correction_prints_no_zero():
    from oraclegap import report as R

    df = pd.DataFrame({"router": ["a"], "McNemar p, Holm": [1e-9], "gain, 95%": [0.0001]})
    html = R.table(df).to_html()
    assert ">< 0.001<" in html and not printed_problems([("text/html", html)], set())
    assert ">0.000<" in html  # the gain, not a p-value, keeps its rounding


def test_a_p_value_column_named_in_math_prints_no_zero():
    """A p-value column headed as the prose writes it ($p_{\\mathrm{re}}$, "McNemar $p$, Holm")
    is still a p-value column to the scan; a column headed $G_b$ is not."""
    from oraclegap import report as R

    df = pd.DataFrame({"a": ["0.000"], "b": ["0.000"], "c": ["0.000"]})
    html = R.table(df, columns={"a": r"$p_{\mathrm{re}}$", "b": "McNemar $p$, Holm", "c": "$G_b$"}).to_html()
    assert printed_problems([("text/html", html)], set()) == [
        "p-value of 0 in column '\\\\(p_{\\\\mathrm{re}}\\\\)'", "p-value of 0 in column 'McNemar \\\\(p\\\\), Holm'"]


def test_a_reference_first_on_its_line_is_caught():
    """Pandoc reads '@tbl-x. Predict ...' at a line's start as an example-list item: the sentence
    is cut there and every @tbl-x renders as '(1)'."""
    from oraclegap.book.prose import example_markers

    bad = "The mean of its rows in\n@tbl-compose-table10. Predict where it lies."
    assert example_markers(bad) and example_markers("(@good) an example") \
        and example_markers("   @fig-x) here")
    for ok in ("The mean of its rows in @tbl-compose-table10. Predict.", "@tbl-x shows it.",
               "see\n@tbl-x, which", "an e-mail user@host. here"):
        assert example_markers(ok) == [], ok
