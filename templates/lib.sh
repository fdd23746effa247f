# _cs_strip LIST DROP: _cs_r = LIST without the components listed in DROP (a ':' list). Compares whole components
# as literal strings (the quoted "$_cs_i" in the case pattern matches literally, so '*' or '[' in a path is no
# pattern), keeps empty components and the order of the rest (conda-activation.md 6.1, R3, F5).
_cs_strip() {
  if [ -z "$2" ]; then _cs_r=$1; return 0; fi
  _cs_r=; _cs_n=; _cs_l=$1:
  while [ -n "$_cs_l" ]; do
    _cs_i=${_cs_l%%:*}; _cs_l=${_cs_l#*:}
    case ":$2:" in *":$_cs_i:"*) continue ;; esac
    if [ -z "$_cs_n" ]; then _cs_r=$_cs_i; _cs_n=1; else _cs_r=$_cs_r:$_cs_i; fi
  done
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
