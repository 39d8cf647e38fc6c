#!/bin/bash
# vxswitchd --metrics: GET /metrics scraped with curl passes `promtool check
# metrics`, has every family docs/STATS.md lists (and no other), counts a
# ping stream, and agrees with `vxctl -j stats` on quiet ports.  Half-open
# HTTP clients do not hold up a scrape, the control socket or forwarding,
# and are closed after the 5 s timeout.  Bad --metrics values and a taken
# port stop the start with a message.
#
#   vxt42-PID-vm1       vxt42-PID-h1                              vxt42-PID-h2       vxt42-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ================== u2 -- vxswitchd --> vnet2 192.0.2.2
#                       --metrics 198.51.100.1:9108
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt42-$$"
trap rig_cleanup EXIT
PY=/usr/bin/python3
command -v promtool >/dev/null || fail "promtool missing (scripts/install-deps.sh installs the prometheus package)"
URL=http://198.51.100.1:9108

rig_create 4
RIG_VXD_ARGS="--metrics 198.51.100.1:9108" rig_vxswitchd 1
rig_vxswitchd 2
nvm1 sysctl -qw net.ipv6.conf.vnet1.disable_ipv6=1
nvm2 sysctl -qw net.ipv6.conf.vnet2.disable_ipv6=1
scrape() { nh1 curl -sS --max-time 3 "$URL/metrics"; }
# metric NAME LABEL-SUBSTRING: the value of the one sample that matches
metric() { grep "^$1{.*$2" "$RIG_DIR/m" | awk '{print $2}'; }

# ---- format and families ---------------------------------------------------------
scrape > "$RIG_DIR/m" || fail "no answer at $URL/metrics"
promtool check metrics < "$RIG_DIR/m" > "$RIG_DIR/promtool" 2>&1 || { cat "$RIG_DIR/promtool" >&2; fail "promtool check metrics"; }
[ ! -s "$RIG_DIR/promtool" ] || { cat "$RIG_DIR/promtool" >&2; fail "promtool has remarks"; }
pass "promtool check metrics: no remarks on $(wc -l < "$RIG_DIR/m") lines"
grep '^# TYPE ' "$RIG_DIR/m" | awk '{print $3}' | sort > "$RIG_DIR/families"
[ "$(grep -c '^# HELP ' "$RIG_DIR/m")" = "$(wc -l < "$RIG_DIR/families")" ] || fail "a family without HELP"
$PY tests/netns/stats_doc.py docs/STATS.md metrics > "$RIG_DIR/documented"
diff -u "$RIG_DIR/documented" "$RIG_DIR/families" >&2 || fail "metric families and docs/STATS.md disagree"
pass "the $(wc -l < "$RIG_DIR/families") families are the ones docs/STATS.md lists"
ct=$(nh1 curl -sS -o /dev/null -w '%{content_type}' "$URL/metrics")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "content type $ct"
reasons=$(grep -c '^vxswitch_port_drops_total{port="vnet1"' "$RIG_DIR/m")
[ "$reasons" -ge 40 ] || fail "only $reasons drop reasons for vnet1"
pass "content type $ct; every drop reason of vnet1 present ($reasons)"

# ---- paths and methods -------------------------------------------------------------
code() { nh1 curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$URL/nope")" = 404 ] || fail "GET /nope not 404"
[ "$(code -X POST "$URL/metrics")" = 405 ] || fail "POST /metrics not 405"
[ "$(code "$URL/")" = 200 ] || fail "GET / not 200"
pass "/nope 404, POST 405, / 200"

# ---- a known stream ------------------------------------------------------------------
metric vxswitch_port_rx_packets_total 'port="vnet1"' > "$RIG_DIR/rx0"
nvm1 ping -c 20 -i 0.05 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
sleep 0.3
scrape > "$RIG_DIR/m"
rx=$(( $(metric vxswitch_port_rx_packets_total 'port="vnet1"') - $(cat "$RIG_DIR/rx0") ))
# 20 echo requests, and the ARP exchange before them (1 or 2 frames).
[ "$rx" -ge 20 ] && [ "$rx" -le 23 ] || fail "vnet1 received $rx frames for ping -c 20"
hc=$(metric vxswitch_port_tx_frame_size_bytes_count 'port="vnet1"')
tx=$(metric vxswitch_port_tx_packets_total 'port="vnet1"')
inf=$(metric vxswitch_port_tx_frame_size_bytes_bucket 'port="vnet1".*le="+Inf"')
[ "$hc" = "$tx" ] && [ "$inf" = "$tx" ] || fail "tx histogram count $hc, +Inf $inf, tx packets $tx"
pass "ping -c 20: vnet1 rx +$rx; tx histogram _count = +Inf bucket = tx packets ($tx)"

