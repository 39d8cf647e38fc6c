/* diagnose, what the traffic shows: remote VTEPs that never answer, small
 * frames to a VM and why, drops, a saturated worker.  Pure: see diag.h. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/diag.h"

/* ---- remote VTEPs ------------------------------------------------------------- */

/* ICMP port unreachable the vxlan port's socket got back for datagrams to
 * `v` (0: none, or not counted). */
static uint64_t diag_port_unreach(const struct diag_input *in, const struct vxd_vtep_stats *v)
{
	const struct vxlan_sock_stats *ss = &in->now->ports[v->port].sock;
	unsigned len = v->family == 6 ? 16 : 4;
	for (unsigned i = 0; i < ss->n_icmp_remotes && i < VXLAN_ICMP_REMOTES; i++) {
		const struct vxlan_icmp_remote *ir = &ss->icmp_remotes[i];
		if (ir->addr.family == (v->family == 6 ? 6 : 4) && memcmp(ir->addr.bytes, v->addr, len) == 0)
			return ir->port_unreach;
	}
	return 0;
}

static void diag_remotes(const struct diag_input *in, struct diag_report *r)
{
	const struct vxd_snapshot *s = in->now;
	for (unsigned i = 0; i < s->n_vteps && i < VXD_MAX_VTEPS; i++) {
		const struct vxd_vtep_stats *v = &s->vteps[i];
		if (v->port >= VXD_MAX_PORTS || in->ports[v->port].kind != DIAG_PORT_VXLAN)
			continue;
		if (v->tx_since_rx < DIAG_SILENT_MIN_FRAMES || !v->unanswered_ns ||
		    s->taken_ns < v->unanswered_ns + DIAG_SILENT_NS)
			continue;
		const struct diag_port *p = &in->ports[v->port];
		char addr[INET6_ADDRSTRLEN] = "?";
		inet_ntop(v->family == 6 ? AF_INET6 : AF_INET, v->addr, addr, sizeof(addr));
		uint64_t secs = (s->taken_ns - v->unanswered_ns) / 1000000000ull;
		char before[160] = "nothing ever came from it";
		if (v->rx_datagrams)
			snprintf(before, sizeof(before), "%" PRIu64 " datagrams came before that", v->rx_datagrams);
		uint64_t unreach = diag_port_unreach(in, v);
		if (unreach)
			snprintf(before + strlen(before), sizeof(before) - strlen(before),
				 "; %" PRIu64 " ICMP port unreachable came back from it: nothing listens on UDP %u there",
				 unreach, p->dst_port);
		struct diag_finding *f = diag_add(r, in, DIAG_REMOTE_SILENT, p->name,
			"%s: remote VTEP %s is silent: %" PRIu64 " frames sent to it in the last %" PRIu64 " s and "
			"no datagram of VNI %u back (%s): check its address, that it listens on UDP %u "
			"(dstport) and serves VNI %u, and any firewall between%s%s%s", p->name, addr, v->tx_since_rx,
			secs, p->vni, before, p->dst_port, p->vni,
			p->csum_unfinished ? "; our UDP checksums leave the veth " : "",
			p->csum_unfinished ? p->link_dev : "",
			p->csum_unfinished ? " unfinished, which a peer reading the wire raw (Open vSwitch userspace) "
					     "drops: udpcsum off, or ethtool -K it tx off" : "");
		diag_str(f, "remote", addr);
		diag_num(f, "sent", v->tx_since_rx);
		diag_num(f, "silent_s", secs);
		diag_num(f, "rx_datagrams", v->rx_datagrams);
		diag_num(f, "dstport", p->dst_port);
		diag_num(f, "vni", p->vni);
		diag_num(f, "csum_unfinished", p->csum_unfinished);
		diag_num(f, "icmp_port_unreach", unreach);
	}
}

/* ---- small frames to a VM ----------------------------------------------------- */

/* What the GRO counters and the sockets of one VNI say over a window. */
struct diag_merge {
	uint64_t segs, frames;           /* TCP segments with payload in, frames out of them */
	uint64_t flushes, timer_flushes, alone;
	enum gro_flush_reason top;       /* the most frequent flush reason */
	uint64_t dgrams, coalesced, dgram_bytes, zero_csum;
	uint64_t gap_ns;                 /* mean time between datagrams over the window (0: unknown) */
	bool udp_gro_refused, udp_gro_off;
};

