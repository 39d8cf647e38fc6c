# The names docs/STATS.md documents, for the tests that hold them:
#   stats_doc.py DOC stats    every key path of `vxctl -j stats`
#   stats_doc.py DOC watch    every key path of `vxctl -j stats --watch`
#   stats_doc.py DOC metrics  every metric family of GET /metrics
#   stats_doc.py DOC keys     key paths of JSON read on stdin (a[] for arrays)
# Rows of a "| key |" or "| metric |" table give their backticked names
# (first cell); rows of a "| reason |" table are expanded into each pattern
# of the "Keys: `a.REASON`, ..." line above it.
import json, re, sys

SECTIONS = {"stats": "## `vxctl -j stats`", "watch": "## `vxctl -j stats --watch", "metrics": "## Prometheus metrics"}


def documented(doc, section):
    names, patterns, mode, inside = set(), [], None, False
    for line in open(doc, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.startswith(SECTIONS[section])
            continue
        if not inside:
            continue
        if line.startswith("Keys:"):
            patterns = re.findall(r"`([^`]+)`", line)
        elif line.startswith("| key ") or line.startswith("| metric "):
            mode = "names"
        elif line.startswith("| reason "):
            mode = "reasons"
        elif line.startswith("| `"):
            cell = line.split("|")[1]
            for name in re.findall(r"`([^`]+)`", cell):
                if mode == "names":
                    names.add(name)
                elif mode == "reasons":
                    names.update(p.replace("REASON", name) for p in patterns)
    return names


def keys(value, path="", out=None):
    out = set() if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            keys(v, path + ("." if path else "") + k, out)
    elif isinstance(value, list):
        for v in value:
            keys(v, path + "[]", out)
    else:
        out.add(path)
    return out


if __name__ == "__main__":
    doc, what = sys.argv[1], sys.argv[2]
    got = keys(json.load(sys.stdin)) if what == "keys" else documented(doc, what)
    print("\n".join(sorted(got)))
