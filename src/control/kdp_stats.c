/* `vxctl stats` of the kernel datapath, from the programs' own counters:
 * per port (the keys of the userspace datapath's ports where they mean
 * the same: rx_/tx_frames/bytes, tx_avg_frame, drops{} by reason,
 * tx_size_hist[] of what the VM receives, fdb{}), the vxlan ports from the
 * per remote VTEP counters (remotes[]), per VNI sums (vnis[]), the vxlan
 * device's counters, learning, and the capture state.  Keys: docs/STATS.md,
 * "The kernel datapath". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "control/kdp_ports.h"
#include "control/kdp_rules.h"
#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_diag.h"

static const char *const ks_hist_names[VXDP_HIST_BUCKETS] = {
	"<1.5K", "1.5K-8K", "8K-16K", "16K-32K", "32K-64K", ">=64K",
};

static const char *const ks_drop_names[VXDP_DROP_COUNT] = {
#define KS_DROP_NAME(n, s) s,
	VXDP_DROP_REASONS(KS_DROP_NAME)
#undef KS_DROP_NAME
};

const char *vxd_kdp_drop_name(unsigned r)
{
	return r < VXDP_DROP_COUNT ? ks_drop_names[r] : "?";
}

/* The ABI's __u64 is unsigned long long, the printer's uint64_t may not be. */
static void ks_u64s(uint64_t *to, const __u64 *from, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		to[i] = from[i];
}

static void ks_drops(struct ctl_print *p, const struct vxdp_counters *c, const char *indent)
{
	uint64_t drops[VXDP_DROP_COUNT];
	ks_u64s(drops, c->drops, VXDP_DROP_COUNT);
	ctl_print_named_counts(p, "drops", indent, vxd_kdp_drop_name, drops, 0, VXDP_DROP_COUNT);
}

static void ks_hist(struct ctl_print *p, const struct vxdp_counters *c)
{
	uint64_t frames[VXDP_HIST_BUCKETS], bytes[VXDP_HIST_BUCKETS];
	ks_u64s(frames, c->hist_frames, VXDP_HIST_BUCKETS);
	ks_u64s(bytes, c->hist_bytes, VXDP_HIST_BUCKETS);
	ctl_print_size_hist(p, "tx_size_hist", "    tx sizes:", ks_hist_names, frames, bytes,
			    VXDP_HIST_BUCKETS);
	/* The kernel datapath's first layout (bucket -> bytes), kept for the
	 * scripts written against it. */
	ctl_print_open_object(p, "tx_size_hist_bytes");
	for (unsigned b = 0; b < VXDP_HIST_BUCKETS; b++)
		ctl_print_uint(p, CTL_PRINT_JSON, ks_hist_names[b], "%" PRIu64, c->hist_bytes[b]);
	ctl_print_close_object(p);
}

/* vxd_print_rxtx, as on the userspace datapath (the programs lose no events). */
static void ks_rxtx(struct ctl_print *p, uint64_t rxf, uint64_t rxb, uint64_t txf, uint64_t txb)
{
	vxd_print_rxtx(p, rxf, rxb, txf, txb, 0);
}

/* flooded and VXDP_UPCALL_COUNTERS: " flooded N upcalls N upcall drops N"
 * (MODE CTL_PRINT_JSON: the keys alone, a port's flat copies). */
static void ks_upcalls(struct ctl_print *p, const struct vxdp_counters *c, enum ctl_print_mode mode)
{
	ctl_print_uint(p, mode, "flooded", " flooded %" PRIu64, c->flood_packets);
#define KS_UPCALL(f, text, help) ctl_print_uint(p, mode, #f, " " text " %" PRIu64, c->f);
	VXDP_UPCALL_COUNTERS(KS_UPCALL)
#undef KS_UPCALL
}

/* Each dropped upcall under its reason (their sum is upcall_drops). */
static void ks_upcall_drops_by_reason(struct ctl_print *p, const struct vxdp_counters *c)
{
	ctl_print_open_object(p, "upcall_drops_by_reason");
	ctl_print_uint(p, CTL_PRINT_ANY, "rate_limit", " (rate limit %" PRIu64, c->upcall_drops_rate);
	ctl_print_uint(p, CTL_PRINT_ANY, "ring_full", ", ring full %" PRIu64 ")", c->upcall_drops_ring);
	ctl_print_close_object(p);
}

