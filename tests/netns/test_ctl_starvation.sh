#!/bin/bash
# 100 half-open control clients (half connect and send nothing, half send
# half a request header) do not lock the operator out: over the cap of 64
# the newcomers are answered "vxswitchd: too many control clients (64), try
# again" instead of a reset; once a client has stalled 200 ms a newcomer
# takes its slot, so `vxctl stats` answers each of several times while
# they are held, as fast as another daemon's with no stuck client (within
# the 200 ms a slot may be held); after 2 s the stalled ones are closed
# as timed out; the counters in `vxctl stats` (text and -j) say all that;
# and a ping between the VMs loses nothing meanwhile.
#
#   vxt21-PID-vm1 vnet1 --- vxswitchd h1 (100 stuck clients on its socket)
#                                 | u1 ===== u2
#   vxt21-PID-vm2 vnet2 --- vxswitchd h2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt21-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before the test"
SOCK=$RIG_DIR/h1.sock

# Forwarding goes on for the whole test.
nvm1 ping -c 80 -i 0.1 -W 1 "$(vm_addr4 2)" > "$RIG_DIR/ping.txt" 2>&1 &
PING=$!
RIG_PIDS="$RIG_PIDS $PING"

# The stuck clients: connect, send nothing or half a header, never read
# until told to (SIGUSR1), then report what each was sent, and exit.
cat > "$RIG_DIR/holder.py" <<'EOF'
import signal, socket, struct, sys, time
path, n = sys.argv[1], int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    if i % 2:
        try:
            s.send(struct.pack("=IHH", 0x76786331, 0, 1))  # half a header
        except (BrokenPipeError, ConnectionResetError):
            pass  # already turned away (the cap) or evicted: counted below as eof
    socks.append(s)
print("ready", flush=True)
done = []
signal.signal(signal.SIGUSR1, lambda *a: done.append(1))
while not done:
    time.sleep(0.05)
kinds = {}
for s in socks:
    s.setblocking(False)
    try:
        data = s.recv(4096)
    except BlockingIOError:
        data = None
    except ConnectionResetError:
        data = b""
    key = "held" if data is None else "eof" if not data else data[12:].decode().strip()
    kinds[key] = kinds.get(key, 0) + 1
for k, v in sorted(kinds.items()):
    print("%d %s" % (v, k), flush=True)
EOF
/usr/bin/python3 "$RIG_DIR/holder.py" "$SOCK" 100 > "$RIG_DIR/holder.txt" 2>&1 &
HOLDER=$!
RIG_PIDS="$RIG_PIDS $HOLDER"
for i in $(seq 500); do
	grep -q ready "$RIG_DIR/holder.txt" 2>/dev/null && break
	sleep 0.02
done
grep -q ready "$RIG_DIR/holder.txt" || fail "holder did not connect: $(cat "$RIG_DIR/holder.txt")"

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# A reference in the same minute: `vxctl stats` of h2, which has no stuck
# client.  A call that waited for a stalled client's slot takes at least
# that plus the 200 ms stall limit; so each call to h1 must take less
# than the slowest reference call + 150 ms.  (Fixed bounds of 100 ms
# failed at 111 and 168 ms with the machine busy: the scheduler, not a
# starved client.)
REF_US=""
for i in $(seq 5); do
	t0=$(now_us)
	vx 2 stats > /dev/null || fail "reference vxctl stats of h2"
	t1=$(now_us)
	REF_US="$REF_US $(( t1 - t0 ))"
done
ref_max=$(echo $REF_US | tr ' ' '\n' | sort -n | tail -1)
ref_med=$(echo $REF_US | tr ' ' '\n' | sort -n | sed -n 3p)
bound=$(( ref_max + 150000 ))
echo "   reference (h2, no stuck client): median $(( ref_med / 1000 )) ms, max $(( ref_max / 1000 )) ms; bound $(( bound / 1000 )) ms"

# Right away, while all 64 slots are young: either answered, or turned
# away with the one line and exit 2 (not a reset); quickly either way.
t0=$(now_us); rc=0
vx 1 stats > /dev/null 2> "$RIG_DIR/err" || rc=$?
t1=$(now_us)
if [ "$rc" = 2 ]; then
	[ "$(cat "$RIG_DIR/err")" = "vxswitchd: too many control clients (64), try again" ] ||
		fail "turned away without the line: $(cat "$RIG_DIR/err")"
	echo "   first call turned away with the line in $(( (t1 - t0) / 1000 )) ms"
