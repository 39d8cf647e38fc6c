/* diagnose, how the switch is built: VNIs without a way out, MTUs that do
 * not fit the underlay, offloads refused or switched off, the FDB.  Pure:
 * see diag.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/diag.h"
#include "port/tap.h"

/* The first vxlan port of `vni`, or -1. */
static int diag_vxlan_of(const struct diag_input *in, uint32_t vni)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (in->ports[i].kind == DIAG_PORT_VXLAN && in->ports[i].vni == vni)
			return (int)i;
	return -1;
}

/* A VNI whose taps reach no other host: no vxlan port in it, while the
 * switch has an underlay (a tap added without `vni` lands in VNI 0), or a
 * tap alone in its VNI, or frames of its taps found nowhere to go. */
static void diag_vni_no_vxlan(const struct diag_input *in, struct diag_report *r)
{
	bool any_vxlan = false;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		any_vxlan |= in->ports[i].kind == DIAG_PORT_VXLAN;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct diag_port *p = &in->ports[i];
		if (p->kind != DIAG_PORT_TAP || diag_vxlan_of(in, p->vni) >= 0)
			continue;
		bool link = false; /* a slow-path link: the kernel datapath's vxlan ports are its way out */
		for (unsigned j = 1; j < VXD_MAX_PORTS && !link; j++)
			link = in->ports[j].internal && in->ports[j].vni == p->vni;
		if (link)
			continue;
		unsigned taps = 0, first = 0;
		uint64_t unknown = 0;
		for (unsigned j = 1; j < VXD_MAX_PORTS; j++) {
			if (in->ports[j].kind != DIAG_PORT_TAP || in->ports[j].vni != p->vni)
				continue;
			if (!first)
				first = j;
			taps++;
			unknown += in->now->ports[j].stats.drops[DROP_FDB_DST_UNKNOWN];
		}
		if (first != i || (taps > 1 && !any_vxlan && !unknown))
			continue; /* said once per VNI; a local-only VNI of several VMs is fine */
		struct diag_finding *f = diag_add(r, in, DIAG_VNI_NO_VXLAN, p->name,
			"VNI %u has %u tap%s (%s%s) and no vxlan port: its frames reach no other host "
			"(%" PRIu64 " dropped as fdb_dst_unknown): "
			"give it the VNI of its vxlan port, or add a vxlan port for VNI %u",
			p->vni, taps, taps == 1 ? "" : "s", p->name, taps > 1 ? ", ..." : "", unknown, p->vni);
		diag_num(f, "vni", p->vni);
		diag_num(f, "taps", taps);
		diag_num(f, "fdb_dst_unknown", unknown);
	}
}

static void diag_mtu(const struct diag_input *in, struct diag_report *r)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct diag_port *p = &in->ports[i];
		int vx = p->kind == DIAG_PORT_TAP ? diag_vxlan_of(in, p->vni) : -1;
		if (vx < 0 || p->mtu <= in->ports[vx].inner_mtu_fit)
			continue;
		const struct diag_port *v = &in->ports[vx];
		uint64_t dropped = in->now->ports[i].stats.drops[DROP_MTU_EXCEEDED];
		struct diag_finding *f = diag_add(r, in, DIAG_MTU_UNDERLAY, p->name,
			"%s: VM MTU %u is larger than the %u that fits VXLAN over the %u-byte IPv%u underlay of %s: "
			"frames over %u without TSO are dropped (%" PRIu64 " so far, mtu_exceeded); set the VM MTU to %u "
			"or raise the underlay MTU to %u", p->name, p->mtu, v->inner_mtu_fit, v->underlay_mtu,
			v->family == 6 ? 6 : 4, v->name, v->inner_mtu_fit, dropped, v->inner_mtu_fit,
			v->underlay_mtu + (p->mtu - v->inner_mtu_fit));
		diag_num(f, "mtu", p->mtu);
		diag_num(f, "fits", v->inner_mtu_fit);
		diag_num(f, "underlay_mtu", v->underlay_mtu);
		diag_num(f, "mtu_exceeded", dropped);
	}
}

