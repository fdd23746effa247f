"""The read doors of cudaswitch/core/trust.py at their edges: a file of exactly the size limit is read whole and one
byte more is refused (or cut, for a header); read_regular never follows a link planted at the name it reads, which
is what keeps a list of installed toolkits from being redirected to a file someone else wrote."""

from __future__ import annotations

import json
import os

import pytest

from conftest import run_cli
from cudaswitch.core import trust


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    at, over = tmp_path / "at", tmp_path / "over"
    at.write_bytes(b"x" * 100)
    over.write_bytes(b"x" * 101)
    assert trust.read_bytes(at, limit=100) == b"x" * 100
    with pytest.raises(trust.TooLarge) as err:
        trust.read_bytes(over, limit=100)
    assert "larger than 100 bytes" in str(err.value)
    assert trust.read_bytes(over, limit=100, truncate=True) == b"x" * 100  # a header: the first 100 bytes


def test_read_regular_reads_the_limit_and_never_follows_the_name(tmp_path):
    (tmp_path / "real").write_bytes(b"y" * 10)
    os.symlink("real", tmp_path / "link")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert trust.read_regular(fd, "real", limit=10) == b"y" * 10
        assert trust.read_regular(fd, "real", limit=4) == b"yyyy"
        assert trust.read_regular(fd, "link") is None
        assert trust.read_regular(fd, "missing") is None
    finally:
        os.close(fd)


@pytest.mark.parametrize("planted", [False, True])
def test_a_link_at_the_installed_toolkits_list_does_not_redirect_discovery(tmp_path, clean_env, real_trees, planted):
    """install-toolkit --into records the folder in installed-toolkits.txt beside the store; discovery lists what
    it names. A link planted at that name (to a list naming a folder of someone else's choice) is not read."""
    data = tmp_path / "data"
    (data / "toolkits").mkdir(parents=True)
    listing = f"{real_trees / 'cuda-12.9'}\n"
    if planted:
        (tmp_path / "elsewhere.txt").write_text(listing)
        os.symlink(tmp_path / "elsewhere.txt", data / "installed-toolkits.txt")
    else:
        (data / "installed-toolkits.txt").write_text(listing)
    r = run_cli(["list", "--json"], dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(data / "toolkits")))
    assert r.returncode == 0, r.stderr
    roots = [t["root"] for t in json.loads(r.stdout)["toolkits"]]
    assert roots == ([] if planted else [str(real_trees / "cuda-12.9")])
