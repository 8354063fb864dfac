"""The update status API as writer and readers share it: names, keys, encoding, sharding, usc-meta."""