static struct diag_finding *diag_offload(struct diag_report *r, const struct diag_input *in, bool refused,
					 const char *port, const char *offload, const char *text)
{
	struct diag_finding *f = diag_add(r, in, refused ? DIAG_OFFLOAD_REFUSED : DIAG_OFFLOAD_OFF, port,
					  "%s%s%s", port ? port : "", port ? ": " : "", text);
	diag_str(f, "offload", offload);
	return f;
}

static void diag_tap_offloads(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct diag_port *p = &in->ports[i];
	const struct tap_port_info *ti = &in->now->ports[i].tap;
	if (!(ti->offloads_active & TAP_OL_TSO)) {
		bool refused = !(ti->offloads_probed & TAP_OL_TSO);
		diag_offload(r, in, refused, p->name, "tap_tso", refused ?
			     "TSO from the VM is off (TUNSETOFFLOAD refused by kernel): every 1.4 KB segment crosses "
			     "the switch alone; a kernel with tun offloads (TUN_F_TSO4/6) fixes it" :
			     "TSO from the VM is off (by knob tap-tso/gso): every 1.4 KB segment crosses the switch "
			     "alone; `set tap-tso on` and `set gso on`");
	}
	if (!(ti->offloads_probed & TAP_OL_USO))
		diag_offload(r, in, true, p->name, "tap_uso",
			     "USO from the VM is off (TUNSETOFFLOAD refused by kernel): its UDP crosses the switch cut "
			     "to MTU size (Linux >= 6.2 has TUN_F_USO4/6)");
}

static void diag_vxlan_offloads(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct diag_port *p = &in->ports[i];
	const struct vxlan_sock_stats *ss = &in->now->ports[i].sock;
	if (!ss->udp_gro_probed)
		diag_offload(r, in, true, p->name, "udp_gro",
			     "UDP_GRO refused by kernel: every datagram is a separate receive (Linux >= 5.0 has it)");
	else if (!ss->udp_gro_on)
		diag_offload(r, in, false, p->name, "udp_gro",
			     "udp-gro is off: every datagram is a separate receive; `set udp-gro on`");
	char text[160];
	if (ss->udp_segment_fallbacks) {
		snprintf(text, sizeof(text), "UDP_SEGMENT refused by kernel (%" PRIu64 " fallbacks): every datagram "
			 "is a separate send", ss->udp_segment_fallbacks);
		diag_num(diag_offload(r, in, true, p->name, "udp_segment", text), "fallbacks",
			 ss->udp_segment_fallbacks);
	} else if (!ss->udp_segment_probed) {
		diag_offload(r, in, true, p->name, "udp_segment",
			     "UDP_SEGMENT refused by kernel at start-up: every datagram is a separate send");
	} else if (!ss->udp_segment_on) {
		diag_offload(r, in, false, p->name, "udp_segment",
			     "udp-segment is off: every datagram is a separate send; `set udp-segment on`");
	}
}

static void diag_fdb(const struct diag_input *in, struct diag_report *r)
{
	const struct vxd_snapshot *s = in->now;
	if (s->fdb.refused_full) {
		struct diag_finding *f = diag_add(r, in, DIAG_FDB_FULL, NULL,
			"%" PRIu64 " new source MACs were not learned: a VNI's table reached fdb-max %u "
			"(or the table its --fdb-size, %u learned now); frames to them are flooded. One VM sending "
			"from many MACs? `max-macs N` on its port caps it alone", s->fdb.refused_full,
			in->knobs[CTL_KNOB_FDB_MAX], s->fdb.n_learned);
		diag_num(f, "refused", s->fdb.refused_full);
		diag_num(f, "learned", s->fdb.n_learned);
		diag_num(f, "fdb_max", in->knobs[CTL_KNOB_FDB_MAX]);
	}
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct diag_port *p = &in->ports[i];
		const struct vxd_port_snap *ps = &s->ports[i];
		if (p->kind != DIAG_PORT_TAP)
			continue;
		if (ps->fdb.refused) {
			struct diag_finding *f = diag_add(r, in, DIAG_MAX_MACS, p->name,
				"%s: %" PRIu64 " new source MACs refused by max-macs %u (%u learned): a VM sending from "
				"more MACs than allowed, or the limit too low", p->name, ps->fdb.refused, ps->fdb.max,
				ps->fdb.learned);
			diag_num(f, "refused", ps->fdb.refused);
			diag_num(f, "max_macs", ps->fdb.max);
		}
		uint32_t mine = ps->fdb.learned, all = ps->fdb_vni_learned;
		if (mine >= DIAG_HOG_MIN_MACS && (uint64_t)mine * 4 >= (uint64_t)all * 3) {
			struct diag_finding *f = diag_add(r, in, DIAG_FDB_PORT_HOG, p->name,
				"%s holds %u of the %u MACs learned in VNI %u: one VM sending from many source MACs "
				"(a MAC flood, or a bridge behind it); `max-macs N` on the port caps it", p->name,
				mine, all, p->vni);
			diag_num(f, "macs", mine);
			diag_num(f, "vni_macs", all);
			diag_num(f, "vni", p->vni);
		}
	}
}

