/* vxswitchd's `diagnose`: findings in plain words from the counters of the
 * ports, the switch and GRO (recent traffic where there is enough of it),
 * each naming the knob or the kernel refusal behind it, or "no problem found". */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "daemon/vxd_internal.h"
#include "port/afpacket.h"
#include "port/frame.h"
#include "port/tap.h"
#include "port/vxlan.h"

static unsigned vxd_diag_line(struct ctl_print *p, unsigned n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static unsigned vxd_diag_line(struct ctl_print *p, unsigned n, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ctl_print_string(p, CTL_PRINT_ANY, NULL, "%s\n", line);
	return n + 1;
}

/* Why a tap gets small frames, in order of likelihood. */
struct vxd_diag_ctx {
	const struct vxd *vxd;
	const struct vxd_snapshot *snap;
	bool any_udp_gro_refused, any_udp_gro_off;
};

static const char *vxd_small_frames_why(const struct vxd_diag_ctx *c)
{
	const struct gro_stats *gs = &c->snap->gro;
	if (!c->vxd->knobs[CTL_KNOB_GRO])
		return "GRO is off (vxctl set gro on)";
	if (c->any_udp_gro_refused)
		return "UDP_GRO refused by kernel: datagrams arrive one by one";
	if (c->any_udp_gro_off)
		return "udp-gro is off (vxctl set udp-gro on)";
	if (gs->segments_in && gs->merged_frames * 4 < gs->frames_out)
		return "GRO rarely merges: segments arrive out of order, with PSH, or interleaved (see gro flushes)";
	return "the traffic is small frames (not bulk TCP)";
}

/* A port whose device (a tap's link, a vxlan port's underlay) is down. */
static unsigned vxd_diag_link(struct ctl_print *p, unsigned n, const struct vxd_diag_ctx *c, unsigned i)
{
	const struct vxd_link_state *ls = &c->vxd->links[i];
	if (!ls->down_ns)
		return n;
	const struct port *port = c->vxd->ports[i];
	uint64_t now = vxd_now_ns(), s = now > ls->down_ns ? (now - ls->down_ns) / 1000000000ull : 0;
	if (port_is_frame(port))
		return vxd_diag_line(p, n, "%s: its link is down (%" PRIu64 " s, %" PRIu64 " times in all): %" PRIu64
				     " frames to it dropped (port_link_down); bring it up (ip link set %s up%s%s)",
				     port->name, s, ls->down_events,
				     c->snap->ports[i].stats.drops[DROP_PORT_LINK_DOWN], ls->dev,
				     c->vxd->port_cfg[i].netns[0] ? " in netns " : "", c->vxd->port_cfg[i].netns);
	return vxd_diag_line(p, n, "%s: its underlay link %s is down (%" PRIu64 " s, %" PRIu64 " times in all): "
			     "sends to the remotes fail unless a route leads out another way", port->name, ls->dev, s,
			     ls->down_events);
}

static unsigned vxd_diag_tap(struct ctl_print *p, unsigned n, const struct vxd_diag_ctx *c, unsigned i)
{
	const struct port *port = c->vxd->ports[i];
	const struct port_stats *st = &c->snap->ports[i].stats;
	const struct tap_port_info *ti = &c->snap->ports[i].tap;
	const struct fdb_port_stats *fp = &c->snap->ports[i].fdb;
	if (fp->refused)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " new source MACs refused by max-macs %u (%u learned): "
				  "a VM sending from more MACs than allowed, or the limit too low", port->name,
				  fp->refused, fp->max, fp->learned);
	if (c->snap->ports[i].lost_ns)
		n = vxd_diag_line(p, n, "%s: the tap device went away %" PRIu64 " s ago (%" PRIu64 " times in all): the port is down "
				  "and out of the poll set; `port add` it again to reattach", port->name,
				  (uint64_t)((c->snap->taken_ns - c->snap->ports[i].lost_ns) / 1000000000ull),
				  c->snap->ports[i].lost_events);
	n = vxd_diag_link(p, n, c, i);
	/* Recent traffic if there was enough of it, else all. */
	uint64_t frames = 0, bytes = 0;
	if (st->tx_frames >= c->vxd->diag_prev[i].tx_frames) { /* else: a new port in this slot */
		frames = st->tx_frames - c->vxd->diag_prev[i].tx_frames;
		bytes = st->tx_bytes - c->vxd->diag_prev[i].tx_bytes;
	}
	if (frames < 100) {
		frames = st->tx_frames;
		bytes = st->tx_bytes;
	}
	uint64_t avg = frames ? bytes / frames : 0;
	if (frames >= 100 && avg < 8192)
		n = vxd_diag_line(p, n, "frames to %s average %.1f KB: %s", port->name, (double)avg / 1024.0,
				  vxd_small_frames_why(c));
	if (!(ti->offloads_active & TAP_OL_TSO))
		n = vxd_diag_line(p, n, "%s: TSO from the VM is off (%s): every 1.4 KB segment crosses the switch alone",
				  port->name, (ti->offloads_probed & TAP_OL_TSO) ? "by knob tap-tso/gso" : "TUNSETOFFLOAD refused by kernel");
	if (!(ti->offloads_probed & TAP_OL_USO))
		n = vxd_diag_line(p, n, "%s: USO from the VM is off (TUNSETOFFLOAD refused by kernel): its UDP crosses the switch cut to MTU size",
				  port->name);
	if (ti->tx_errors)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " writes to the tap failed (last: %s)", port->name,
				  ti->tx_errors, strerror(ti->last_tx_errno));
	struct tap_kernel_stats ks;
	if (tap_port_kernel_stats(port, &ks) == 0 && ks.tx_dropped)
		n = vxd_diag_line(p, n, "%s: the kernel dropped %" PRIu64 " frames the VM sent, its tap queue full: the switch "
				  "did not read them in time (a busy worker, or a short txqueuelen)", port->name, ks.tx_dropped);
	return n;
}