static void diag_merge_stats(const struct diag_input *in, const struct vxd_snapshot *b, uint32_t vni,
			     struct diag_merge *m)
{
	const struct gro_stats *g = &in->now->gro, *gb = &b->gro;
	uint64_t other = diag_delta(g->passthrough[GRO_PASS_NOT_TCP], gb->passthrough[GRO_PASS_NOT_TCP]) +
			 diag_delta(g->passthrough[GRO_PASS_PURE_ACK], gb->passthrough[GRO_PASS_PURE_ACK]);
	uint64_t segs = diag_delta(g->segments_in, gb->segments_in);
	uint64_t frames = diag_delta(g->frames_out, gb->frames_out);
	m->segs = segs > other ? segs - other : 0;
	m->frames = frames > other ? frames - other : 0;
	uint64_t top = 0;
	for (unsigned k = 0; k < GRO_FLUSH_REASON_COUNT; k++) {
		uint64_t n = diag_delta(g->flushes[k], gb->flushes[k]);
		m->flushes += n;
		if (n > top)
			top = n, m->top = (enum gro_flush_reason)k;
	}
	m->timer_flushes = diag_delta(g->flushes[GRO_FLUSH_TIMEOUT], gb->flushes[GRO_FLUSH_TIMEOUT]) +
			   diag_delta(g->flushes[GRO_FLUSH_BATCH_END], gb->flushes[GRO_FLUSH_BATCH_END]);
	m->alone = diag_delta(g->passthrough[GRO_PASS_FLUSHED_ALONE], gb->passthrough[GRO_PASS_FLUSHED_ALONE]);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (in->ports[i].kind != DIAG_PORT_VXLAN || in->ports[i].vni != vni)
			continue;
		const struct vxlan_sock_stats *ss = &in->now->ports[i].sock, *sb = &b->ports[i].sock;
		m->dgrams += diag_delta(ss->rx_datagrams, sb->rx_datagrams);
		m->coalesced += diag_delta(ss->rx_gro_buffers, sb->rx_gro_buffers);
		m->dgram_bytes += diag_delta(ss->rx_bytes, sb->rx_bytes);
		m->zero_csum += diag_delta(ss->rx_zero_csum, sb->rx_zero_csum);
		m->udp_gro_refused |= !ss->udp_gro_probed;
		m->udp_gro_off |= ss->udp_gro_probed && !ss->udp_gro_on;
	}
}

/* Most datagrams had a zero outer UDP checksum, they came MTU-sized (not
 * whole GSO packets, as a veth can pass them) and the kernel coalesced
 * (almost) none of them: UDP GRO never coalesces those. */
static bool diag_zero_csum_dominates(uint64_t dgrams, uint64_t coalesced, uint64_t zero_csum, uint64_t bytes)
{
	return dgrams >= DIAG_MIN_FRAMES && zero_csum * 2 >= dgrams && coalesced * 100 < dgrams &&
	       bytes / dgrams <= DIAG_MTU_DGRAM;
}

/* A peer sending IPv4 VXLAN with zero UDP checksums (the kernel vxlan
 * device's default, Open vSwitch's too): judged on the socket whatever the
 * frame sizes, because our GRO may rebuild big frames from the single
 * datagrams, at a cost: every datagram a separate trip through the kernel
 * and a software check of its inner checksum. */
