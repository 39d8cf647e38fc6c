/* vxswitchd's printed answers: `stats` (per port, switch, GRO, GSO, cpu,
 * pool), `port show` and `fdb show`, each through one ctl_print, so the text
 * and the JSON come from the same lines.  Reads the switch, changes nothing. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ctl/ctl_print.h"
#include "control/evpn.h"
#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "control/kdp_ports.h"
#include "port/afpacket.h"
#include "port/tap.h"
#include "port/vxlan.h"
#include "switch/flower_table.h"

static void vxd_print_ip(struct ctl_print *p, const char *key, const char *fmt, uint8_t family,
			 const uint8_t *bytes)
{
	struct ctl_ip ip = { .family = family == 6 ? AF_INET6 : AF_INET };
	memcpy(ip.bytes, bytes, family == 6 ? 16 : 4);
	ctl_print_ip(p, CTL_PRINT_ANY, key, fmt, &ip);
}

/* "state down (device gone 12 s)" for a tap whose device went away,
 * "state down (link down 3 s)" for one whose link is down, "state down
 * (underlay u1 down 3 s)" for a vxlan port whose underlay link is. */
static void vxd_print_port_state(struct ctl_print *p, const struct vxd *vxd, uint16_t id,
				 const struct vxd_port_snap *ps, uint64_t now_ns)
{
	const struct vxd_link_state *ls = &vxd->links[id];
	char why[48];
	bool gone = ps && ps->lost_ns;
	const char *link = gone ? NULL : vxd_link_down_why(vxd, id, why, sizeof(why));
	ctl_print_string(p, CTL_PRINT_ANY, "state", " state %s", gone || link ? "down" : "up");
	if (gone) {
		ctl_print_string(p, CTL_PRINT_JSON, "down_why", "%s", "device gone");
		ctl_print_uint(p, CTL_PRINT_ANY, "down_s", " (device gone %" PRIu64 " s)",
			       now_ns > ps->lost_ns ? (now_ns - ps->lost_ns) / 1000000000ull : 0);
	} else if (link) {
		uint64_t now = vxd_now_ns();
		ctl_print_string(p, CTL_PRINT_JSON, "down_why", "%s", link);
		ctl_print_text(p, " (%s", link);
		ctl_print_uint(p, CTL_PRINT_ANY, "down_s", " %" PRIu64 " s)",
			       now > ls->down_ns ? (now - ls->down_ns) / 1000000000ull : 0);
	}
	ctl_print_string(p, CTL_PRINT_JSON, "link_dev", "%s", ls->dev);
	ctl_print_uint(p, CTL_PRINT_JSON, "link_down_events", "%" PRIu64, ls->down_events);
	if (port_is_vxlan(vxd->ports[id]))
		ctl_print_bool(p, CTL_PRINT_JSON, "underlay_csum_unfinished", "%s", ls->csum_unfinished);
	ctl_print_uint(p, CTL_PRINT_JSON, "reattaches", "%" PRIu64, ls->reattaches);
	ctl_print_string(p, CTL_PRINT_JSON, "reattached_by", "%s", ls->reattached_by ? ls->reattached_by : "");
	if (ls->reattaches)
		ctl_print_text(p, " (reattached %" PRIu64 "x, last by %s)", ls->reattaches, ls->reattached_by);
}

