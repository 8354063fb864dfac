"""Readers of update status: the published ConfigMaps, snapshots, dumps; the renderer."""
