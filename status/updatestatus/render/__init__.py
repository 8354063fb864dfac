"""Rendering insights as `oc adm upgrade status` prints them (pure: insights + now → text)."""

from status.updatestatus.details import DETAILS
from status.updatestatus.render.text import NOT_UPDATING, RenderError, RowMemo, render
from status.updatestatus.render.warnings import emit, warning_text

__all__ = ["DETAILS", "NOT_UPDATING", "RenderError", "RowMemo", "emit", "render", "warning_text"]
