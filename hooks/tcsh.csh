# cudaswitch shell integration for tcsh (printed by `cudaswitch init tcsh`).
# csh has no functions: this alias runs the real command, then re-sources the active environment's activate
# hook when it exists; the hooks are idempotent, so this is harmless after any command. The hook is sourced
# through eval because csh expands the command of a one-line `if` before testing the condition.
# Limitation: `off` is not undone in this shell; run `conda deactivate` before `cudaswitch off`, or open a new one.
alias cudaswitch '\cudaswitch \!* && if ( $?CONDA_PREFIX ) eval '"'"'if ( -f "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh" ) source "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh"'"'"
