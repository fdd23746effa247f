"""`doctor --fix`: the fixes doctor names, as a plan the user confirms (plan.py), one small module per fixer
(refresh.py, kernelspec.py), applied under a journal kept in the environment (journal.py, apply.py) so that
`doctor --undo` puts every file back byte for byte."""
