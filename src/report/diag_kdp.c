/* diagnose of the kernel datapath: see diag_kdp.h.  Pure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "report/diag_kdp.h"

static void judge_attached(const struct diag_input *in, const char *port, const char *dev, int att,
			   const char *prog, struct diag_report *r)
{
	if (att == 1 || (att < 0 && att != -ENODEV))
		return;
	struct diag_finding *f;
	if (att == -ENODEV)
		f = diag_add(r, in, DIAG_PROGRAM_NOT_ATTACHED, port,
			     "%s: its device %s is gone, and the kernel datapath's program with it: "
			     "`port del %s`, or bring the device back and `port del` + `port add` it",
			     port ? port : dev, dev, port ? port : dev);
	else
		f = diag_add(r, in, DIAG_PROGRAM_NOT_ATTACHED, port,
			     "%s: the kernel datapath's program %s is no longer on %s's ingress (detached from "
			     "outside: `bpftool link detach`, `tc filter del`, the clsact qdisc deleted): its frames "
			     "bypass the switch; `port del` and `port add` it again%s",
			     port ? port : dev, prog, dev, port ? "" : " (the vxlan device: restart vxswitchd)");
	diag_str(f, "dev", dev);
	diag_str(f, "program", prog);
	diag_num(f, "device_gone", att == -ENODEV);
}

static void judge_upcalls(const struct diag_input *in, const char *port, const struct dpif_port_stats *c,
			  struct diag_report *r)
{
	if (!c->upcall_drops)
		return;
	struct diag_finding *f = diag_add(r, in, DIAG_UPCALLS_DROPPED, port,
		"%s: %" PRIu64 " learning upcalls dropped (%" PRIu64 " sent): more new source MACs than the "
		"port's upcall rate (upcall-rate %u/s, upcall-burst %u) or a full upcall ring; their MACs are "
		"not learned and frames to them are flooded. A VM sending from many MACs (a MAC flood?): "
		"`max-macs`, or find the VM; many VMs behind the port: raise upcall-rate", port,
		(uint64_t)c->upcall_drops, (uint64_t)c->upcalls, in->knobs[CTL_KNOB_UPCALL_RATE],
		in->knobs[CTL_KNOB_UPCALL_BURST]);
	diag_num(f, "upcall_drops", c->upcall_drops);
	diag_num(f, "upcalls", c->upcalls);
	diag_num(f, "upcall_rate", in->knobs[CTL_KNOB_UPCALL_RATE]);
}

static void judge_drops(const struct diag_input *in, const struct diag_kdp_port *p, struct diag_report *r)
{
	const struct dpif_port_stats *st = &p->st;
	uint64_t worst = 0;
	unsigned reason = 0;
	for (unsigned k = 0; k < st->n_drop_reasons && k < DPIF_MAX_DROP_REASONS; k++) {
		if (st->not_lost & (1u << k))
			continue; /* e.g. the original of a flooded frame: its copies went out */
		if (st->drops[k] > worst)
			worst = st->drops[k], reason = k;
	}
	if (!worst)
		return;
	struct diag_finding *f = diag_add(r, in, DIAG_PORT_DROPS, st->name,
		"%s: %" PRIu64 " frames dropped by the kernel datapath's program as %s", st->name, worst,
		st->drop_names[reason]);
	diag_str(f, "reason", st->drop_names[reason]);
	diag_num(f, "dropped", worst);
}

/* What the VM receives: the program's histogram of the frames it
 * delivered to the port, by bytes. */
