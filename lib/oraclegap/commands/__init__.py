"""Subcommands of the ``oraclegap`` CLI: one module each, exposing ``register(subparsers)``."""