/* The kernel-only block of a port: the program's own counts. */
static void ks_kernel_block(struct ctl_print *p, struct kdp *k, const struct kdp_ctl_port_info *pi,
			    const struct vxdp_counters *c)
{
	ctl_print_open_object(p, "kernel");
	ctl_print_uint(p, CTL_PRINT_ANY, "ifindex", "    kernel: ifindex %" PRIu64, pi->ifindex);
	int att = kdp_prog_attached(k, pi->ifindex, kdp_port_prog_fd(k));
	ctl_print_bool(p, CTL_PRINT_ANY, "attached", " program attached %s", att == 1);
	ks_upcalls(p, c, CTL_PRINT_ANY);
	ks_upcall_drops_by_reason(p, c);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void ks_ip(struct ctl_print *p, const char *key, const char *fmt, const struct dpif_ip *ip)
{
	struct ctl_ip c = kdp_ctl_ip(ip);
	ctl_print_ip(p, CTL_PRINT_ANY, key, fmt, &c);
}

/* A vxlan port: its remotes' counters (rx/tx its sums). */
/* A vxlan port: its remotes' counters, and the rules path of its VNI's
 * vxlan ports' ingress (rstats key VXDP_RSTATS_VNI | vni). */
static void ks_vxlan_port(struct ctl_print *p, struct kdp *k, struct kdp_rules_ctl *kr,
			  const struct kdp_ctl_port_info *pi)
{
	const struct dpif_port_spec *spec = pi->spec;
	struct vxdp_vtep_stats s[KDP_CTL_MAX_REMOTES], tot = { 0 };
	unsigned n = kdp_ctl_port_n_remotes(pi);
	for (unsigned r = 0; r < n; r++) {
		const struct dpif_ip *ip = kdp_ctl_port_remote(pi, r);
		uint32_t fl = ip->family == AF_INET6 ? VXDP_FDB_V6 : 0;
		if (kdp_vtep_stats_read(k, spec->vni, fl, ip->bytes, &s[r]) < 0)
			memset(&s[r], 0, sizeof(s[r]));
		tot.rx_packets += s[r].rx_packets;
		tot.rx_bytes += s[r].rx_bytes;
		tot.tx_packets += s[r].tx_packets;
		tot.tx_bytes += s[r].tx_bytes;
	}
	ks_rxtx(p, tot.rx_packets, tot.rx_bytes, tot.tx_packets, tot.tx_bytes);
	ctl_print_nl(p);
	/* Its frames' drops are counted on the vxlan device (vxlan_device). */
	ctl_print_open_object(p, "drops");
	ctl_print_close_object(p);
	uint64_t now = kdp_now_ns();
	ctl_print_open_array(p, "remotes");
	for (unsigned r = 0; r < n; r++) {
		ctl_print_open_object(p, NULL);
		ks_ip(p, "remote", "    remote %s", kdp_ctl_port_remote(pi, r));
		bool evpn = r >= spec->n_remotes;
		ctl_print_bool(p, CTL_PRINT_JSON, "evpn", NULL, evpn);
		if (evpn)
			ctl_print_text(p, "%s", " (evpn)");
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", ": tx %" PRIu64, s[r].tx_packets);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_bytes", " (%" PRIu64 " B)", s[r].tx_bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", " rx %" PRIu64, s[r].rx_packets);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " (%" PRIu64 " B)", s[r].rx_bytes);
		bool heard = s[r].last_rx_ns != 0;
		ctl_print_bool(p, CTL_PRINT_JSON, "heard", NULL, heard);
		ctl_print_uint(p, heard ? CTL_PRINT_ANY : CTL_PRINT_JSON, "last_rx_ms", " last rx %" PRIu64 " ms ago",
			       heard && now > s[r].last_rx_ns ? (now - s[r].last_rx_ns) / 1000000 : 0);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	if (kr) {
		kdp_rules_print_port(kr, VXDP_RSTATS_VNI | spec->vni, p);
		ctl_print_nl(p);
	}
}

static void ks_port(struct ctl_print *p, struct vxd *vxd, const struct kdp_ctl_port_info *pi)
{
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	const struct dpif_port_spec *spec = pi->spec;
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "port %s", spec->name);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " (%s", kdp_ctl_port_type(pi));
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, spec->vni);
	ctl_print_string(p, CTL_PRINT_ANY, "datapath", " datapath %s)", "kernel");
	ctl_print_nl(p);
	if (!pi->ifindex) {
		ks_vxlan_port(p, k, kdp_ctl_rules(vxd->kdp), pi);
		ctl_print_close_object(p);
		return;
	}
	struct vxdp_counters c;
	if (kdp_counters_read(k, pi->ifindex, &c) < 0)
		memset(&c, 0, sizeof(c));
	ks_rxtx(p, c.rx_packets, c.rx_bytes, c.tx_packets, c.tx_bytes);
	ctl_print_nl(p);
	ks_drops(p, &c, "    ");
	ks_hist(p, &c);
	ctl_print_open_object(p, "fdb");
	ctl_print_uint(p, CTL_PRINT_ANY, "macs", "    fdb: macs learned %" PRIu64, pi->n_macs);
	ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", " max-macs %" PRIu64 " (0: none)", spec->max_macs);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	ks_kernel_block(p, k, pi, &c);
	struct kdp_rules_ctl *kr = kdp_ctl_rules(vxd->kdp);
	if (kr) {
		kdp_rules_print_port(kr, pi->ifindex, p);
		ctl_print_nl(p);
	}
	/* Flat copies of the kernel block's counters: the keys this port's
	 * JSON had before (scripts). */
	ks_upcalls(p, &c, CTL_PRINT_JSON);
	ctl_print_close_object(p);
}

