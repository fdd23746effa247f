_cudaswitch_completion() {
    local IFS=$'\n' response completion type value
    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD="$COMP_CWORD" %(complete_var)s=bash_complete \
        %(prog_name)s 2>/dev/null)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        case $type in
            dir) COMPREPLY=(); compopt -o dirnames ;;
            file) COMPREPLY=(); compopt -o default ;;
            plain) COMPREPLY+=("$value") ;;
        esac
    done
    return 0
}
complete -o nosort -F _cudaswitch_completion %(prog_name)s 2>/dev/null || complete -F _cudaswitch_completion %(prog_name)s
