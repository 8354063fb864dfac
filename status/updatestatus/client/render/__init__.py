"""Rendering insights as `oc adm upgrade status` prints them (pure: insights + now → text)."""

from status.updatestatus.client.details import DETAILS
from status.updatestatus.client.render.nodes import RowMemo
from status.updatestatus.client.render.text import NOT_UPDATING, RenderError, render, shows_update
from status.updatestatus.client.render.warnings import emit, warning_text

__all__ = ["DETAILS", "NOT_UPDATING", "RenderError", "RowMemo", "emit", "render", "shows_update", "warning_text"]
