# cudaswitch prompt-time reconciler for fish (added by `cudaswitch init fish`).
# conda cannot take a cudaswitch entry off PATH when the shell switches to an environment without cudaswitch hooks
# (conda#14762). Before each prompt this takes out our one copy of each recorded entry when a record is set and
# $CONDA_PREFIX has no cudaswitch activate hook, restores CUDA_PATH/CUDA_HOME and clears the records
# (docs/design/activation.md). Builtins only: no process; without a record it costs one variable test.
set -gx CUDASWITCH_RECONCILER 1
function __cudaswitch_reconcile --on-event fish_prompt
    set -q _CUDASWITCH_ADDED_PATH; or return
    set -q CONDA_PREFIX; and test -n "$CONDA_PREFIX"; and test -f "$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.fish"; and return
    for e in $_CUDASWITCH_ADDED_PATH
        set -l at (contains -i -- $e $PATH); and set -e PATH[$at]
    end
    if set -q _CUDASWITCH_ADDED_LD_LIBRARY_PATH
        for e in $_CUDASWITCH_ADDED_LD_LIBRARY_PATH
            set -l at (contains -i -- $e $LD_LIBRARY_PATH); and set -e LD_LIBRARY_PATH[$at]
        end
        if test (count $LD_LIBRARY_PATH) -eq 0; and set -q _CUDASWITCH_UNSET_LD_LIBRARY_PATH
            set -e LD_LIBRARY_PATH
        end
    end
    for name in CUDA_PATH CUDA_HOME
        if set -q _CUDASWITCH_SAVED_$name
            set -l old _CUDASWITCH_OLD_$name
            if set -q $old
                set -gx $name $$old
            else
                set -e $name
            end
        end
        set -e _CUDASWITCH_SAVED_$name
        set -e _CUDASWITCH_OLD_$name
    end
    set -e _CUDASWITCH_ADDED_PATH
    set -e _CUDASWITCH_ADDED_LD_LIBRARY_PATH
    set -e _CUDASWITCH_UNSET_LD_LIBRARY_PATH
end
