"""Kubernetes label selectors (metav1.LabelSelector) as the Machine Config Operator applies a pool's
`nodeSelector` to nodes: parsed once, matched against each node's labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from status.updatestatus.insights.objects import InputError


class SelectorError(InputError):
    """A pool's node selector that cannot be used; worded as oc, about a MachineConfigPool."""

    kind = "MachineConfigPool"


class Selector(NamedTuple):
    """A parsed metav1.LabelSelector: nil matches nothing, {} matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[tuple[str, str, frozenset[str]], ...] = ()
    nil: bool = False

    @classmethod
    def parse(cls, selector: object, pool_name: str) -> Selector:
        """The selector, or SelectorError (oc: "failed to get label selector from the pool")."""
        if selector is None:
            return cls(nil=True)
        bad = SelectorError(f"failed to get label selector from the pool: {pool_name}")
        if not isinstance(selector, dict):
            raise bad
        labels = selector.get("matchLabels") or {}
        if not isinstance(labels, dict):
            raise bad
        exprs = []
        for expr in selector.get("matchExpressions") or []:
            if not isinstance(expr, dict) or expr.get("operator") not in (
                "In",
                "NotIn",
                "Exists",
                "DoesNotExist",
            ):
                raise bad
            values = expr.get("values") or []
            if not isinstance(values, list):
                raise bad
            exprs.append((str(expr.get("key", "")), str(expr["operator"]), frozenset(str(v) for v in values)))
        return cls(tuple((str(k), "" if v is None else str(v)) for k, v in labels.items()), tuple(exprs))

    def matches(self, node_labels: Mapping[str, str]) -> bool:
        if self.nil:
            return False
        for key, value in self.match_labels:
            if node_labels.get(key) != value:
                return False
        for key, op, values in self.expressions:
            present = key in node_labels
            if op == "In":
                if not present or node_labels[key] not in values:
                    return False
            elif op == "NotIn":
                if present and node_labels[key] in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True
