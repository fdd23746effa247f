"""Test environments for the smoke test: one real torch venv per machine (cached), and small environments whose
`torch` fails the way real installs fail on machines this one is not (Windows DLL errors, an old driver, a GPU
missing from the build, two OpenMP runtimes, ...). Each failure raises the REAL error text; `texts.py` quotes every
text with its source."""
