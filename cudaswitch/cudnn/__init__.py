"""cuDNN: reading NVIDIA's archives, installing one into a toolkit or environment all-or-nothing and undoing it,
and finding the cuDNN NVIDIA's Windows installer puts outside any toolkit."""
