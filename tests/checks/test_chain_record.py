"""The chain record (cudaswitch/checks/chain.py): each link's version and origin come from the doctor report, each
finding lands on the link it is about, and the first link with an error is where the chain breaks. doctor runs for
real against a `/` holding NVIDIA's CUDA 12.9 files (tests/cudatrees.py)."""

import pytest

import cudatrees
from cudaswitch.checks.chain import BROKEN, CUDNN, DOUBT, DRIVER, OK, TOOLKIT, from_doctor, link_of
from cudaswitch.checks.doctor import run_doctor
from cudaswitch.core.system import System


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    return root


def _chain(root, **environ):
    system = System(os="linux", environ=dict({"PATH": "/usr/bin:/bin"}, **environ), root=root)
    return from_doctor(run_doctor(system, None))


def test_a_driver_older_than_the_toolkit_in_use_is_a_warning_on_the_driver_link(root):
    chain = _chain(root, CUDA_HOME="/usr/local/cuda-12.9", CONDA_OVERRIDE_CUDA="12.4")
    links = {link.key: link for link in chain.links}
    assert [link.key for link in chain.links] == ["driver", "toolkit", "cudnn", "torch", "python"]
    assert links[DRIVER].status == DOUBT and links[DRIVER].version == "max CUDA 12.4"
    assert links[DRIVER].origin == "CONDA_OVERRIDE_CUDA"
    assert [f.code for f in links[DRIVER].findings] == ["DRIVER_BELOW_TOOLKIT"]
    assert links[TOOLKIT].status == OK and links[TOOLKIT].version == "12.9.1"
    assert links[TOOLKIT].origin.startswith("/usr/local/cuda-12.9 (")
    assert chain.broken is None


def test_a_missing_cuda_path_breaks_the_chain_at_the_toolkit(root):
    chain = _chain(root, CUDA_HOME="/usr/local/cuda-12.9", CUDA_PATH="/usr/local/cuda-11.8", CONDA_OVERRIDE_CUDA="12.9")
    assert chain.broken is not None and chain.broken.key == TOOLKIT
    assert chain.broken.status == BROKEN
    assert "CUDA_PATH_MISSING" in [f.code for f in chain.broken.findings]
    assert chain.links[0].status == OK  # the driver is fine: only the broken link is marked


def test_a_code_added_later_lands_on_the_link_its_name_says():
    assert link_of("DRIVER_TOO_OLD") == DRIVER and link_of("LIB_SHADOWED") == TOOLKIT
    assert link_of("ZLIBWAPI_MISSING") == CUDNN and link_of("CUDNN_SOMETHING_NEW") == CUDNN
    assert link_of("SOMETHING_ELSE") is None
