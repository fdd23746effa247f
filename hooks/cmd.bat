@REM cudaswitch wrapper for cmd.exe (printed by `cudaswitch init cmd`). cmd.exe has no startup file and no
@REM functions: save this as cs.bat in a folder on PATH and type `cs use 11.8`; after the real command it
@REM CALLs the active environment's activate hook (idempotent, so harmless after any command), whatever the exit
@REM code: `use` exits 1 when its smoke test fails with the switch kept, and it has said "Applied to this shell".
@REM Limitation: `cs off` is not undone in this window; run `conda deactivate` first or open a new window.
@set "CUDASWITCH_APPLIES=1"
@call cudaswitch %*
@set "_CS_RC=%ERRORLEVEL%"
@set "CUDASWITCH_APPLIES="
@if defined CONDA_PREFIX if exist "%CONDA_PREFIX%\etc\conda\activate.d\cudaswitch.bat" call "%CONDA_PREFIX%\etc\conda\activate.d\cudaswitch.bat"
@set "_CS_RC=" & exit /b %_CS_RC%
