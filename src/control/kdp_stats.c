/* What the kernel datapath alone says in `stats` and `port show` (dpif
 * show, dp/dpif.h): a port's kernel block (its device, whether the
 * program is on it, its learning upcalls) and its rules path; the vxlan
 * device's counters and those of frames from devices without a port;
 * learning's own counts; the rule cache; the capture copies; the
 * daemon's CPU; and each port's `port show` fields (how it is attached,
 * how frames are delivered to it).  The counters every datapath has are
 * printed by report/stats_dp.c from port_stats.  Keys: docs/STATS.md,
 * "The kernel datapath". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"
#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_diag.h"
#include "port/port.h"
#include "switch/flower_hook.h"
#include "switch/flower_table.h"

/* flooded and DPIF_UPCALL_COUNTERS: " flooded N upcalls N upcall drops N"
 * (MODE CTL_PRINT_JSON: the keys alone, a port's flat copies). */
static void ks_upcalls(struct ctl_print *p, const struct dpif_port_stats *c, enum ctl_print_mode mode)
{
	ctl_print_uint(p, mode, "flooded", " flooded %" PRIu64, c->flooded);
#define KS_UPCALL(f, text, help) ctl_print_uint(p, mode, #f, " " text " %" PRIu64, c->f);
	DPIF_UPCALL_COUNTERS(KS_UPCALL)
#undef KS_UPCALL
}

/* Each dropped upcall under its reason (their sum is upcall_drops). */
static void ks_upcall_drops_by_reason(struct ctl_print *p, const struct dpif_port_stats *c)
{
	ctl_print_open_object(p, "upcall_drops_by_reason");
	ctl_print_uint(p, CTL_PRINT_ANY, "rate_limit", " (rate limit %" PRIu64, c->upcall_drops_rate);
	ctl_print_uint(p, CTL_PRINT_ANY, "ring_full", ", ring full %" PRIu64 ")", c->upcall_drops_ring);
	ctl_print_close_object(p);
}

static void ks_drops(struct ctl_print *p, const struct dpif_port_stats *c)
{
	ctl_print_named_counts(p, "drops", "    ", c->drop_names, c->drops, 0, c->n_drop_reasons);
}

/* A VM-facing port, from the read the report printed (st): the kernel
 * block (the program's own counts), its rules path, and the keys its
 * JSON had before (scripts): the upcall counters flat, the histogram's
 * first layout (bucket -> bytes). */
static void ks_port(struct ctl_print *p, struct kdp_ctl *kc, const struct kc_port *kp,
		    const struct dpif_port_stats *st)
{
	ctl_print_open_object(p, "tx_size_hist_bytes");
	for (unsigned b = 0; b < DPIF_HIST_BUCKETS; b++)
		ctl_print_uint(p, CTL_PRINT_JSON, port_hist_names[b], "%" PRIu64, st->tx_hist_bytes[b]);
	ctl_print_close_object(p);
	ctl_print_open_object(p, "kernel");
	ctl_print_uint(p, CTL_PRINT_ANY, "ifindex", "    kernel: ifindex %" PRIu64, kp->ifindex);
	ctl_print_bool(p, CTL_PRINT_ANY, "attached", " program attached %s", st->attached == 1);
	ks_upcalls(p, st, CTL_PRINT_ANY);
	ks_upcall_drops_by_reason(p, st);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	if (kc->kr) {
		kdp_rules_print_port(kc->kr, kp->ifindex, p);
		ctl_print_nl(p);
	}
	ks_upcalls(p, st, CTL_PRINT_JSON);
}

