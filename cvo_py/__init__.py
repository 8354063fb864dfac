"""cvo-py: what an OpenShift update is doing and why it is stuck."""

__version__ = "0.1.0"
