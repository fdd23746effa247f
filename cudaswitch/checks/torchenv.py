"""torch's files moved to cudaswitch/discovery/torchenv.py (what is installed is discovery's). This name stays the
same module object for cudaswitch/fix/, which still imports it from here."""

import sys

from cudaswitch.discovery import torchenv as _torchenv

sys.modules[__name__] = _torchenv