static unsigned vxd_diag_vxlan(struct ctl_print *p, unsigned n, const struct port *port,
			       const struct vxlan_sock_stats *ss)
{
	if (!ss->udp_gro_probed)
		n = vxd_diag_line(p, n, "%s: UDP_GRO refused by kernel: every datagram is a separate receive", port->name);
	if (ss->udp_segment_fallbacks)
		n = vxd_diag_line(p, n, "%s: UDP_SEGMENT refused by kernel (%" PRIu64 " fallbacks): every datagram is a separate send",
				  port->name, ss->udp_segment_fallbacks);
	else if (!ss->udp_segment_probed)
		n = vxd_diag_line(p, n, "%s: UDP_SEGMENT refused by kernel at start-up: every datagram is a separate send",
				  port->name);
	else if (!ss->udp_segment_on)
		n = vxd_diag_line(p, n, "%s: udp-segment is off: every datagram is a separate send", port->name);
	if (ss->rx_no_buffer)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " datagrams lost for want of packet buffers", port->name,
				  ss->rx_no_buffer);
	if (ss->rx_queue_drops)
		n = vxd_diag_line(p, n, "%s: the kernel dropped %" PRIu64 " datagrams because the socket's receive buffer "
				  "was full: the worker did not read in time (busy, or starved of CPU)", port->name,
				  ss->rx_queue_drops);
	if (ss->rx_errors)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " receive calls failed (last: %s)", port->name, ss->rx_errors,
				  strerror(ss->last_rx_errno));
	if (ss->tx_errors)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " sends failed (last: %s)", port->name, ss->tx_errors,
				  strerror(ss->last_tx_errno));
	if (ss->tx_blocked_events)
		n = vxd_diag_line(p, n, "%s: the underlay send buffer filled %" PRIu64 " times: %" PRIu64 " frames waited in "
				  "the backlog, %" PRIu64 " were dropped (underlay_backlog_full)", port->name,
				  ss->tx_blocked_events, ss->tx_backlogged, ss->tx_backlog_drops);
	return n;
}

