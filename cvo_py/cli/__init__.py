"""One thin module per subcommand: `add_arguments`, `validate` (→ options, or UsageError) and `run`."""