static void vxd_print_port_line(struct ctl_print *p, const struct vxd *vxd, const struct port *port,
				const struct vxd_port_snap *ps, uint64_t now_ns)
{
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "%s", port->name);
	ctl_print_uint(p, CTL_PRINT_ANY, "id", " id %" PRIu64, port->id);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " type %s", port->cls->kind_name);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, port->vni);
	ctl_print_uint(p, CTL_PRINT_ANY, "mtu", " mtu %" PRIu64, port->mtu);
	if (port_is_tap(port)) {
		struct tap_port_info ti;
		tap_port_get_info(port, NULL, &ti);
		ctl_print_bool(p, CTL_PRINT_ANY, "tso", " tso %s", ti.offloads_active & TAP_OL_TSO);
		ctl_print_bool(p, CTL_PRINT_ANY, "csum", " csum %s", ti.offloads_active & TAP_OL_CSUM);
		ctl_print_bool(p, CTL_PRINT_ANY, "uso", " uso %s", ti.offloads_active & TAP_OL_USO);
		const struct ctl_port_add *cfg = &vxd->port_cfg[port->id];
		ctl_print_mac(p, CTL_PRINT_ANY, "mac", " mac %s", ti.mac);
		ctl_print_string(p, CTL_PRINT_ANY, "netns", cfg->netns[0] ? " netns %s" : "", cfg->netns);
		ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", cfg->max_macs ? " max-macs %" PRIu64 : "", cfg->max_macs);
		ctl_print_bool(p, CTL_PRINT_JSON, "created", "%s", ti.created);
		ctl_print_uint(p, CTL_PRINT_ANY, "queues", " queues %" PRIu64, ti.queues);
		/* Who picks a frame's queue: our flow-lane program, the kernel
		 * (the program was refused), or nobody (one queue). */
		const char *steer = ti.queues < 2 ? "none" : ti.steered ? "flow" : "kernel";
		ctl_print_string(p, ti.queues < 2 ? CTL_PRINT_JSON : CTL_PRINT_ANY, "steering", " steering %s", steer);
	} else if (port_is_afpacket(port)) {
		struct afpacket_port_info ai;
		afpacket_port_get_info(port, NULL, &ai);
		ctl_print_string(p, CTL_PRINT_ANY, "dev", " dev %s", ai.dev);
		ctl_print_string(p, ai.netns[0] ? CTL_PRINT_ANY : CTL_PRINT_JSON, "netns", " netns %s", ai.netns);
		ctl_print_uint(p, CTL_PRINT_ANY, "vnet_hdr_size", " vnet_hdr %" PRIu64, ai.hdr_size);
		ctl_print_bool(p, CTL_PRINT_ANY, "link_tso", " link tso %s", ai.link_tso);
	} else if (port_is_vxlan(port)) {
		const struct vxlan_options *vo = vxlan_port_options(port);
		vxd_print_ip(p, "local", " local %s", vo->local.family, vo->local.bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "dstport", " dstport %" PRIu64, vo->dst_port);
		ctl_print_uint(p, CTL_PRINT_ANY, "sockets", " sockets %" PRIu64, vxlan_sock_n_lanes(vxlan_port_sock(port)));
		/* The outer-header settings in force (the socket's): srcport
		 * MIN-MAX, or the fixed dstport when no range was given. */
		struct vxlan_options so;
		vxlan_sock_get_options(vxlan_port_sock(port), &so);
		bool ranged = so.src_port_min != 0;
		ctl_print_uint(p, CTL_PRINT_JSON, "srcport_min", "%" PRIu64, ranged ? so.src_port_min : vo->dst_port);
		ctl_print_uint(p, CTL_PRINT_JSON, "srcport_max", "%" PRIu64, ranged ? so.src_port_max : vo->dst_port);
		ctl_print_bool(p, CTL_PRINT_JSON, "srcport_hash", "%s", ranged);
		if (ranged)
			ctl_print_text(p, " srcport %u-%u", so.src_port_min, so.src_port_max);
		else
			ctl_print_text(p, " srcport %u (fixed)", vo->dst_port);
		ctl_print_bool(p, CTL_PRINT_ANY, "udpcsum", " udpcsum %s", !so.udp_zero_csum);
		const char *df = vo->local.family == 6 ? "n/a"
				 : so.df == VXLAN_DF_UNSET ? "unset" : so.df == VXLAN_DF_INHERIT ? "inherit" : "set";
		ctl_print_string(p, CTL_PRINT_ANY, "df", " df %s", df);
		ctl_print_open_array(p, "remotes");
		for (unsigned i = 0; i < vo->n_remotes; i++)
			vxd_print_ip(p, NULL, " remote %s", vo->remotes[i].family, vo->remotes[i].bytes);
		ctl_print_close_array(p);
		vxd_evpn_print_port(p, vxd, vxd->port_cfg[port->id].name);
	}
	ctl_print_string(p, CTL_PRINT_ANY, "datapath", " datapath %s", "user");
	vxd_slowpath_print(p, vxd, port);
	vxd_print_port_state(p, vxd, port->id, ps, now_ns);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* Counters keyed by their reason's name print "name": N in JSON always
 * (zero included, so a script can tell zero from "not counted":
 * docs/STATS.md), " name N" in text only when it is not zero. */
static void vxd_print_drops(struct ctl_print *p, const uint64_t *drops, const char *indent)
{
	const char *names[DROP_REASON_COUNT];
	for (unsigned r = 0; r < DROP_REASON_COUNT; r++)
		names[r] = drop_reason_name((enum drop_reason)r);
	ctl_print_named_counts(p, "drops", indent, names, drops, 1, DROP_REASON_COUNT);
}

