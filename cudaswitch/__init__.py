"""cudaswitch: see, switch and verify the CUDA toolkit each conda environment uses."""

__version__ = "0.1.0"
