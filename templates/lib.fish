# Hooks are sourced inside conda's `conda` function: everything that must outlive it is `set -gx`, temporaries are
# globals named __cs_* that the hook erases at the end (docs/design/activation.md). Comparisons use `contains`, an
# exact match (`string match` would glob).
function __cs_strip --description 'cudaswitch: $__cs_r = argv without one copy (the first) of each entry of $__cs_drop'
    set -g __cs_r $argv
    for __cs_p in $__cs_drop
        # the first copy is the one a cudaswitch hook put in front; later copies are the user's and stay
        set -l __cs_at (contains -i -- $__cs_p $__cs_r); and set -e __cs_r[$__cs_at]
    end
end
# A list that was '' is one empty element here; prepending to it must not leave an empty component (the
# current folder), as sh's ${x:+:$x} does.
function __cs_nonempty
    test (count $__cs_r) -eq 1; and test -z "$__cs_r[1]"; and set -g __cs_r
end
# __cs_unprepend NAME: take our one copy of each entry recorded in _CUDASWITCH_ADDED_<NAME> out of list NAME; NAME is erased
# again if cudaswitch found it unset and nothing else is left. An unset NAME stays unset (HL4): `set -gx` of nothing
# would create it empty.
function __cs_unprepend --argument-names name
    set -l rec _CUDASWITCH_ADDED_$name
    set -l un _CUDASWITCH_UNSET_$name
    if set -q $rec; and set -q $name
        set -g __cs_drop $$rec
        __cs_strip $$name
        __cs_nonempty  # '' is one empty element here, and nothing left, as in sh
        if test (count $__cs_r) -eq 0; and set -q $un
            set -e $name
        else
            set -gx $name $__cs_r
        end
    end
    set -e $un
end
# __cs_save NAME: back up scalar NAME once (first writer wins), keeping unset apart from empty.
function __cs_save --argument-names name
    set -q _CUDASWITCH_SAVED_$name; and return
    set -e _CUDASWITCH_OLD_$name
    set -q $name; and set -gx _CUDASWITCH_OLD_$name $$name
    set -gx _CUDASWITCH_SAVED_$name 1
end
# __cs_restore NAME: put scalar NAME back as __cs_save found it, then drop the backup.
function __cs_restore --argument-names name
    set -q _CUDASWITCH_SAVED_$name; or return
    set -l old _CUDASWITCH_OLD_$name
    if set -q $old
        set -gx $name $$old
    else
        set -e $name
    end
    set -e _CUDASWITCH_OLD_$name
    set -e _CUDASWITCH_SAVED_$name
end
