"""Switching on a Windows env under CUDASWITCH_FS_ROOT with NVIDIA's real CUDA 12.9 files: -p given as a Windows
path, and the generated cmd hooks run by wine's cmd with echo on."""


import pytest

import winfiles as wf


@pytest.fixture(scope="module")
def loader():
    return wf.wine_loader()


@pytest.fixture
def win_env(tmp_path, clean_env):
    drive = tmp_path / "drive"
    return drive, wf.windows_env(drive, clean_env)


def test_prefix_given_as_a_windows_path_under_fs_root(win_env):
    drive, _env = win_env
    hooks = drive / "C" / "envs" / "torch" / "etc" / "conda"
    assert (hooks / "activate.d" / "cudaswitch.bat").is_file() and (hooks / "deactivate.d" / "cudaswitch.bat").is_file()

def test_cmd_hooks_stay_silent_with_echo_on(win_env, tmp_path, loader):
    """wine's cmd echoes the command a CALL runs when echo is on; the hooks' CALL SET lines send it to nul, so a
    user with `echo on` (or a batch file that did not turn it off) sees nothing from them."""
    wine, _exe, wenv = loader
    drive, _env = win_env
    hooks = drive / "C" / "envs" / "torch" / "etc" / "conda"
    driver = tmp_path / "drive_echo_on.bat"
    driver.write_bytes("\r\n".join([
        "@echo on",
        # (the records as the cmd hook spells them, with a trailing backslash: the only ones it takes out)
        r'@set "PATH=C:\cuda\bin\;C:\windows\system32;C:\windows"',
        r'@set "_CUDASWITCH_ADDED_PATH=C:\cuda\bin\"',
        r'@set "CONDA_PREFIX=C:\envs\torch"',
        f'@call "{wf.z(hooks / "activate.d" / "cudaswitch.bat")}" 2>nul',
        r'@set "_CUDASWITCH_ADDED_PATH=C:\cuda\bin\"',
        f'@call "{wf.z(hooks / "deactivate.d" / "cudaswitch.bat")}"',
        "@echo PATH=[%PATH%]", ""]).encode())
    text = wf.run_wine([wine, "cmd", "/d", "/c", wf.z(driver)], wenv).stdout
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    assert lines == [r"PATH=[C:\windows\system32;C:\windows]"], lines
