"""Composition roots: what each long-running command builds, for `cvo_py.runtime.process` to run."""
