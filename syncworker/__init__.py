"""Applying the release: the payload's manifests loaded, selected, ordered and applied, as the
CVO's sync worker applies them."""