/* Per VNI: its VM ports' counters and its remotes', summed. */
static void ks_vnis(struct ctl_print *p, struct vxd *vxd)
{
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	uint32_t seen[256];
	unsigned n_seen = 0;
	struct kdp_ctl_port_info pi, qi;
	ctl_print_open_array(p, "vnis");
	for (unsigned i = 0; i < kdp_ctl_port_slots(); i++) {
		if (!kdp_ctl_port_at(vxd->kdp, i, &pi))
			continue;
		uint32_t vni = pi.spec->vni;
		bool dup = false;
		for (unsigned j = 0; j < n_seen && !dup; j++)
			dup = seen[j] == vni;
		if (dup || n_seen == 256)
			continue;
		seen[n_seen++] = vni;
		uint64_t ports = 0, vx = 0, rxf = 0, rxb = 0, txf = 0, txb = 0, tun_tx = 0, tun_rx = 0;
		for (unsigned j = 0; j < kdp_ctl_port_slots(); j++) {
			if (!kdp_ctl_port_at(vxd->kdp, j, &qi) || qi.spec->vni != vni)
				continue;
			if (!qi.ifindex) {
				vx++;
				for (unsigned r = 0; r < qi.spec->n_remotes; r++) {
					struct vxdp_vtep_stats s;
					uint32_t fl = qi.spec->remotes[r].family == AF_INET6 ? VXDP_FDB_V6 : 0;
					if (kdp_vtep_stats_read(k, vni, fl, qi.spec->remotes[r].bytes, &s) == 0) {
						tun_tx += s.tx_packets;
						tun_rx += s.rx_packets;
					}
				}
				continue;
			}
			ports++;
			struct vxdp_counters c;
			if (kdp_counters_read(k, qi.ifindex, &c) == 0) {
				rxf += c.rx_packets;
				rxb += c.rx_bytes;
				txf += c.tx_packets;
				txb += c.tx_bytes;
			}
		}
		uint32_t cap;
		uint32_t macs = kdp_ctl_vni_macs(vxd->kdp, vni, &cap);
		ctl_print_open_object(p, NULL);
		ctl_print_uint(p, CTL_PRINT_ANY, "vni", "vni %" PRIu64, vni);
		ctl_print_uint(p, CTL_PRINT_ANY, "ports", ": ports %" PRIu64, ports);
		ctl_print_uint(p, CTL_PRINT_ANY, "vxlan_ports", " vxlan ports %" PRIu64, vx);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", " rx %" PRIu64, rxf);
		ctl_print_uint(p, CTL_PRINT_JSON, "rx_bytes", NULL, rxb);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", " tx %" PRIu64, txf);
		ctl_print_uint(p, CTL_PRINT_JSON, "tx_bytes", NULL, txb);
		ctl_print_uint(p, CTL_PRINT_ANY, "to_remotes", " to remotes %" PRIu64, tun_tx);
		ctl_print_uint(p, CTL_PRINT_ANY, "from_remotes", " from remotes %" PRIu64, tun_rx);
		ctl_print_uint(p, CTL_PRINT_ANY, "macs", " macs %" PRIu64, macs);
		ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", "/%" PRIu64, cap);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
}

static void ks_device(struct ctl_print *p, struct kdp *k)
{
	struct vxdp_counters c, np;
	if (kdp_counters_read(k, kdp_tun_ifindex(k), &c) < 0)
		memset(&c, 0, sizeof(c));
	if (kdp_counters_read(k, VXDP_COUNTERS_NOPORT, &np) < 0)
		memset(&np, 0, sizeof(np));
	ctl_print_open_object(p, "vxlan_device");
	ctl_print_uint(p, CTL_PRINT_ANY, "ifindex", "vxlan device (ifindex %" PRIu64 ")", kdp_tun_ifindex(k));
	int att = kdp_prog_attached(k, kdp_tun_ifindex(k), kdp_tun_prog_fd(k));
	ctl_print_bool(p, CTL_PRINT_ANY, "attached", ": program attached %s", att == 1);
	ctl_print_nl(p);
	ks_rxtx(p, c.rx_packets, c.rx_bytes, c.tx_packets, c.tx_bytes);
	ks_upcalls(p, &c, CTL_PRINT_ANY);
	ks_upcall_drops_by_reason(p, &c);
	ctl_print_uint(p, c.evpn_local_kept ? CTL_PRINT_ANY : CTL_PRINT_JSON, "evpn_local_kept",
		       " evpn: local MACs kept %" PRIu64, c.evpn_local_kept);
	ctl_print_nl(p);
	ks_drops(p, &c, "    ");
	ctl_print_close_object(p);
	ctl_print_open_object(p, "no_port");
	ctl_print_uint(p, np.rx_packets ? CTL_PRINT_ANY : CTL_PRINT_JSON, "rx_frames",
		       "frames from devices without a port %" PRIu64 "\n", np.rx_packets);
	ks_drops(p, &np, "    ");
	ctl_print_close_object(p);
}

static void ks_capture(struct ctl_print *p, struct vxd *vxd)
{
	uint64_t sessions = 0;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		sessions += vxd->captures[i] != NULL;
	uint32_t on = 0, prefiltered = 0;
	uint64_t filtered = 0;
	kdp_cap_on(kdp_ctl_kdp(vxd->kdp), &on);
	kdp_cap_totals(kdp_ctl_kdp(vxd->kdp), &prefiltered, &filtered);
	ctl_print_open_object(p, "capture");
	ctl_print_uint(p, CTL_PRINT_ANY, "sessions", "capture: sessions %" PRIu64, sessions);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_keys", "; programs copy %" PRIu64 " ports", on);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_prefiltered", ", %" PRIu64 " of them pre-filtered", prefiltered);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_filtered", " (%" PRIu64 " frames not copied)", filtered);
	ctl_print_bool(p, CTL_PRINT_ANY, "reader", " (perf ring read: %s)", kdp_ctl_capture_reading(vxd->kdp));
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* What `stats --watch` reads besides the ports: the daemon's CPU (the
 * packets' own is the kernel's, in softirq: not the daemon's) and GRO,
 * which the kernel does (zeros: not counted here). */
static void ks_cpu(struct ctl_print *p, struct vxd *vxd)
{
	struct rusage ru = { 0 };
	getrusage(RUSAGE_SELF, &ru);
	uint64_t user = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
	uint64_t sys = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
	uint64_t rx = 0;
	struct kdp_ctl_port_info pi;
	struct vxdp_counters c;
	for (unsigned i = 0; i < kdp_ctl_port_slots(); i++)
		if (kdp_ctl_port_at(vxd->kdp, i, &pi) && pi.ifindex &&
		    kdp_counters_read(kdp_ctl_kdp(vxd->kdp), pi.ifindex, &c) == 0)
			rx += c.rx_bytes;
	ctl_print_open_object(p, "cpu");
	ctl_print_uint(p, CTL_PRINT_ANY, "user_us", "vxswitchd cpu: user %" PRIu64 " us", user);
	ctl_print_uint(p, CTL_PRINT_ANY, "sys_us", " sys %" PRIu64 " us (the frames' own CPU is the kernel's)\n", sys);
	ctl_print_uint(p, CTL_PRINT_JSON, "rx_bytes", NULL, rx);
	ctl_print_uint(p, CTL_PRINT_JSON, "worker_user_us", NULL, 0);
	ctl_print_uint(p, CTL_PRINT_JSON, "worker_sys_us", NULL, 0);
	ctl_print_close_object(p);
	ctl_print_open_object(p, "gro");
	ctl_print_uint(p, CTL_PRINT_JSON, "segments_in", NULL, 0);
	ctl_print_uint(p, CTL_PRINT_JSON, "frames_out", NULL, 0);
	ctl_print_close_object(p);
}

int vxd_kdp_stats(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p, struct ctl_err *err)
{
	struct kdp_ctl_port_info pi;
	/* Taps and their slow-path links are the userspace datapath's (kdp_slowpath.c). */
	bool user = ref->has_port && vxd_port_by_name(vxd, ref->name);
	if (ref->has_port && !user && kdp_ctl_port_info(vxd->kdp, ref->name, &pi) < 0)
		return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	ctl_print_open_object(p, NULL);
	ctl_print_uint(p, CTL_PRINT_JSON, "time_ns", "%" PRIu64, kdp_now_ns());
	ctl_print_string(p, CTL_PRINT_ANY, "datapath", "datapath %s", "kernel");
	ctl_print_string(p, CTL_PRINT_ANY, "attach", " (%s)\n",
			 kdp_attach_kind(k) == KDP_ATTACH_CLS_BPF ? "cls_bpf" : "tcx");
	ctl_print_open_array(p, "ports");
	if (user) {
		vxd_user_ports_stats(p, vxd, ref->name);
	} else if (ref->has_port) {
		ks_port(p, vxd, &pi);
	} else {
		for (unsigned i = 0; i < kdp_ctl_port_slots(); i++)
			if (kdp_ctl_port_at(vxd->kdp, i, &pi))
				ks_port(p, vxd, &pi);
		vxd_user_ports_stats(p, vxd, NULL);
	}
	ctl_print_close_array(p);
	if (!ref->has_port) {
		ks_vnis(p, vxd);
		ks_device(p, k);
		uint64_t learned, refused, aged;
		kdp_ctl_learn_counts(vxd->kdp, &learned, &refused, &aged);
		ctl_print_open_object(p, "switch");
		ctl_print_uint(p, CTL_PRINT_ANY, "fdb_learned", "fdb: learned %" PRIu64, learned);
		ctl_print_uint(p, CTL_PRINT_ANY, "fdb_aged", " aged %" PRIu64, aged);
		ctl_print_uint(p, CTL_PRINT_ANY, "fdb_refused", " refused (caps, static, unknown VTEP) %" PRIu64, refused);
		ctl_print_nl(p);
		ctl_print_close_object(p);
		/* The first layout's top-level keys (scripts). */
		ctl_print_uint(p, CTL_PRINT_JSON, "learned", NULL, learned);
		ctl_print_uint(p, CTL_PRINT_JSON, "learn_refused", NULL, refused);
		ctl_print_uint(p, CTL_PRINT_JSON, "aged", NULL, aged);
		struct kdp_rules_ctl *kr = kdp_ctl_rules(vxd->kdp);
		if (kr)
			kdp_rules_print(kr, p);
		ks_capture(p, vxd);
		ks_cpu(p, vxd);
		vxd_print_ctl_stats(p, vxd);
	}
	ctl_print_close_object(p);
	return 0;
}
