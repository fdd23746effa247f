"""Human text in the user's language: English is the source, Simplified Chinese the first translation.

Only what a person reads is translated. Codes, `--json` keys and values and exit codes never go through here, so
scripts read the same output in every language (records keep the English text; the CLI translates when it prints).

Three ways to mark a message, all found by the extractor (`scripts/i18n_catalog.py`):
  - `_("text")`: translate now (call it only where the text is printed);
  - `N_("text")`: mark a constant kept in a table (the failure catalogue); `tr()` translates it when printed;
  - `M("torch {version} is a CPU-only build", version=v)`: a record field with values in it. It *is* the English
    string (JSON, comparisons and `+` see plain English) and remembers its template, so `tr()` can print the
    translated template with the same values. A list inside one is a `Listed` value: ", " in the record, the
    reader's list separator when printed; the sources.csv keys of a claim are a `Cited` value: in the record,
    not in the printed text.

The catalog is read lazily, on the first translated line: `cudaswitch list --json` never opens it.
Missing or broken translations fall back to English line by line; nothing here raises.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, List, Mapping, Optional

DOMAIN = "cudaswitch"
LOCALE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "locale")
# Languages with a catalog. A locale maps here when its language and script match (zh, zh_CN, zh_SG, zh_Hans);
# Traditional Chinese locales (zh_TW, zh_HK, zh_MO) do not: they fall through to the next choice, then English.
SUPPORTED = ("zh_CN",)
_SIMPLIFIED = {"zh", "zh_cn", "zh_sg", "zh_hans", "zh_hans_cn", "zh_hans_sg"}
ENGLISH = "en"


def N_(message: str) -> str:
    """Mark a constant for extraction; it is translated when printed (`tr`)."""
    return message


class M(str):
    """An English message with values: equal to the formatted English text, translatable later by `tr`."""

    __slots__ = ("template", "values")

    def __new__(cls, template: str, **values):
        self = super().__new__(cls, template.format(**values))
        self.template = template
        self.values = values
        return self

    def __reduce__(self):  # copies (dataclasses.asdict, pickle) are the plain English text
        return (str, (str(self),))


class Cited(M):
    """The keys of cudaswitch/data/sources.csv behind a claim, as a value of a message: " [S43;S44]" in the record
    (JSON and the tests keep them, for scripts and maintainers), nothing when printed, where a bare key means
    nothing to a reader."""

    __slots__ = ()

    def __new__(cls, keys: str):
        self = str.__new__(cls, f" [{keys}]" if keys else "")
        self.template, self.values = str(self), {}
        return self


class Listed(M):
    """Items as one value of a message: joined by ", " in the record (JSON, comparisons), by the reader's own list
    separator when printed (`tr`: "、" in Chinese), each item translated if it is a message."""

    __slots__ = ("items",)

    def __new__(cls, items: Iterable[str]):
        items = list(items)
        self = str.__new__(cls, ", ".join(items))
        self.template, self.values, self.items = str(self), {}, items
        return self


# ---- choosing the language -----------------------------------------------------------------------------------

def _normalise(name: str) -> Optional[str]:
    """`zh_CN.UTF-8`, `zh-Hans-CN`, `zh_CN@utf8`, `en_US` -> a supported catalog name, "en", or None (unknown)."""
    base = name.strip().split(".")[0].split("@")[0].replace("-", "_")
    if not base:
        return None
    low = base.lower()
    if low in ("c", "posix") or low == "en" or low.startswith("en_"):
        return ENGLISH
    if low in _SIMPLIFIED:
        return "zh_CN"
    return None


def windows_ui_language() -> Optional[str]:
    """The Windows user's display language (`GetUserDefaultUILanguage`), e.g. "zh_CN"; None off Windows."""
    try:
        import ctypes
        import locale

        langid = ctypes.windll.kernel32.GetUserDefaultUILanguage()  # type: ignore[attr-defined]
        return locale.windows_locale.get(int(langid))
    except Exception:  # not Windows, or no kernel32: no UI language to follow
        return None


