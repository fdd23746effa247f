"""core/config.user_dir computes platformdirs' Linux folders without importing platformdirs (start-up time): it
must give exactly what platformdirs gives, for every HOME / XDG_*_HOME a user can have."""

import itertools
import os

import platformdirs
import pytest

from cudaswitch.core.config import user_dir
from cudaswitch.core.system import System

HOMES = ["/root", "/home/a b/", "", "relative", None]
XDGS = [None, "", "/x/y", "/x/y/", " /x", "relative"]


@pytest.mark.parametrize("kind,var", [("data", "XDG_DATA_HOME"), ("config", "XDG_CONFIG_HOME"),
                                      ("cache", "XDG_CACHE_HOME")])
def test_user_dir_is_platformdirs(kind, var, monkeypatch):
    for home, xdg in itertools.product(HOMES, XDGS):
        for name, value in (("HOME", home), (var, xdg)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        want = getattr(platformdirs, f"user_{kind}_dir")("cudaswitch")
        assert user_dir(System(environ=dict(os.environ)), kind) == want, (home, xdg)
