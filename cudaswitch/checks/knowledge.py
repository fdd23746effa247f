"""The version tables moved to cudaswitch/data/knowledge.py (they are data, read by discovery as well as the checks).
This name stays the same module object for cudaswitch/fix/, which still imports it from here."""

import sys

from cudaswitch.data import knowledge as _knowledge

sys.modules[__name__] = _knowledge
