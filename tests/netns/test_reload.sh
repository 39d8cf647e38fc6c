#!/bin/bash
# Reload: SIGHUP and `vxctl reload` re-read the config file and apply the
# difference; ports that did not change keep forwarding (a stream crosses
# the reload without a gap); a bad file is refused whole with FILE:LINE and
# changes nothing; one that fails half-way (a namespace not there) is
# undone whole; `show config` prints the running state in config syntax
# and feeding it back changes nothing.
#
#   vxt14-PID-vm1       vxt14-PID-h1                          vxt14-PID-h2       vxt14-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt14-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
CONF=$RIG_DIR/h1.conf
PY=/usr/bin/python3

# --- SIGHUP with the same file, under a stream: no gap ---------------------
rig_iperf 6 1 -i 0.5 >"$RIG_DIR/rate" &
ipid=$!
sleep 2
kill -HUP "$VXD_PID_1"
sleep 0.5
kill -HUP "$VXD_PID_1"
wait "$ipid" || fail "iperf3 across SIGHUP"
kill -0 "$VXD_PID_1" || fail "SIGHUP killed the daemon"
$PY - "$RIG_DIR/iperf.json" <<'PY' || fail "the stream had a gap across SIGHUP"
import json, sys
d = json.load(open(sys.argv[1]))
rates = [i["sum"]["bits_per_second"] / 1e9 for i in d["intervals"]]
print("  intervals (Gbit/s):", " ".join("%.2f" % r for r in rates))
sys.exit(0 if min(rates) > 0.05 else 1)
PY
vx 1 port show | grep -q "^vnet1 id 2 " || fail "SIGHUP re-created the tap: $(vx 1 port show)"
pass "SIGHUP with an unchanged file: daemon alive, same ports, no gap in the stream ($(cat "$RIG_DIR/rate") Gbit/s)"

# --- a change applied by `vxctl reload` ------------------------------------
rx_before=$(vx_stat 1 'port("vnet1")["rx_frames"]')
printf 'set gro-hold-us 200\nfdb add 02:00:00:00:14:01 vni 99 remote 198.51.100.2\n' >>"$CONF"
vx 1 reload >/dev/null || fail "reload of a good file"
vx 1 show knobs | grep -qx "gro-hold-us 200" || fail "reload did not set the knob"
vx 1 fdb show vni 99 | grep -q "02:00:00:00:14:01 .*static" || fail "reload did not add the static entry"
rx_after=$(vx_stat 1 'port("vnet1")["rx_frames"]')
[ "$rx_after" -ge "$rx_before" ] || fail "reload reset the unchanged tap's counters ($rx_before -> $rx_after)"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after reload"
pass "reload applied a knob and a static entry; the unchanged ports kept their state"

# --- a bad file is refused whole --------------------------------------------
vx 1 show config >"$RIG_DIR/before"
cp "$CONF" "$RIG_DIR/good.conf"
printf 'set gro-hold-us 300\nport add vx98 type vxlan vni 98 local 198.51.100.1 remote 198.51.100.2\nset gro maybe\n' >>"$CONF"
rc=0; vx 1 reload 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] || fail "a bad reload exited $rc"
grep -q "$CONF:7: .*maybe" "$RIG_DIR/err" || fail "bad reload not reported as FILE:LINE: $(cat "$RIG_DIR/err")"
vx 1 show config >"$RIG_DIR/after"
diff "$RIG_DIR/before" "$RIG_DIR/after" >/dev/null || fail "a refused reload changed the state: $(diff "$RIG_DIR/before" "$RIG_DIR/after")"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after a refused reload"
printf 'port del vnet1\n' >"$RIG_DIR/verb.conf"; cat "$RIG_DIR/verb.conf" >>"$CONF"
pass "a bad file was refused with FILE:LINE and changed nothing"

# --- show config round-trips ------------------------------------------------
vx 1 show config >"$CONF"
vx 1 reload >/dev/null || fail "reload of show config's own output: $(cat "$CONF")"
vx 1 show config >"$RIG_DIR/again"
diff "$CONF" "$RIG_DIR/again" >/dev/null || fail "show config does not round-trip"
vx 1 port show | grep -q "^vnet1 id 2 " || fail "round trip re-created the tap"
grep -q "^port add vx99 type vxlan" "$CONF" && grep -q "^set gro-hold-us 200$" "$CONF" &&
	grep -q "^fdb add 02:00:00:00:14:01 vni 99 remote 198.51.100.2$" "$CONF" || fail "show config is missing state: $(cat "$CONF")"
