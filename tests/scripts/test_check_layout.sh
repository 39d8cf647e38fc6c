#!/bin/bash
# scripts/check-layout.py on small made-up trees: each rule fires on its
# violation, a clean tree passes, and the known list ratchets both ways.
set -eu
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
check() { scripts/check-layout.py "$T/src" "$T/known" >"$T/out" 2>&1; }
fail() { echo "FAIL: $*"; cat "$T/out"; exit 1; }

tree() { # a clean tree
	rm -rf "$T/src"; mkdir -p "$T/src"/{ctl,control,dp/user,switch,util}
	printf '#include "util/log.h"\n' > "$T/src/switch/fdb.c"
	printf '#include "dp/user/worker.h"\n#include "ctl/ctl_cmd.h"\n' > "$T/src/control/ports.c"
	printf '#include "switch/fdb.h"\n' > "$T/src/dp/user/worker.c"
	: > "$T/known"
}
tree; check || fail "a clean tree is refused"
tree; echo '#include "ctl/ctl_cmd.h"' >> "$T/src/dp/user/worker.c"
check && fail "rule 1 (datapath includes ctl/)"; grep -q 'rule 1' "$T/out" || fail "rule 1 not named"
tree; echo '#include "ctl/ctl_flower.h"' >> "$T/src/switch/fdb.c"
check && fail "rule 2 (switch/ includes ctl/)"; grep -q 'rule 2' "$T/out" || fail "rule 2 not named"
tree; echo '#include "control/vxd.h"' >> "$T/src/util/log.c"
check && fail "rule 3 (a lower layer includes control/)"; grep -q 'rule 3' "$T/out" || fail "rule 3 not named"
tree; echo '#include "dp/user/worker_internal.h"' >> "$T/src/control/ports.c"
check && fail "rule 4 (control includes a datapath's _internal.h)"; grep -q 'rule 4' "$T/out" || fail "rule 4 not named"
tree; printf '#include "control/b.h"\n' > "$T/src/control/a.c"; printf '#include "control/a.h"\n' > "$T/src/control/b.c"
: > "$T/src/control/a.h"; : > "$T/src/control/b.h"
check && fail "rule 5 (a circle)"; grep -q 'rule 5.*a -> b' "$T/out" || fail "rule 5 not named"
# x.c, x.h and x_internal.h are one module: no circle among them
tree; printf '#include "control/a_internal.h"\n' > "$T/src/control/a.c"; printf '#include "control/a.h"\n' > "$T/src/control/a_internal.h"
check || fail "x_internal.h is taken for a module of its own"
# the ratchet: a known violation passes, a mended one must leave the list
tree; echo '#include "ctl/ctl_flower.h"' >> "$T/src/switch/fdb.c"
check || true; grep 'new violation' "$T/out" | sed 's/^new violation: //' > "$T/known"
check || fail "a listed violation is refused"
tree; grep -q . "$T/known" || echo "src/switch/fdb.c: rule 2: switch/ includes ctl/ctl_flower.h" > "$T/known"
check && fail "a mended violation left in the list passes"; grep -q 'mended' "$T/out" || fail "mended not named"
echo "test_check_layout: ok"
