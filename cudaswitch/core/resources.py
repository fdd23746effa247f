"""Where the top-level `templates/` and `hooks/` folders are: inside the installed package (pyproject.toml installs
them as `cudaswitch/templates/` and `cudaswitch/shell_hooks/`), else beside the package in a source checkout
(editable installs, running from the repository)."""

import functools
from pathlib import Path

_INSTALLED_AS = {"templates": "templates", "hooks": "shell_hooks"}


def resource_dir(name: str) -> Path:
    here = Path(__file__).resolve().parent.parent  # the cudaswitch package folder
    installed = here / _INSTALLED_AS[name]
    if installed.is_dir():
        return installed
    checkout = here.parent / name
    if checkout.is_dir():
        return checkout
    from cudaswitch.core.i18n import M

    raise FileNotFoundError(M("cudaswitch's {name}/ folder is missing (looked in {installed} and {checkout}); "
                              "reinstall cudaswitch", name=name, installed=installed, checkout=checkout))


@functools.lru_cache(maxsize=None)
def package_roots():
    """The folders whose files are cudaswitch's own: the package, and the templates/ and hooks/ folders."""
    here = Path(__file__).resolve().parent.parent
    roots = [here]
    for name in _INSTALLED_AS:
        try:
            roots.append(resource_dir(name).resolve())
        except FileNotFoundError:
            pass
    return roots
