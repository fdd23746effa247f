"""Per-environment switching: what a switch changes (one plan for every shell), the per-shell records, rendering and
writing the `activate.d`/`deactivate.d` hook files, the prompt-time reconciler and `init` snippets, `use auto`
and the toolkit an `environment.yml` declares."""
