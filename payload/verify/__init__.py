"""Release verification before the version Pod: OpenPGP signatures from HTTP stores and ConfigMaps."""