static void diag_zero_csum(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct vxlan_sock_stats *ss = &in->now->ports[i].sock;
	const struct vxlan_sock_stats *win = in->then ? &in->then->ports[i].sock : NULL;
	bool enough = win && diag_delta(ss->rx_datagrams, win->rx_datagrams) >= DIAG_MIN_FRAMES;
	const struct vxlan_sock_stats *bs = &diag_base(in, enough)->ports[i].sock;
	uint64_t dgrams = diag_delta(ss->rx_datagrams, bs->rx_datagrams);
	uint64_t coalesced = diag_delta(ss->rx_gro_buffers, bs->rx_gro_buffers);
	uint64_t zero = diag_delta(ss->rx_zero_csum, bs->rx_zero_csum);
	uint64_t bytes = diag_delta(ss->rx_bytes, bs->rx_bytes);
	if (!ss->rx_zero_csum_counted || !diag_zero_csum_dominates(dgrams, coalesced, zero, bytes))
		return;
	const char *name = in->ports[i].name;
	struct diag_finding *f = diag_add(r, in, DIAG_ZERO_CSUM_PEER, name,
		"%s: the peer sends zero UDP checksums: %" PRIu64 " of %" PRIu64 " datagrams %s had one, and the "
		"kernel coalesced %" PRIu64 " (UDP GRO never coalesces them): each crosses the kernel alone and frames "
		"to the VMs are rebuilt from single datagrams; have the peer checksum its datagrams (`udpcsum` on a "
		"kernel vxlan device, options:csum=true on an Open vSwitch vxlan interface, `udpcsum on` on a "
		"vxswitch port)", name, zero, dgrams, enough ? "of the recent window" : "since start", coalesced);
	diag_num(f, "datagrams", dgrams);
	diag_num(f, "zero_csum", zero);
	diag_num(f, "coalesced", coalesced);
}

/* Why frames of `avg` bytes reach tap i while GRO is on and merges fewer
 * than DIAG_MIN_SEGS_PER_FRAME segments a frame. */
static void diag_weak_merging(const struct diag_input *in, struct diag_report *r, const char *name,
			      uint64_t avg, const struct diag_merge *m)
{
	double kb = (double)avg / 1024.0, spf = m->frames ? (double)m->segs / (double)m->frames : 0;
	uint64_t dgram_avg = m->dgrams ? m->dgram_bytes / m->dgrams : 0;
	uint32_t hold = in->knobs[CTL_KNOB_GRO_HOLD_US];
	/* The hold that would merge: two datagram gaps, in steps of 50 us.
	 * Only up to DIAG_HOLD_MAX_US: datagrams farther apart are the
	 * peer's doing (one MTU-sized segment at a time), not the hold's. */
	uint32_t advice = 0;
	if (m->gap_ns) {
		uint64_t want = (2 * m->gap_ns / 1000 + DIAG_HOLD_DEFAULT_US - 1) / DIAG_HOLD_DEFAULT_US * DIAG_HOLD_DEFAULT_US;
		advice = want <= DIAG_HOLD_MAX_US ? (uint32_t)(want ? want : DIAG_HOLD_DEFAULT_US) : 0;
	}
	struct diag_finding *f;
	if (m->udp_gro_refused || m->udp_gro_off) {
		f = diag_add(r, in, DIAG_SMALL_FRAMES_NO_UDP_GRO, name,
			     "frames to %s average %.1f KB: %s: datagrams arrive one by one (%.1f segments a frame)",
			     name, kb, m->udp_gro_refused ? "UDP_GRO refused by kernel" :
			     "udp-gro is off (vxctl set udp-gro on)", spf);
	} else if (advice && hold < advice && m->timer_flushes * 2 > m->flushes) {
		f = diag_add(r, in, DIAG_GRO_HOLD_SHORT, name,
			     "frames to %s average %.1f KB: the GRO hold timer is too short (gro-hold-us %u): %" PRIu64
			     " of %" PRIu64 " runs ended by it, at %.1f segments a frame, while datagrams came %" PRIu64
			     " us apart; `set gro-hold-us %u`", name, kb, hold, m->timer_flushes, m->flushes, spf,
			     m->gap_ns / 1000, advice);
		diag_num(f, "gro_hold_us", hold);
		diag_num(f, "timer_flushes", m->timer_flushes);
		diag_num(f, "gap_us", m->gap_ns / 1000);
		diag_num(f, "advised_hold_us", advice);
	} else if (diag_zero_csum_dominates(m->dgrams, m->coalesced, m->zero_csum, m->dgram_bytes)) {
		return; /* the vxlan port's zero_csum_peer finding names the cause */
	} else if (m->dgrams >= DIAG_MIN_FRAMES && m->coalesced * 100 < m->dgrams && dgram_avg <= DIAG_MTU_DGRAM) {
		f = diag_add(r, in, DIAG_SMALL_FRAMES_NO_TSO, name,
			     "frames to %s average %.1f KB: the peer is not sending TSO: %" PRIu64 " datagrams arrived "
			     "MTU-sized (%" PRIu64 " bytes on average, %" PRIu64 " with a zero UDP checksum), the kernel "
			     "coalesced %" PRIu64 " (UDP GRO), and GRO found %.1f segments a flow per batch (%" PRIu64
			     " alone); turn TSO/GSO on at the peer (a vxswitch peer: gso, udp-segment, tap-tso on)",
			     name, kb, m->dgrams, dgram_avg, m->zero_csum, m->coalesced, spf, m->alone);
		diag_num(f, "datagrams", m->dgrams);
		diag_num(f, "coalesced", m->coalesced);
		diag_num(f, "datagram_avg", dgram_avg);
	} else {
		f = diag_add(r, in, DIAG_SMALL_FRAMES_UNMERGEABLE, name,
			     "frames to %s average %.1f KB: GRO rarely merges (%.1f segments a frame, most runs end by "
			     "%s): segments arrive out of order, with PSH, or interleaved (see stats: gro flushes)",
			     name, kb, spf, gro_flush_reason_name(m->top));
		diag_str(f, "flush_reason", gro_flush_reason_name(m->top));
	}
	diag_num(f, "avg_bytes", avg);
	diag_num(f, "segments", m->segs);
	diag_num(f, "frames", m->frames);
}

