# cudaswitch prompt-time reconciler for tcsh (sourced by the precmd alias `cudaswitch init tcsh` sets up, only while
# a _CUDASWITCH_ADDED_PATH record is set). conda cannot take a cudaswitch entry off PATH when the shell switches
# to an environment without cudaswitch hooks (conda#14762): when $CONDA_PREFIX has no cudaswitch activate hook,
# this takes out our one copy of each recorded entry, restores CUDA_PATH/CUDA_HOME and clears the records
# (docs/design/activation.md). Builtins only, no process.
set _cs_have = 0
if ( $?CONDA_PREFIX ) then
    if ( -f "${CONDA_PREFIX}/etc/conda/activate.d/cudaswitch.csh" ) set _cs_have = 1
endif
if ( $_cs_have == 0 ) then
    set _cs_raw = "$PATH"

    # ---- PATH: remove our one copy (the first) of each recorded entry, never the user's copies
    if ( $?_CUDASWITCH_ADDED_PATH ) then
        setenv PATH "$_CUDASWITCH_ADDED_PATH"
        set _cs_drop = ( $path:q )
        setenv PATH "$_cs_raw"
        set _cs_in = ( $path:q )
        set _cs_out = ""
        set _cs_n = 0
        foreach _cs_i ( $_cs_in:q )
            set _cs_hit = 0
            set _cs_k = 0
            foreach _cs_d ( $_cs_drop:q )
                @ _cs_k++
                if ( $_cs_hit == 0 && "$_cs_i" == "$_cs_d" ) then
                    set _cs_hit = 1
                    set _cs_drop[$_cs_k] = ""
                endif
            end
            if ( $_cs_hit == 0 ) then
                if ( $_cs_n == 0 ) then
                    set _cs_out = "$_cs_i"
                else
                    set _cs_out = "${_cs_out}:$_cs_i"
                endif
                set _cs_n = 1
            endif
        end
        setenv PATH "$_cs_out"
        set _cs_raw = "$PATH"
        unsetenv _CUDASWITCH_ADDED_PATH
    endif

    # ---- LD_LIBRARY_PATH: remove the recorded entries; unset it again if it was unset and nothing else is left
    if ( $?_CUDASWITCH_ADDED_LD_LIBRARY_PATH ) then
        setenv PATH "$_CUDASWITCH_ADDED_LD_LIBRARY_PATH"
        set _cs_drop = ( $path:q )
        set _cs_in = ( )
        if ( $?LD_LIBRARY_PATH ) then
            setenv PATH "$LD_LIBRARY_PATH"
            set _cs_in = ( $path:q )
        endif
        setenv PATH "$_cs_raw"
        set _cs_out = ""
        set _cs_n = 0
        foreach _cs_i ( $_cs_in:q )
            set _cs_hit = 0
            set _cs_k = 0
            foreach _cs_d ( $_cs_drop:q )
                @ _cs_k++
                if ( $_cs_hit == 0 && "$_cs_i" == "$_cs_d" ) then
                    set _cs_hit = 1
                    set _cs_drop[$_cs_k] = ""
                endif
            end
            if ( $_cs_hit == 0 ) then
                if ( $_cs_n == 0 ) then
                    set _cs_out = "$_cs_i"
                else
                    set _cs_out = "${_cs_out}:$_cs_i"
                endif
                set _cs_n = 1
            endif
        end
        if ( "$_cs_out" == "" && $?_CUDASWITCH_UNSET_LD_LIBRARY_PATH ) then
            unsetenv LD_LIBRARY_PATH
        else
            setenv LD_LIBRARY_PATH "$_cs_out"
        endif
        unsetenv _CUDASWITCH_ADDED_LD_LIBRARY_PATH
    endif
    unsetenv _CUDASWITCH_UNSET_LD_LIBRARY_PATH

    # ---- CUDA_PATH and CUDA_HOME: back to what the activate hook found
    if ( $?_CUDASWITCH_SAVED_CUDA_PATH ) then
        if ( $?_CUDASWITCH_OLD_CUDA_PATH ) then
            setenv CUDA_PATH "$_CUDASWITCH_OLD_CUDA_PATH"
        else
            unsetenv CUDA_PATH
        endif
        unsetenv _CUDASWITCH_OLD_CUDA_PATH _CUDASWITCH_SAVED_CUDA_PATH
    endif
    if ( $?_CUDASWITCH_SAVED_CUDA_HOME ) then
        if ( $?_CUDASWITCH_OLD_CUDA_HOME ) then
            setenv CUDA_HOME "$_CUDASWITCH_OLD_CUDA_HOME"
        else
            unsetenv CUDA_HOME
        endif
        unsetenv _CUDASWITCH_OLD_CUDA_HOME _CUDASWITCH_SAVED_CUDA_HOME
    endif
    unset _cs_raw _cs_drop _cs_in _cs_out _cs_n _cs_i _cs_d _cs_hit _cs_k
endif
unset _cs_have