static void vxd_print_hist(struct ctl_print *p, const struct port_stats *st)
{
	ctl_print_size_hist(p, "tx_size_hist", "    tx sizes:", port_hist_names,
			    st->tx_hist_frames, st->tx_hist_bytes, PORT_HIST_BUCKETS);
}

/* A tap's block: the MACs behind it (max-macs), its offloads and counters,
 * and what the kernel dropped at the device. */
static void vxd_print_fdb_block(struct ctl_print *p, const struct vxd_port_snap *ps)
{
	ctl_print_open_object(p, "fdb");
	ctl_print_uint(p, CTL_PRINT_ANY, "macs", "    fdb: macs learned %" PRIu64, ps->fdb.learned);
	ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", " max-macs %" PRIu64 " (0: none)", ps->fdb.max);
	ctl_print_uint(p, CTL_PRINT_ANY, "refused", " refused %" PRIu64, ps->fdb.refused);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* An afpacket port's block: the MACs behind it, its link and counters. */
static void vxd_print_afp_stats(struct ctl_print *p, const struct vxd_port_snap *ps)
{
	vxd_print_fdb_block(p, ps);
	const struct afpacket_port_info ai = ps->afp;
	ctl_print_open_object(p, "afpacket");
	ctl_print_string(p, CTL_PRINT_ANY, "dev", "    afpacket: dev %s", ai.dev);
	ctl_print_string(p, CTL_PRINT_JSON, "netns", "%s", ai.netns);
	ctl_print_int(p, CTL_PRINT_JSON, "ifindex", NULL, ai.ifindex);
	ctl_print_uint(p, CTL_PRINT_ANY, "vnet_hdr_size", " vnet_hdr %" PRIu64, ai.hdr_size);
	ctl_print_bool(p, CTL_PRINT_ANY, "link_tso", " link tso %s", ai.link_tso);
	ctl_print_int(p, CTL_PRINT_ANY, "rcvbuf", " rcvbuf %d", ai.rcvbuf);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_gso_frames", " rx gso %" PRIu64, ai.rx_gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_partial_csum", " partial csum %" PRIu64, ai.rx_partial_csum);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_truncated", " rx truncated %" PRIu64, ai.rx_truncated);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_gso_frames", " tx gso %" PRIu64, ai.tx_gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_errors", " tx errors %" PRIu64, ai.tx_errors);
	ctl_print_int(p, CTL_PRINT_JSON, "last_tx_errno", NULL, ai.last_tx_errno);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void vxd_print_tap_stats(struct ctl_print *p, const struct port *port, const struct vxd_port_snap *ps)
{
	vxd_print_fdb_block(p, ps);
	const struct tap_port_info ti = ps->tap;
	ctl_print_open_object(p, "tap");
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_gso_frames", "    tap: rx gso %" PRIu64, ti.rx_gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_partial_csum", " partial csum %" PRIu64, ti.rx_partial_csum);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_gso_frames", " tx gso %" PRIu64, ti.tx_gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_errors", " tx errors %" PRIu64, ti.tx_errors);
	ctl_print_int(p, CTL_PRINT_JSON, "last_tx_errno", NULL, ti.last_tx_errno);
	ctl_print_bool(p, CTL_PRINT_ANY, "tso_probed", " tso probed %s", ti.offloads_probed & TAP_OL_TSO);
	ctl_print_bool(p, CTL_PRINT_ANY, "uso_probed", " uso probed %s", ti.offloads_probed & TAP_OL_USO);
	ctl_print_bool(p, CTL_PRINT_ANY, "tso_active", " tso active %s", ti.offloads_active & TAP_OL_TSO);
	ctl_print_nl(p);
	/* Outside the daemon: what the kernel dropped at the tap itself. */
	/* JSON: the keys are there even when the device is gone (zeros,
	 * kernel_stats false), text says nothing then. */
	struct tap_kernel_stats ks = { 0 };
	bool have_ks = tap_port_kernel_stats(port, &ks) == 0;
	enum ctl_print_mode ks_mode = have_ks ? CTL_PRINT_ANY : CTL_PRINT_JSON;
	ctl_print_bool(p, CTL_PRINT_JSON, "kernel_stats", "%s", have_ks);
	ctl_print_uint(p, ks_mode, "kernel_tx_dropped",
		       "    kernel: tap queue drops %" PRIu64 " (frames the VM sent that were not read in time)",
		       ks.tx_dropped);
	ctl_print_uint(p, ks_mode, "kernel_rx_dropped", " rx dropped %" PRIu64, ks.rx_dropped);
	if (have_ks)
		ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* A vxlan port's block: its GSO counters and its underlay socket's. */