pass "show config prints the running state; feeding it back changes nothing"

# --- a reload that fails half-way is undone ------------------------------------
# The file parses, but its last line names a namespace that is not there:
# by then vx99 was re-added with another dstport, a knob and a static entry
# changed.  All of it must be undone.
vx 1 show config >"$RIG_DIR/before"
sed -e 's/^\(port add vx99 .*\)$/\1 dstport 4790/' -e 's/^set gro-hold-us 200$/set gro-hold-us 300/' \
	-e '/^fdb add 02:00:00:00:14:01/d' "$RIG_DIR/before" >"$CONF"
echo "port add vnet9 type tap vni 99 netns $P-no-such-ns" >>"$CONF"
last=$(wc -l <"$CONF")
rc=0; vx 1 reload 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] || fail "a reload failing half-way exited $rc"
grep -q "$CONF:$last: .*reload undone" "$RIG_DIR/err" || fail "the failed step or the undo not reported: $(cat "$RIG_DIR/err")"
vx 1 show config | diff "$RIG_DIR/before" - >/dev/null || fail "the failed reload was not undone: $(vx 1 show config | diff "$RIG_DIR/before" -)"
vx 1 port show | grep -q "^vx99 .*dstport 4789" || fail "vx99 not back on dstport 4789: $(vx 1 port show)"
vx 1 port show | grep -q "^vnet1 id 2 " || fail "the undo touched the tap"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after an undone reload"
cp "$RIG_DIR/before" "$CONF"
pass "a reload failing at line $last was undone whole: $(sed 's/.*; //' "$RIG_DIR/err" | head -c 80)"

# --- save writes it ------------------------------------------------------------
vx 1 fdb add 02:00:00:00:14:02 vni 99 remote 198.51.100.2 || fail "fdb add at run time"
vx 1 save | grep -q "saved to $CONF" || fail "save to the config file"
grep -q "^fdb add 02:00:00:00:14:02 vni 99 remote 198.51.100.2$" "$CONF" || fail "save did not write the run-time change"
vx 1 save "$RIG_DIR/copy.conf" >/dev/null || fail "save FILE"
diff <(grep -v '^#' "$RIG_DIR/copy.conf") <(vx 1 show config) >/dev/null || fail "save FILE differs from show config"
rc=0; vx 1 save relative.conf 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "save of a relative path was not refused ($rc)"
vx 1 reload >/dev/null || fail "reload of the saved file"
vx 1 show config | diff - <(grep -v '^#' "$CONF") >/dev/null || fail "reload of the saved file changed something"
vx 1 port show | grep -q "^vnet1 id 2 " || fail "reload of the saved file re-created the tap"
vx 1 fdb del 02:00:00:00:14:02 vni 99 >/dev/null
grep -v "02:00:00:00:14:02" "$CONF" >"$RIG_DIR/x" && cp "$RIG_DIR/x" "$CONF"
pass "save writes the running state (run-time changes included) to the config file or FILE; a relative FILE is refused"

# --- removing lines restores defaults and removes entries ---------------------
grep -v "gro-hold-us\|^fdb add" "$CONF" >"$RIG_DIR/less"; cp "$RIG_DIR/less" "$CONF"
kill -HUP "$VXD_PID_1"
for i in $(seq 50); do vx 1 show knobs | grep -qx "gro-hold-us 0" && break; sleep 0.1; done
vx 1 show knobs | grep -qx "gro-hold-us 0" || fail "a knob the file no longer sets did not return to its default"
vx 1 fdb show vni 99 | grep -q "02:00:00:00:14:01" && fail "a static entry the file no longer has is still there"
printf 'port del vnet1\n' >>"$CONF"
rc=0; vx 1 reload 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "does not belong in a config file" "$RIG_DIR/err" || fail "a 'port del' line was not refused: $(cat "$RIG_DIR/err")"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping at the end"
pass "lines removed from the file: knob back to its default, static entry gone; verbs that are not state refused"
