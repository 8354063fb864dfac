"""Test support: the real local control plane, and stand-ins for the kubelet and the MCO."""