/* Frames with payload (pure ACKs and the like left out: PORT_TINY_FRAME)
 * that GRO delivers to tap i. */
static void diag_small_frames(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct port_stats *st = &in->now->ports[i].stats;
	const struct port_stats *win = in->then ? &in->then->ports[i].stats : NULL;
	bool enough = win && diag_delta(st->tx_frames, win->tx_frames) -
			     diag_delta(st->tx_tiny_frames, win->tx_tiny_frames) >= DIAG_MIN_FRAMES;
	const struct vxd_snapshot *b = diag_base(in, enough);
	const struct port_stats *bs = &b->ports[i].stats;
	uint64_t frames = diag_delta(st->tx_frames, bs->tx_frames) - diag_delta(st->tx_tiny_frames, bs->tx_tiny_frames);
	uint64_t bytes = diag_delta(st->tx_bytes, bs->tx_bytes) - diag_delta(st->tx_tiny_bytes, bs->tx_tiny_bytes);
	if (frames < DIAG_MIN_FRAMES || bytes / frames >= DIAG_SMALL_AVG)
		return;
	const char *name = in->ports[i].name;
	uint64_t avg = bytes / frames;
	if (!in->knobs[CTL_KNOB_GRO]) {
		struct diag_finding *f = diag_add(r, in, DIAG_SMALL_FRAMES_GRO_OFF, name,
			"frames to %s average %.1f KB: GRO is off (vxctl set gro on)", name, (double)avg / 1024.0);
		diag_num(f, "avg_bytes", avg);
		diag_num(f, "frames", frames);
		return;
	}
	struct diag_merge m = { 0 };
	diag_merge_stats(in, b, in->ports[i].vni, &m);
	/* Over a window only: since start has no known length.  Idle time in
	 * the window makes the gap look longer, so this errs towards not
	 * blaming the hold. */
	if (enough && m.dgrams)
		m.gap_ns = (in->now->taken_ns - in->then->taken_ns) / m.dgrams;
	/* Not TCP through GRO (UDP, local traffic), or TCP merged well: the
	 * frames are small because the traffic is. */
	if (m.segs < DIAG_MIN_FRAMES || m.segs >= m.frames * DIAG_MIN_SEGS_PER_FRAME)
		return;
	diag_weak_merging(in, r, name, avg, &m);
}

/* ---- drops and errors -------------------------------------------------------- */

