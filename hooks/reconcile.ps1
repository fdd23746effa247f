# cudaswitch prompt-time reconciler for PowerShell (added by `cudaswitch init powershell`).
# conda cannot take a cudaswitch entry off PATH when the session switches to an environment without cudaswitch
# hooks (conda#14762). The prompt function is wrapped: before the prompt it takes out our one copy of each recorded
# entry when a record is set and $Env:CONDA_PREFIX has no cudaswitch activate hook, restores CUDA_PATH/CUDA_HOME
# and clears the records (docs/design/activation.md); then it runs the prompt there was. Verified statically only.
$Env:CUDASWITCH_RECONCILER = '1'
if (-not (Test-Path Function:\__cudaswitch_prompt_before)) {
    $__cudaswitch_before = (Get-Item Function:\prompt -ErrorAction SilentlyContinue)
    if ($__cudaswitch_before) { Set-Item Function:\global:__cudaswitch_prompt_before $__cudaswitch_before.ScriptBlock }
    else { Set-Item Function:\global:__cudaswitch_prompt_before { "PS $($executionContext.SessionState.Path.CurrentLocation)> " } }
    Remove-Variable __cudaswitch_before -ErrorAction SilentlyContinue
}
function global:__cudaswitch_reconcile {
    if (-not (Test-Path Env:_CUDASWITCH_ADDED_PATH)) { return }
    if ($Env:CONDA_PREFIX -and (Test-Path -LiteralPath (Join-Path (Join-Path (Join-Path (Join-Path $Env:CONDA_PREFIX 'etc') 'conda') 'activate.d') 'cudaswitch.ps1'))) { return }
    $sep = [IO.Path]::PathSeparator
    $keep = New-Object 'System.Collections.Generic.List[string]'
    if ($Env:PATH) { foreach ($e in ($Env:PATH -split [regex]::Escape($sep))) { $keep.Add($e) } }
    foreach ($r in ($Env:_CUDASWITCH_ADDED_PATH -split [regex]::Escape($sep))) {
        for ($i = 0; $i -lt $keep.Count; $i++) {
            if ($keep[$i] -eq $r) { $keep.RemoveAt($i); break }
        }
    }
    $Env:PATH = $keep -join $sep
    foreach ($name in 'CUDA_PATH', 'CUDA_HOME') {
        if (Test-Path "Env:_CUDASWITCH_SAVED_$name") {
            if (Test-Path "Env:_CUDASWITCH_OLD_$name") {
                Set-Item "Env:$name" (Get-Item "Env:_CUDASWITCH_OLD_$name").Value
            } else {
                Remove-Item "Env:$name" -ErrorAction SilentlyContinue
            }
        }
        Remove-Item "Env:_CUDASWITCH_SAVED_$name", "Env:_CUDASWITCH_OLD_$name" -ErrorAction SilentlyContinue
    }
    Remove-Item Env:_CUDASWITCH_ADDED_PATH -ErrorAction SilentlyContinue
}
function global:prompt {
    __cudaswitch_reconcile
    __cudaswitch_prompt_before
}
