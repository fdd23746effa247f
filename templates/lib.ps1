# Dot-sourced inside conda's module function: only $Env: changes outlive it; the helpers are removed at the end.
# Unset is Remove-Item (assigning '' sets an empty value on pwsh >= 7.5), set-ness is Test-Path Env:X
# (docs/design/activation.md). Path entries compare case-insensitively (-eq on strings), as Windows does.
function __cs_Split([string]$Name) {
    $v = [Environment]::GetEnvironmentVariable($Name)
    if ($null -eq $v) { return ,@() }
    return ,@($v -split [regex]::Escape([IO.Path]::PathSeparator))
}
# Take our one copy (the first: a hook puts it in front) of each entry recorded in _CUDASWITCH_ADDED_<Name> out of
# list variable <Name>. Later copies are the user's (NVIDIA's installer puts every toolkit on PATH) and stay.
function __cs_Unprepend([string]$Name) {
    $rec = __cs_Split "_CUDASWITCH_ADDED_$Name"
    if ($rec.Count -gt 0) {
        $keep = New-Object 'System.Collections.Generic.List[string]'
        foreach ($e in (__cs_Split $Name)) { $keep.Add($e) }
        foreach ($r in $rec) {
            for ($i = 0; $i -lt $keep.Count; $i++) {
                if ($keep[$i] -eq $r) { $keep.RemoveAt($i); break }
            }
        }
        Set-Item "Env:$Name" ($keep -join [IO.Path]::PathSeparator)
    }
}
# Back up scalar <Name> once (first writer wins); cannot tell '' from unset before pwsh 7.5.
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
