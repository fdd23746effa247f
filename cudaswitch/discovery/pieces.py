"""Pieces of a discovery pass that a TAB may take from the last one (discovery/selector_cache.py keeps them).

Discovery marks its pieces by calling piece(): a toolkit folder's inspection, a modulefile's reading, a MODULEPATH
folder's walk. Outside a TAB's recorded pass (every command) piece() is compute(); inside one, selector_cache sets
`active` and decides whether a kept result stands. This module sits below discovery/toolkits.py and
discovery/modules.py, which call it, and discovery/selector_cache.py, which runs the pass that calls them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Callable

active = None  # selector_cache._Pieces while a TAB's pass is recorded


def piece(key: tuple, compute: Callable[[], object], encode: Callable[[object], object],
          decode: Callable[[object], object]):
    """compute(): outside a TAB's recorded pass, always; inside one, the last pass's result for the same key while
    every variable and path that computation read is as it was then (its inputs become this pass's, as if read
    again). `key` holds every argument compute depends on; encode/decode turn the result into plain values (what
    JSON has: dicts with text keys, lists and never tuples, text, numbers, True/False, None; the record keeps them as
    they are) and back (decode raises ValueError, TypeError, KeyError, AttributeError or IndexError on a value of
    another shape)."""
    pieces = active
    if pieces is None:
        return compute()
    name = repr(key)
    old = pieces.old.get(name)
    paths = pieces.still_true(old) if isinstance(old, dict) else None
    if paths is not None:
        try:
            value = decode(old["value"])
        except (TypeError, ValueError, KeyError, AttributeError, IndexError):
            pass  # a record of another shape: computed afresh
        else:
            pieces.reuse(name, old, paths)
            return value
    return pieces.compute(name, compute, encode)


def plain(value):
    """A result as plain values (piece()): messages (i18n.M) keep their template and values, to be translated as
    before; a tuple becomes a list, anything else that is not text, a number or None its text."""
    kind = type(value)
    if kind is str or value is None:  # most of a pass's values: the common cases first, as this runs on each one
        return value
    if kind is list:
        return [v if type(v) is str else plain(v) for v in value]
    from cudaswitch.core.i18n import M

    if isinstance(value, M):
        return {"M": [str(value), value.template, {k: plain(v) for k, v in value.values.items()}]}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def fits(value, shape) -> bool:
    """A decoded piece has the shape its decoder expects: `shape` is a type or a tuple of types (isinstance; a
    message is a str), [shape] (a list of), or a list of several shapes (a list of exactly those, in order)."""
    if isinstance(shape, list):
        if not isinstance(value, list):
            return False
        if len(shape) == 1:
            return all(fits(v, shape[0]) for v in value)
        return len(value) == len(shape) and all(fits(v, s) for v, s in zip(value, shape))
    return isinstance(value, shape) and not (isinstance(value, bool) and shape is int)


def unplain(value):
    """plain()'s inverse (a value of another type comes back as its text, which is how a message prints it)."""
    from cudaswitch.core.i18n import M

    if isinstance(value, dict):
        text, template, values = value["M"]
        message = str.__new__(M, text)
        message.template, message.values = str(template), {k: unplain(v) for k, v in values.items()}
        return message
    if isinstance(value, list):
        return [unplain(v) for v in value]
    return value
