#!/bin/bash
# vxctl against a live vxswitchd: the control plane end to end.
#
#   vxctl ──unix socket (0600, in a private temp dir)──> vxswitchd (no ports)
#
# Checks exit codes scripts rely on (0 ok, 1 refused, 2 unreachable), one-line
# errors naming the word, JSON that parses, the socket mode, config files
# (FILE:LINE error stops the start; good lines are applied), and that a
# client sending garbage does not hurt the daemon.  No namespaces, no taps.
set -eu
BUILD=${BUILD:-build}
VXSWITCHD=${VXSWITCHD:-$BUILD/vxswitchd}
VXCTL=${VXCTL:-$BUILD/vxctl}
PY=/usr/bin/python3
D=$(mktemp -d /tmp/vxctl-test.XXXX)
SOCK=$D/vxswitchd.sock
PID=""

cleanup() {
	if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
	rm -rf "$D"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
vx() { "$VXCTL" --socket "$SOCK" "$@"; }

# expect STATUS CMD...: run, check the exit status, keep stdout/stderr.
expect() {
	local want=$1; shift
	local rc=0
	"$@" >"$D/out" 2>"$D/err" || rc=$?
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, want $want (stderr: $(cat "$D/err"))"
}
json_ok() { $PY -c 'import json,sys; json.load(sys.stdin)' <"$D/out" || fail "invalid JSON from: $*"; }

start_daemon() {
	"$VXSWITCHD" --datapath user -q -s "$SOCK" "$@" >"$D/daemon.log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		kill -0 "$PID" 2>/dev/null || fail "vxswitchd exited: $(cat "$D/daemon.log")"
		sleep 0.05
	done
	fail "vxswitchd did not create $SOCK"
}

# --- a bad config line stops the start, naming FILE:LINE and the word -------
printf '# test\nset gro off\nset gro maybe\n' >"$D/bad.conf"
rc=0
"$VXSWITCHD" -q -s "$SOCK" -c "$D/bad.conf" >"$D/daemon.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "vxswitchd started with a bad config"
grep -q "$D/bad.conf:3: word 3 \"maybe\": bad value for \"gro\", expected on or off" "$D/daemon.log" ||
	fail "bad config error not reported as FILE:LINE: $(cat "$D/daemon.log")"
[ ! -S "$SOCK" ] || fail "socket left behind by a refused start"

# --- nothing listening: exit 2; a parse error needs no daemon: exit 1 --------
expect 2 vx version
grep -q "cannot reach vxswitchd at $SOCK" "$D/err" || fail "unreachable message: $(cat "$D/err")"
expect 1 vx port add tap0 type tap vni 16777216
[ "$(cat "$D/err")" = 'vxctl: word 7 "16777216": "vni" out of range, expected 0..16777215' ] ||
	fail "parse error line: $(cat "$D/err")"

# --- a good config is applied --------------------------------------------------
printf '# knobs\n\nset gro off\n  set gro-hold-us 100\n' >"$D/good.conf"
start_daemon -c "$D/good.conf"
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "socket mode $(stat -c %a "$SOCK"), want 600"

expect 0 vx -j show knobs
json_ok show knobs
$PY -c 'import json,sys; k=json.load(sys.stdin); assert k["gro"] is False and k["gro-hold-us"] == 100, k' <"$D/out" ||
	fail "config not applied: $(cat "$D/out")"
expect 0 vx set gro on
expect 0 vx show knobs
grep -qx 'gro on' "$D/out" || fail "set gro on not shown: $(cat "$D/out")"

# --- every read-only verb answers, in text and in valid JSON ----------------
for cmd in "version" "port show" "fdb show" "fdb show vni 99" "stats" "diagnose" "show knobs"; do
	expect 0 vx $cmd
	expect 0 vx -j $cmd
	json_ok "$cmd"
done

# --- refused by the daemon: exit 1, one line, nothing changed -------------------
expect 1 vx port del nosuch
[ "$(wc -l <"$D/err")" = 1 ] || fail "refusal is not one line: $(cat "$D/err")"
expect 1 vx stats port nosuch

# --- a garbage client is dropped; the daemon keeps serving ---------------------
$PY - "$SOCK" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
s.settimeout(5)
assert s.recv(100) == b"", "server answered garbage instead of closing"
PYEOF
expect 0 vx version

# --- tc's global options (cli/vxctl_opts.h) --------------------------------------
# The socket: --socket or $VXCTL_SOCKET; the old -s PATH says what to type.
expect 0 env VXCTL_SOCKET="$SOCK" "$VXCTL" version
expect 2 env VXCTL_SOCKET="$D/none.sock" "$VXCTL" version
grep -q "cannot reach vxswitchd at $D/none.sock" "$D/err" || fail "VXCTL_SOCKET not used: $(cat "$D/err")"
expect 0 env VXCTL_SOCKET="$D/none.sock" "$VXCTL" -socket "$SOCK" version
expect 1 "$VXCTL" -s "$SOCK" version
grep -qF -- "type --socket $SOCK" "$D/err" || fail "old -s PATH: $(cat "$D/err")"
# -s is -statistics: counters of filter show and get only.
expect 1 vx -s port show
grep -q 'filter show and get only' "$D/err" || fail "-s port show: $(cat "$D/err")"
for o in -d -details -br -brief "-n vm1" "-netns vm1" -p; do
	expect 1 vx $o show knobs
	grep -q 'refused\|give -json' "$D/err" || fail "vxctl $o: $(cat "$D/err")"
done
# -j -p: iproute2's pretty layout, the same JSON.
expect 0 vx -j show knobs
$PY -c 'import json,sys; json.load(sys.stdin)' <"$D/out"
cp "$D/out" "$D/compact"
expect 0 vx -j -p show knobs
json_ok "-j -p show knobs"
[ "$(sed -n 2p "$D/out")" = '    "gro": true,' ] || fail "-j -p layout: $(head -3 "$D/out")"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
	"$D/compact" "$D/out" || fail "-j -p changed the JSON"
# -f -b: tc's batch, each line on its own, every failure named, exit 1.
printf 'set gro off\nport del nosuch\n# c\n\nset gro maybe\nset gro-hold-us 7\n' >"$D/force.txt"
expect 1 vx -f -b "$D/force.txt"
[ "$(grep -c '^Command failed ' "$D/err")" = 2 ] || fail "-f -b failures: $(cat "$D/err")"
grep -qx "Command failed $D/force.txt:2" "$D/err" || fail "-f -b line 2: $(cat "$D/err")"
grep -qx "Command failed $D/force.txt:5" "$D/err" || fail "-f -b line 5: $(cat "$D/err")"
grep -q 'word 3 "maybe"' "$D/err" || fail "-f -b reason: $(cat "$D/err")"
expect 0 vx -j show knobs
$PY -c 'import json,sys; k=json.load(sys.stdin); assert k["gro"] is False and k["gro-hold-us"] == 7, k' \
	<"$D/out" || fail "-f -b did not go on after its failures: $(cat "$D/out")"
printf 'set gro on\nset gro-hold-us 0\n' | vx -force -batch - >"$D/out" 2>"$D/err" ||
	fail "-force -batch - failed: $(cat "$D/err")"
expect 0 vx show knobs
grep -qx 'gro on' "$D/out" || fail "-force -batch - not applied: $(cat "$D/out")"

# --- --help lists the options and every verb ------------------------------------
expect 0 "$VXCTL" --help
for w in -s -j -p -b -f --socket VXCTL_SOCKET "port add" "port del" "port show" "fdb show" "fdb add" "fdb del" "fdb flush" \
	 stats set "show knobs" diagnose version; do
	grep -q -- "$w" "$D/out" || fail "--help does not mention '$w'"
done
expect 0 "$VXSWITCHD" --help
for w in --config --socket --quiet --pool --fdb-size; do
	grep -q -- "$w" "$D/out" || fail "vxswitchd --help does not mention '$w'"
done
# Bad option values stop the start with the option, the value and the range.
expect 2 "$VXSWITCHD" -s "$D/never.sock" --fdb-size 12abc
grep -q -- '--fdb-size "12abc": expected a number 1..' "$D/err" || fail "bad --fdb-size: $(cat "$D/err")"
expect 2 "$VXSWITCHD" -s "$D/never.sock" -p 0
grep -q -- '--pool "0": expected a number 64..' "$D/err" || fail "bad --pool: $(cat "$D/err")"
echo "test_vxctl: ok"
