#!/usr/bin/env python3
"""The include graph of sim/ runs one way: a file includes only files of its own layer or below.

Layers, lowest first: spec/ (no backend), sim/support/ and sim/runtime/ (with the public sim/host_platform.hpp
and sim/host_matrix.hpp),
sim/explore/ (with sim/check.hpp, sim/fuzz.hpp), sim/report/ (with sim/report.hpp), sim/protocols/, sim/cli/ (with
sim/cli.hpp), sim/compat/ (other languages' APIs on the host: the CUTLASS layer). Prints every include that runs up a layer and every cycle between files; exits 1
if there is one. Run by the test suite (tests/CMakeLists.txt, test "layers")."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PUBLIC = {"sim/host_platform.hpp": 1, "sim/host_matrix.hpp": 1, "sim/check.hpp": 2, "sim/fuzz.hpp": 2, "sim/report.hpp": 3, "sim/cli.hpp": 5}
FOLDERS = [("spec/", 0), ("sim/support/", 1), ("sim/runtime/", 1), ("sim/explore/", 2), ("sim/report/", 3),
           ("sim/protocols/", 4), ("sim/cli/", 5), ("sim/compat/", 6)]
NAMES = ["spec", "runtime", "explore", "report", "protocols", "cli", "compat"]


def layer(path):
    if path in PUBLIC:
        return PUBLIC[path]
    for prefix, level in FOLDERS:
        if path.startswith(prefix):
            return level
    return None


def main():
    graph = {}
    for top in ("spec", "sim"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".hpp", ".cpp", ".def")):
                    path = os.path.relpath(os.path.join(d, f), ROOT)
                    with open(os.path.join(ROOT, path)) as fh:
                        graph[path] = re.findall(r'^\s*#\s*include\s+"((?:sim|spec)/[^"]+)"', fh.read(), re.M)
    bad = 0
    for path, includes in sorted(graph.items()):
        own = layer(path)
        if own is None:
            print(f"layers: {path} is in no layer (put it in one of {', '.join(p for p, _ in FOLDERS)})")
            bad += 1
            continue
        for inc in includes:
            if inc not in graph:
                print(f"layers: {path} includes {inc}, which does not exist")
                bad += 1
            elif layer(inc) is not None and layer(inc) > own:
                print(f"layers: {path} ({NAMES[own]}) includes {inc} ({NAMES[layer(inc)]}): up a layer")
                bad += 1
    # cycles (a file reaching itself through includes)
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                print("layers: include cycle " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
                return 1
            if nxt in graph and state.get(nxt) is None and visit(nxt, stack):
                return 1
        stack.pop()
        state[node] = 2
        return 0

    for node in sorted(graph):
        if state.get(node) is None:
            bad += visit(node, [])
    print(f"layers: {len(graph)} files, {sum(len(v) for v in graph.values())} includes, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
