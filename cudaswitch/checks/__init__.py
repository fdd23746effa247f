"""The checks: the torch smoke test (probe run by the environment's own Python, classification of its failures),
`doctor`, `recommend`'s version tables, extension-build and conda health checks."""
