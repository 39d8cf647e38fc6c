#!/bin/bash
# Many workers (dp/user/worker.h, placement.h), with 1, 2 and 4 workers per
# host (4: more workers than this machine's cores):
#   - the daemon runs that many workers; each tap has that many queues
#     (IFF_MULTI_QUEUE) and each vxlan socket that many reuseport sockets;
#   - four iperf3 streams each way complete, and nothing is reordered: the
#     senders' TCP reordering counters (nstat TcpExtTCPSACKReorder,
#     TCPTSReorder, TCPRenoReorder) stay 0;
#   - flows spread: with 2+ workers, more than one worker reads traffic on
#     each host (tap queues on the sending side, reuseport steering on the
#     receiving side);
#   - one stream stays on one worker per host, both ways (its data and its
#     ACKs: the tap's steering program and the reuseport program share one
#     symmetric hash), and port show says the tap is steered;
#   - counters add up: the frames each worker read sum to the frames the
#     ports received;
#   - learning works from every worker: both VMs' MACs are in each FDB and
#     known unicast is not flooded once learned;
#   - ports and flower rules are added and deleted under traffic;
#   - an existing single-queue tap is attached and read by one worker.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt71-$$"
trap rig_cleanup EXIT

REORDER='TcpExtTCPSACKReorder|TcpExtTCPTSReorder|TcpExtTCPRenoReorder'

# nstat_sum NS PATTERN: the sum of the matching absolute counters.
nstat_sum() {
	n "$1" nstat -az 2>/dev/null | awk -v re="^($2)\$" '$1 ~ re { s += $2 } END { print s + 0 }'
}

# workers_reading SIDE MIN: how many workers read at least MIN frames.
workers_reading() {
	vx_stat "$1" "sum(1 for w in d['workers']['list'] if w['rx_frames'] >= $2)"
}

# parallel SECONDS FROM_SIDE STREAMS: iperf3 -P STREAMS; prints Gbit/s.
parallel() {
	rig_iperf "$1" "$2" -P "$3"
}