static void judge_sizes(const struct diag_input *in, const struct diag_kdp_port *p, struct diag_report *r)
{
	const struct dpif_port_stats *c = &p->st;
	if (c->tx_bytes < DIAG_KDP_SMALL_MIN_BYTES || !c->tx_frames)
		return;
	uint64_t small = c->tx_hist_bytes[0] + c->tx_hist_bytes[1];
	uint64_t permille = small * 1000 / c->tx_bytes;
	if (permille < 500)
		return;
	uint64_t avg = c->tx_bytes / c->tx_frames;
	struct diag_finding *f = diag_add(r, in, DIAG_SMALL_FRAMES_KERNEL, c->name,
		"%s: the VM receives small frames: %" PRIu64 " per mille of %" PRIu64 " bytes in frames under "
		"%u bytes, %" PRIu64 " bytes on average. The kernel datapath hands on what the kernel's GRO "
		"built: check GRO on the underlay device and the vxlan device (ethtool -k DEV | grep "
		"generic-receive-offload) and that the peer sends TSO/GSO frames",
		c->name, permille, c->tx_bytes, DIAG_KDP_SMALL_BOUND, avg);
	diag_num(f, "small_permille", permille);
	diag_num(f, "avg_bytes", avg);
	diag_num(f, "frames", c->tx_frames);
}

static void judge_remotes(const struct diag_input *in, const struct diag_kdp_port *p, struct diag_report *r)
{
	const struct dpif_port_stats *st = &p->st;
	for (unsigned i = 0; i < p->n_remotes && i < DIAG_KDP_MAX_REMOTES; i++) {
		const struct diag_kdp_remote *rm = &p->remotes[i];
		const struct dpif_vtep_stats *s = &rm->s;
		/* Silent: frames went to it and nothing came back for 3 s
		 * after the last of them was sent, or ever. */
		if (s->tx_frames < DIAG_SILENT_MIN_FRAMES || s->rx_age_ns <= s->tx_age_ns)
			continue;
		bool heard = s->rx_age_ns != UINT64_MAX;
		if (heard && s->rx_age_ns < DIAG_SILENT_NS)
			continue;
		uint64_t secs = heard ? s->rx_age_ns / 1000000000ull : 0;
		char before[96] = "nothing ever came from it";
		if (s->rx_frames)
			snprintf(before, sizeof(before), "%" PRIu64 " frames came before, the last %" PRIu64 " s ago",
				 s->rx_frames, secs);
		struct diag_finding *f = diag_add(r, in, DIAG_REMOTE_SILENT, st->name,
			"%s: remote VTEP %s is silent: %" PRIu64 " frames sent to it and no frame of VNI %u back "
			"(%s): check its address, that it listens on UDP %u (dstport) and serves VNI %u, and any "
			"firewall between", st->name, rm->addr, s->tx_frames, st->vni, before, st->dst_port, st->vni);
		diag_str(f, "remote", rm->addr);
		diag_num(f, "sent", s->tx_frames);
		diag_num(f, "silent_s", secs);
		diag_num(f, "rx_datagrams", s->rx_frames);
		diag_num(f, "dstport", st->dst_port);
		diag_num(f, "vni", st->vni);
	}
}

static const struct diag_kdp_port *vxlan_of(const struct diag_kdp_input *k, uint32_t vni)
{
	for (unsigned i = 0; i < k->n_ports; i++)
		if (k->ports[i].st.vxlan && k->ports[i].st.vni == vni)
			return &k->ports[i];
	return NULL;
}

static void judge_config(const struct diag_input *in, const struct diag_kdp_input *k, unsigned i,
			 struct diag_report *r)
{
	const struct dpif_port_stats *p = &k->ports[i].st;
	const struct diag_kdp_port *vxp = vxlan_of(k, p->vni);
	if (!vxp) {
		unsigned n = 0, first = i;
		bool other_vxlan = false;
		for (unsigned j = 0; j < k->n_ports; j++) {
			if (k->ports[j].st.vxlan)
				other_vxlan = true;
			else if (k->ports[j].st.vni == p->vni && n++ == 0)
				first = j;
		}
		if (first != i || (n > 1 && !other_vxlan))
			return; /* once per VNI; a local-only VNI of several VMs is fine */
		struct diag_finding *f = diag_add(r, in, DIAG_VNI_NO_VXLAN, p->name,
			"VNI %u has %u port%s (%s%s) and no vxlan port: its frames reach no other host: give it "
			"the VNI of its vxlan port, or add a vxlan port for VNI %u", p->vni, n, n == 1 ? "" : "s",
			p->name, n > 1 ? ", ..." : "", p->vni);
		diag_num(f, "vni", p->vni);
		diag_num(f, "taps", n);
		return;
	}
	const struct dpif_port_stats *vx = &vxp->st;
	bool v6 = vx->underlay_family == AF_INET6;
	uint32_t over = v6 ? 70u : 50u;
	uint32_t fit = vx->mtu > over ? vx->mtu - over : 0;
	if (!fit || !p->mtu || p->mtu <= fit || p->internal)
		return;
	struct diag_finding *f = diag_add(r, in, DIAG_MTU_UNDERLAY, p->name,
		"%s: VM MTU %u is larger than the %u that fits VXLAN over the %u-byte IPv%u underlay of %s: "
		"frames over %u are dropped by the kernel's vxlan device (or fragmented); set the VM MTU to %u "
		"or raise the underlay MTU to %u", p->name, p->mtu, fit, vx->mtu, v6 ? 6 : 4,
		vx->name, fit, fit, vx->mtu + (p->mtu - fit));
	diag_num(f, "mtu", p->mtu);
	diag_num(f, "fits", fit);
	diag_num(f, "underlay_mtu", vx->mtu);
}

