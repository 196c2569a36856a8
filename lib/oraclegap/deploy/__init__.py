"""Deployment rules (third floor): routers and their evaluation, the routing-plateau tables,
mixtures and votes, rules chosen on a validation split and scored on test (``validation``: Table 3), and pool
construction. Modules here import the statistics floor and below,
never data loaders or presentation."""
