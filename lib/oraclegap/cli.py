"""The ``oraclegap`` command: ``oraclegap coverage|nulls|certify|... POOL [options]``.

Each subcommand lives in ``oraclegap.commands.<name>`` with ``register(subparsers)``; the
ones present are discovered here, so later modules add commands without touching this file.
Output is a table by default and JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands as _commands

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oraclegap",
        description="Oracle-gap diagnostics for pools of policies (coverage, nulls, certificates, ...).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{_commands.__name__}.{info.name}")
        mod.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"oraclegap {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
