"""Where the top-level `templates/` and `hooks/` folders are: inside the installed package, or beside it in a
source checkout (editable installs)."""

from pathlib import Path


def resource_dir(name: str) -> Path:
    here = Path(__file__).resolve().parent
    installed = here / name
    return installed if installed.is_dir() else here.parent / name
