"""SQL analysis built on sqlglot: read-only guard, normalisation, quoting, splitting."""