static void vxd_print_vxlan_stats(struct ctl_print *p, const struct vxd_port_snap *ps)
{
	const struct vxlan_port_info vi = ps->vx;
	const struct vxlan_sock_stats ss = ps->sock;
	ctl_print_open_object(p, "vxlan");
	ctl_print_uint(p, CTL_PRINT_ANY, "underlay_mtu", "    vxlan: underlay mtu %" PRIu64, vi.underlay_mtu);
	ctl_print_uint(p, CTL_PRINT_ANY, "inner_mtu_fit", " inner mtu fit %" PRIu64, vi.inner_mtu_fit);
	ctl_print_uint(p, CTL_PRINT_ANY, "gso_frames", " gso frames %" PRIu64, vi.tx_gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "gso_segments", " gso segments %" PRIu64, vi.tx_gso_segments);
	ctl_print_uint(p, CTL_PRINT_ANY, "plain_frames", " plain frames %" PRIu64, vi.tx_plain_frames);
	ctl_print_nl(p);
	ctl_print_open_object(p, "socket");
	ctl_print_text(p, "    socket:");
#define PRINT_SOCK_COUNTER(f, text, what) \
	ctl_print_uint(p, sizeof(text) > 1 ? CTL_PRINT_ANY : CTL_PRINT_JSON, #f, " " text " %" PRIu64, ss.f);
	VXLAN_SOCK_COUNTERS(PRINT_SOCK_COUNTER)
#undef PRINT_SOCK_COUNTER
	ctl_print_bool(p, CTL_PRINT_JSON, "rx_zero_csum_counted", NULL, ss.rx_zero_csum_counted);
	ctl_print_int(p, CTL_PRINT_JSON, "last_rx_errno", NULL, ss.last_rx_errno);
	ctl_print_int(p, CTL_PRINT_JSON, "last_tx_errno", NULL, ss.last_tx_errno);
	ctl_print_bool(p, CTL_PRINT_ANY, "udp_gro", " udp-gro %s", ss.udp_gro_on);
	ctl_print_bool(p, CTL_PRINT_ANY, "udp_segment", " udp-segment %s", ss.udp_segment_on);
	ctl_print_bool(p, CTL_PRINT_ANY, "udp_gro_probed", " (kernel accepted: udp-gro %s", ss.udp_gro_probed);
	ctl_print_bool(p, CTL_PRINT_ANY, "udp_segment_probed", " udp-segment %s)", ss.udp_segment_probed);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	ctl_print_close_object(p);
}

void vxd_print_rxtx(struct ctl_print *p, uint64_t rx_frames, uint64_t rx_bytes, uint64_t tx_frames,
		    uint64_t tx_bytes, uint64_t lost_events)
{
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", "    rx %" PRIu64 " frames", rx_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " %" PRIu64 " bytes", rx_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", "  tx %" PRIu64 " frames", tx_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_bytes", " %" PRIu64 " bytes", tx_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_avg_frame", "  avg tx frame %" PRIu64, tx_frames ? tx_bytes / tx_frames : 0);
	ctl_print_uint(p, CTL_PRINT_JSON, "lost_events", NULL, lost_events);
}

static void vxd_print_port_stats(struct ctl_print *p, const struct vxd *vxd, const struct port *port,
				 const struct vxd_port_snap *ps)
{
	const struct port_stats *st = &ps->stats;
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "port %s", port->name);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " (%s", port->cls->kind_name);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, port->vni);
	if (vxd->kdp) { /* beside the kernel datapath's ports (kdp_slowpath.c) */
		ctl_print_string(p, CTL_PRINT_ANY, "datapath", " datapath %s", "user");
		vxd_slowpath_print(p, vxd, port);
	}
	ctl_print_text(p, ")");
	ctl_print_nl(p);
	vxd_print_rxtx(p, st->rx_frames, st->rx_bytes, st->tx_frames, st->tx_bytes, ps->lost_events);
	ctl_print_nl(p);
	vxd_print_drops(p, st->drops, "    ");
	vxd_print_hist(p, st);
	if (port_is_tap(port))
		vxd_print_tap_stats(p, port, ps);
	else if (port_is_afpacket(port))
		vxd_print_afp_stats(p, ps);
	else if (port_is_vxlan(port))
		vxd_print_vxlan_stats(p, ps);
	ctl_print_close_object(p);
}

