"""Run cudaswitch's PowerShell files without PowerShell: a small interpreter for the part of the language the hooks
are allowed to use (docs/design/activation.md, "PowerShell constructs"), on a real PowerShell parser
(tree-sitter-powershell).

No PowerShell runs on our Linux machines, and a hook that nobody ran replaced PATH with `...;System.Object[]`. So:

- `subset_problems(text)` names every construct outside the reviewed table (a function, `@( )` around a command,
  `return ,`, an `if` used as a value, `-split` without `SimpleMatch`, `$null` on the right of `-eq`/`-ne`, a
  statement whose value would reach the pipeline, a variable not removed at the end, a parse error);
- `run(text, env, ...)` executes a file with the semantics PowerShell documents for those constructs, for Windows
  PowerShell 5.1 (`version="5.1"`: an empty environment value deletes the variable) and PowerShell 7.5+ (it sets
  an empty one), on Windows (`;`, case-insensitive names) or Linux (`:`). It also runs the constructs the old hook
  used (functions, `return ,`, `@(f)`) as PowerShell does, so the fault this exists for is reproduced
  (`tests/switching/test_hooks_ps1.py`), and it refuses (`Unsupported`) anything else rather than guess.

Semantics implemented, each as documented (about_Operators, about_Arrays, about_Split, about_Join,
about_Comparison_Operators, about_Environment_Variables, about_Scopes): pipeline output is unrolled one level; a
function's output is what reached its pipeline; `@( )` collects its statements' output into a new array; the unary
comma wraps its operand in a one-element array; `-join` converts each element with ToString, so a nested array is
the text `System.Object[]`; `-split` is a regular expression unless `SimpleMatch`; comparison operators with a
collection on the left filter it; `$null` passed to a .NET `string` parameter arrives as `''`. Where PowerShell is
strict the interpreter is too: a positional `Test-Path` is a wildcard pattern (refused), removing a missing `Env:`
item without `-ErrorAction SilentlyContinue` is an error, `Remove-Variable` acts on the current scope only, a
`List[string]` in a string is joined with `$OFS`, ConstrainedLanguage (`language=`) forbids `[Type]::Method()` and
`New-Object` of a generic list, `$?` follows each pipeline and assignment (`status=` is the one the user's last
command left), and the `init` function runs whole (`Get-Command ... | Select-Object -First 1`, `& $exe @args`
against `programs=`, `try`/`finally`, dot-sourcing a file). Scopes as about_Scopes has them: variables and
functions per scope, `$global:`/`$script:`/`$local:` (`$private:`, `$using:` refused), `function global:f` and
`Set-Item Function:\\global:f`. `Session` adds what conda runs the hooks in: a module (Conda.psm1's functions,
loaded as the file has them) whose functions run in a scope whose parent is the module's own scope, then the global
one, `Invoke-Expression` running its text in the current scope, and `& $Env:CONDA_EXE ... | Out-String` against a
program of `programs=` that prints (tests/switching/test_pwsh_conda_module.py runs the real conda there).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import tree_sitter
import tree_sitter_powershell

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))


class Unsupported(Exception):
    """A construct outside what this interpreter models: the test fails rather than guess."""


class PsError(Exception):
    """What PowerShell itself would stop on (a variable read before it exists under Set-StrictMode, a bad call)."""


class _Break(Exception):
    pass


class _Return(Exception):
    pass


class PsList(list):
    """A System.Collections.Generic.List[string]."""


# expression wrappers of the grammar that carry one child and no operator of their own
_WRAPPERS = {"pipeline", "pipeline_chain", "logical_expression", "bitwise_expression", "comparison_expression",
             "additive_expression", "multiplicative_expression", "format_expression", "range_expression",
             "array_literal_expression", "unary_expression", "left_assignment_expression", "argument_expression_list",
             "statement_list", "string_literal", "integer_literal", "member_name", "type_spec", "type_name",
             "argument_expression", "logical_argument_expression", "bitwise_argument_expression",
             "comparison_argument_expression", "additive_argument_expression", "multiplicative_argument_expression",
             "format_argument_expression", "range_argument_expression", "for_initializer", "for_condition",
             "for_iterator"}
# write nothing to the pipeline (no -PassThru)
_VOID_COMMANDS = {"write-warning", "write-error", "remove-item", "remove-variable", "set-item", "write-verbose"}
_VOID_METHODS = {"add", "removeat", "insertrange", "setenvironmentvariable", "writeline"}


def parse(text: str):
    return _PARSER.parse(text.encode("utf-8")).root_node


def _named(n):
    return [c for c in n.children if c.is_named]


def _text(n) -> str:
    return n.text.decode("utf-8")


def _unwrap(n):
    while n.type in _WRAPPERS and len(n.children) == 1:
        n = n.children[0]
    return n


class EnvBlock:
    """The process environment as PowerShell sees it: case-insensitive names on Windows."""

    def __init__(self, initial: Dict[str, str], windows: bool):
        self.windows = windows
        self._d: Dict[str, tuple] = {}
        for k, v in initial.items():
            self.set(k, v)

    def _key(self, name: str) -> str:
        return name.upper() if self.windows else name

    def get(self, name: str) -> Optional[str]:
        hit = self._d.get(self._key(name))
        return hit[1] if hit else None

    def set(self, name: str, value: str) -> None:
        old = self._d.get(self._key(name))
        self._d[self._key(name)] = (old[0] if old else name, value)  # Windows keeps the spelling it had ("Path")

    def delete(self, name: str) -> None:
        self._d.pop(self._key(name), None)

    def as_dict(self) -> Dict[str, str]:
        return {k: v for k, v in self._d.values()}


@dataclass
class Result:
    env: Dict[str, str]
    output: List[object]  # what reached the pipeline: conda's Invoke-Expression prints it
    stderr: List[str]
    variables: Dict[str, object]  # what is left in the caller's scope (dot-sourcing)
    functions: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)  # Write-Warning's stream


class Interpreter:
    def __init__(self, env: Dict[str, str], windows: bool, version: str = "7.5",
                 isdir: Callable[[str], bool] = os.path.isdir, isfile: Callable[[str], bool] = os.path.isfile,
                 language: str = "FullLanguage", programs: Optional[Dict[str, Callable]] = None):
        self.env = EnvBlock(env, windows)
        self.windows, self.version, self.language = windows, version, language
        self.warnings: List[str] = []
        # $?: set by every pipeline and assignment (not by an if/foreach around them); False after a command that
        # wrote an error, which `Write-Error '' -ErrorAction Ignore` does without adding to $Error
        self.question, self._failed = True, False
        # native programs by name: (arguments, environment) -> exit code; `& $exe @args` runs them
        self.programs: Dict[str, Callable] = programs if programs is not None else {}
        self.isdir, self.isfile = isdir, isfile
        self.scopes: List[Dict[str, object]] = [{}]
        # functions live in scopes as variables do (about_Scopes): `function f` in the current one, `global:f` in
        # the global one; a call looks from the innermost outwards
        self.fscopes: List[Dict[str, object]] = [{}]
        self.script_scope = 0  # what `$script:` names: the running script's scope, or a module's own scope
        self.stderr: List[str] = []

    # ---- environment ------------------------------------------------------------------------------------------
    def set_env(self, name: str, value) -> None:
        if value is None:
            self.env.delete(name)
            return
        value = self.to_string(value)
        if value == "" and self.version < "7.5":
            self.env.delete(name)  # Windows PowerShell 5.1 and pwsh < 7.5: empty deletes
        else:
            self.env.set(name, value)

    # ---- functions --------------------------------------------------------------------------------------------
    @property
    def functions(self) -> Dict[str, object]:
        """Every function visible from the current scope, innermost first."""
        seen: Dict[str, object] = {}
        for scope in reversed(self.fscopes):
            for k, v in scope.items():
                seen.setdefault(k, v)
        return seen

    def define_function(self, name: str, body) -> None:
        low = name.lower()
        if low.startswith("global:"):
            self.fscopes[0][low[7:]] = body
        elif low.startswith(("script:", "local:", "private:")):
            raise Unsupported(f"a function with a scope other than global: {name}")
        else:
            self.fscopes[-1][low] = body

    def remove_function(self, name: str) -> None:
        low = name.lower().replace("global:", "")
        for scope in reversed(self.fscopes):
            if low in scope:
                del scope[low]
                return

    def push_scope(self, variables: Dict[str, object]) -> None:
        self.scopes.append(variables)
        self.fscopes.append({})

    def pop_scope(self) -> None:
        self.scopes.pop()
        self.fscopes.pop()

    # ---- variables --------------------------------------------------------------------------------------------
    @staticmethod
    def _qualified(low: str):
        """(qualifier, name) of `$global:x`, `$script:x`, `$local:x`; the ones the hooks may not use are refused."""
        for q in ("global:", "script:", "local:"):
            if low.startswith(q):
                return q[:-1], low[len(q):]
        if low.startswith(("private:", "using:", "variable:", "function:")):
            raise Unsupported(f"a variable with the qualifier {low.split(':')[0]}:")
        return None, low

    def lookup(self, name: str):
        low = name.lower()
        if low == "null":
            return None
        if low in ("true", "false"):
            return low == "true"
        if low.startswith("env:"):
            return self.env.get(name[4:])
        if low == "executioncontext":
            return _Context(self.language)
        if low == "?":
            return self.question
        qual, bare = self._qualified(low)
        chain = [self.scopes[0]] if qual == "global" else [self.scopes[self.script_scope]] if qual == "script" \
            else [self.scopes[-1]] if qual == "local" else list(reversed(self.scopes))
        for scope in chain:
            if bare in scope:
                return scope[bare]
        raise PsError(f"${name} is read before it is assigned (Set-StrictMode)")

    def assign(self, name: str, value) -> None:
        low = name.lower()
        if low.startswith("env:"):
            self.set_env(name[4:], value)
            return
        qual, bare = self._qualified(low)
        scope = self.scopes[0] if qual == "global" else self.scopes[self.script_scope] if qual == "script" \
            else self.scopes[-1]
        scope[bare] = value

    # ---- conversions ------------------------------------------------------------------------------------------
    def to_string(self, v) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, list):  # a List[string] too: an enumerable in a string context is joined with $OFS
            return " ".join(self.to_string(x) for x in v)  # $OFS: an array in a string context
        return str(v)

    @staticmethod
    def truthy(v) -> bool:
        if isinstance(v, list):
            if len(v) == 0:
                return False
            if len(v) == 1:
                return Interpreter.truthy(v[0])
            return True
        return bool(v)

    @staticmethod
    def enumerate_value(v) -> list:
        """What writing `v` to the pipeline writes: a collection is unrolled one level, $null is nothing... except
        that PowerShell writes an explicit $null expression; the hooks never do."""
        if isinstance(v, list):
            return list(v)
        return [] if v is None else [v]

    # ---- statements -------------------------------------------------------------------------------------------
    def exec_block(self, n, out: list) -> None:
        for c in _named(n):
            self.exec_stmt(c, out)

    def exec_stmt(self, n, out: list) -> None:
        t = n.type
        if t in ("statement_list", "script_block_body", "program", "statement_block", "script_block"):
            return self.exec_block(n, out)
        if t in ("empty_statement", "comment"):
            return
        if t == "function_statement":
            self.define_function(_text(next(c for c in n.children if c.type == "function_name")), n)
            return
        if t == "if_statement":
            return self.exec_if(n, out)
        if t == "foreach_statement":
            return self.exec_foreach(n, out)
        if t == "for_statement":
            return self.exec_for(n, out)
        if t == "try_statement":
            fin = [c for c in n.children if c.type == "finally_clause"]
            if [c for c in n.children if c.type == "catch_clauses"]:
                raise Unsupported("try with catch")
            try:
                self.exec_stmt(next(c for c in n.children if c.type == "statement_block"), out)
            finally:
                for c in fin:
                    self.exec_stmt(next(x for x in c.children if x.type == "statement_block"), out)
            return
        if t == "flow_control_statement":
            kw = n.children[0].type
            if kw == "break":
                raise _Break()
            if kw == "return":
                vals = _named(n)
                if vals:
                    out.extend(self.write(vals[0]))
                raise _Return()
            raise Unsupported(f"flow control {kw}")
        u = _unwrap(n)
        self._failed = False
        if u.type == "assignment_expression":
            self.exec_assign(u)
        else:
            out.extend(self.write(n))
        if u.type not in ("if_statement", "foreach_statement", "for_statement"):
            self.question = not self._failed

    def write(self, n) -> list:
        """The objects a pipeline writes."""
        u = _unwrap(n)
        if u.type == "command":
            return self.run_command(u)
        if u.type in ("pipeline", "pipeline_chain") and len(_named(u)) == 2 and \
                _unwrap(_named(u)[1]).type == "command" and \
                _command_name(_unwrap(_named(u)[1])) == "select-object":
            pos, params = self.command_args(_unwrap(_named(u)[1]))
            if set(params) != {"-first"} or pos:
                raise Unsupported(f"Select-Object {_text(_named(u)[1])}")
            return self.write(_named(u)[0])[:int(self.to_string(params["-first"]))]
        if u.type in ("pipeline", "pipeline_chain") and len(_named(u)) == 2 and \
                _unwrap(_named(u)[1]).type == "command" and _command_name(_unwrap(_named(u)[1])) == "out-string":
            if self.command_args(_unwrap(_named(u)[1])) != ([], {}):
                raise Unsupported(f"Out-String {_text(_named(u)[1])}")
            # one string: every object's text, each line ended by a newline (Out-String reference)
            return ["".join(self.to_string(x) + "\n" for x in self.write(_named(u)[0]))]
        if u.type == "pipeline_chain" or (u.type == "pipeline" and len(_named(u)) > 1):
            raise Unsupported(f"a pipeline of several commands: {_text(u)[:60]}")
        if u.type in ("if_statement", "foreach_statement", "for_statement"):
            sub: list = []
            self.exec_stmt(u, sub)
            return sub
        v = self.ev(u)
        if u.type == "invokation_expression" and v is _VOID:
            return []
        return self.enumerate_value(v)

    def exec_assign(self, n) -> None:
        left, op, value = n.children[0], n.children[1], n.child_by_field_name("value")
        if _text(op) != "=":
            raise Unsupported(f"assignment operator {_text(op)}")
        target = _unwrap(left)
        if target.type != "variable":
            raise Unsupported(f"assignment to {_text(target)}")
        vu = _unwrap(value)
        if vu.type in ("command", "if_statement", "foreach_statement", "for_statement", "pipeline", "pipeline_chain"):
            got = self.write(value)  # a statement's output: one object is a scalar, none is $null
            val = None if not got else got[0] if len(got) == 1 else got
        else:
            val = self.ev(value)
        self.assign(self.var_name(target), val)

    def condition(self, n):
        """An `if` condition: a pipeline's output (one object a scalar) or an expression's value."""
        if _unwrap(n).type in ("command", "pipeline", "pipeline_chain"):
            got = self.write(n)
            return None if not got else got[0] if len(got) == 1 else got
        return self.ev(n)

    def exec_if(self, n, out) -> None:
        cond = n.child_by_field_name("condition")
        blocks = [c for c in n.children if c.type == "statement_block"]
        if self.truthy(self.condition(cond)):
            return self.exec_block(blocks[0], out)
        for c in n.children:
            if c.type == "elseif_clauses":
                for clause in _named(c):
                    if self.truthy(self.condition(clause.child_by_field_name("condition"))):
                        return self.exec_block(next(x for x in clause.children if x.type == "statement_block"), out)
            if c.type == "else_clause":
                return self.exec_block(next(x for x in c.children if x.type == "statement_block"), out)

    def exec_foreach(self, n, out) -> None:
        named = _named(n)
        var, coll, body = named[0], named[1], named[-1]
        cu = _unwrap(coll)
        items = self.write(coll) if cu.type == "command" else self.enumerate_value(self.ev(coll))
        try:
            for item in items:
                self.assign(self.var_name(var), item)
                self.exec_block(body, out)
        except _Break:
            pass

    def exec_for(self, n, out) -> None:
        init = n.child_by_field_name("for_initializer")
        cond = n.child_by_field_name("for_condition")
        step = n.child_by_field_name("for_iterator")
        body = next(c for c in n.children if c.type == "statement_block")
        self.exec_stmt(init, out)
        try:
            while self.truthy(self.ev(cond)):
                self.exec_block(body, out)
                self.ev(step)
        except _Break:
            pass

    # ---- expressions ------------------------------------------------------------------------------------------
    @staticmethod
    def var_name(n) -> str:
        t = _text(n)
        if t.startswith("${") and t.endswith("}"):
            return t[2:-1]
        return t[1:]

    def ev(self, n):
        n = _unwrap(n)
        t = n.type
        if t == "variable":
            return self.lookup(self.var_name(n))
        if t == "verbatim_string_characters":
            return _text(n)[1:-1].replace("''", "'")
        if t == "expandable_string_literal":
            return self.expand(_text(n))
        if t == "decimal_integer_literal":
            return int(_text(n))
        if t == "parenthesized_expression":
            inner = _named(n)[0]
            got = self.write(inner) if _unwrap(inner).type in ("command", "pipeline", "pipeline_chain") else None
            if got is not None:
                return None if not got else got[0] if len(got) == 1 else got
            return self.ev(inner)
        if t == "array_expression":
            out: list = []
            stmts = n.child_by_field_name("statements")
            if stmts is not None:
                self.exec_stmt(stmts, out)
            return out
        if t == "array_literal_expression":
            return [self.ev(c) for c in _named(n)]
        if t == "expression_with_unary_operator":
            return self.unary(n)
        if t == "cast_expression":
            return self.cast(n)
        if t == "comparison_expression":
            return self.compare(n)
        if t == "logical_expression":
            return self.logical(n)
        if t == "additive_expression":
            a, b = (self.ev(c) for c in _named(n))
            if _text(n.children[1]) != "+":
                raise Unsupported("arithmetic other than +")
            if isinstance(a, list):
                return list(a) + (list(b) if isinstance(b, list) else [b])
            if isinstance(a, str):
                return a + self.to_string(b)
            return a + b
        if t == "post_increment_expression":
            name = self.var_name(_named(n)[0])
            self.assign(name, self.lookup(name) + 1)
            return _VOID
        if t == "member_access":
            return self.member(n)
        if t == "element_access":
            target, index = (self.ev(c) for c in _named(n))
            return target[index] if isinstance(target, list) and -len(target) <= index < len(target) else None
        if t == "invokation_expression":
            return self.invoke(n)
        if t == "type_literal":
            return _Type(self.type_name(n))
        if t == "script_block_expression":
            return _ScriptBlock(n)
        if t == "command":
            raise Unsupported(f"a command where a value is expected: {_text(n)[:60]}")
        raise Unsupported(f"{t}: {_text(n)[:60]}")

    def expand(self, raw: str) -> str:
        body = raw[1:-1]
        if "$(" in body or re.search(r"`[^nt`\"$]", body):
            raise Unsupported(f"escape or subexpression in {raw}")
        escapes = {"n": "\n", "t": "\t", "`": "`", '"': '"', "$": "$"}
        return re.sub(r"`(.)|\$(\{[^}]+\}|[\w:]+)", lambda m: escapes[m.group(1)] if m.group(1) else self.to_string(
            self.lookup(m.group(2)[1:-1] if m.group(2).startswith("{") else m.group(2).rstrip(":"))), body)

    def unary(self, n):
        if n.children[0].is_named:  # a cast: the grammar puts it under this node
            return self.ev(n.children[0])
        op = _text(n.children[0])
        if op in ("-not", "!"):
            return not self.truthy(self.ev(n.children[1]))
        if op == ",":
            return [self.ev(n.children[1])]
        raise Unsupported(f"unary {op}")

    def type_name(self, n) -> str:
        t = _text(n).strip()
        return (t[1:-1] if t.startswith("[") and t.endswith("]") else t).lower()

    def cast(self, n):
        tname = self.type_name(n.children[0])
        v = self.ev(n.children[1])
        if tname == "string":
            return self.to_string(v)
        if tname == "string[]":
            return [self.to_string(x) for x in self.enumerate_value(v)]
        raise Unsupported(f"cast to {tname}")

    def logical(self, n):
        left, op, right = n.children[0], _text(n.children[1]).lower(), n.children[2]
        lv = self.truthy(self.ev(left))
        if op == "-and":
            return lv and self.truthy(self.ev(right))
        if op == "-or":
            return lv or self.truthy(self.ev(right))
        raise Unsupported(op)

    def compare(self, n):
        left, op, right = n.children[0], _text(n.children[1]).lower(), n.children[2]
        a = self.ev(left)
        if op == "-split":
            args = self.ev(right)
            args = args if isinstance(args, list) else [args]
            sep = self.to_string(args[0])
            simple = len(args) > 2 and "simplematch" in self.to_string(args[2]).lower()
            pattern = re.escape(sep) if simple else sep  # .NET and Python regexes agree on what the hooks could hold
            return [p for s in self.enumerate_value(a) or [""] for p in re.split(pattern, self.to_string(s),
                                                                                  flags=re.I)]
        if op == "-join":
            sep = self.to_string(self.ev(right))
            # each element converted on its own, not recursing: a nested array is its type name (ParserOps.JoinOperator)
            return sep.join("System.Object[]" if isinstance(x, list) and not isinstance(x, PsList) else self.to_string(x)
                            for x in self.enumerate_value(a))
        b = self.ev(right)
        if op in ("-contains", "-notcontains"):
            hit = any(self.eq(x, b) for x in self.enumerate_value(a))
            return hit if op == "-contains" else not hit
        if isinstance(a, list):  # a collection on the left filters it (about_Comparison_Operators)
            return [x for x in a if self.scalar_compare(x, op, b)]
        return self.scalar_compare(a, op, b)

    def eq(self, a, b, case=False) -> bool:
        if a is None or b is None:
            return a is None and b is None
        if isinstance(a, str):
            bs = self.to_string(b)
            return a == bs if case else a.lower() == bs.lower()
        if isinstance(a, int) and isinstance(b, str):
            return str(a) == b
        return a == b

    def scalar_compare(self, a, op, b) -> bool:
        if op in ("-eq", "-ieq"):
            return self.eq(a, b)
        if op in ("-ne", "-ine"):
            return not self.eq(a, b)
        if op == "-ceq":
            return self.eq(a, b, case=True)
        if op in ("-lt", "-gt", "-le", "-ge"):
            return {"-lt": a < b, "-gt": a > b, "-le": a <= b, "-ge": a >= b}[op]
        raise Unsupported(f"operator {op}")

    def member(self, n):
        target_node, name_node = _named(n)[0], _named(n)[-1]
        name = _text(name_node).lower()
        static = any(c.type == "::" for c in n.children)
        target = self.ev(target_node)
        if static:
            tname = target.name if isinstance(target, _Type) else None
            if tname in ("io.path", "system.io.path") and name == "pathseparator":
                return ";" if self.windows else ":"
            if tname in ("io.path", "system.io.path") and name == "directoryseparatorchar":
                return "\\" if self.windows else "/"
            if tname in ("console", "system.console") and name == "error":
                return _Stderr()
            raise Unsupported(f"static member [{tname}]::{name}")
        if isinstance(target, _Context) and name in ("sessionstate", "languagemode"):
            return target if name == "sessionstate" else target.mode
        if name == "length" and isinstance(target, str):
            return len(target)
        if name == "count" and isinstance(target, list):
            return len(target)
        if name == "count":
            return 0 if target is None else 1
        if name == "value" and isinstance(target, _EnvItem):
            return target.value
        if name == "scriptblock" and isinstance(target, _Function):
            return target.node
        raise Unsupported(f"member .{name}")

    def invoke(self, n):
        named = _named(n)
        target_node, name_node = named[0], named[1]
        args_node = next((c for c in named if c.type == "argument_list"), None)
        name = _text(name_node).lower()
        args = []
        if args_node is not None and _named(args_node):
            lst = _unwrap(_named(args_node)[0])
            args = [self.ev(c) for c in _named(lst)] if lst.type == "argument_expression_list" else [self.ev(lst)]
        static = any(c.type == "::" for c in n.children)
        target = self.ev(target_node)
        if static and isinstance(target, _Type) and self.language != "FullLanguage":
            raise PsError(f"[{target.name}]::{name}: cannot invoke method. Method invocation is supported only on "
                          f"core types in this language mode.")
        if static and isinstance(target, _Type):
            if target.name in ("environment", "system.environment"):
                if name == "getenvironmentvariable" and len(args) == 1:
                    return self.env.get(self.to_string(args[0]))
                if name == "setenvironmentvariable" and len(args) == 2:
                    value = "" if args[1] is None else self.to_string(args[1])  # $null arrives as ''
                    self.set_env(self.to_string(args[0]), value)
                    return _VOID
            if target.name in ("io.path", "system.io.path") and name == "combine":
                sep = "\\" if self.windows else "/"
                out = ""
                for part in (self.to_string(a) for a in args):
                    out = part if not out or part.startswith(("/", "\\")) else out.rstrip("/\\") + sep + part
                return out
            if target.name in ("regex", "system.text.regularexpressions.regex") and name == "escape":
                return re.escape(self.to_string(args[0]))  # the same escapes for path text
            raise Unsupported(f"[{target.name}]::{name}")
        if isinstance(target, str) and name == "trim" and not args:
            return target.strip()
        if isinstance(target, _Stderr) and name == "writeline":
            self.stderr.append(self.to_string(args[0]))
            return _VOID
        if isinstance(target, PsList):
            if name == "add":
                target.append(self.to_string(args[0]))
                return _VOID
            if name == "removeat":
                del target[args[0]]
                return _VOID
            if name == "insertrange":
                target[args[0]:args[0]] = [self.to_string(x) for x in self.enumerate_value(args[1])]
                return _VOID
        raise Unsupported(f"method .{name}")

    # ---- commands ---------------------------------------------------------------------------------------------
    def command_args(self, n):
        """(positional values, {parameter: value}) of a command."""
        elements = n.child_by_field_name("command_elements")
        pos, params, pending = [], {}, None
        for c in _named(elements) if elements is not None else []:
            if c.type == "command_argument_sep":
                continue
            if c.type == "command_parameter":
                if pending:
                    params[pending] = True
                pending = _text(c).lower()
                continue
            if c.type == "generic_token":
                value = _text(c)
            elif c.type == "script_block_expression":
                value = _ScriptBlock(c)
            elif _unwrap(c).type == "variable" and _text(c).startswith("@"):  # splatting: each element an argument
                pos.extend(self.enumerate_value(self.lookup(_text(c)[1:])))
                continue
            else:
                value = self.ev(c)
            if pending:
                params[pending], pending = value, None
            else:
                pos.append(value)
        if pending:
            params[pending] = True
        return pos, params

    def run_command(self, n) -> list:
        name_node = n.child_by_field_name("command_name")
        op = next((c for c in n.children if c.type == "command_invokation_operator"), None)
        expr = next((c for c in n.children if c.type == "command_name_expr"), None)
        if op is not None and (expr or name_node) is not None:
            target = expr or name_node
            while target.type in ("command_name_expr", "path_command_name", "command_name") and _named(target):
                target = _named(target)[0]
            return self.invoke_operator(_text(op), self.ev(target), n)
        if name_node is None:
            raise Unsupported(f"invocation {_text(n)[:60]}")
        name = _text(name_node).lower()
        pos, params = self.command_args(n)
        if name in self.functions:
            return self.call_function(self.functions[name], pos)
        quiet = self.to_string(params.get("-erroraction", "")).lower() in ("silentlycontinue", "ignore")
        if name == "remove-item":
            for p in self.enumerate_value(params.get("-literalpath", pos[0] if pos else None)):
                self.remove_item(self.to_string(p), quiet)
            return []
        if name == "remove-variable":
            # only the current scope's (about_Scopes: Remove-Variable without -Scope acts locally)
            for v in self.enumerate_value(params.get("-name", pos[0] if pos else None)):
                if str(v).lower() in self.scopes[-1]:
                    del self.scopes[-1][str(v).lower()]
                elif not quiet:
                    raise PsError(f"Remove-Variable: cannot find a variable with the name '{v}' (in this scope)")
            return []
        if name == "write-error" and self.to_string(params.get("-erroraction", "")).lower() == "ignore":
            self._failed = True
            return []
        if name == "join-path" and len(pos) == 2 and not params:
            sep = "\\" if self.windows else "/"
            return [self.to_string(pos[0]).rstrip("/\\") + sep + self.to_string(pos[1]).lstrip("/\\")]
        if name == "get-command":
            if self.to_string(params.get("-commandtype", "")).lower() != "application" or len(pos) != 1:
                raise Unsupported(f"Get-Command {_text(n)[:60]}")
            if self.to_string(pos[0]) in self.programs:
                return [_App(self.to_string(pos[0]))]
            if self.to_string(params.get("-erroraction", "")).lower() == "stop":
                raise PsError(f"Get-Command: the term '{self.to_string(pos[0])}' is not recognized")
            return []
        if name == "invoke-expression":
            # the text runs in the current scope, as if typed there (Invoke-Expression reference): what conda's
            # Enter-CondaEnvironment does with `conda shell.powershell activate`'s output
            code = self.to_string(params.get("-command", pos[0] if pos else ""))
            root = parse(code)
            if root.has_error:
                raise PsError("Invoke-Expression: the text does not parse")
            out: list = []
            self.exec_stmt(root, out)
            return out
        if name == "write-verbose":
            return []  # $VerbosePreference is SilentlyContinue unless -Verbose
        if name == "write-warning":
            self.warnings.append(self.to_string(params.get("-message", pos[0] if pos else "")))
            return []
        if name == "test-path":
            if "-literalpath" not in params and pos and any(ch in self.to_string(pos[0]) for ch in "[]*?`"):
                raise Unsupported(f"Test-Path with a wildcard pattern (-Path): {self.to_string(pos[0])}")
            path = self.to_string(params.get("-literalpath", pos[0] if pos else ""))
            if path.lower().startswith("env:"):
                return [self.env.get(path[4:]) is not None]
            if path.lower().startswith("function:"):
                return [_function_path(path).replace("global:", "") in self.functions]
            kind = self.to_string(params.get("-pathtype", "any")).lower()
            return [self.isdir(path) if kind == "container" else self.isfile(path) if kind == "leaf" else
                    self.isdir(path) or self.isfile(path)]
        if name == "new-object" and pos and self.to_string(pos[0]) == "System.Collections.Generic.List[string]":
            if self.language != "FullLanguage":
                raise PsError("New-Object: cannot create type. Only core types are supported in this language mode.")
            return [PsList()]
        if name == "get-item":
            path = self.to_string(pos[0] if pos else params.get("-literalpath"))
            if path.lower().startswith("function:"):
                fname = _function_path(path).replace("global:", "")
                return [_Function(self.functions[fname])] if fname in self.functions else []
            raise Unsupported(f"Get-Item {path}")
        if name == "set-item":
            path = self.to_string(pos[0])
            if path.lower().startswith("function:"):
                self.define_function(_function_path(path), pos[1])
                return []
            raise Unsupported(f"Set-Item {path}")
        raise Unsupported(f"command {name}")

    def invoke_operator(self, op: str, target, n) -> list:
        """`& $exe args` (a native program: its exit code in $LASTEXITCODE) and `. FILE` (dot-sourcing a script:
        it runs in this scope; its `return` ends it)."""
        pos, params = self.command_args(n)
        if op == "&" and isinstance(target, (_App, str)) and not params:
            name = target.name if isinstance(target, _App) else target
            if name not in self.programs:
                raise PsError(f"the term '{name}' is not recognized as a program")
            # a $null argument is not passed to a native program; '' is from 7.3 on ($PSNativeCommandArgumentPassing),
            # dropped before (Windows PowerShell 5.1: PowerShell/PowerShell#1995)
            args = [self.to_string(a) for a in pos if a is not None]
            got = self.programs[name]([a for a in args if a != "" or self.version >= "7.3"], self.env)
            code, lines = got if isinstance(got, tuple) else (got, [])
            self.scopes[0]["lastexitcode"] = code
            self._failed = code != 0
            return list(lines)  # a native program's stdout reaches the pipeline one line at a time
        if op == "." and isinstance(target, str) and not pos and not params:
            with open(target, encoding="utf-8-sig") as fh:
                root = parse(fh.read())
            if root.has_error:
                raise PsError(f"{target} does not parse")
            out: list = []
            try:
                self.exec_stmt(root, out)
            except _Return:
                pass
            return out
        raise Unsupported(f"{op} {_text(n)[:60]}")

    def remove_item(self, path: str, quiet: bool = False) -> None:
        if path.lower().startswith("env:"):
            if self.env.get(path[4:]) is None and not quiet:
                # a non-terminating error PowerShell prints (and $ErrorActionPreference='Stop' makes terminating)
                raise PsError(f"Remove-Item: cannot find path '{path}' because it does not exist")
            self.env.delete(path[4:])
        elif path.lower().startswith("function:"):
            self.remove_function(_function_path(path))
        else:
            raise Unsupported(f"Remove-Item {path}")

    def call_function(self, fn, args) -> list:
        out: list = []
        body = fn.node if isinstance(fn, (_ScriptBlock, _Function)) else fn
        scope: Dict[str, object] = {"args": list(args)}
        params = [c for c in body.children if c.type == "function_parameter_declaration"] \
            if body.type == "function_statement" else []
        if params:
            names = [self.var_name(v) for v in _iter_type(params[0], "variable")]
            for i, nm in enumerate(names):
                scope[nm.lower()] = self.to_string(args[i]) if i < len(args) else ""
        self.push_scope(scope)
        try:
            block = next((c for c in body.children if c.type in ("script_block", "script_block_body")), body)
            self.exec_stmt(block, out)
        except _Return:
            pass
        finally:
            self.pop_scope()
        return out


def _function_path(path: str) -> str:
    """`Function:\\global:f` -> `global:f`, `Function:f` -> `f` (the drive, then the item's own name)."""
    rest = path[len("function:"):]
    return rest.lstrip("\\/").lower()


def _iter_type(n, kind):
    if n.type == kind:
        yield n
    for c in n.children:
        yield from _iter_type(c, kind)


class _VoidType:
    def __repr__(self):
        return "<void>"


_VOID = _VoidType()


@dataclass
class _Type:
    name: str


class _Stderr:
    pass


@dataclass
class _App:
    """What Get-Command -CommandType Application returns: a native program, by name."""

    name: str


@dataclass
class _Context:
    """$ExecutionContext, as far as a hook reads it: .SessionState.LanguageMode."""

    mode: str


@dataclass
class _EnvItem:
    value: str


@dataclass
class _ScriptBlock:
    node: object


@dataclass
class _Function:
    node: object


def run(text: str, env: Dict[str, str], windows: bool, version: str = "7.5", call: Optional[str] = None,
        isdir: Callable[[str], bool] = os.path.isdir, isfile: Callable[[str], bool] = os.path.isfile,
        language: str = "FullLanguage", status: bool = True, args: Optional[List[str]] = None,
        programs: Optional[Dict[str, Callable]] = None) -> Result:
    """Dot-source `text` into a fresh scope with environment `env` (then call function `call`, if given).
    `language`: the session's language mode (ConstrainedLanguage under AppLocker/WDAC)."""
    root = parse(text)
    if root.has_error:
        raise PsError("the file does not parse")
    it = Interpreter(env, windows, version, isdir, isfile, language, programs)
    it.question = status  # $? as the user's last command left it (before `call`, when given)
    out: list = []
    try:
        it.exec_stmt(root, out)
    except _Return:  # `return` in a script ends the script (about_Return)
        pass
    if call:
        it.question = status
        out.extend(it.call_function(it.functions[call.lower()], list(args or [])))
    return Result(it.env.as_dict(), [o for o in out if o is not _VOID], it.stderr, dict(it.scopes[0]),
                  sorted(it.functions), it.warnings)


# ---- the subset (docs/design/activation.md, "PowerShell constructs") ---------------------------------------------

_COMPARE_NULL = {"-eq", "-ne", "-ieq", "-ine", "-ceq", "-cne"}


def subset_problems(text: str, hook: bool = True, output_ok: tuple = ()) -> List[str]:
    """Every construct of `text` outside the reviewed table. `hook`: a dot-sourced hook (no functions at all; every
    variable `$__cs_*` and removed at the end). `output_ok`: functions whose output is their purpose (the prompt)."""
    root = parse(text)
    errs: List[str] = []
    if root.has_error:
        errs.append("does not parse")

    def line(n):
        return f"line {n.start_point[0] + 1}: {_text(n).splitlines()[0][:70]}"

    user_functions = {_text(c).lower().replace("global:", "")
                      for fn in _iter_type(root, "function_statement") for c in fn.children if c.type == "function_name"}
    for fn in _iter_type(root, "function_statement"):
        if hook:
            errs.append(f"a function in a dot-sourced hook: {line(fn)}")
    for n in _iter_type(root, "flow_control_statement"):
        if n.children[0].type == "return" and _named(n):
            errs.append(f"return with a value (a function that returns a collection unrolls or nests it): {line(n)}")
    for n in _iter_type(root, "expression_with_unary_operator"):
        if _text(n.children[0]) == ",":
            errs.append(f"unary comma (wraps an array in an array): {line(n)}")
    for n in _iter_type(root, "array_expression"):
        for c in _iter_type(n, "command"):
            errs.append(f"a command or function call inside @( ): {line(c)}")
    for n in _iter_type(root, "assignment_expression"):
        value = n.child_by_field_name("value")
        vu = _unwrap(value) if value is not None else None
        if vu is not None and (vu.type in ("if_statement", "foreach_statement", "for_statement", "switch_statement")
                               or (vu.type == "command" and _command_name(vu) in user_functions)):
            errs.append(f"a statement's output assigned (one element comes back as a scalar): {line(n)}")
    for n in _iter_type(root, "comparison_expression"):
        if len(n.children) != 3:
            continue
        op = _text(n.children[1]).lower()
        if op in _COMPARE_NULL and _text(_unwrap(n.children[2])).lower() == "$null":
            errs.append(f"$null on the right of {op} (filters a collection instead of comparing): {line(n)}")
        if op in ("-split", "-isplit", "-csplit"):
            args = _unwrap(n.children[2])
            opts = _named(args)[2:3] if args.type == "array_literal_expression" else []
            if not opts or "simplematch" not in _text(opts[0]).lower():
                errs.append(f"-split without SimpleMatch (the delimiter is a regular expression): {line(n)}")
    for n in _iter_type(root, "invokation_expression"):
        name = _text(_named(n)[1]).lower()
        if name in ("remove", "push", "pop") or (name == "add" and "arraylist" in text.lower()):
            errs.append(f".{name}() writes a value to the pipeline: {line(n)}")
    for n in _iter_type(root, "command"):
        name, args = _command_name(n), _text(n).lower()
        if name == "test-path" and "-literalpath" not in args:
            errs.append(f"Test-Path without -LiteralPath (-Path takes [ ] * ? as a wildcard pattern): {line(n)}")
        if name in ("remove-item", "remove-variable") and "-erroraction silentlycontinue" not in args:
            errs.append(f"{name} without -ErrorAction SilentlyContinue (a missing one is an error, and terminates "
                        f"under $ErrorActionPreference='Stop'): {line(n)}")
    # conda dot-sources a hook inside its module function (Conda.psm1's Enter-CondaEnvironment, through
    # Invoke-Expression), so what a qualifier names depends on that context: `$script:` is conda's module scope,
    # `$global:` the user's prompt. A hook keeps nothing but `$Env:`; the integration (loaded from the profile,
    # perhaps from a function of it) defines its functions global: and writes only `$global:LASTEXITCODE`.
    for n in _iter_type(root, "variable"):
        qual = re.match(r"\$\{?(global|script|private|local|using|variable):", _text(n), re.I)
        if qual and (hook or qual.group(1).lower() != "global"):
            errs.append(f"a variable with the scope qualifier {qual.group(1)}: (its meaning depends on the scope "
                        f"conda runs the file in): {line(n)}")
    if not hook:
        for fn in _iter_type(root, "function_statement"):
            name = next(c for c in fn.children if c.type == "function_name")
            if not _text(name).lower().startswith("global:") and not _inside_function(fn):
                errs.append(f"a function not defined global: (gone when the file is loaded from a function): {line(fn)}")
        for n in _iter_type(root, "command"):
            args = _text(n).lower()
            if _command_name(n) == "set-item" and "function:" in args and "function:\\global:" not in args:
                errs.append(f"Set-Item of a function not global: {line(n)}")
    for n in _iter_type(root, "variable"):
        if _text(n).lower() in ("$iswindows", "$islinux", "$ismacos", "$iscoreclr"):
            errs.append(f"{_text(n)} does not exist on Windows PowerShell 5.1: {line(n)}")
    errs += _statement_output(root, user_functions, output_ok, line)
    if hook:
        errs += _leftover_variables(root)
    return errs


def _inside_function(n) -> bool:
    p = n.parent
    while p is not None:
        if p.type == "function_statement":
            return True
        p = p.parent
    return False


def _command_name(n) -> str:
    name = n.child_by_field_name("command_name")
    return _text(name).lower() if name is not None else ""


def _statement_output(root, user_functions, output_ok, line) -> List[str]:
    """Statements whose value would reach the pipeline (conda prints it; in the reconciler it joins the prompt)."""
    errs = []

    def walk(block, inside):
        for s in _named(block):
            u = _unwrap(s)
            if u.type in ("statement_list", "statement_block", "script_block", "script_block_body"):
                walk(u, inside)
                continue
            if u.type == "function_statement":
                name = _text(next(c for c in u.children if c.type == "function_name")).lower().replace("global:", "")
                for c in u.children:
                    if c.type == "script_block":
                        walk(c, name)
                continue
            if u.type in ("if_statement", "foreach_statement", "for_statement", "else_clause", "elseif_clauses",
                          "elseif_clause"):
                for c in u.children:
                    if c.type in ("statement_block", "elseif_clauses", "elseif_clause", "else_clause"):
                        walk(c, inside) if c.type == "statement_block" else walk_clause(c, inside)
                continue
            if u.type in ("assignment_expression", "empty_statement", "comment", "flow_control_statement",
                          "post_increment_expression", "try_statement"):
                continue
            if inside in output_ok:
                continue
            if u.type == "command":
                cname = u.child_by_field_name("command_name")
                cname = _text(cname).lower() if cname is not None else ""
                if cname in _VOID_COMMANDS or (cname in user_functions and cname not in output_ok):
                    continue
            if u.type == "invokation_expression" and _text(_named(u)[1]).lower() in _VOID_METHODS:
                continue
            errs.append(f"its value reaches the pipeline: {line(u)}")

    def walk_clause(c, inside):
        for x in c.children:
            if x.type == "statement_block":
                walk(x, inside)
            elif x.type in ("elseif_clause", "else_clause"):
                walk_clause(x, inside)

    walk(root, None)
    return errs


def _leftover_variables(root) -> List[str]:
    """A dot-sourced hook's variables land in conda's scope: each must be `$__cs_*` and removed at the end."""
    assigned = set()
    for n in _iter_type(root, "assignment_expression"):
        target = _unwrap(n.children[0])
        if target.type == "variable" and not _text(target).lower().startswith(("$env:", "${env:")):
            assigned.add(_text(target)[1:].lower())
    for n in _iter_type(root, "foreach_statement"):
        assigned.add(_text(_named(n)[0])[1:].lower())
    removed = set()
    for n in _iter_type(root, "command"):
        cname = n.child_by_field_name("command_name")
        if cname is not None and _text(cname).lower() == "remove-variable":
            removed |= {w.strip("'\"").lower() for w in re.split(r"[,\s]+", _text(n)) if w.strip("'\"").startswith("__cs_")}
    errs = [f"${v} is not named $__cs_*" for v in sorted(assigned) if not v.startswith("__cs_")]
    errs += [f"${v} is left in conda's scope (not in the final Remove-Variable)" for v in sorted(assigned - removed)]
    return errs


# ---- a session with a module: how conda runs the hooks (Conda.psm1's Enter-/Exit-CondaEnvironment) ---------------

class Session:
    """One PowerShell session: a global scope (the user's prompt), and modules imported into it. A module has a
    scope of its own whose parent is the global scope (about_Scopes, "Modules"; a module's session state), and its
    functions run in a new scope whose parent is that module scope, not the caller's. So a hook that conda
    dot-sources from Enter-CondaEnvironment (`Invoke-Expression` of `. "hook.ps1"`) assigns its variables in that
    function's scope, gone when the function returns; only `$Env:` (the process environment) and `$global:` outlive
    it, and `$script:` would land in conda's module scope. Only a module's functions are loaded, not its body."""

    def __init__(self, env: Dict[str, str], windows: bool, version: str = "7.5",
                 variables: Optional[Dict[str, object]] = None, programs=None, **kw):
        self.it = Interpreter(env, windows, version, programs=programs, **kw)
        self.it.scopes[0].update({k.lower(): v for k, v in (variables or {}).items()})
        self.modules: Dict[str, tuple] = {}  # name -> (its scope, its functions)
        self.last_scope: Dict[str, object] = {}  # the scope of the last module function called, as it was left

    @property
    def env(self) -> Dict[str, str]:
        return self.it.env.as_dict()

    @property
    def variables(self) -> Dict[str, object]:
        return dict(self.it.scopes[0])

    def run(self, text: str) -> list:
        """Text typed at the prompt (the global scope)."""
        root = parse(text)
        if root.has_error:
            raise PsError("the text does not parse")
        out: list = []
        self.it.exec_stmt(root, out)
        return out

    def import_module(self, name: str, text: str) -> None:
        functions = {}
        for fn in _iter_type(parse(text), "function_statement"):
            fname = _text(next(c for c in fn.children if c.type == "function_name")).lower()
            if not fname.startswith("global:") and not fn.has_error:
                functions[fname] = fn
        self.modules[name] = ({}, functions)

    def call(self, module: str, function: str, **bound) -> list:
        """Call a module's advanced function: its parameters bound by name (`[switch]` unbound is $false,
        `[string]` unbound is ''), then its begin, process and end blocks in one scope."""
        scope, functions = self.modules[module]
        fn = functions[function.lower()]
        body = next(c for c in fn.children if c.type == "script_block")
        variables: Dict[str, object] = {"args": []}
        for prm in _iter_type(body, "script_parameter"):
            pname = self.it.var_name(next(c for c in prm.children if c.type == "variable")).lower()
            default = next((c for c in prm.children if c.type == "script_parameter_default"), None)
            kinds = _text(prm).lower()
            if pname in {k.lower() for k in bound}:
                variables[pname] = next(v for k, v in bound.items() if k.lower() == pname)
            elif default is not None:
                variables[pname] = self.it.ev(_named(default)[0])
            else:
                variables[pname] = False if "[switch]" in kinds else "" if "[string]" in kinds else None
        it, saved = self.it, (self.it.scopes, self.it.fscopes, self.it.script_scope)
        it.scopes, it.fscopes = [saved[0][0], scope, variables], [saved[1][0], dict(functions), {}]
        it.script_scope = 1
        out: list = []
        try:
            for block in _iter_type(body, "named_block"):
                try:
                    it.exec_stmt(next(c for c in block.children if c.type == "statement_block"), out)
                except _Return:
                    pass
        finally:
            self.last_scope = dict(variables)
            it.scopes, it.fscopes, it.script_scope = saved
        return [o for o in out if o is not _VOID]
