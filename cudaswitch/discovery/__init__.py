"""Discovery: which CUDA toolkits are installed (and their exact versions), where conda keeps its environments,
what an environment and the current shell are set to, and the toolkits `install-toolkit` adds from NVIDIA's wheels."""