static void vxd_print_gro(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap)
{
	const struct gro_stats st = snap->gro;
	ctl_print_open_object(p, "gro");
	ctl_print_bool(p, CTL_PRINT_ANY, "on", "gro %s", vxd->knobs[CTL_KNOB_GRO]);
	ctl_print_uint(p, CTL_PRINT_ANY, "segments_in", ": segments in %" PRIu64, st.segments_in);
	ctl_print_uint(p, CTL_PRINT_ANY, "frames_out", " frames out %" PRIu64, st.frames_out);
	ctl_print_uint(p, CTL_PRINT_ANY, "merged_frames", " merged %" PRIu64, st.merged_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "merged_segments", " (of %" PRIu64 " segments)", st.merged_segments);
	ctl_print_float(p, CTL_PRINT_ANY, "segments_per_frame", " segments/frame %.1f",
			st.frames_out ? (double)st.segments_in / (double)st.frames_out : 0.0);
	ctl_print_nl(p);
	ctl_print_open_array(p, "segs_per_frame_hist");
	ctl_print_text(p, "    segments per frame:");
	for (unsigned i = 0; i < GRO_SIZE_BUCKETS; i++) {
		char label[32];
		unsigned lo = 1u << i, hi = (1u << (i + 1)) - 1;
		if (i + 1 == GRO_SIZE_BUCKETS)
			snprintf(label, sizeof(label), "%u+", lo);
		else if (lo == hi)
			snprintf(label, sizeof(label), "%u", lo);
		else
			snprintf(label, sizeof(label), "%u-%u", lo, hi);
		ctl_print_open_object(p, NULL);
		ctl_print_string(p, CTL_PRINT_JSON, "segments", "%s", label);
		ctl_print_string(p, CTL_PRINT_TEXT, NULL, " %s:", label);
		ctl_print_uint(p, CTL_PRINT_ANY, "frames", "%" PRIu64, st.segs_per_frame[i]);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	ctl_print_nl(p);
	ctl_print_open_object(p, "flushes");
	ctl_print_text(p, "    flushes:");
	for (unsigned i = 0; i < GRO_FLUSH_REASON_COUNT; i++)
		ctl_print_named_count(p, gro_flush_reason_name(i), st.flushes[i]);
	ctl_print_close_object(p);
	ctl_print_nl(p);
	ctl_print_open_object(p, "passthrough");
	ctl_print_text(p, "    passed through:");
	for (unsigned i = 0; i < GRO_PASS_REASON_COUNT; i++)
		ctl_print_named_count(p, gro_pass_reason_name(i), st.passthrough[i]);
	ctl_print_close_object(p);
	ctl_print_nl(p);
	ctl_print_uint(p, CTL_PRINT_ANY, "whole_big_tcp_marked",
		       "    big TCP segments that arrived whole, given GSO metadata for the tap: %" PRIu64,
		       snap->whole_big_tcp_marked);
	ctl_print_uint(p, CTL_PRINT_ANY, "pool_low_flushes", ", runs completed early because buffers ran low: %" PRIu64,
		       snap->gro_pool_low_flushes);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void vxd_cpu(uint64_t *user_us, uint64_t *sys_us)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
	*sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
}

/* The switch, the FDB and the receive checksum check. */
static void vxd_print_switch(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap)
{

	const struct fwd_stats *fs = &snap->fwd;
	const struct fdb_stats fdb = snap->fdb;
	ctl_print_open_object(p, "switch");
	ctl_print_uint(p, CTL_PRINT_ANY, "frames", "switch: frames %" PRIu64, fs->frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "unicast", " unicast %" PRIu64, fs->unicast);
	ctl_print_uint(p, CTL_PRINT_ANY, "flooded", " flooded %" PRIu64, fs->flooded);
	ctl_print_uint(p, CTL_PRINT_ANY, "unknown_unicast", " unknown unicast %" PRIu64, fs->unknown_unicast);
	ctl_print_uint(p, CTL_PRINT_ANY, "flood_copies", " flood copies %" PRIu64, fs->flood_copies);
	ctl_print_uint(p, CTL_PRINT_ANY, "replicated", " replicated to vteps %" PRIu64, fs->replicated);
	ctl_print_uint(p, CTL_PRINT_ANY, "dropped", " dropped %" PRIu64, fs->dropped);
	ctl_print_nl(p);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_learned", "fdb: learned %" PRIu64, fdb.learned);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_moved", " moved %" PRIu64, fdb.moved);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_aged", " aged %" PRIu64, fdb.aged);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_refused_full", " refused (full) %" PRIu64, fdb.refused_full);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_entries", " entries %" PRIu64,
		       (uint64_t)fdb.n_learned + fdb.n_static + fdb.n_evpn);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_static", NULL, fdb.n_static);
	ctl_print_uint(p, fdb.n_evpn || fdb.evpn_refused ? CTL_PRINT_ANY : CTL_PRINT_JSON, "fdb_evpn",
		       " (evpn %" PRIu64, fdb.n_evpn);
	ctl_print_uint(p, fdb.n_evpn || fdb.evpn_refused ? CTL_PRINT_ANY : CTL_PRINT_JSON, "fdb_evpn_refused",
		       ", refused %" PRIu64 ")", fdb.evpn_refused);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_invalid_src", NULL, fdb.invalid_src);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_static_conflicts", NULL, fdb.static_conflicts);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_lookups", NULL, snap->fwd.fdb_lookups);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_hits", NULL, snap->fwd.fdb_hits);
	ctl_print_uint(p, CTL_PRINT_JSON, "fdb_evpn_local_kept", NULL, snap->fwd.evpn_local_kept);
	ctl_print_nl(p);
	ctl_print_close_object(p);

	ctl_print_open_object(p, "rx_csum");
	ctl_print_bool(p, CTL_PRINT_ANY, "on", "rx-csum %s", vxd->knobs[CTL_KNOB_RX_CSUM]);
	ctl_print_uint(p, CTL_PRINT_ANY, "good", ": inner checksums good %" PRIu64, snap->rx_csum.good);
	ctl_print_uint(p, CTL_PRINT_ANY, "finished", " finished (left unfinished by the sender) %" PRIu64,
		       snap->rx_csum.finished);
	ctl_print_uint(p, CTL_PRINT_ANY, "bad", " bad %" PRIu64, snap->rx_csum.bad);
	ctl_print_uint(p, CTL_PRINT_ANY, "not_checked", " not checked %" PRIu64, snap->rx_csum.not_checked);
	ctl_print_nl(p);
	ctl_print_close_object(p);

	ctl_print_open_object(p, "flow_cache");
	ctl_print_uint(p, CTL_PRINT_ANY, "hits", "flower flow cache: hits (fast path) %" PRIu64, snap->flow_cache.hits);
	ctl_print_uint(p, CTL_PRINT_ANY, "misses", " misses (classifier, slow path) %" PRIu64, snap->flow_cache.misses);
	ctl_print_uint(p, CTL_PRINT_ANY, "evictions", " evictions %" PRIu64, snap->flow_cache.evictions);
	ctl_print_uint(p, CTL_PRINT_ANY, "rules_version", " rules version %" PRIu64,
		       vxd->flower ? flower_table_version(vxd->flower) : 0);
	ctl_print_nl(p);
	ctl_print_close_object(p);

}

