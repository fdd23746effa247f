# _cs_strip LIST DROP: _cs_r = LIST without any component equal to an entry of DROP (a ':' list). Each entry is
# cut out of ":LIST:" with ${x%%":e:"*} and ${x#*":e:"}, where the double quotes make the entry a literal, not a
# pattern ('*' or '[' in a path matches only itself); repeated until no copy is left (F5), so adjacent
# duplicates go too. Empty components of LIST are kept; no loop over LIST, so the cost does not grow with PATH.
_cs_strip() {
  _cs_r=:$1:; _cs_d=$2:
  while [ -n "$_cs_d" ]; do
    _cs_i=${_cs_d%%:*}; _cs_d=${_cs_d#*:}
    if [ -z "$_cs_i" ]; then continue; fi
    while :; do
      case $_cs_r in *":$_cs_i:"*) ;; *) break ;; esac
      _cs_r=${_cs_r%%":$_cs_i:"*}:${_cs_r#*":$_cs_i:"}
    done
  done
  _cs_r=${_cs_r#:}; _cs_r=${_cs_r%:}
}
# _cs_prepend NAME ADD: list NAME without the entries recorded for it (R1: conda may have re-exported an earlier
# hook's entry, F2) and without ADD, then ADD in front, recorded (R3); with ADD empty it only strips. Whether
# NAME was unset before cudaswitch touched it is kept in _CUDASWITCH_UNSET_<NAME> (R5). One strip pass for both.
_cs_prepend() {
  eval "_cs_rec=\${_CUDASWITCH_ADDED_$1-} _cs_v=\${$1-} _cs_set=\${$1+x} _cs_un=\${_CUDASWITCH_UNSET_$1-}"
  _cs_strip "$_cs_v" "$_cs_rec:$2"
  # only our entries were left and cudaswitch had found NAME unset: it counts as unset again
  if [ -n "$_cs_rec" ] && [ -z "$_cs_r" ] && [ -n "$_cs_un" ]; then _cs_set=; fi
  if [ -n "$2" ]; then
    if [ -z "$_cs_set" ]; then eval "_CUDASWITCH_UNSET_$1=1; export _CUDASWITCH_UNSET_$1"
    else unset "_CUDASWITCH_UNSET_$1"; fi
    eval "$1=\$2\${_cs_r:+:\$_cs_r}; _CUDASWITCH_ADDED_$1=\$2; export $1 _CUDASWITCH_ADDED_$1"
  else
    if [ -n "$_cs_rec" ]; then
      if [ -z "$_cs_set" ]; then unset "$1"; else eval "$1=\$_cs_r; export $1"; fi
    fi
    unset "_CUDASWITCH_ADDED_$1" "_CUDASWITCH_UNSET_$1"
  fi
}
# _cs_unprepend NAME: take the entries cudaswitch recorded in _CUDASWITCH_ADDED_<NAME> out of list variable NAME;
# NAME is unset again if cudaswitch found it unset and nothing else is left (R5). eval only ever sees the
# constant variable names of this file, never a value.
_cs_unprepend() {
  eval "_cs_rec=\${_CUDASWITCH_ADDED_$1-} _cs_v=\${$1-} _cs_un=\${_CUDASWITCH_UNSET_$1-}"
  if [ -n "$_cs_rec" ]; then
    _cs_strip "$_cs_v" "$_cs_rec"
    if [ -z "$_cs_r" ] && [ -n "$_cs_un" ]; then unset "$1"; else eval "$1=\$_cs_r; export $1"; fi
  fi
  unset "_CUDASWITCH_UNSET_$1"
}
# _cs_save NAME: back up scalar NAME once (first writer wins, R8), keeping unset apart from empty (R7).
_cs_save() {
  eval "_cs_s=\${_CUDASWITCH_SAVED_$1-} _cs_set=\${$1+x}"
  if [ -z "$_cs_s" ]; then
    if [ -n "$_cs_set" ]; then eval "_CUDASWITCH_OLD_$1=\$$1; export _CUDASWITCH_OLD_$1"
    else unset "_CUDASWITCH_OLD_$1"; fi
    eval "_CUDASWITCH_SAVED_$1=1; export _CUDASWITCH_SAVED_$1"
  fi
}
# _cs_restore NAME: put scalar NAME back as _cs_save found it, then drop the backup.
_cs_restore() {
  eval "_cs_s=\${_CUDASWITCH_SAVED_$1-} _cs_set=\${_CUDASWITCH_OLD_$1+x}"
  if [ -n "$_cs_s" ]; then
    if [ -n "$_cs_set" ]; then eval "$1=\$_CUDASWITCH_OLD_$1; export $1"; else unset "$1"; fi
    unset "_CUDASWITCH_OLD_$1" "_CUDASWITCH_SAVED_$1"
  fi
}
