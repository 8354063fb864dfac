"""Cluster dumps (must-gather, Insights Operator archives) read into a snapshot."""