static unsigned vxd_diag_worst_drop(struct ctl_print *p, unsigned n, const struct port *port,
				    const struct port_stats *st)
{
	uint64_t worst = 0;
	unsigned worst_reason = 0;
	for (unsigned r = 1; r < DROP_REASON_COUNT; r++)
		if (st->drops[r] > worst)
			worst = st->drops[r], worst_reason = r;
	if (worst)
		n = vxd_diag_line(p, n, "%s: %" PRIu64 " frames dropped as %s%s", port->name, worst,
				  drop_reason_name(worst_reason),
				  worst_reason == DROP_MTU_EXCEEDED ? " (VM MTU larger than what fits the underlay)" : "");
	return n;
}

/* Findings that belong to no port. */
static unsigned vxd_diag_switch(struct ctl_print *p, unsigned n, const struct vxd *vxd,
				const struct vxd_snapshot *snap)
{
	const struct gro_stats *gs = &snap->gro;
	if (gs->passthrough[GRO_PASS_CSUM_BAD])
		n = vxd_diag_line(p, n, "%" PRIu64 " received TCP segments had a bad inner checksum and were not merged%s",
				  gs->passthrough[GRO_PASS_CSUM_BAD],
				  vxd->knobs[CTL_KNOB_RX_CSUM] ? "" : "; if the sender is a kernel on a veth with tx checksum "
				  "offload its checksums arrive unfinished: `set rx-csum on` finishes them");
	if (snap->rx_csum.finished)
		n = vxd_diag_line(p, n, "%" PRIu64 " inner checksums arrived unfinished (a sender behind a veth with tx "
				  "checksum offload) and were finished here (rx-csum)", snap->rx_csum.finished);
	if (snap->rx_csum.bad)
		n = vxd_diag_line(p, n, "%" PRIu64 " datagrams carried a bad inner TCP/UDP checksum and were dropped "
				  "(bad_l4_csum)", snap->rx_csum.bad);
	if (snap->fdb.refused_full)
		n = vxd_diag_line(p, n, "%" PRIu64 " new source MACs were not learned: a VNI's table reached fdb-max %u "
				  "(or the table its --fdb-size); frames to them are flooded. One VM sending from many "
				  "MACs? `max-macs N` on its port caps it alone", snap->fdb.refused_full,
				  vxd->knobs[CTL_KNOB_FDB_MAX]);
	if (snap->drops[DROP_VXLAN_UNKNOWN_VNI])
		n = vxd_diag_line(p, n, "%" PRIu64 " datagrams for a VNI no port serves (vxlan_unknown_vni)",
				  snap->drops[DROP_VXLAN_UNKNOWN_VNI]);
	if (!vxd->knobs[CTL_KNOB_GSO])
		n = vxd_diag_line(p, n, "gso is off: the VMs' TSO is off too, the kernel cuts every frame to MTU size before we read it");
	return n;
}

int vxd_diagnose(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p,
		 struct ctl_err *err)
{
	if (ref->has_port && !vxd_port_by_name(vxd, ref->name))
		return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	struct vxd_diag_ctx c = { .vxd = vxd, .snap = vxd_snapshot(vxd) };
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (!vxd->ports[i] || !port_is_vxlan(vxd->ports[i]))
			continue;
		const struct vxlan_sock_stats *ss = &c.snap->ports[i].sock;
		c.any_udp_gro_refused |= !ss->udp_gro_probed;
		c.any_udp_gro_off |= ss->udp_gro_probed && !ss->udp_gro_on;
	}
	ctl_print_open_object(p, NULL);
	ctl_print_open_array(p, "findings");
	unsigned n = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct port *port = vxd->ports[i];
		if (!port || (ref->has_port && strcmp(ref->name, port->name) != 0))
			continue;
		if (port_is_tap(port))
			n = vxd_diag_tap(p, n, &c, i);
		else if (port_is_afpacket(port))
			n = vxd_diag_link(p, n, &c, i);
		else if (port_is_vxlan(port))
			n = vxd_diag_link(p, vxd_diag_vxlan(p, n, port, &c.snap->ports[i].sock), &c, i);
		n = vxd_diag_worst_drop(p, n, port, &c.snap->ports[i].stats);
	}
	n = vxd_diag_switch(p, n, vxd, c.snap);
	if (n == 0)
		n = vxd_diag_line(p, n, "no problem found");
	ctl_print_close_array(p);
	ctl_print_close_object(p);
	return 0;
}