/* A port with rules whose frames mostly miss the kernel's decision cache:
 * each miss is an upcall, vxswitchd's classifier and a re-injection. */
static void judge_rules_cache(const struct diag_input *in, const struct diag_kdp_input *k,
			      const struct diag_kdp_port *p, struct diag_report *r)
{
	const struct dpif_port_stats *st = &p->st;
	if (!st->rule_path)
		return;
	uint64_t missed = st->rule_misses + st->rule_stale, lookups = missed + st->rule_hits;
	if (missed < DIAG_KDP_THRASH_MIN_MISSES || missed * 1000 < lookups * DIAG_KDP_THRASH_PERMILLE)
		return;
	uint64_t permille = missed * 1000 / lookups;
	bool full = k->dp.rule_cache_full > 0;
	struct diag_finding *f = diag_add(r, in, DIAG_RULES_CACHE_THRASHING, st->name,
		"%s: the kernel's rule cache missed %" PRIu64 " of %" PRIu64 " lookups (%" PRIu64 ".%" PRIu64
		" %%): those frames went up to vxswitchd's classifier and back (the slow path). %s",
		st->name, missed, lookups, permille / 10, permille % 10,
		full ? "The cache was full (flows beyond it stay on the slow path): fewer flows through "
		       "ports with rules, or rules only on the ports that need them"
		     : "Its entries are exact flows (each connection, each TCP flag combination): many "
		       "short flows miss every time; rules only on the ports that need them, or "
		       "--datapath user for such a port's traffic");
	diag_num(f, "misses", missed);
	diag_num(f, "lookups", lookups);
	diag_num(f, "miss_permille", permille);
	diag_num(f, "cache_full", k->dp.rule_cache_full);
	diag_num(f, "entries", k->dp.rule_cache_entries);
	diag_num(f, "max_entries", k->dp.rule_cache_max);
}

void diag_judge_kdp(const struct diag_input *in, const struct diag_kdp_input *k, struct diag_report *r)
{
	const struct dpif_dp_stats *d = &k->dp;
	if (d->dev[0]) {
		judge_attached(in, NULL, d->dev, d->dev_attached, d->dev_program, r);
		judge_upcalls(in, d->dev, &d->dev_stats, r);
	}
	for (unsigned i = 0; i < k->n_ports && i < DIAG_KDP_MAX_PORTS; i++) {
		const struct diag_kdp_port *p = &k->ports[i];
		if (p->st.vxlan) {
			judge_remotes(in, p, r);
			judge_rules_cache(in, k, p, r); /* its VNI's lookups (all its vxlan ports') */
			continue;
		}
		judge_attached(in, p->st.name, p->st.dev, p->st.attached, p->st.program, r);
		judge_config(in, k, i, r);
		judge_upcalls(in, p->st.name, &p->st, r);
		judge_drops(in, p, r);
		judge_sizes(in, p, r);
		judge_rules_cache(in, k, p, r);
	}
}
