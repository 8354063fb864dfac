"""Rendering insights as `oc adm upgrade status` prints them (pure: insights + now → text)."""

from status.updatestatus.render.text import DETAILS, RenderError, render

__all__ = ["DETAILS", "RenderError", "render"]