static void diag_tap_drops(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct diag_port *p = &in->ports[i];
	const struct tap_port_info *ti = &in->now->ports[i].tap;
	struct diag_finding *f;
	if (p->kernel_ok && p->kernel_tx_dropped) {
		f = diag_add(r, in, DIAG_TAP_QUEUE_DROPS, p->name,
			"%s: the kernel dropped %" PRIu64 " frames the VM sent, its tap queue full: the switch did not "
			"read them in time (a busy worker, or a short txqueuelen): `ip link set %s txqueuelen 10000`, "
			"or give the worker a core of its own", p->name, p->kernel_tx_dropped, p->name);
		diag_num(f, "dropped", p->kernel_tx_dropped);
	}
	if (ti->tx_errors) {
		f = diag_add(r, in, DIAG_TAP_TX_ERRORS, p->name, "%s: %" PRIu64 " writes to the tap failed (last: %s)",
			     p->name, ti->tx_errors, strerror(ti->last_tx_errno));
		diag_num(f, "errors", ti->tx_errors);
	}
}

static void diag_sock_drops(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const char *name = in->ports[i].name;
	const struct vxlan_sock_stats *ss = &in->now->ports[i].sock;
	struct diag_finding *f;
	if (ss->rx_queue_drops) {
		f = diag_add(r, in, DIAG_SOCKET_RX_DROPS, name,
			"%s: the kernel dropped %" PRIu64 " datagrams because the socket's receive buffer was full: "
			"the worker did not read in time (busy, or starved of CPU); give it a core of its own, or raise "
			"net.core.rmem_max", name, ss->rx_queue_drops);
		diag_num(f, "dropped", ss->rx_queue_drops);
	}
	if (ss->rx_no_buffer) {
		f = diag_add(r, in, DIAG_RX_NO_BUFFER, name, "%s: %" PRIu64 " datagrams lost for want of packet "
			     "buffers: raise vxswitchd --pool-size", name, ss->rx_no_buffer);
		diag_num(f, "dropped", ss->rx_no_buffer);
	}
	if (ss->rx_errors || ss->tx_errors) {
		f = diag_add(r, in, DIAG_SOCKET_ERRORS, name, "%s: %" PRIu64 " receive calls failed (last: %s), "
			     "%" PRIu64 " sends failed (last: %s)", name, ss->rx_errors,
			     ss->rx_errors ? strerror(ss->last_rx_errno) : "-", ss->tx_errors,
			     ss->tx_errors ? strerror(ss->last_tx_errno) : "-");
		diag_num(f, "rx_errors", ss->rx_errors);
		diag_num(f, "tx_errors", ss->tx_errors);
	}
	if (ss->tx_blocked_events) {
		f = diag_add(r, in, DIAG_UNDERLAY_BACKLOG, name,
			"%s: the underlay send buffer filled %" PRIu64 " times: %" PRIu64 " frames waited in the "
			"backlog, %" PRIu64 " were dropped (underlay_backlog_full): the underlay is slower than the VMs "
			"send", name, ss->tx_blocked_events, ss->tx_backlogged, ss->tx_backlog_drops);
		diag_num(f, "blocked", ss->tx_blocked_events);
		diag_num(f, "dropped", ss->tx_backlog_drops);
	}
}

/* Floods from remote VTEPs into a VNI that has no local port: the sender's
 * flood list names this host for a VNI it serves, no VM of it is here
 * (yet), the frames end here.  Not a fault (a start adds its ports one by
 * one, a VNI's last VM may leave), so a note, and only while the VNI has
 * no local port: drops of a moment without one are no news later. */
static void diag_vni_no_local_port(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	uint64_t dropped = in->now->ports[i].stats.drops[DROP_NO_LOCAL_PORT];
	if (in->ports[i].kind != DIAG_PORT_VXLAN || !dropped)
		return;
	for (unsigned j = 1; j < VXD_MAX_PORTS; j++)
		if (in->ports[j].kind == DIAG_PORT_TAP && in->ports[j].vni == in->ports[i].vni)
			return;
	struct diag_finding *f = diag_add(r, in, DIAG_NOTE_VNI_NO_LOCAL_PORT, in->ports[i].name,
		"%s: VNI %u has no local port: %" PRIu64 " frames flooded here by remote VTEPs were dropped "
		"(no_local_port)", in->ports[i].name, in->ports[i].vni, dropped);
	diag_num(f, "vni", in->ports[i].vni);
	diag_num(f, "dropped", dropped);
}

