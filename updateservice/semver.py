"""Semantic versions as the CVO's semver library parses and orders them: `cvo_py.runtime.semver`,
where payload retrieval reads them too (a release's metadata), re-exported for the update side."""

from cvo_py.runtime.semver import SemverError, Version, descending, parse, valid

__all__ = ["SemverError", "Version", "descending", "parse", "valid"]
