#!/usr/bin/python3
"""The rooms of src/ and the rules between them, checked over #include lines.

Rules (docs/DESIGN.md, "Rooms"):
  1. The datapaths (src/dp/**) include nothing of the command language or
     the control thread: no "ctl/", "control/" or "report/" header.
  2. src/switch/ includes nothing from src/ctl/.
  3. The layers below the daemon (util, packet, parse, offload, switch,
     port) include nothing of the rooms above them (ctl, control, dp,
     report, cli).
  4. The control thread does not include a datapath's internal header
     (dp/**/*_internal.h): it reaches a datapath through its public header.
  5. In each folder, no two modules include each other in a circle (a
     module is x.c with x.h and x_internal.h; a header without a .c is a
     module of its own).

Prints every violation as FILE: rule: what.  Violations not yet mended are
listed, one per line, in scripts/layout-known.txt (a ratchet): the check
fails on any violation that is not listed, and on a listed one that is gone
(so the list only shrinks: delete its line in the change that mends it).
Usage: scripts/check-layout.py [SRC_DIR] [KNOWN_FILE]
       (defaults: src, scripts/layout-known.txt; KNOWN_FILE - : none)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
LOWER = ("util/", "packet/", "parse/", "offload/", "switch/", "port/")
UPPER = ("ctl/", "control/", "dp/", "report/", "cli/")


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def module_of(rel):
    """x.c, x.h and x_internal.h (what x's own files share) are one module."""
    base = os.path.splitext(rel)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base


def find_cycles(graph):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def read_known(path):
    if path == "-" or not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {l.strip() for l in f if l.strip() and not l.startswith("#")}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    known_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "layout-known.txt")
    bad = []
    graph = {}   # module -> modules of the same folder it includes
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")) or name.endswith(".bpf.c"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            folder = os.path.dirname(rel)
            mod = module_of(rel)
            graph.setdefault(mod, set())
            for _line, inc in includes(path):
                where = path
                if rel.startswith("dp/") and inc.startswith(("ctl/", "control/", "report/")):
                    bad.append(f"{where}: rule 1: the datapath includes {inc}")
                if rel.startswith("switch/") and inc.startswith("ctl/"):
                    bad.append(f"{where}: rule 2: switch/ includes {inc}")
                if rel.startswith(LOWER) and inc.startswith(UPPER):
                    bad.append(f"{where}: rule 3: a lower layer includes {inc}")
                if rel.startswith("control/") and inc.startswith("dp/") and inc.endswith("_internal.h"):
                    bad.append(f"{where}: rule 4: the control thread includes {inc}")
                if os.path.dirname(inc) == folder and module_of(inc) != mod:
                    graph[mod].add(module_of(inc))
    for comp in find_cycles(graph):
        bad.append(f"{src}/{os.path.dirname(comp[0])}: rule 5: modules include each other in a circle: "
                   + " -> ".join(os.path.basename(c) for c in comp))
    known = read_known(known_path)
    new = [b for b in bad if b not in known]
    mended = sorted(known - set(bad))
    for b in new:
        print(f"new violation: {b}")
    for b in mended:
        print(f"mended, delete its line from {known_path}: {b}")
    print(f"layout: {len(bad)} violation(s) in {len(graph)} modules, {len(bad) - len(new)} of them known; "
          f"{len(new)} new, {len(mended)} mended", file=sys.stderr)
    return 1 if new or mended else 0


if __name__ == "__main__":
    sys.exit(main())
