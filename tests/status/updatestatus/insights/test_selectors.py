"""Label selectors as the Machine Config Operator applies a pool's nodeSelector: semantics and errors."""

from __future__ import annotations

from typing import Any

import pytest

from status.updatestatus.insights import selectors


@pytest.mark.parametrize(
    "selector,labels,matches",
    [
        (None, {"a": ""}, False),  # nil matches nothing
        ({}, {}, True),  # empty matches everything
        ({"matchLabels": {"a": ""}}, {"a": ""}, True),
        ({"matchLabels": {"a": "x"}}, {"a": "y"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]}, {"a": "y"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {"a": "x"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": "1"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "1"}, False),
        (
            {"matchLabels": {"a": ""}, "matchExpressions": [{"key": "b", "operator": "Exists"}]},
            {"a": ""},
            False,
        ),
    ],
)
def test_label_selector_semantics(selector: Any, labels: dict[str, str], matches: bool) -> None:
    assert selectors.Selector.parse(selector, "p").matches(labels) is matches


def test_bad_selector_is_a_clear_error() -> None:
    bad = {"matchExpressions": [{"key": "a", "operator": "Near"}]}
    with pytest.raises(selectors.SelectorError, match="failed to get label selector from the pool: infra"):
        selectors.Selector.parse(bad, "infra")
