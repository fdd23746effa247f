# cudaswitch shell integration for tcsh (printed by `cudaswitch init tcsh`).
# csh has no functions: this alias runs the real command, then re-sources the active environment's activate
# hook when it exists (the hooks are idempotent, so this is harmless after any command). Limitation: `off` is
# not undone in this shell; open a new shell or run `conda deactivate` before `cudaswitch off`.
alias cudaswitch '\cudaswitch \!* && if ( $?CONDA_PREFIX ) if ( -f "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh" ) source "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh"'
