"""The PE version reader (cudaswitch/core/pe.py) on NVIDIA's real Windows binaries from the win_amd64 wheels:
nvcc.exe, cudart64_*.dll, cudnn64_9.dll and cudnn64_8.dll; damaged and version-less files."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudatrees
import nvidia_wheels as nw
from cudaswitch.core import pe
from cudaswitch.core import versions


@pytest.mark.parametrize("spec,rel,cuda", [
    (nw.WIN_CUDA_NVCC_13, "nvidia/cu13/bin/nvcc.exe", "13.0.88"),
    (nw.WIN_CUDA_RUNTIME_CU12, "nvidia/cuda_runtime/bin/cudart64_12.dll", "12.9.79"),
    (nw.WIN_CUDA_RUNTIME_CU11, "nvidia/cuda_runtime/bin/cudart64_110.dll", "11.8.89"),
])
def test_cuda_version_read_from_real_nvidia_binaries(spec, rel, cuda):
    path = nw.extracted(spec, nw.WIN) / rel
    assert str(versions.from_pe(path)) == cuda
    info = pe.read_version_info(path)
    # the fixed FileVersion is a driver-style number, not the CUDA release: only the strings name it
    assert info.file_version[:3] == (6, 14, 11) and info.strings["CompanyName"] == "NVIDIA Corporation"

def test_cudnn_version_read_from_real_dll():
    dll = cudatrees.win_cudnn_bin() / "cudnn64_9.dll"
    assert versions.cudnn_from_pe(dll) == "9.10.2"
    assert pe.read_version_info(dll).strings["FileVersion"] == "9.10.2.21"

@pytest.mark.parametrize("spec,version", [(nw.WIN_CUDNN_8_CU11, "8.9.5"), (nw.WIN_CUDNN_8_CU12, "8.9.7")])
def test_cudnn_8_version_read_from_real_dll_and_header(spec, version):
    files = nw.win_cudnn_8(spec)
    dll = files / "bin" / "cudnn64_8.dll"
    assert versions.cudnn_from_pe(dll) == version and pe.read_version_info(dll).strings["FileVersion"] == version + ".29"
    assert versions.cudnn_version_in(files / "include") == version

def test_files_that_are_not_pe_or_carry_no_version():
    query = nw.extracted(nw.WIN_CUDA_NVCC_13, nw.WIN) / "nvidia/cu13/bin/__nvcc_device_query.exe"
    assert pe.is_pe(query) and pe.read_version_info(query) is None  # a real exe without a version resource
    elf = nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia/cuda_runtime/lib/libcudart.so.12"
    assert not pe.is_pe(elf) and pe.read_version_info(elf) is None and versions.from_pe(elf) is None

def test_truncated_dll_is_a_readable_error(tmp_path):
    real = (nw.extracted(nw.WIN_CUDA_RUNTIME_CU12, nw.WIN) / "nvidia/cuda_runtime/bin/cudart64_12.dll").read_bytes()
    cut = tmp_path / "cudart64_12.dll"
    cut.write_bytes(real[:len(real) // 2])  # the resource section is at the end
    with pytest.raises(versions.VersionFileError, match="damaged Windows binary"):
        versions.from_pe(cut)

_CUDART = None

def _cudart_bytes() -> bytes:
    global _CUDART
    if _CUDART is None:
        _CUDART = (nw.extracted(nw.WIN_CUDA_RUNTIME_CU11, nw.WIN) / "nvidia/cuda_runtime/bin/cudart64_110.dll"
                   ).read_bytes()
    return _CUDART

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1023), st.integers(0, 255)), min_size=1, max_size=8),
       st.sampled_from(["headers", "resources"]))
def test_corrupted_headers_never_crash_the_reader(tmp_path, edits, region):
    """Whatever bytes a damaged download holds, the reader answers None, a version, or PEError: never another
    exception (discovery turns PEError into a warning naming the file)."""
    data = bytearray(_cudart_bytes())
    base = 0 if region == "headers" else len(data) - 4096
    for off, val in edits:
        data[base + off * (4 if region == "resources" else 1)] = val
    f = tmp_path / "x.dll"
    f.write_bytes(bytes(data))
    for read in (pe.read_version_info, pe.imported_dlls):
        try:
            read(f)
        except pe.PEError:
            pass


def test_import_table_of_real_dlls():
    """The DLL names the loader must find first, from Microsoft's msvcp140.dll and NVIDIA's cuDNN DLLs; a file that
    is not PE has none."""
    msvcp = nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "msvcp140.dll"
    names = pe.imported_dlls(msvcp)
    assert names[:2] == ["VCRUNTIME140.dll", "VCRUNTIME140_1.dll"] and "KERNEL32.dll" in names
    assert "api-ms-win-crt-runtime-l1-1-0.dll" in names
    assert pe.imported_dlls(cudatrees.win_cudnn_bin() / "cudnn_ops64_9.dll") == ["cudnn_graph64_9.dll", "KERNEL32.dll"]
    assert pe.imported_dlls(nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia/cuda_runtime/lib/libcudart.so.12") is None
