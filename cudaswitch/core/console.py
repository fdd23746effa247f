"""Output that cannot fail on the user's console: a Chinese Windows console or pipe is GBK (cp936), an English one
cp437, a redirected one whatever PYTHONIOENCODING says. A character the encoding lacks (a CJK folder name on cp437,
a non-UTF-8 file name on Linux) is written as a backslash escape instead of raising UnicodeEncodeError, and
translated text is only chosen when the console can show it.
"""

from __future__ import annotations

import codecs
import sys

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Optional

# Characters every zh_CN message uses; an encoding that has them (UTF-8, GBK/cp936, GB18030) shows the catalog.
_CHINESE_PROBE = "环境变量显卡驱动错误警告"


def can_show(text: str, encoding: Optional[str]) -> bool:
    if not encoding:
        return False
    try:
        codecs.lookup(encoding)
        text.encode(encoding)
    except (LookupError, UnicodeEncodeError):
        return False
    return True


def make_streams_safe(*streams) -> None:
    """Switch strict text streams to `backslashreplace`; keep an explicit choice (surrogateescape, replace)."""
    for stream in streams or (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "errors", None) != "strict":
            continue
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (a test runner's capture): leave it
            continue


def prepare() -> None:
    """At CLI start: safe streams, and English when the chosen language cannot be shown (reads no catalog)."""
    from cudaswitch.core import i18n

    make_streams_safe()
    i18n.set_language(None)  # the environment of this invocation decides (tests run several in one process)
    lang = i18n.current_language()
    if lang != i18n.ENGLISH:
        streams = [s for s in (sys.stdout, sys.stderr) if s is not None]
        if not all(can_show(_CHINESE_PROBE, getattr(s, "encoding", None)) for s in streams):
            i18n.set_language(i18n.ENGLISH)
