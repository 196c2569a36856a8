"""Lazy front doors for packages (ground floor): verbs reachable as package attributes without
importing anything heavy until one is used.

:func:`install` gives a package a table ``{verb: "module:function"}``. ``package.verb`` then
imports ``module`` on first use and returns ``function``. A verb named like one of the package's
submodules (``oraclegap.audit``, ``oraclegap.stats.coverage``, ``oraclegap.deploy.routers``) *is*
that submodule, made callable: ``oraclegap.stats.coverage(pool)`` runs the verb while
``from oraclegap.stats import coverage; coverage.coverage(pool, taus)`` keeps working. The
submodule is made callable whenever it is imported (the package intercepts the import system's
``setattr``), so the order of imports does not matter.
"""

from __future__ import annotations

import sys

__all__ = ["install"]

# Only sys at import time: the package's __init__ (and so the CLI's start) imports this module first.
_ModuleType = type(sys)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def _target(spec: str):
    import importlib

    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


class VerbModule(_ModuleType):
    """A submodule that is also its package's verb: calling it calls the verb."""

    def __call__(self, *args, **kwargs):
        return _target(self.__dict__["__front_door__"])(*args, **kwargs)


class _Package(_ModuleType):
    def __setattr__(self, name: str, value) -> None:
        verbs = self.__dict__.get("__verbs__", {})
        if name in verbs and isinstance(value, _ModuleType) and type(value) is _ModuleType:
            value.__class__ = VerbModule
            value.__dict__["__front_door__"] = verbs[name]
        super().__setattr__(name, value)


def install(package: str, verbs: Mapping[str, str]):
    """Give ``package`` (already in ``sys.modules``) the verbs ``{name: "module:function"}``;
    returns the ``__getattr__`` the package's ``__init__`` should bind."""
    pkg = sys.modules[package]
    pkg.__dict__["__verbs__"] = dict(verbs)
    if type(pkg) is _ModuleType:
        pkg.__class__ = _Package
    for name in verbs:  # submodules imported before install
        sub = sys.modules.get(f"{package}.{name}")
        if sub is not None:
            setattr(pkg, name, sub)

    def __getattr__(name: str):
        if name in verbs:
            import importlib
            import importlib.util

            full = f"{package}.{name}"
            if full in sys.modules or importlib.util.find_spec(full) is not None:
                importlib.import_module(full)  # the import system sets the (now callable) attribute
                return pkg.__dict__[name]
            value = _target(verbs[name])
            pkg.__dict__[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
