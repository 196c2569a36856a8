"""``python -m oraclegap.datasets fetch|list``: download the released files, or list the registry
and which entries are present."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from .download import fetch
from .registry import _REPO, available


def main(argv=None) -> int:
    """``python -m oraclegap.datasets fetch|list`` (the only place in the library that prints)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m oraclegap.datasets")
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download the released external files into data/external/ (or --dest)")
    f.add_argument("--dest", default=None)
    f.add_argument("--timeout", type=float, default=10.0)
    f.add_argument("--force", action="store_true", help="download even files already present")
    sub.add_parser("list", help="list the registry and which entries are present")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        with pd.option_context("display.width", 200, "display.max_colwidth", 60, "display.max_rows", 200):
            print(available()[["name", "kind", "shape", "present", "license"]].to_string(index=False))
        return 0
    res = fetch(args.dest, timeout=args.timeout, skip_existing=not args.force)
    buf = io.StringIO()
    for r in res.itertuples():
        line = f"{r.status:8s} {r.path}"
        if r.status == "failed":
            line += f"  <- {r.url}  ({r.message})"
        print(line, file=buf)
    counts = res["status"].value_counts().to_dict()
    print(buf.getvalue(), end="")
    print(
        f"fetch summary: {counts.get('ok', 0)} downloaded, {counts.get('present', 0)} already present, "
        f"{counts.get('failed', 0)} could not be fetched (into {Path(args.dest) if args.dest else _REPO / 'data' / 'external'})"
    )
    if counts.get("failed", 0):
        print("where the network is closed, point OG_EXTERNAL_DIR at a folder holding the released files instead")
    return 0