else
	[ "$rc" = 0 ] || fail "first vxctl stats: exit $rc: $(cat "$RIG_DIR/err")"
fi
[ $(( t1 - t0 )) -lt "$bound" ] || fail "first vxctl took $(( (t1 - t0) / 1000 )) ms (bound $(( bound / 1000 )) ms)"

# Past the 200 ms a stalled client may hold a slot against a newcomer:
# every call is answered, each within the bound, and the median of the 8
# within 100 ms of the reference's.
sleep 0.25
LAT=""
ALL_US=""
for i in $(seq 8); do
	t0=$(now_us)
	vx 1 stats > "$RIG_DIR/stats.txt" 2> "$RIG_DIR/err" || fail "vxctl stats $i: $(cat "$RIG_DIR/err")"
	t1=$(now_us)
	us=$(( t1 - t0 ))
	[ "$us" -lt "$bound" ] || fail "vxctl stats $i took $(( us / 1000 )) ms (bound $(( bound / 1000 )) ms): as long as a stalled client may hold a slot"
	LAT="$LAT $(( us / 1000 )).$(( us % 1000 / 100 ))"
	ALL_US="$ALL_US $us"
	sleep 0.1
done
median_us=$(echo $ALL_US | tr ' ' '\n' | sort -n | sed -n 4p)
[ "$median_us" -lt $(( ref_med + 100000 )) ] || fail "vxctl stats: median $(( median_us / 1000 )) ms over 8 calls (ms:$LAT; reference median $(( ref_med / 1000 )) ms)"
pass "vxctl stats answered 8 times with 100 stuck clients held, ms:$LAT"
grep -q "^control: clients [0-9]*/64 accepted" "$RIG_DIR/stats.txt" || fail "no control line: $(grep control "$RIG_DIR/stats.txt")"
grep -q "turned away: too many clients [1-9]" "$RIG_DIR/stats.txt" || fail "no refusals in: $(grep -A2 '^control' "$RIG_DIR/stats.txt")"
[ "$(vx_stat 1 'd["control"]["evicted"] >= 1')" = True ] || fail "evictions: $(vx_stat 1 'd["control"]')"
[ "$(vx_stat 1 'd["control"]["refused_full"] > 0')" = True ] || fail "refusals: $(vx_stat 1 'd["control"]')"

# The rest time out after 2 s of holding nothing but half a header.
sleep 2.1
vx_stat 1 'd["control"]' > "$RIG_DIR/control.txt"
[ "$(vx_stat 1 'd["control"]["timed_out"] > 0 and d["control"]["clients"] <= 1')" = True ] ||
	fail "stalled clients not timed out: $(cat "$RIG_DIR/control.txt")"
[ "$(vx_stat 1 'd["control"]["errors"] + d["control"]["hangups"]')" = 0 ] ||
	fail "errors or hangups counted: $(cat "$RIG_DIR/control.txt")"
pass "counters: $(cat "$RIG_DIR/control.txt")"

# Each stuck client was told why it was closed, none was left held.
kill -USR1 "$HOLDER"
wait "$HOLDER" || fail "holder: $(cat "$RIG_DIR/holder.txt")"
grep -q "too many control clients (64), try again" "$RIG_DIR/holder.txt" || fail "holder: $(cat "$RIG_DIR/holder.txt")"
grep -q "no complete request within 2000 ms, closed" "$RIG_DIR/holder.txt" || fail "holder: $(cat "$RIG_DIR/holder.txt")"
grep -q " held$" "$RIG_DIR/holder.txt" && fail "clients still held: $(cat "$RIG_DIR/holder.txt")"
pass "the stuck clients were told: $(grep -v ready "$RIG_DIR/holder.txt" | tr '\n' ';')"

wait "$PING" || true
grep -q " 0% packet loss" "$RIG_DIR/ping.txt" || fail "ping lost packets: $(tail -2 "$RIG_DIR/ping.txt")"
pass "forwarding unaffected: $(grep 'packet loss' "$RIG_DIR/ping.txt")"
