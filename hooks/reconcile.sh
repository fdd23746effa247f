# cudaswitch prompt-time reconciler for bash and zsh (added by `cudaswitch init bash|zsh`).
# conda cannot take a cudaswitch entry off PATH when the shell switches to an environment without cudaswitch hooks:
# it re-exports the PATH it computed before the old env's deactivate hook ran (conda#14762). Before each prompt
# this takes out our one copy of each recorded entry when a record is set and $CONDA_PREFIX has no cudaswitch
# activate hook, restores the backed-up CUDA_PATH/CUDA_HOME and clears the records (docs/design/activation.md).
# No process is started; without a record it costs one variable test. The exit status of the last command is kept.
__cudaswitch_strip1() {  # __cs_r = $1 without one copy (the first) of each entry of the ':' list $2
  __cs_r=:$1: __cs_d=$2:
  while [ -n "$__cs_d" ]; do
    __cs_i=${__cs_d%%:*}; __cs_d=${__cs_d#*:}
    if [ -n "$__cs_i" ]; then
      case $__cs_r in *":$__cs_i:"*) __cs_r=${__cs_r%%":$__cs_i:"*}:${__cs_r#*":$__cs_i:"} ;; esac
    fi
  done
  __cs_r=${__cs_r#:}; __cs_r=${__cs_r%:}
}
__cudaswitch_reconcile() {
  set -- "$?"
  if [ -n "${_CUDASWITCH_ADDED_PATH-}" ] && [ ! -f "${CONDA_PREFIX:-/nonexistent}/etc/conda/activate.d/cudaswitch.sh" ]; then
    __cudaswitch_strip1 "${PATH-}" "$_CUDASWITCH_ADDED_PATH"
    PATH=$__cs_r; export PATH
    if [ -n "${_CUDASWITCH_ADDED_LD_LIBRARY_PATH-}" ]; then
      __cudaswitch_strip1 "${LD_LIBRARY_PATH-}" "$_CUDASWITCH_ADDED_LD_LIBRARY_PATH"
      if [ -z "$__cs_r" ] && [ -n "${_CUDASWITCH_UNSET_LD_LIBRARY_PATH-}" ]; then unset LD_LIBRARY_PATH
      else LD_LIBRARY_PATH=$__cs_r; export LD_LIBRARY_PATH; fi
    fi
    if [ -n "${_CUDASWITCH_SAVED_CUDA_PATH-}" ]; then
      if [ -n "${_CUDASWITCH_OLD_CUDA_PATH+x}" ]; then CUDA_PATH=$_CUDASWITCH_OLD_CUDA_PATH; export CUDA_PATH
      else unset CUDA_PATH; fi
    fi
    if [ -n "${_CUDASWITCH_SAVED_CUDA_HOME-}" ]; then
      if [ -n "${_CUDASWITCH_OLD_CUDA_HOME+x}" ]; then CUDA_HOME=$_CUDASWITCH_OLD_CUDA_HOME; export CUDA_HOME
      else unset CUDA_HOME; fi
    fi
    unset _CUDASWITCH_ADDED_PATH _CUDASWITCH_ADDED_LD_LIBRARY_PATH _CUDASWITCH_UNSET_LD_LIBRARY_PATH \
      _CUDASWITCH_SAVED_CUDA_PATH _CUDASWITCH_OLD_CUDA_PATH _CUDASWITCH_SAVED_CUDA_HOME _CUDASWITCH_OLD_CUDA_HOME \
      __cs_r __cs_d __cs_i
  fi
  # the status goes back for the user's own prompt hooks that follow, except under errexit (set -e, zsh ERR_EXIT),
  # where a prompt hook returning a failure that the user's `false && true` was allowed to leave closes the shell
  case $- in *e*) return 0 ;; esac
  return "$1"
}
# Run before every prompt, first, keeping what the user already has there: bash's PROMPT_COMMAND (a string, or an
# array in bash >= 5.1), zsh's precmd_functions. Idempotent: sourcing this twice adds it once. (eval: these
# spellings are not POSIX sh.)
export CUDASWITCH_RECONCILER=1
if [ -n "${ZSH_VERSION-}" ]; then
  # ${precmd_functions-}: an unset array under `set -u` (NO_UNSET) is not an error, nothing is added for it
  eval 'precmd_functions=(__cudaswitch_reconcile ${${precmd_functions-}:#__cudaswitch_reconcile})'
elif [ -n "${BASH_VERSION-}" ]; then
  # every expansion of PROMPT_COMMAND tolerates it being unset: `set -u` before this block must not stop it
  eval 'if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 501 )) && [[ -n ${PROMPT_COMMAND+x} && ${PROMPT_COMMAND@a} == *a* ]]; then
    [[ " ${PROMPT_COMMAND[*]} " == *" __cudaswitch_reconcile "* ]] || PROMPT_COMMAND=(__cudaswitch_reconcile "${PROMPT_COMMAND[@]}")
  else
    case ";${PROMPT_COMMAND-};" in
      *";__cudaswitch_reconcile;"*) ;;
      *) PROMPT_COMMAND="__cudaswitch_reconcile${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
    esac
  fi'
fi
