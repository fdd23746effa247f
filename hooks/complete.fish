function _cudaswitch_completion
    set -l response (env %(complete_var)s=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) \
        %(prog_name)s 2>/dev/null)
    for completion in $response
        set -l metadata (string split -m 2 \t -- $completion)
        switch $metadata[1]
            case dir
                __fish_complete_directories $metadata[2]
            case file
                __fish_complete_path $metadata[2]
            case plain
                if test -n "$metadata[3]"
                    printf '%%s\t%%s\n' $metadata[2] $metadata[3]
                else
                    printf '%%s\n' $metadata[2]
                end
        end
    end
end
complete --no-files --command %(prog_name)s --arguments "(_cudaswitch_completion)"
