"""A plain record class: the constructor is each class's own; equality and repr over its `_fields`, as a dataclass
would give them. Modules a TAB reads (discovery/toolkits.py, discovery/condaenvs.py) use it: generating a dataclass
means importing `dataclasses`, which imports `inspect`, and that cost more than the rest of such a TAB
(benchmarks/bench_completion.py)."""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Tuple


class Record:
    _fields: Tuple[str, ...] = ()

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"