static void diag_worst_drop(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct port_stats *st = &in->now->ports[i].stats;
	uint64_t worst = 0;
	unsigned reason = 0;
	for (unsigned k = 1; k < DROP_REASON_COUNT; k++)
		if (k != DROP_NO_LOCAL_PORT && st->drops[k] > worst)
			worst = st->drops[k], reason = k;
	diag_vni_no_local_port(in, r, i);
	if (!worst)
		return;
	struct diag_finding *f = diag_add(r, in, DIAG_PORT_DROPS, in->ports[i].name,
		"%s: %" PRIu64 " frames dropped as %s%s", in->ports[i].name, worst, drop_reason_name(reason),
		reason == DROP_MTU_EXCEEDED ? " (VM MTU larger than what fits the underlay)" : "");
	diag_str(f, "reason", drop_reason_name(reason));
	diag_num(f, "dropped", worst);
}

static void diag_switch_drops(const struct diag_input *in, struct diag_report *r)
{
	const struct vxd_snapshot *s = in->now;
	struct diag_finding *f;
	uint64_t bad = s->gro.passthrough[GRO_PASS_CSUM_BAD] + s->rx_csum.bad;
	if (bad) {
		f = diag_add(r, in, DIAG_INNER_CSUM_BAD, NULL,
			"%" PRIu64 " received TCP segments had a bad inner checksum and were not merged, %" PRIu64
			" datagrams with one were dropped (bad_l4_csum)%s", s->gro.passthrough[GRO_PASS_CSUM_BAD],
			s->rx_csum.bad, in->knobs[CTL_KNOB_RX_CSUM] ? "" : "; if the sender is a kernel on a veth "
			"with tx checksum offload its checksums arrive unfinished: `set rx-csum on` finishes them");
		diag_num(f, "not_merged", s->gro.passthrough[GRO_PASS_CSUM_BAD]);
		diag_num(f, "dropped", s->rx_csum.bad);
	}
	if (s->rx_csum.finished) {
		f = diag_add(r, in, DIAG_NOTE_CSUM_FINISHED, NULL,
			"note: %" PRIu64 " inner checksums arrived unfinished (a sender behind a veth with tx checksum "
			"offload) and were finished here (rx-csum)", s->rx_csum.finished);
		diag_num(f, "finished", s->rx_csum.finished);
	}
	if (s->drops[DROP_VXLAN_UNKNOWN_VNI]) {
		f = diag_add(r, in, DIAG_UNKNOWN_VNI, NULL,
			"%" PRIu64 " datagrams for a VNI no port serves (vxlan_unknown_vni): a peer sends a VNI "
			"this switch has no vxlan port for; check the VNIs on both ends", s->drops[DROP_VXLAN_UNKNOWN_VNI]);
		diag_num(f, "dropped", s->drops[DROP_VXLAN_UNKNOWN_VNI]);
	}
}

