# Dot-sourced inside conda's module function: only $Env: changes outlive it; the helpers are removed at the end.
# Unset is Remove-Item (assigning '' sets an empty value on pwsh >= 7.5), set-ness is Test-Path Env:X
# (conda-activation.md 6.4). Windows compares path entries case-insensitively (-notcontains), as Windows does.
function __cs_Split([string]$Name) {
    $v = [Environment]::GetEnvironmentVariable($Name)
    if ($null -eq $v) { return ,@() }
    return ,@($v -split [regex]::Escape([IO.Path]::PathSeparator))
}
# Take the entries recorded in _CUDASWITCH_ADDED_<Name> out of list variable <Name> (R3).
function __cs_Unprepend([string]$Name) {
    $rec = __cs_Split "_CUDASWITCH_ADDED_$Name"
    if ($rec.Count -gt 0) {
        $keep = @((__cs_Split $Name) | Where-Object { $rec -notcontains $_ })
        Set-Item "Env:$Name" ($keep -join [IO.Path]::PathSeparator)
    }
}
# Back up scalar <Name> once (first writer wins, R8); cannot tell '' from unset before pwsh 7.5 (R7).
function __cs_Save([string]$Name) {
    if (Test-Path "Env:_CUDASWITCH_SAVED_$Name") { return }
    Remove-Item "Env:_CUDASWITCH_OLD_$Name" -ErrorAction SilentlyContinue
    if (Test-Path "Env:$Name") { Set-Item "Env:_CUDASWITCH_OLD_$Name" (Get-Item "Env:$Name").Value }
    Set-Item "Env:_CUDASWITCH_SAVED_$Name" '1'
}
function __cs_Restore([string]$Name) {
    if (-not (Test-Path "Env:_CUDASWITCH_SAVED_$Name")) { return }
    if (Test-Path "Env:_CUDASWITCH_OLD_$Name") {
        Set-Item "Env:$Name" (Get-Item "Env:_CUDASWITCH_OLD_$Name").Value
    } else {
        Remove-Item "Env:$Name" -ErrorAction SilentlyContinue
    }
    Remove-Item "Env:_CUDASWITCH_OLD_$Name", "Env:_CUDASWITCH_SAVED_$Name" -ErrorAction SilentlyContinue
}
