# _cs_strip LIST DROP: _cs_r = LIST without ONE component equal to each entry of DROP (a ':' list): the first
# copy, which is the one a cudaswitch hook put in front. Other copies are the user's (.bashrc, the NVIDIA installer)
# and stay where they are. The entry is cut out of ":LIST:" with ${x%%":e:"*} and ${x#*":e:"}: the longest suffix
# and the shortest prefix, so both cut at the first copy; the double quotes make the entry a literal, not a
# pattern ('*' or '[' in a path matches only itself). Empty components of LIST are kept; no loop over LIST.
_cs_strip() {
  _cs_r=:$1:; _cs_d=$2:
  while [ -n "$_cs_d" ]; do
    _cs_i=${_cs_d%%:*}; _cs_d=${_cs_d#*:}
    if [ -z "$_cs_i" ]; then continue; fi
    case $_cs_r in *":$_cs_i:"*) _cs_r=${_cs_r%%":$_cs_i:"*}:${_cs_r#*":$_cs_i:"} ;; esac
  done
  _cs_r=${_cs_r#:}; _cs_r=${_cs_r%:}
}
# _cs_prepend NAME ADD: list NAME without our one copy of the entries recorded for it (conda may have re-exported
# an earlier hook's entry), then ADD in front, recorded; with ADD empty it only strips. A copy of ADD that is
# already on the list is the user's and stays. Whether NAME was unset before cudaswitch touched it is kept in
# _CUDASWITCH_UNSET_<NAME>.
_cs_prepend() {
  eval "_cs_rec=\${_CUDASWITCH_ADDED_$1-} _cs_v=\${$1-} _cs_set=\${$1+x} _cs_un=\${_CUDASWITCH_UNSET_$1-}"
  _cs_strip "$_cs_v" "$_cs_rec"
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
# _cs_unprepend NAME: take our one copy of each entry recorded in _CUDASWITCH_ADDED_<NAME> out of list NAME;
# NAME is unset again if cudaswitch found it unset and nothing else is left (HL4). eval only ever sees the
# constant variable names of this file, never a value.
_cs_unprepend() {
  eval "_cs_rec=\${_CUDASWITCH_ADDED_$1-} _cs_v=\${$1-} _cs_un=\${_CUDASWITCH_UNSET_$1-}"
  if [ -n "$_cs_rec" ]; then
    _cs_strip "$_cs_v" "$_cs_rec"
    if [ -z "$_cs_r" ] && [ -n "$_cs_un" ]; then unset "$1"; else eval "$1=\$_cs_r; export $1"; fi
  fi
  unset "_CUDASWITCH_UNSET_$1"
}
# _cs_save NAME: back up scalar NAME once (first writer wins, HS2), keeping unset apart from empty (HS1).
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
