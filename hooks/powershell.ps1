# cudaswitch shell integration for PowerShell (printed by `cudaswitch init powershell`).
# Makes `cudaswitch use` and `cudaswitch off` take effect in this session at once: after the real command it
# dot-sources the active environment's own hook. Defined global: (as the reconciler's functions are), so a profile
# that loads this file from a function of its own still has it afterwards.
function global:cudaswitch {
    $h = $null
    if ($Env:CONDA_PREFIX) { $h = Join-Path (Join-Path $Env:CONDA_PREFIX 'etc') 'conda' }
    # off: undo this session's CUDA settings while the deactivate hook still exists (off removes it).
    if ($args.Count -gt 0 -and $args[0] -eq 'off' -and $h -and (Test-Path -LiteralPath (Join-Path $h 'deactivate.d/cudaswitch.ps1'))) {
        . (Join-Path $h 'deactivate.d/cudaswitch.ps1')
    }
    $exe = Get-Command cudaswitch -CommandType Application -ErrorAction Stop | Select-Object -First 1
    $Env:CUDASWITCH_APPLIES = '1'
    try { & $exe @args } finally { Remove-Item Env:CUDASWITCH_APPLIES -ErrorAction SilentlyContinue }
    $rc = $LASTEXITCODE
    if ($args.Count -gt 0 -and ($args[0] -eq 'use' -or $args[0] -eq 'off')) {
        if ($h -and (Test-Path -LiteralPath (Join-Path $h 'activate.d/cudaswitch.ps1'))) {
            . (Join-Path $h 'activate.d/cudaswitch.ps1')
        } else {
            Remove-Item Env:_CUDASWITCH_ADDED_PATH -ErrorAction SilentlyContinue
        }
    }
    $global:LASTEXITCODE = $rc
}
