# cudaswitch shell integration for tcsh (printed by `cudaswitch init tcsh`).
# csh has no functions: this alias runs the real command (telling it that its result is applied here), then
# re-sources the active environment's activate hook when it exists, whatever the command's exit status (`use`
# exits 1 when its smoke test fails with the switch kept); the hooks are idempotent, so this is harmless after any
# command. The hook is sourced through eval because csh expands the command of a one-line `if` before testing the
# condition; the exit status is given back last, through eval so that the helper variable is gone by then.
# Limitation: `off` is not undone in this shell; run `conda deactivate` before `cudaswitch off`, or open a new one.
alias cudaswitch 'env CUDASWITCH_APPLIES=1 cudaswitch \!*; set _cs_rc=$status; if ( $?CONDA_PREFIX ) eval '"'"'if ( -f "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh" ) source "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh"'"'"'; eval "unset _cs_rc; ( exit $_cs_rc )"'
