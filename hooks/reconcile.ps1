# cudaswitch prompt-time reconciler for PowerShell (added by `cudaswitch init powershell`).
# conda cannot take a cudaswitch entry off PATH when the session switches to an environment without cudaswitch
# hooks (conda#14762). The prompt function is wrapped: before the prompt it takes out our one copy of each recorded
# entry when a record is set and $Env:CONDA_PREFIX has no cudaswitch activate hook, restores CUDA_PATH/CUDA_HOME
# and clears the records (docs/design/activation.md); then it runs the prompt there was. The same plain
# constructs as the hooks (docs/design/activation.md, "PowerShell constructs").
$Env:CUDASWITCH_RECONCILER = '1'
if (-not (Test-Path -LiteralPath Function:\__cudaswitch_prompt_before)) {
    $__cudaswitch_before = (Get-Item Function:\prompt -ErrorAction SilentlyContinue)
    if ($__cudaswitch_before) { Set-Item Function:\global:__cudaswitch_prompt_before $__cudaswitch_before.ScriptBlock }
    else { Set-Item Function:\global:__cudaswitch_prompt_before { "PS $($executionContext.SessionState.Path.CurrentLocation)> " } }
    Remove-Variable __cudaswitch_before -ErrorAction SilentlyContinue
}
# Everything in it is an assignment or a void call: any output would become part of the prompt text.
function global:__cudaswitch_reconcile {
    # ConstrainedLanguage mode blocks what follows; the hooks have said so once
    if ($ExecutionContext.SessionState.LanguageMode -ne 'FullLanguage') { return }
    if (-not [Environment]::GetEnvironmentVariable('_CUDASWITCH_ADDED_PATH')) { return }
    if ($Env:CONDA_PREFIX -and (Test-Path -LiteralPath ([IO.Path]::Combine($Env:CONDA_PREFIX, 'etc', 'conda', 'activate.d', 'cudaswitch.ps1')))) { return }
    $sep = [string][IO.Path]::PathSeparator
    foreach ($name in 'PATH', 'LD_LIBRARY_PATH') {
        $rec = [Environment]::GetEnvironmentVariable("_CUDASWITCH_ADDED_$name")
        if ($rec) {
            $val = [Environment]::GetEnvironmentVariable($name)
            $keep = New-Object 'System.Collections.Generic.List[string]'
            if ($val) { foreach ($e in ($val -split $sep, 0, 'SimpleMatch')) { $keep.Add($e) } }
            foreach ($r in ($rec -split $sep, 0, 'SimpleMatch')) {
                for ($i = 0; $i -lt $keep.Count; $i++) {
                    if ($keep[$i] -ceq $r -or ($sep -eq ';' -and $keep[$i] -eq $r)) { $keep.RemoveAt($i); break }
                }
            }
            if ($keep.Count -eq 1 -and $keep[0] -eq '') { $keep.RemoveAt(0) }
            if ($keep.Count -eq 0 -and [Environment]::GetEnvironmentVariable("_CUDASWITCH_UNSET_$name")) {
                Remove-Item -LiteralPath "Env:$name" -ErrorAction SilentlyContinue
            } else {
                [Environment]::SetEnvironmentVariable($name, ($keep -join $sep))
            }
        }
        Remove-Item -LiteralPath "Env:_CUDASWITCH_ADDED_$name", "Env:_CUDASWITCH_UNSET_$name" -ErrorAction SilentlyContinue
    }
    foreach ($name in 'CUDA_PATH', 'CUDA_HOME') {
        if ([Environment]::GetEnvironmentVariable("_CUDASWITCH_SAVED_$name")) {
            $old = [Environment]::GetEnvironmentVariable("_CUDASWITCH_OLD_$name")
            if ($null -eq $old) {
                Remove-Item -LiteralPath "Env:$name" -ErrorAction SilentlyContinue
            } else {
                [Environment]::SetEnvironmentVariable($name, $old)
            }
        }
        Remove-Item -LiteralPath "Env:_CUDASWITCH_SAVED_$name", "Env:_CUDASWITCH_OLD_$name" -ErrorAction SilentlyContinue
    }
}
# $? is read-only: the status the user's last command left is read first and, when it was a failure, made again
# with an error that goes nowhere, so a prompt that shows it (starship, oh-my-posh) still sees it.
function global:prompt {
    $__cs_status = $?
    __cudaswitch_reconcile
    if (-not $__cs_status) { Write-Error -Message '' -ErrorAction Ignore }
    __cudaswitch_prompt_before
}
