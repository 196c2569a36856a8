"""Deployment rules (third floor): routers and their evaluation, the routing-plateau tables,
mixtures and votes, and pool construction. Modules here import the statistics floor and below,
never data loaders or presentation."""
