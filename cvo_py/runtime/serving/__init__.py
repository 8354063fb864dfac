"""Serving /metrics, /healthz and /readyz over TLS, with certificate reload and client-CA authorization."""