/* GSO (summed over the vxlan ports), CPU per received KB, the pkt pool. */
static void vxd_print_gso_cpu_pool(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap)
{

	uint64_t gso_frames = 0, gso_segs = 0, bytes = 0, fallbacks = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (!port)
			continue;
		const struct vxd_port_snap *ps = &snap->ports[i];
		bytes += ps->stats.rx_bytes;
		if (port_is_vxlan(port)) {
			const struct vxlan_port_info vi = ps->vx;
			const struct vxlan_sock_stats ss = ps->sock;
			gso_frames += vi.tx_gso_frames;
			gso_segs += vi.tx_gso_segments;
			fallbacks += ss.udp_segment_fallbacks;
		}
	}
	ctl_print_open_object(p, "gso");
	ctl_print_bool(p, CTL_PRINT_ANY, "on", "gso %s", vxd->knobs[CTL_KNOB_GSO]);
	ctl_print_uint(p, CTL_PRINT_ANY, "frames", ": frames %" PRIu64, gso_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "segments", " segments %" PRIu64, gso_segs);
	ctl_print_uint(p, CTL_PRINT_ANY, "udp_segment_fallbacks", " udp-segment fallbacks %" PRIu64, fallbacks);
	ctl_print_nl(p);
	ctl_print_close_object(p);

	uint64_t user_us, sys_us;
	vxd_cpu(&user_us, &sys_us);
	ctl_print_open_object(p, "cpu");
	ctl_print_uint(p, CTL_PRINT_ANY, "user_us", "cpu: user %" PRIu64 " us", user_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "sys_us", " sys %" PRIu64 " us", sys_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " rx bytes %" PRIu64, bytes);
	ctl_print_float(p, CTL_PRINT_ANY, "us_per_kb", " (%.3f us/KB received)",
			bytes ? (double)(user_us + sys_us) / ((double)bytes / 1024.0) : 0.0);
	ctl_print_uint(p, CTL_PRINT_ANY, "worker_user_us", "; worker thread: user %" PRIu64 " us", snap->cpu_user_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "worker_sys_us", " sys %" PRIu64 " us", snap->cpu_sys_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "worker_run_ns", "; on a CPU %" PRIu64 " ns", snap->cpu_run_ns);
	ctl_print_uint(p, CTL_PRINT_ANY, "worker_wait_ns", ", waiting for one %" PRIu64 " ns", snap->cpu_wait_ns);
	ctl_print_nl(p);
	ctl_print_close_object(p);

	const struct pkt_pool_stats ps = snap->pool;
	ctl_print_open_object(p, "pool");
	ctl_print_uint(p, CTL_PRINT_ANY, "in_use", "pool: in use %" PRIu64, ps.in_use);
	ctl_print_uint(p, CTL_PRINT_ANY, "in_use_max", " max %" PRIu64, ps.in_use_max);
	ctl_print_uint(p, CTL_PRINT_ANY, "alloc_failures", " alloc failures %" PRIu64, ps.alloc_failures);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* Captures: the sessions the control thread runs, and what the datapath
 * holds for them (all 0 and no emit switched once they ended). */
