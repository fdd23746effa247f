Register-ArgumentCompleter -Native -CommandName %(prog_name)s -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $line = $commandAst.Extent.Text
    $upto = $cursorPosition - $commandAst.Extent.StartOffset
    if ($upto -ge 0 -and $upto -lt $line.Length) { $line = $line.Substring(0, $upto) }
    $exe = Get-Command %(prog_name)s -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
    if (-not $exe) { return }
    $Env:COMP_WORDS = $line
    $Env:%(complete_var)s = 'powershell_complete'
    try { $answer = & $exe 2>$null } finally {
        Remove-Item Env:COMP_WORDS, Env:%(complete_var)s -ErrorAction SilentlyContinue
    }
    foreach ($item in $answer) {
        $kind, $value = $item -split "`t", 2
        if ($kind -eq 'plain') {
            [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $value)
        }
    }
}
