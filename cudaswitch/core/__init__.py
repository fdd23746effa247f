"""The shared core every subsystem uses: the injectable outside world (`System`), expected errors, atomic writes and
ownership checks, CUDA/cuDNN version parsing, the user's config, human text in the user's language and console-safe
output, the package's resource folders and the PE version reader."""