static void vxd_print_capture(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap)
{
	uint64_t sessions = 0;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		sessions += vxd->captures[i] != NULL;
	const struct vxd_capture_state *c = &snap->capture;
	ctl_print_open_object(p, "capture");
	ctl_print_uint(p, CTL_PRINT_ANY, "sessions", "capture: sessions %" PRIu64, sessions);
	ctl_print_uint(p, CTL_PRINT_ANY, "port_captures", "; datapath: port captures %" PRIu64, c->port_caps);
	ctl_print_uint(p, CTL_PRINT_ANY, "ports_tapped", " on %" PRIu64 " ports", c->ports_tapped);
	ctl_print_uint(p, CTL_PRINT_ANY, "socket_captures", ", socket %" PRIu64, c->sock_caps);
	ctl_print_uint(p, CTL_PRINT_ANY, "gro_captures", ", gro %" PRIu64, c->gro_caps);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

void vxd_user_ports_stats(struct ctl_print *p, struct vxd *vxd, const char *only)
{
	const struct vxd_snapshot *snap = NULL;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (!vxd->ports[i] || (only && strcmp(only, vxd->ports[i]->name)))
			continue;
		if (!snap)
			snap = vxd_snapshot(vxd);
		vxd_print_port_stats(p, vxd, vxd->ports[i], &snap->ports[i]);
	}
}

int vxd_stats(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p,
		     struct ctl_err *err)
{
	struct dpif *devdp = vxd_devport_dpif(vxd);
	if (dpif_has_port_counters(devdp)) /* its ports, and the taps beside it */
		return vxd_devport_stats(vxd, devdp, ref, p, err);
	const struct port *only = NULL;
	if (ref->has_port) {
		only = vxd_port_by_name(vxd, ref->name);
		if (!only)
			return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	}
	const struct vxd_snapshot *snap = vxd_snapshot(vxd);
	ctl_print_open_object(p, NULL);
	/* The worker's CLOCK_MONOTONIC when the counters were copied out:
	 * `stats --watch` divides by the difference of two. */
	ctl_print_uint(p, CTL_PRINT_JSON, "time_ns", "%" PRIu64, snap->taken_ns);
	ctl_print_string(p, CTL_PRINT_JSON, "datapath", NULL, "user");
	if (vxd->kdp_why[0]) /* the kernel one was asked for, or the default */
		ctl_print_string(p, CTL_PRINT_ANY, "kernel_unavailable",
				 "datapath user: the kernel datapath is unavailable: %s\n", vxd->kdp_why);
	ctl_print_open_array(p, "ports");
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && (!only || only == vxd->ports[i]))
			vxd_print_port_stats(p, vxd, vxd->ports[i], &snap->ports[i]);
	ctl_print_close_array(p);
	if (only) {
		ctl_print_close_object(p);
		return 0;
	}
	vxd_print_drops(p, snap->drops, "switch ");
	vxd_print_switch(p, vxd, snap);
	vxd_print_gro(p, vxd, snap);
	vxd_print_gso_cpu_pool(p, vxd, snap);
	vxd_print_capture(p, vxd, snap);
	vxd_print_workers(p, vxd, snap);
	vxd_print_ctl_stats(p, vxd);
	ctl_print_close_object(p);
	return 0;
}

