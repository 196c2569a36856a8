"""Deployment rules (third floor): routers, mixtures and votes, and pool construction. Modules
here import the statistics floor and below, never data loaders or presentation."""
