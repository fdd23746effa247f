# cudaswitch shell integration for bash and zsh (printed by `cudaswitch init bash|zsh`).
# Makes `cudaswitch use` and `cudaswitch off` take effect in this shell at once: after the real command it
# sources the active environment's own hook. The hooks are idempotent and work from their records, so
# re-applying the active environment's hook is right even when the command changed another environment.
# shellcheck disable=SC1091 # the sourced hooks are generated per environment
cudaswitch() {
  _cs_h=${CONDA_PREFIX:+$CONDA_PREFIX/etc/conda}
  # off: undo this shell's CUDA settings while the deactivate hook still exists (off removes it).
  if [ "${1-}" = off ] && [ -n "$_cs_h" ] && [ -f "$_cs_h/deactivate.d/cudaswitch.sh" ]; then
    . "$_cs_h/deactivate.d/cudaswitch.sh"
  fi
  # in a subshell (`cudaswitch use 12.9 | tail`: each part of a pipeline is one) nothing reaches this shell
  _cs_a=1
  # shellcheck disable=SC3028 # bash's and zsh's own counters; unset, so 0, in any other shell
  if [ "${BASH_SUBSHELL:-0}" != 0 ] || [ "${ZSH_SUBSHELL:-0}" != 0 ]; then _cs_a=0; fi
  CUDASWITCH_APPLIES=$_cs_a command cudaswitch "$@"
  _cs_rc=$?
  case "${1-}" in
    use|off)
      if [ -n "$_cs_h" ] && [ -f "$_cs_h/activate.d/cudaswitch.sh" ]; then
        . "$_cs_h/activate.d/cudaswitch.sh"
      else
        unset _CUDASWITCH_ADDED_PATH
      fi ;;
  esac
  set -- "$_cs_rc"  # keep the status in $1 so that no helper variable outlives the function
  unset _cs_h _cs_rc _cs_a
  return "$1"
}
