"""core/versions.numbers is the package's one reading of a dotted version: drivers, CUDA, torch, selectors."""

import pytest

from cudaswitch.data import knowledge
from cudaswitch.core.versions import numbers, parse_selector

CASES = [("550.54.14", (550, 54, 14)), ("12.1", (12, 1)), ("r570.86", (570, 86)), ("  13.0.88 ", (13, 0, 88)),
         ("2.13.0+cu130", (2, 13, 0)), ("13", (13,)), ("", None), (None, None), ("abc", None), ("v12.4", None)]


@pytest.mark.parametrize("text,want", CASES)
def test_numbers(text, want):
    assert numbers(text) == want
    assert knowledge.vtuple(text) == want  # the version tables read versions the same way


def test_a_version_selector_is_read_by_the_same_rule():
    assert parse_selector("cuda-11.8").parts == (11, 8)
    assert parse_selector("11.8.89").parts == (11, 8, 89)