static void diag_cpu_worker(const struct diag_input *in, struct diag_report *r, const struct vxd_worker_snap *wa,
			    const struct vxd_worker_snap *wb, uint64_t wall)
{
	uint64_t cpu = diag_delta(wb->cpu_user_us + wb->cpu_sys_us, wa->cpu_user_us + wa->cpu_sys_us) * 1000;
	uint64_t permille = cpu * 1000 / wall;
	uint64_t wait = diag_delta(wb->cpu_wait_ns, wa->cpu_wait_ns), run = diag_delta(wb->cpu_run_ns, wa->cpu_run_ns);
	uint64_t wait_pm = wait * 1000 / wall, busy_pm = (run + wait) * 1000 / wall;
	bool starved = wait_pm >= DIAG_CPU_WAIT_PERMILLE;
	if (permille < DIAG_CPU_PERMILLE && !starved)
		return;
	struct diag_finding *f;
	if (permille >= DIAG_CPU_PERMILLE)
		f = diag_add(r, in, DIAG_CPU_SATURATED, NULL,
			"worker %u used %" PRIu64 ".%" PRIu64 "%% of a core over the last %.1f s: it is the bottleneck; "
			"give it a core of its own (or more workers, --workers), and keep gro, udp-gro, gso and tap-tso "
			"on so it moves fewer, bigger frames", wb->index, permille / 10, permille % 10, (double)wall / 1e9);
	else
		f = diag_add(r, in, DIAG_CPU_SATURATED, NULL,
			"worker %u waited for a CPU %" PRIu64 ".%" PRIu64 "%% of the last %.1f s and ran only %" PRIu64
			".%" PRIu64 "%% of a core (busy %" PRIu64 ".%" PRIu64 "%%): it is held back by a CPU quota (cgroup "
			"cpu.max / cpu.cfs_quota_us) or by other tasks on its cores; give it a whole core",
			wb->index, wait_pm / 10, wait_pm % 10, (double)wall / 1e9, permille / 10, permille % 10,
			busy_pm / 10, busy_pm % 10);
	diag_num(f, "worker", wb->index);
	diag_num(f, "cpu_permille", permille);
	diag_num(f, "wait_permille", wait_pm);
	diag_num(f, "busy_permille", busy_pm);
	diag_num(f, "window_ms", wall / 1000000);
}

/* A worker saturated, each judged alone (two half-busy workers are not
 * one saturated one): it used 95% of a core, or it spent three quarters
 * of the window or more runnable but waiting for a CPU: it wanted a core
 * it did not get (a CPU quota, other tasks).  Idle time -- blocked in
 * epoll -- is neither.  A worker merely sharing a busy machine waits less
 * (~55% measured on the 2-vCPU test host with its neighbours busy). */
static void diag_cpu(const struct diag_input *in, struct diag_report *r)
{
	const struct vxd_snapshot *a = in->then, *b = in->now;
	if (!a || b->taken_ns < a->taken_ns + DIAG_MIN_WINDOW_MS * 1000000ull)
		return;
	uint64_t wall = b->taken_ns - a->taken_ns;
	for (unsigned i = 0; i < b->n_workers && i < a->n_workers; i++)
		diag_cpu_worker(in, r, &a->workers[i], &b->workers[i], wall);
}

/* A worker pinned to a CPU of another NUMA node than the underlay NIC's:
 * every byte crosses the interconnect (seed 003). */
static void diag_placement(const struct diag_input *in, struct diag_report *r)
{
	const struct vxd_snapshot *b = in->now;
	if (in->underlay_node < 0)
		return;
	for (unsigned i = 0; i < b->n_workers; i++) {
		const struct vxd_worker_snap *w = &b->workers[i];
		if (w->cpu_pinned < 0 || w->node < 0 || w->node == in->underlay_node)
			continue;
		struct diag_finding *f = diag_add(r, in, DIAG_WORKER_OFF_NODE, NULL,
			"worker %u runs on cpu %d of NUMA node %d, but the underlay %s is on node %d: its packets cross "
			"the interconnect; pin it to a CPU of node %d (--cpus) or leave --cpus out", w->index, w->cpu_pinned,
			w->node, in->underlay, in->underlay_node, in->underlay_node);
		diag_num(f, "worker", w->index);
		diag_num(f, "cpu", (uint64_t)w->cpu_pinned);
		diag_num(f, "node", (uint64_t)w->node);
		diag_num(f, "underlay_node", (uint64_t)in->underlay_node);
	}
}

void diag_judge_traffic(const struct diag_input *in, struct diag_report *r)
{
	diag_remotes(in, r);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (in->ports[i].kind == DIAG_PORT_TAP) {
			diag_small_frames(in, r, i);
			diag_tap_drops(in, r, i);
		} else if (in->ports[i].kind == DIAG_PORT_VXLAN) {
			diag_sock_drops(in, r, i);
			diag_zero_csum(in, r, i);
		}
		if (in->ports[i].kind != DIAG_PORT_NONE)
			diag_worst_drop(in, r, i);
	}
	diag_switch_drops(in, r);
	diag_cpu(in, r);
	diag_placement(in, r);
}
