#!/usr/bin/env python3
"""Keeps the Platform contract's backends together (issue 46).

Reads spec/contract.def (one row per contract function: its name and PTX form), the concept
`Platform` in spec/platform.hpp, and the two backends: struct HostPlatform in
sim/host_platform.hpp and struct DevicePlatform in device/platform.cuh. Fails (exit 1), naming
every problem, when
  - the .def's rows are not exactly the functions the concept requires, in the concept's order;
  - a backend lacks a row's function, or has a public static function that is neither a row
    nor one of the .def's MBCHECK_CONTRACT_HELPER names;
  - a backend's function has no `// PTX: <form>` line in the comment block just above it (above
    its `template <...>` line where it has one), or that form differs from the row's.
--device-only checks the .def, the concept and the device backend only (for the time before the
host backend is annotated); without it, both backends are checked.
Python 3 standard library only. Usage: contract_check.py [--device-only] [--root DIR]
"""
import argparse
import os
import re
import sys

ROW = re.compile(r'\bMBCHECK_CONTRACT\(\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)
HELPER = re.compile(r'\bMBCHECK_CONTRACT_HELPER\(\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)
PTX_LINE = re.compile(r'^\s*//\s*PTX:\s*(.*?)\s*$')


def strip_code(text):
    """The text with comments and string/char literals blanked (newlines kept), so braces and
    keywords inside them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ''
        if c == '/' and nxt == '/':
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c == '/' and nxt == '*':
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # not a digit separator
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def read_def(path, problems):
    text = '\n'.join(line for line in open(path).read().splitlines() if not line.lstrip().startswith('//'))
    rows = ROW.findall(text)
    helpers = {name for name, _ in HELPER.findall(text)}
    seen = set()
    for name, _ in rows:
        if name in seen:
            problems.append(f'{path}: {name} has two rows')
        seen.add(name)
    for name in helpers & seen:
        problems.append(f'{path}: {name} is both a row and a helper')
    if not rows:
        problems.append(f'{path}: no MBCHECK_CONTRACT rows')
    return rows, helpers


def concept_functions(path, problems):
    """The P::name(...) calls of concept Platform's requires-body, in order of first use."""
    code = strip_code(open(path).read())
    m = re.search(r'\bconcept\s+Platform\s*=\s*requires\s*\(', code)
    if not m:
        problems.append(f'{path}: no `concept Platform = requires(...)` found')
        return []
    start = code.index('{', m.end())
    depth, i = 0, start
    while i < len(code):
        depth += {'{': 1, '}': -1}.get(code[i], 0)
        if depth == 0:
            break
        i += 1
    names = []
    for name in re.findall(r'\bP::(\w+)\s*\(', code[start:i]):
        if name not in names:
            names.append(name)
    return names


def struct_functions(path, struct, problems):
    """{name: [(line, public, ptx_form or None, problem or None)]} for the static member
    functions declared directly in `struct` (not in nested types)."""
    text = open(path).read()
    lines = text.splitlines()
    code = strip_code(text)
    m = re.search(r'\bstruct\s+' + struct + r'\b[^;{]*\{', code)
    if not m:
        problems.append(f'{path}: struct {struct} not found')
        return {}
    body_start = m.end()
    depth, i = 1, body_start
    top = []  # the struct's own level: deeper text blanked
    while i < len(code) and depth > 0:
        c = code[i]
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
        if depth == 0:
            break
        top.append(c if depth == 1 and c not in '{}' else ('\n' if c == '\n' else ' '))
        i += 1
    top = ''.join(top)
    labels = [(a.start(), a.group(1)) for a in re.finditer(r'\b(public|private|protected)\s*:(?!:)', top)]
    found = {}
    for f in re.finditer(r'\bstatic\b[^;{}()=]*?\b(\w+)\s*\(', top):
        name = f.group(1)
        access = 'public'
        for pos, label in labels:
            if pos < f.start():
                access = label
        line = code.count('\n', 0, body_start + f.start())  # 0-based line of `static`
        first = line
        while first > 0 and lines[first - 1].strip().startswith('template'):
            first -= 1
        forms = []
        k = first - 1
        while k >= 0 and lines[k].strip().startswith('//'):
            p = PTX_LINE.match(lines[k])
            if p:
                forms.append(p.group(1))
            k -= 1
        problem = None
        if len(forms) > 1:
            problem = f'{len(forms)} `// PTX:` lines'
        found.setdefault(name, []).append((line + 1, access == 'public', forms[0] if len(forms) == 1 else None, problem))
    return found


def check_backend(label, path, struct, rows, helpers, problems, check_forms=True):
    funcs = struct_functions(path, struct, problems)
    if not funcs:
        return
    row_names = {name for name, _ in rows}
    for name, form in rows:
        decls = [d for d in funcs.get(name, []) if d[1]]
        if not decls:
            problems.append(f'{path}: {label} ({struct}) lacks contract function {name} (spec/contract.def: "{form}")')
            continue
        if not check_forms:
            continue
        for line, _, ptx, problem in decls:
            where = f'{path}:{line}: {label} {name}'
            if problem:
                problems.append(f'{where}: {problem} above it; expected one: // PTX: {form}')
            elif ptx is None:
                problems.append(f'{where}: no `// PTX: <form>` line in the comment above it; expected // PTX: {form}')
            elif ptx != form:
                problems.append(f'{where}: PTX form "{ptx}" differs from spec/contract.def\'s "{form}"')
    for name, decls in sorted(funcs.items()):
        if name in row_names or name in helpers or not any(d[1] for d in decls):
            continue
        line = next(d[0] for d in decls if d[1])
        problems.append(f'{path}:{line}: {label} has public static function {name}, which is neither a row of '
                        f'spec/contract.def nor one of its helpers ({", ".join(sorted(helpers)) or "none"})')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--device-only', action='store_true',
                    help='check the .def, the concept and the device backend, not the host backend')
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help='the repository root (default: this script\'s ../)')
    args = ap.parse_args()
    os.chdir(args.root)
    problems = []
    rows, helpers = read_def('spec/contract.def', problems)
    concept = concept_functions('spec/platform.hpp', problems)
    names = [name for name, _ in rows]
    for name in concept:
        if name not in names:
            problems.append(f'spec/contract.def: no row for {name}, which concept Platform (spec/platform.hpp) requires')
    for name in names:
        if concept and name not in concept:
            problems.append(f'spec/contract.def: row {name} is not required by concept Platform (spec/platform.hpp)')
    common_def = [n for n in names if n in concept]
    common_concept = [n for n in concept if n in names]
    if common_def != common_concept:
        at = next(k for k, (a, b) in enumerate(zip(common_def, common_concept)) if a != b)
        problems.append(f'spec/contract.def: rows are not in concept Platform\'s order: row {at + 1} is '
                        f'{common_def[at]}, the concept has {common_concept[at]} there')
    check_backend('device', 'device/platform.cuh', 'DevicePlatform', rows, helpers, problems)
    if not args.device_only:
        check_backend('host', 'sim/host_platform.hpp', 'HostPlatform', rows, helpers, problems)
    for p in problems:
        print(f'contract-check: {p}')
    scope = 'device backend' if args.device_only else 'host and device backends'
    if problems:
        print(f'contract-check: FAIL: {len(problems)} problem(s) ({len(rows)} contract functions, {scope})')
        return 1
    print(f'contract-check: OK: {len(rows)} contract functions, {len(helpers)} helpers; {scope} agree with '
          f'spec/contract.def')
    return 0


if __name__ == '__main__':
    sys.exit(main())