static void diag_tap_lost(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct vxd_port_snap *ps = &in->now->ports[i];
	if (!ps->lost_ns)
		return;
	uint64_t ago = (in->now->taken_ns - ps->lost_ns) / 1000000000ull;
	struct diag_finding *f = diag_add(r, in, DIAG_TAP_LOST, in->ports[i].name,
		"%s: the tap device went away %" PRIu64 " s ago (%" PRIu64 " times in all): the port is down and out "
		"of the poll set; it reattaches when a device of its name is back, or `port add` it again",
		in->ports[i].name, ago, ps->lost_events);
	diag_num(f, "seconds", ago);
	diag_num(f, "times", ps->lost_events);
}

static void diag_link_down(const struct diag_input *in, struct diag_report *r, unsigned i)
{
	const struct diag_port *p = &in->ports[i];
	if (!p->link_down)
		return;
	struct diag_finding *f;
	if (p->kind == DIAG_PORT_TAP) {
		uint64_t dropped = in->now->ports[i].stats.drops[DROP_PORT_LINK_DOWN];
		f = diag_add(r, in, DIAG_LINK_DOWN, p->name,
			"%s: its link is down (%" PRIu64 " s, %" PRIu64 " times in all): %" PRIu64 " frames to it dropped "
			"(port_link_down); bring it up (ip link set %s up%s%s)", p->name, p->link_down_s,
			p->link_down_events, dropped, p->link_dev[0] ? p->link_dev : p->name,
			p->netns[0] ? " in netns " : "", p->netns);
		diag_num(f, "dropped", dropped);
	} else {
		f = diag_add(r, in, DIAG_LINK_DOWN, p->name,
			"%s: its underlay link %s is down (%" PRIu64 " s, %" PRIu64 " times in all): sends to the remotes "
			"fail unless a route leads out another way", p->name, p->link_dev, p->link_down_s,
			p->link_down_events);
		diag_str(f, "dev", p->link_dev);
	}
	diag_num(f, "seconds", p->link_down_s);
	diag_num(f, "times", p->link_down_events);
}

void diag_judge_config(const struct diag_input *in, struct diag_report *r)
{
	diag_vni_no_vxlan(in, r);
	diag_mtu(in, r);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (in->ports[i].kind == DIAG_PORT_TAP) {
			diag_tap_lost(in, r, i);
			if (!in->ports[i].internal)
				diag_tap_offloads(in, r, i);
		} else if (in->ports[i].kind == DIAG_PORT_VXLAN) {
			diag_vxlan_offloads(in, r, i);
		}
		if (in->ports[i].kind != DIAG_PORT_NONE)
			diag_link_down(in, r, i);
	}
	if (!in->knobs[CTL_KNOB_GSO])
		diag_offload(r, in, false, NULL, "gso",
			     "gso is off: the VMs' TSO is off too, the kernel cuts every frame to MTU size before we "
			     "read it; `set gso on`");
	diag_fdb(in, r);
	diag_judge_evpn(in, r);
	if (in->kernel_unavailable) {
		struct diag_finding *f = diag_add(r, in, DIAG_KERNEL_DATAPATH_UNAVAILABLE, NULL,
			"the kernel datapath is unavailable (%s): every frame takes the userspace datapath, four "
			"kernel copies and two daemon wake-ups per trip more than the kernel's own path; fix that "
			"and restart vxswitchd, or start it with --datapath user to choose this",
			in->kernel_unavailable);
		diag_str(f, "reason", in->kernel_unavailable);
	}
}
