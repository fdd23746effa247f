"""cuDNN: reading NVIDIA's archives, installing one into a toolkit or environment all-or-nothing and undoing it,
and finding the cuDNN NVIDIA's Windows installer puts outside any toolkit.

Where to start (the rules they follow: docs/design/cudnn-install.md):

- `install.planned(...)` -> `InstallPlan`; `InstallPlan.carry_out(yes, confirm)` -> `InstallResult`: install-cudnn.
- `uninstall.undo_latest(...)` -> `UndoResult`: uninstall-cudnn.
- `archive.read_archive`, `archive.verify_integrity`, `archive.peek_name`: NVIDIA's zip and tar archives.

What the install is made of, each concern in one module:

- `target`: where it goes (`Target`, `toolkit_target`, `env_target`) and which target the user meant.
- `compat`: whether the archive fits (OS, CPU architecture, CUDA major).
- `preflight`: writable, one file system, owned by the user or root, enough free space; before a byte is staged.
- `journal`: the transaction folder and its `manifest.yaml`, written and read back.
- `transaction`: staging, the commit point, the renames, rollback in-process.
- `recovery`: finishing or rolling back what a killed run left, by the journal's phase.
- `uninstall`: undoing the latest install.
- `verify`: the installed header read back, the installed library loaded in a child process.
- `lock`: one cudaswitch at a time per target.
- `cudaswitch/core/faults.py` (shared with install-toolkit, use and off): the named points where the test suite
  makes the process die, fail or get Ctrl-C (tests/seams.py).

Nothing is imported here. NVIDIA's Windows installer is found by discovery (`cudaswitch/discovery/cudnn_windows.py`).
"""
