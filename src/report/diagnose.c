/* vxswitchd's `diagnose`: the switch and its counters put into a struct
 * diag_input, judged by diag.h's pure functions, and printed: in text one
 * finding a line ("no problem found" when there is none), in JSON
 * {"findings": [{"cause", "port", fields..., "text"}], "problems": N}.
 * Returns CTL_DONE_FINDINGS when there is a problem, so vxctl exits 1. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "report/diag.h"
#include "control/evpn.h"
#include "port/evpn_shadow.h"
#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "port/frame.h"
#include "port/tap.h"
#include "port/vxlan.h"

/* An EVPN port's state as diag_evpn.c judges it (nothing for a port
 * without evpn), on either datapath. */
static void vxd_diag_port_evpn(const struct vxd *vxd, const char *name, struct diag_port *dp)
{
	struct vxd_evpn_diag ed;
	if (!vxd_evpn_diag(vxd, name, &ed))
		return;
	dp->evpn = true;
	dp->evpn_zebra = ed.zebra;
	dp->evpn_vteps = ed.vteps;
	dp->evpn_macs_no_flood = ed.macs_no_flood;
	snprintf(dp->evpn_no_flood_vtep, sizeof(dp->evpn_no_flood_vtep), "%s", ed.no_flood_vtep);
	dp->evpn_fault = ed.fault ? evpn_shadow_fault_name(ed.fault) : NULL;
	snprintf(dp->evpn_shadow_vx, sizeof(dp->evpn_shadow_vx), "%s", ed.shadow_vx);
	snprintf(dp->evpn_shadow_br, sizeof(dp->evpn_shadow_br), "%s", ed.shadow_br);
	dp->evpn_macs_flapping = ed.macs_flapping;
	dp->evpn_flap_moves = ed.flap_moves;
	const uint8_t *m = ed.flap_mac;
	snprintf(dp->evpn_flap_mac, sizeof(dp->evpn_flap_mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	snprintf(dp->evpn_flap_vtep, sizeof(dp->evpn_flap_vtep), "%s", ed.flap_vtep);
}

/* The EVPN ports a datapath serves itself (devports.c), judged by the
 * same rules as the userspace datapath's (diag_evpn.c). */
static void vxd_diag_devport_evpn(const struct vxd *vxd, const struct diag_input *in, struct diag_report *r)
{
	const struct ctl_port_add *cfgs[VXD_MAX_DEVPORTS];
	unsigned n_cfgs = vxd_devports(vxd, cfgs, VXD_MAX_DEVPORTS);
	struct diag_input *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return;
	ev->only = in->only;
	unsigned n = 1; /* slot 0 is no port's (port ids start at 1) */
	for (unsigned i = 0; i < n_cfgs && n < VXD_MAX_PORTS; i++) {
		if (cfgs[i]->type != CTL_PORT_VXLAN)
			continue;
		struct diag_port *dp = &ev->ports[n];
		dp->kind = DIAG_PORT_VXLAN;
		snprintf(dp->name, sizeof(dp->name), "%s", cfgs[i]->name);
		dp->vni = cfgs[i]->vni;
		dp->n_remotes = cfgs[i]->n_remotes;
		vxd_diag_port_evpn(vxd, cfgs[i]->name, dp);
		n += dp->evpn;
	}
	if (n > 1)
		diag_judge_evpn(ev, r);
	free(ev);
}

static void vxd_diag_port(const struct vxd *vxd, unsigned i, struct diag_port *dp)
{
	const struct port *port = vxd->ports[i];
	const struct vxd_link_state *ls = &vxd->links[i];
	if (ls->down_ns) {
		uint64_t now = vxd_now_ns();
		dp->link_down = true;
		dp->link_down_s = now > ls->down_ns ? (now - ls->down_ns) / 1000000000ull : 0;
		dp->link_down_events = ls->down_events;
		snprintf(dp->link_dev, sizeof(dp->link_dev), "%s", ls->dev);
	}
	snprintf(dp->netns, sizeof(dp->netns), "%s", vxd->port_cfg[i].netns);
	snprintf(dp->name, sizeof(dp->name), "%s", port->name);
	dp->vni = port->vni;
	dp->mtu = port->mtu;
	dp->internal = vxd_port_internal(vxd, (uint16_t)i);
	if (port_is_frame(port)) { /* a tap or an afpacket port: judged alike */
		dp->kind = DIAG_PORT_TAP;
		struct tap_kernel_stats ks;
		dp->kernel_ok = port_is_tap(port) && tap_port_kernel_stats(port, &ks) == 0;
		dp->kernel_tx_dropped = dp->kernel_ok ? ks.tx_dropped : 0;
	} else if (port_is_vxlan(port)) {
		dp->kind = DIAG_PORT_VXLAN;
		const struct vxlan_options *o = vxlan_port_options(port);
		struct vxlan_port_info vi;
		vxlan_port_get_info(port, NULL, &vi);
		dp->dst_port = o->dst_port;
		dp->family = o->local.family;
		dp->inner_mtu_fit = vi.inner_mtu_fit;
		dp->underlay_mtu = vi.underlay_mtu;
		dp->csum_unfinished = ls->csum_unfinished && vxd->port_cfg[i].udpcsum;
		if (dp->csum_unfinished)
			snprintf(dp->link_dev, sizeof(dp->link_dev), "%s", ls->dev);
		dp->n_remotes = o->n_remotes;
		vxd_diag_port_evpn(vxd, port->name, dp);
	}
}

/* Where the workers run, and each one's share of a core over the window:
 * what an operator checks first when a path is slow (not a finding). */
static void vxd_diag_workers(struct ctl_print *p, const struct vxd *vxd, const struct diag_input *in)
{
	const struct vxd_snapshot *a = in->then, *b = in->now;
	ctl_print_open_object(p, "workers");
	ctl_print_uint(p, CTL_PRINT_ANY, "n", "workers: %" PRIu64, b->n_workers);
	ctl_print_string(p, CTL_PRINT_ANY, "placement", " (%s)", vxd->placement.how);
	uint64_t wall_us = a && b->taken_ns > a->taken_ns ? (b->taken_ns - a->taken_ns) / 1000 : 0;
	ctl_print_open_array(p, "busy_permille");
	for (unsigned i = 0; i < b->n_workers; i++) {
		uint64_t cpu = b->workers[i].cpu_user_us + b->workers[i].cpu_sys_us;
		if (a && i < a->n_workers)
			cpu -= a->workers[i].cpu_user_us + a->workers[i].cpu_sys_us;
		ctl_print_uint(p, CTL_PRINT_ANY, NULL, i ? ", %" PRIu64 : "; busy over the window (permille): %" PRIu64,
			       wall_us ? cpu * 1000 / wall_us : 0);
	}
	ctl_print_close_array(p);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void vxd_diag_print(struct ctl_print *p, const struct vxd *vxd, const struct diag_input *in,
			   const struct diag_report *r)
{
	ctl_print_open_object(p, NULL);
	ctl_print_open_array(p, "findings");
	for (unsigned i = 0; i < r->n; i++) {
		const struct diag_finding *f = &r->f[i];
		ctl_print_open_object(p, NULL);
		ctl_print_string(p, CTL_PRINT_JSON, "cause", NULL, diag_cause_name(f->cause));
		if (f->port[0])
			ctl_print_string(p, CTL_PRINT_JSON, "port", NULL, f->port);
		for (unsigned k = 0; k < f->n_fields; k++) {
			const struct diag_field *fl = &f->fields[k];
			if (fl->is_str)
				ctl_print_string(p, CTL_PRINT_JSON, fl->key, NULL, fl->str);
			else
				ctl_print_uint(p, CTL_PRINT_JSON, fl->key, NULL, fl->num);
		}
		ctl_print_bool(p, CTL_PRINT_JSON, "problem", NULL, !diag_cause_is_note(f->cause));
		ctl_print_string(p, CTL_PRINT_ANY, "text", "%s\n", f->text);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	if (r->left_out)
		ctl_print_uint(p, CTL_PRINT_ANY, "left_out", "(%" PRIu64 " more findings left out)\n", r->left_out);
	ctl_print_uint(p, CTL_PRINT_JSON, "problems", NULL, diag_problems(r));
	if (diag_problems(r) == 0)
		ctl_print_text(p, "no problem found\n");
	vxd_diag_workers(p, vxd, in);
	ctl_print_close_object(p);
}

int vxd_diagnose(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p,
		 struct ctl_err *err)
{
	struct vxd_dp_port dev;
	if (ref->has_port && !vxd_port_by_name(vxd, ref->name) && !vxd_devport_find(vxd, ref->name, &dev))
		return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	struct diag_input *in = calloc(1, sizeof(*in));
	struct diag_report *r = calloc(1, sizeof(*r));
	if (!in || !r) {
		free(in);
		free(r);
		return vxd_refuse(err, -ENOMEM, "diagnose: out of memory");
	}
	in->now = vxd_snapshot(vxd);
	in->then = vxd->diag_prev;
	memcpy(in->knobs, vxd->knobs, sizeof(in->knobs));
	in->only = ref->has_port ? ref->name : NULL;
	in->underlay_node = vxd->placement.dev_node;
	in->underlay = vxd->placement.dev;
	in->kernel_unavailable = !vxd->kdp && vxd->kdp_why[0] ? vxd->kdp_why : NULL;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i])
			vxd_diag_port(vxd, i, &in->ports[i]);
	diag_judge(in, r);
	struct dpif *devdp = vxd_devport_dpif(vxd);
	if (dpif_has_port_counters(devdp))
		vxd_devport_diag(devdp, in, r); /* the ports it serves itself (diagnose_dp.c) */
	vxd_diag_devport_evpn(vxd, in, r);
	vxd_diag_print(p, vxd, in, r);
	int ret = diag_problems(r) ? CTL_DONE_FINDINGS : 0;
	free(in);
	free(r);
	return ret;
}