def choose_language(environ: Mapping[str, str], windows: bool = False,
                    ui_language: Optional[Callable[[], Optional[str]]] = None) -> str:
    """The catalog to use: "zh_CN" or "en".

    `CUDASWITCH_LANG` wins everywhere. Otherwise the gettext order: the first of LANGUAGE, LC_ALL, LC_MESSAGES,
    LANG that is set decides (LANGUAGE may list several, `zh_TW:zh_CN:en`, and is ignored when the locale is "C"
    or unset on POSIX, as GNU gettext does). On Windows, where those are usually unset, the user's UI language.
    """
    forced = environ.get("CUDASWITCH_LANG", "").strip()
    if forced:
        return _normalise(forced) or ENGLISH
    locale_name = next((environ[v] for v in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(v)), "")
    candidates: List[str] = []
    # POSIX without any locale variable runs in the C locale, where GNU gettext ignores LANGUAGE too
    # (docs/design/i18n.md); Windows has no such default, its locale comes from the user's settings
    is_c = locale_name.split(".")[0].upper() in ("C", "POSIX") or (not locale_name and not windows)
    if environ.get("LANGUAGE") and not is_c:
        candidates += environ["LANGUAGE"].split(":")
    if locale_name:
        candidates.append(locale_name)
    elif windows and ui_language is not None:
        ui = ui_language()
        if ui:
            candidates.append(ui)
    for cand in candidates:
        lang = _normalise(cand)
        if lang:
            return lang
    return ENGLISH


# ---- translating ---------------------------------------------------------------------------------------------

_cache: Dict[str, object] = {}
_language: Optional[str] = None


def set_language(language: Optional[str]) -> None:
    """Fix the language for this process (the CLI does it at start; tests switch it). None: decide on first use."""
    global _language
    _language = language
    _cache.clear()


def current_language() -> str:
    """The language of this process's human text, decided once from the environment (reads no catalog)."""
    global _language
    if _language is None:
        from cudaswitch.core.host import os_flavour

        # not System.current(): the language must be known before, and whatever, that refuses a relocated root;
        # and core/system.py itself imports this module for its messages
        _language = choose_language(dict(os.environ), os_flavour(os.environ) == "windows", windows_ui_language)
    return _language


def _translation():
    lang = current_language()
    if lang in _cache:
        return _cache[lang]
    tr_obj = None
    if lang in SUPPORTED:
        import gettext

        try:
            tr_obj = gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])
        except (OSError, ValueError):  # catalog missing or damaged: English, not a crash
            tr_obj = None
    _cache[lang] = tr_obj
    return tr_obj


def loaded() -> bool:
    """Whether a catalog has been read in this process (the JSON paths must leave this False)."""
    return any(v is not None for v in _cache.values())


def _(message: str) -> str:
    """The translation of `message`, or `message` itself when there is none."""
    if isinstance(message, M):
        return tr(message)
    t = _translation()
    if t is None:
        return message
    out = t.gettext(message)
    return out or message


def tr(text: str) -> str:
    """Print-time translation of a record's text: an `M` through its template, a marked constant by lookup,
    anything else (a value, an unmarked message) unchanged. Falls back to English if a translation is broken."""
    if not text:
        return text
    if isinstance(text, Cited):
        return ""
    if isinstance(text, Listed):
        return _(", ").join(tr(i) for i in text.items)
    if isinstance(text, M):
        translated = _(text.template) if _translation() is not None else text.template
        # a value that is itself a message (a reason, an advice passed in by the caller) is translated too
        values = {k: tr(v) if isinstance(v, M) else v for k, v in text.values.items()}
        try:
            return translated.format(**values)
        except (KeyError, IndexError, ValueError):  # a translation that lost or renamed a placeholder
            return str(text)
    t = _translation()
    if t is None:
        return text
    return t.gettext(text) or text


def tr_lines(lines: Iterable[str]) -> List[str]:
    return [tr(line) for line in lines]


def columns(text: str) -> int:
    """Columns `text` takes on a terminal: a Chinese character takes two, so padding by len() would misalign."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
