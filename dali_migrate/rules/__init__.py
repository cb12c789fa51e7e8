"""The rewrite rules, one per module, found by :func:`all_rules` the way pyupgrade finds its plugins.

A module in this package that defines ``RULE`` (an instance of one of the classes in
``dali_migrate.rules.base``) is a rule; nothing else needs registering.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from dali_migrate.rules.base import CallSiteRule, DetectorRule, OpCallRule, PipelineRule, Rule

__all__ = ["Rule", "OpCallRule", "CallSiteRule", "DetectorRule", "PipelineRule", "all_rules", "by_kind", "get"]


@functools.lru_cache(maxsize=None)
def all_rules() -> tuple:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, Rule):
            found.append(rule)
    ids = [r.id for r in found]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise RuntimeError(f"two rules share the id(s) {sorted(dupes)}")
    return tuple(sorted(found, key=lambda r: (r.order, r.id)))


def by_kind(kind: type, enabled=None) -> list:
    return [r for r in all_rules() if isinstance(r, kind)]


def get(rule_id: str) -> Rule:
    for rule in all_rules():
        if rule.id == rule_id:
            return rule
    raise KeyError(rule_id)