# ---- agreement with vxctl -j stats (quiet ports: no IPv6, ARP done) -------------------
agree() {
	vx 1 -j stats > "$RIG_DIR/j"
	scrape > "$RIG_DIR/m"
	$PY - "$RIG_DIR/j" "$RIG_DIR/m" <<'PYEOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
m = {}
for line in open(sys.argv[2]):
    g = re.match(r'(vxswitch_port_(?:(?:rx|tx)_(?:packets|bytes)|tap_queue_drops|socket_rx_(?:queue_drops|datagrams|gro_buffers|zero_csum))_total)\{port="([^"]+)".*\} (\d+)$', line)
    if g:
        m[(g.group(1), g.group(2))] = int(g.group(3))
bad = []
for p in d["ports"]:
    for key, name in (("rx_frames", "rx_packets"), ("rx_bytes", "rx_bytes"), ("tx_frames", "tx_packets"), ("tx_bytes", "tx_bytes")):
        got = m.get(("vxswitch_port_%s_total" % name, p["name"]))
        if got != p[key]:
            bad.append("%s %s: stats %d, metrics %s" % (p["name"], key, p[key], got))
    extra = [("vxswitch_port_tap_queue_drops_total", p["tap"]["kernel_tx_dropped"])] if "tap" in p else \
            [("vxswitch_port_socket_rx_%s_total" % k, p["vxlan"]["socket"]["rx_" + k])
             for k in ("queue_drops", "datagrams", "gro_buffers", "zero_csum")]
    for name, want in extra:
        if m.get((name, p["name"])) != want:
            bad.append("%s %s: stats %d, metrics %s" % (p["name"], name, want, m.get((name, p["name"]))))
print("; ".join(bad) if bad else "%d ports agree on rx/tx packets/bytes, kernel queue drops, socket datagrams/coalesced/zero-csum" % len(d["ports"]))
sys.exit(1 if bad else 0)
PYEOF
}
sleep 0.5
out=$(agree) || { sleep 1; out=$(agree); } || fail "$out"
pass "vxctl -j stats and /metrics: $out"

# ---- half-open clients -------------------------------------------------------------------
# Three clients send half a request and go silent, holding their connection.
nh1 $PY - 198.51.100.1 9108 "$RIG_DIR/slow.out" <<'PYEOF' &
import socket, sys, time
socks = []
for i in range(3):
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    s.sendall(b"GET /metr")
    socks.append(s)
t0 = time.time()
closed = 0
for s in socks:
    s.settimeout(15)
    try:
        closed += s.recv(100) == b""
    except OSError:
        closed += 1
open(sys.argv[3], "w").write("%d %.1f\n" % (closed, time.time() - t0))
PYEOF
slow=$!
sleep 0.3
t0=$(date +%s%N)
scrape > "$RIG_DIR/m" || fail "no scrape while 3 half-open clients wait"
t1=$(date +%s%N)
vx 1 stats >/dev/null || fail "control socket stuck behind half-open HTTP clients"
nvm1 ping -c 5 -i 0.05 -W 1 "$(vm_addr4 2)" >/dev/null || fail "forwarding stuck behind half-open HTTP clients"
pass "with 3 half-open clients: scrape in $(( (t1 - t0) / 1000000 )) ms, vxctl stats and ping fine"
[ $(( (t1 - t0) / 1000000 )) -lt 1000 ] || fail "the scrape waited for the half-open clients"
wait "$slow" || true
read -r closed secs < "$RIG_DIR/slow.out"
[ "$closed" = 3 ] || fail "only $closed of 3 half-open clients were closed"
pass "the half-open clients were closed by the server after ${secs} s (timeout 5 s)"

# ---- bad values and a taken port ------------------------------------------------------------
for bad in "198.51.100.1:0" "198.51.100.1" "localhost:9108" "198.51.100.1:70000" "[2001:db8:ff::1:9108"; do
	set +e
	msg=$(nh1 "$VXSWITCHD" --datapath user -s "$RIG_DIR/bad.sock" -q --metrics "$bad" 2>&1 < /dev/null)
	rc=$?
	set -e
	[ "$rc" = 1 ] && [[ $msg == "vxswitchd: --metrics $bad: "* ]] || fail "--metrics $bad: rc $rc, \"$msg\""
done
pass "5 bad --metrics values refused (exit 1), e.g. \"$(nh1 "$VXSWITCHD" --datapath user -s "$RIG_DIR/bad.sock" -q --metrics 198.51.100.1:0 2>&1)\""
set +e
msg=$(nh1 "$VXSWITCHD" --datapath user -s "$RIG_DIR/bad.sock" -q --metrics 198.51.100.1:9108 2>&1 < /dev/null)
rc=$?
set -e
[ "$rc" = 1 ] && echo "$msg" | grep -q "bind: Address already in use" || fail "port taken: rc $rc, \"$msg\""
pass "port taken: \"$msg\" (exit 1)"
# IPv6: brackets, served the same.
nh1 "$VXSWITCHD" --datapath user -s "$RIG_DIR/v6.sock" -q --metrics "[2001:db8:ff::1]:9109" > "$RIG_DIR/v6.log" 2>&1 &
v6=$!
RIG_PIDS="$RIG_PIDS $v6"
for i in $(seq 50); do [ -S "$RIG_DIR/v6.sock" ] && break; sleep 0.05; done
fams=$(nh1 curl -sS -g --max-time 3 "http://[2001:db8:ff::1]:9109/metrics" | grep -c '^# TYPE' || true)
kill "$v6" 2>/dev/null || true
[ "$fams" -ge 17 ] || { cat "$RIG_DIR/v6.log" >&2; fail "--metrics [2001:db8:ff::1]:9109: $fams families"; }
pass "--metrics [2001:db8:ff::1]:9109 serves its $fams families"
