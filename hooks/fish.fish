# cudaswitch shell integration for fish (printed by `cudaswitch init fish`).
# Makes `cudaswitch use` and `cudaswitch off` take effect in this shell at once: after the real command it
# sources the active environment's own hook. The hooks are idempotent and work from their records, so
# re-applying the active environment's hook is right even when the command changed another environment.
function cudaswitch --description 'cudaswitch; use/off also apply to this shell'
    set -l h
    set -q CONDA_PREFIX; and test -n "$CONDA_PREFIX"; and set h "$CONDA_PREFIX/etc/conda"
    # off: undo this shell's CUDA settings while the deactivate hook still exists (off removes it).
    if test "$argv[1]" = off; and test -n "$h"; and test -f "$h/deactivate.d/cudaswitch.fish"
        source "$h/deactivate.d/cudaswitch.fish"
    end
    CUDASWITCH_APPLIES=1 command cudaswitch $argv
    set -l rc $status
    if contains -- "$argv[1]" use off
        if test -n "$h"; and test -f "$h/activate.d/cudaswitch.fish"
            source "$h/activate.d/cudaswitch.fish"
        else
            set -e _CUDASWITCH_ADDED_PATH
        end
    end
    return $rc
end
