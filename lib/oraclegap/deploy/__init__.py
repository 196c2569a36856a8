"""Deployment rules (third floor): routers and their evaluation, the routing-plateau tables,
mixtures and votes, rules chosen on a validation split and scored on test (``validation``: Table 3), and pool
construction, and the regimes beyond one pre-answer call (``cascade``, the online ``bandit``, the
``binary`` strong/weak routers, scored together by ``regimes``). Modules here import the statistics floor and below,
never data loaders or presentation."""