static void ks_device(struct ctl_print *p, struct kdp *k)
{
	struct vxdp_counters raw, np_raw;
	if (kdp_counters_read(k, kdp_tun_ifindex(k), &raw) < 0)
		memset(&raw, 0, sizeof(raw));
	if (kdp_counters_read(k, VXDP_COUNTERS_NOPORT, &np_raw) < 0)
		memset(&np_raw, 0, sizeof(np_raw));
	struct dpif_port_stats c, np;
	kd_counters(&raw, &c);
	kd_counters(&np_raw, &np);
	ctl_print_open_object(p, "vxlan_device");
	ctl_print_uint(p, CTL_PRINT_ANY, "ifindex", "vxlan device (ifindex %" PRIu64 ")", kdp_tun_ifindex(k));
	int att = kdp_prog_attached(k, kdp_tun_ifindex(k), kdp_tun_prog_fd(k));
	ctl_print_bool(p, CTL_PRINT_ANY, "attached", ": program attached %s", att == 1);
	ctl_print_nl(p);
	vxd_print_rxtx(p, c.rx_frames, c.rx_bytes, c.tx_frames, c.tx_bytes, 0);
	ks_upcalls(p, &c, CTL_PRINT_ANY);
	ks_upcall_drops_by_reason(p, &c);
	ctl_print_uint(p, raw.evpn_local_kept ? CTL_PRINT_ANY : CTL_PRINT_JSON, "evpn_local_kept",
		       " evpn: local MACs kept %" PRIu64, raw.evpn_local_kept);
	ctl_print_nl(p);
	ks_drops(p, &c);
	ctl_print_close_object(p);
	ctl_print_open_object(p, "no_port");
	ctl_print_uint(p, np.rx_frames ? CTL_PRINT_ANY : CTL_PRINT_JSON, "rx_frames",
		       "frames from devices without a port %" PRIu64 "\n", np.rx_frames);
	ks_drops(p, &np);
	ctl_print_close_object(p);
}

static void ks_learning(struct ctl_print *p, const struct kdp_ctl *kc)
{
	ctl_print_open_object(p, "switch");
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_learned", "fdb: learned %" PRIu64, kc->learned);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_aged", " aged %" PRIu64, kc->aged);
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_refused", " refused (caps, static, unknown VTEP) %" PRIu64,
		       kc->learn_refused);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	/* The first layout's top-level keys (scripts). */
	ctl_print_uint(p, CTL_PRINT_JSON, "learned", NULL, kc->learned);
	ctl_print_uint(p, CTL_PRINT_JSON, "learn_refused", NULL, kc->learn_refused);
	ctl_print_uint(p, CTL_PRINT_JSON, "aged", NULL, kc->aged);
}

/* Its captures (of its ports; taps' are the userspace datapath's) and
 * what the programs copy for them. */
static void ks_capture(struct ctl_print *p, struct kdp_ctl *kc)
{
	uint64_t sessions = 0;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		sessions += kc->caps[i].cap != NULL;
	uint32_t on = 0, prefiltered = 0;
	uint64_t filtered = 0;
	kdp_cap_on(kc->k, &on);
	kdp_cap_totals(kc->k, &prefiltered, &filtered);
	ctl_print_open_object(p, "capture");
	ctl_print_uint(p, CTL_PRINT_ANY, "sessions", "capture: sessions %" PRIu64, sessions);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_keys", "; programs copy %" PRIu64 " ports", on);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_prefiltered", ", %" PRIu64 " of them pre-filtered", prefiltered);
	ctl_print_uint(p, CTL_PRINT_ANY, "kernel_filtered", " (%" PRIu64 " frames not copied)", filtered);
	ctl_print_bool(p, CTL_PRINT_ANY, "reader", " (perf ring read: %s)", kdp_ctl_capture_reading(kc));
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

/* What `stats --watch` reads besides the ports: the daemon's CPU (the
 * packets' own is the kernel's, in softirq: not the daemon's) and GRO,
 * which the kernel does (zeros: not counted here). */
static void ks_cpu(struct ctl_print *p, struct kdp_ctl *kc)
{
	struct rusage ru = { 0 };
	getrusage(RUSAGE_SELF, &ru);
	uint64_t user = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
	uint64_t sys = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
	uint64_t rx = 0;
	struct vxdp_counters c;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used && kc->ports[i].ifindex &&
		    kdp_counters_read(kc->k, kc->ports[i].ifindex, &c) == 0)
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