check_workers() {
	local w=$1
	[ "$(vx_stat 1 "d['workers']['n']")" = "$w" ] || fail "$w workers asked, $(vx_stat 1 "d['workers']['n']") run"
	local socks
	socks=$(nh1 ss -Huan 'sport = :4789' | wc -l)
	[ "$socks" = "$w" ] || fail "$w workers: $socks UDP sockets on :4789 (one per worker expected)"
	local queues
	queues=$(vx 1 -j port show | /usr/bin/python3 -c '
import json, sys
print([p for p in json.load(sys.stdin) if p["name"] == "vnet1"][0]["queues"])')
	[ "$queues" = "$w" ] || fail "$w workers: vnet1 has $queues queues"

	local r1 r2 g12 g21 ofo
	r1=$(nstat_sum "$VM1" "$REORDER"); r2=$(nstat_sum "$VM2" "$REORDER")
	ofo=$(nstat_sum "$VM2" TcpExtTCPOFOQueue)
	g12=$(parallel 4 1 4) || fail "$w workers: iperf3 -P 4 vm1->vm2"
	g21=$(parallel 4 2 4) || fail "$w workers: iperf3 -P 4 vm2->vm1"
	local d1 d2 dofo
	d1=$(( $(nstat_sum "$VM1" "$REORDER") - r1 ))
	d2=$(( $(nstat_sum "$VM2" "$REORDER") - r2 ))
	dofo=$(( $(nstat_sum "$VM2" TcpExtTCPOFOQueue) - ofo ))
	echo "  $w workers: 4 streams vm1->vm2 $g12 Gbit/s, vm2->vm1 $g21 Gbit/s; reordering seen by the senders: $d1 / $d2; out-of-order queued at vm2: $dofo"
	[ "$d1" = 0 ] && [ "$d2" = 0 ] || fail "$w workers: TCP saw reordering ($d1 vm1, $d2 vm2)"

	local side sum_w sum_p
	for side in 1 2; do
		sum_w=$(vx_stat "$side" "sum(w['rx_frames'] for w in d['workers']['list'])")
		sum_p=$(vx_stat "$side" "sum(p['rx_frames'] for p in d['ports'])")
		[ "$sum_w" = "$sum_p" ] || fail "$w workers: h$side workers read $sum_w frames, ports received $sum_p"
		if [ "$w" -ge 2 ]; then
			local busy
			busy=$(workers_reading "$side" 100)
			echo "  h$side: frames read per worker: $(vx_stat "$side" "[w['rx_frames'] for w in d['workers']['list']]")"
			[ "$busy" -ge 2 ] || fail "$w workers: on h$side only $busy worker(s) read traffic: flows were not spread"
		fi
	done

	[ "$(vx_port 1 vnet1 steering)" = "$([ "$w" -ge 2 ] && echo flow || echo none)" ] ||
		fail "$w workers: vnet1 steering is $(vx_port 1 vnet1 steering)"
	if [ "$w" -ge 2 ]; then
		# One stream: its data and its ACKs are one worker's on each
		# host (the tap's steering and the reuseport program use one
		# symmetric hash); iperf3's control connection is a few frames.
		local before1 before2 one share
		before1=$(vx_stat 1 "[w['rx_frames'] for w in d['workers']['list']]")
		before2=$(vx_stat 2 "[w['rx_frames'] for w in d['workers']['list']]")
		one=$(rig_iperf 2 1) || fail "$w workers: one iperf3 stream"
		for side in 1 2; do
			local before=$before1; [ "$side" = 2 ] && before=$before2
			share=$(vx_stat "$side" "(lambda a, b: '%.3f' % (max(x - y for x, y in zip(a, b)) / max(1, sum(a) - sum(b))))([w['rx_frames'] for w in d['workers']['list']], $before)")
			echo "  $w workers, one stream ($one Gbit/s): h$side's busiest worker read $share of the frames"
			/usr/bin/python3 -c "import sys; sys.exit(float('$share') < 0.95)" ||
				fail "$w workers: one stream's frames on h$side split over workers (busiest $share)"
		done
	fi

	local mac1 mac2
	mac1=$(nvm1 cat /sys/class/net/vnet1/address); mac2=$(nvm2 cat /sys/class/net/vnet2/address)
	for side in 1 2; do
		vx "$side" fdb show | grep -qi "$mac1" || fail "$w workers: h$side FDB lacks vm1's $mac1"
		vx "$side" fdb show | grep -qi "$mac2" || fail "$w workers: h$side FDB lacks vm2's $mac2"
	done
	local unk
	unk=$(vx_stat 2 "d['switch']['unknown_unicast']")
	[ "$unk" -lt 50 ] || fail "$w workers: $unk unknown-unicast floods on h2: learning did not reach every worker"
	pass "$w workers: counts, no reordering, spread, counters add up, FDB learned from every worker ($unk unknown-unicast floods)"
}

for W in 1 2 4; do
	rig_create 4
	RIG_VXD_ARGS="--workers $W" rig_vxswitchd 1
	RIG_VXD_ARGS="--workers $W" rig_vxswitchd 2
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "$W workers: ping"
	check_workers "$W"
	if [ "$W" = 1 ]; then
		# poll-us: a worker that just forwarded polls instead of
		# sleeping (its polls counter moves), and an idle switch
		# uses no CPU once the poll time is over.
		polls0=$(vx_stat 1 "d['workers']['list'][0]['polls']")
		nvm1 ping -c 20 -i 0.02 -W 1 "$(vm_addr4 2)" >/dev/null
		[ "$(vx_stat 1 "d['workers']['list'][0]['polls']")" = "$polls0" ] || fail "poll-us 0: the worker polled"
		vx 1 set poll-us 200 >/dev/null
		nvm1 ping -c 20 -i 0.02 -W 1 "$(vm_addr4 2)" >/dev/null
		polls=$(vx_stat 1 "d['workers']['list'][0]['polls'] - $polls0")
		hits=$(vx_stat 1 "d['workers']['list'][0]['poll_hits']")
		[ "$polls" -gt 20 ] && [ "$hits" -gt 0 ] || fail "poll-us 200: $polls polls, $hits with traffic"
		sleep 0.5
		c0=$(pid_cpu_us "$VXD_PID_1"); sleep 2; c1=$(pid_cpu_us "$VXD_PID_1")
		idle=$(( (c1 - c0) / 2 ))
		[ "$idle" -lt 50000 ] || fail "poll-us 200: idle daemon used $idle us of CPU per second"
		vx 1 set poll-us 0 >/dev/null
		pass "poll-us 200: $polls polls ($hits found traffic) during 20 pings; idle afterwards: $idle us CPU/s"
	fi
	if [ "$W" = 2 ]; then
		# Ports and rules change under traffic.
		nvm1 iperf3 -s -1 -D -B "$(vm_addr4 1)" -p 5202 >/dev/null 2>&1
		sleep 0.2
		nvm2 iperf3 -c "$(vm_addr4 1)" -p 5202 -t 6 -P 2 -J > "$RIG_DIR/churn.json" 2>&1 &
		churn=$!
		for i in $(seq 15); do
			vx 1 port add extra$i type tap vni 99 >/dev/null || fail "port add under traffic"
			vx 1 filter add dev vnet1 ingress pref $((10 + i)) protocol ip flower ip_proto udp dst_port $((4000 + i)) action drop >/dev/null ||
				fail "filter add under traffic"
			vx 1 filter del dev vnet1 ingress pref $((10 + i)) >/dev/null || fail "filter del under traffic"
			vx 1 port del extra$i >/dev/null || fail "port del under traffic"
		done
		wait "$churn" || { cat "$RIG_DIR/churn.json" >&2; fail "iperf3 under port and rule churn"; }
		g=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' "$RIG_DIR/churn.json")
		kill -0 "$VXD_PID_1" || fail "h1's daemon died under churn"
		pass "2 workers: 15 ports and 15 rules added and deleted while iperf3 ran ($g Gbit/s)"

		# An existing single-queue tap: one queue, read by one worker.
		n "$H1" ip tuntap add mode tap name sq1
		vx 1 port add sq1 type tap vni 99 >/dev/null || fail "attach to a single-queue tap"
		q=$(vx 1 -j port show | /usr/bin/python3 -c '
import json, sys
print([p for p in json.load(sys.stdin) if p["name"] == "sq1"][0]["queues"])')
		[ "$q" = 1 ] || fail "single-queue tap opened with $q queues"
		n "$H1" ip link set sq1 up
		n "$H1" ip addr add 203.0.113.9/24 dev sq1
		n "$H1" ping -c 3 -i 0.1 -W 1 -I sq1 203.0.113.10 >/dev/null 2>&1 || true
		rx=$(vx_stat 1 "port('sq1')['rx_frames']")
		[ "$rx" -ge 3 ] || fail "single-queue tap: $rx frames read"
		vx 1 port del sq1 >/dev/null
		pass "an existing single-queue tap is attached with 1 queue and read ($rx frames)"
	fi
	rig_cleanup
	rig_init "vxt71-$$"
done