/* One entry of datapath dp's FDB; `which`: the datapath's name, when the
 * switch runs more than one (NULL: not printed). */
static void vxd_fdb_print_one(struct ctl_print *p, const struct vxd *vxd, const struct dpif *dp, const char *which,
			      const struct fdb_entry_info *e)
{
	char buf[CTL_NAME_SIZE];
	ctl_print_open_object(p, NULL);
	ctl_print_mac(p, CTL_PRINT_ANY, "mac", "%s", e->mac);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, e->vni);
	ctl_print_string(p, CTL_PRINT_ANY, "port", " port %s", vxd_port_name(vxd, dp, e->dst.port, buf));
	if (e->dst.type == FDB_DST_VTEP)
		vxd_print_ip(p, "remote", " remote %s", e->dst.family, e->dst.addr);
	ctl_print_bool(p, CTL_PRINT_JSON, "static", "%s", e->is_static);
	const char *source = e->evpn ? "evpn" : e->is_static ? "static" : "learned";
	ctl_print_string(p, CTL_PRINT_JSON, "source", "%s", source);
	if (e->is_static)
		ctl_print_text(p, " %s", source);
	ctl_print_uint(p, CTL_PRINT_ANY, "age_s", " age %" PRIu64 "s", e->age_ns / 1000000000ull);
	if (which)
		ctl_print_string(p, CTL_PRINT_ANY, "datapath", " datapath %s", which);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

void vxd_port_show(struct vxd *vxd, struct ctl_print *out)
{
	const struct vxd_snapshot *snap = vxd_snapshot(vxd);
	ctl_print_open_array(out, NULL);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i])
			vxd_print_port_line(out, vxd, vxd->ports[i], &snap->ports[i], snap->taken_ns);
	struct dpif *devdp = vxd_devport_dpif(vxd);
	if (dpif_has_port_counters(devdp))
		vxd_devport_show(vxd, devdp, out);
	ctl_print_close_array(out);
}

/* The entries of the shared FDB, copied out (caller frees entries). */
struct vxd_fdb_dump {
	struct fdb_entry_info *entries;
	size_t n, cap;
};

static int vxd_dump_one(const struct fdb_entry_info *e, void *arg)
{
	struct vxd_fdb_dump *d = arg;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct fdb_entry_info *n = realloc(d->entries, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->entries = n;
		d->cap = cap;
	}
	d->entries[d->n++] = *e;
	return 0;
}

/* Every datapath's FDB, each entry with its datapath's name when there
 * are two (beside the kernel datapath the userspace one's holds what its
 * taps' side learns). */
int vxd_fdb_show(struct vxd *vxd, uint32_t vni, struct ctl_print *out, struct ctl_err *err)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	struct vxd_fdb_dump dumps[VXD_MAX_DPIFS] = { 0 };
	int ret = 0;
	for (unsigned d = 0; d < n && ret == 0; d++)
		ret = dps[d]->class->fdb_dump(dps[d], vni, vxd_dump_one, &dumps[d]);
	if (ret == 0) {
		ctl_print_open_array(out, NULL);
		for (unsigned d = 0; d < n; d++)
			for (size_t i = 0; i < dumps[d].n; i++)
				vxd_fdb_print_one(out, vxd, dps[d], n > 1 ? dps[d]->class->name : NULL,
						  &dumps[d].entries[i]);
		ctl_print_close_array(out);
	}
	for (unsigned d = 0; d < n; d++)
		free(dumps[d].entries);
	return ret < 0 ? vxd_refuse(err, ret, "fdb show: %s", strerror(-ret)) : 0;
}