static const char *ks_rules_state(const struct kdp_ctl *kc, const struct kc_port *kp, uint16_t hook)
{
	return kc->t && flower_table_port_has_rules(kc->t, kc_id(kc, kp) | hook) ? "kernel-cache" : "none";
}

/* A port's `port show` fields after its name, type and vni. */
static void ks_port_line(struct ctl_print *out, struct kdp_ctl *kc, const struct kc_port *p)
{
	if (p->internal)
		ctl_print_string(out, CTL_PRINT_ANY, "peer", " peer %su (the taps' userspace datapath)", p->spec.dev);
	else if (p->spec.type == DPIF_PORT_NETDEV)
		ctl_print_string(out, CTL_PRINT_ANY, "dev", " dev %s", p->spec.dev);
	if (p->spec.type == DPIF_PORT_VETH)
		ctl_print_string(out, CTL_PRINT_ANY, "netns", " netns %s", p->spec.netns);
	const char *erules = ks_rules_state(kc, p, FLOWER_HOOK_EGRESS);
	if (p->ifindex) {
		ctl_print_uint(out, CTL_PRINT_ANY, "ifindex", " ifindex %" PRIu64, p->ifindex);
		ctl_print_string(out, CTL_PRINT_ANY, "attach", " attach %s",
				 kdp_attach_kind(kc->k) == KDP_ATTACH_CLS_BPF ? "cls_bpf" : "tcx");
		/* Egress rules: through the device's egress hook, which
		 * redirect_peer would skip (bpf/vxdp_rules_abi.h). */
		bool peer = (p->flags & VXDP_PORT_VETH) && !strcmp(erules, "none");
		ctl_print_string(out, CTL_PRINT_ANY, "deliver", " deliver %s", peer ? "redirect_peer" : "redirect");
		ctl_print_uint(out, CTL_PRINT_ANY, "macs", " macs %" PRIu64, p->n_macs);
	} else {
		ctl_print_open_array(out, "remotes");
		for (unsigned r = 0; r < p->spec.n_remotes; r++) {
			struct ctl_ip ip = kdp_ctl_ip(&p->spec.remotes[r]);
			ctl_print_ip(out, CTL_PRINT_ANY, NULL, " remote %s", &ip);
		}
		ctl_print_close_array(out);
		ctl_print_uint(out, CTL_PRINT_ANY, "dstport", " dstport %" PRIu64, kc->dstport);
	}
	ctl_print_string(out, CTL_PRINT_ANY, "rules", " rules %s", ks_rules_state(kc, p, 0));
	ctl_print_string(out, CTL_PRINT_ANY, "egress_rules", " egress-rules %s", erules);
}

void kd_show(struct dpif *dp, enum dpif_show_part part, uint16_t id, const struct dpif_port_stats *st,
	     struct ctl_print *p)
{
	struct kdp_ctl *kc = kc_of(dp);
	const struct kc_port *kp = part == DPIF_SHOW_STATS_TAIL ? NULL : kc_by_id(kc, id);
	switch (part) {
	case DPIF_SHOW_STATS_PORT:
		if (kp && kp->ifindex && st) {
			ks_port(p, kc, kp, st);
		} else if (kp && kc->kr) { /* a vxlan port: its VNI's rules path */
			kdp_rules_print_port(kc->kr, VXDP_RSTATS_VNI | kp->spec.vni, p);
			ctl_print_nl(p);
		}
		break;
	case DPIF_SHOW_STATS_TAIL:
		ks_device(p, kc->k);
		ks_learning(p, kc);
		if (kc->kr)
			kdp_rules_print(kc->kr, p);
		ks_capture(p, kc);
		ks_cpu(p, kc);
		break;
	case DPIF_SHOW_PORT_LINE:
		if (kp)
			ks_port_line(p, kc, kp);
		break;
	}
}
