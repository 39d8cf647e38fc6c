/* Taps beside the kernel datapath (`vxswitchd --datapath kernel`): a tap
 * whose fd vxswitchd holds cannot be a kernel datapath port (the program
 * redirects between netdevs; the frames a VM writes into its tap fd come
 * out of that fd's reader, us), so the userspace datapath's workers serve
 * it as they do with `--datapath user`, and one veth pair per VNI that
 * has taps, the slow-path link, joins the two datapaths:
 *
 *   tap vnetX (fd) -- workers -- afpacket vxslNu ==veth== vxslN -- tcx program -- veths, vxdp0
 *   (userspace datapath, VNI N)                           (kernel datapath, VNI N)
 *
 * vxslN is an internal port of the kernel datapath in VNI N
 * (kdp_ctl_internal_add): the programs flood to it like any local port
 * and learn the taps' MACs behind it; vxslNu is an afpacket port of the
 * userspace datapath in VNI N, which therefore has no vxlan port of its
 * own: everything beyond the taps, remote VTEPs included, is behind that
 * link, and the userspace FDB learns it there.  Why this and not another
 * bridge: it reuses both datapaths as they are (learning, flooding with
 * split horizon, caps, counters on each side, GSO frames whole both ways:
 * the afpacket port carries a virtio_net_hdr and a veth takes TSO), and a
 * frame between two taps never leaves the workers.  The cost: a frame
 * between a tap and a kernel port crosses the pair (one extra skb
 * hand-over) on top of the tap's own copies, which are the userspace
 * datapath's anyway.
 *
 * Life: the link is made when the first tap of a VNI is added (before the
 * tap: a failure refuses the tap) and removed with the VNI's last tap
 * (`port del`, reload, shutdown); its ends are no config lines (show
 * config, save and reload skip them), `port del` refuses them, `port
 * show` lists both (the taps say "datapath user (slow path via vxslN)"),
 * `stats` counts both ends.  A pair of that name left by a killed run is
 * deleted and made again.  IPv6 is off on both ends so the host stack
 * sends nothing into the VNI from them.
 *
 * The userspace datapath's workers run in kernel mode too (vxd.c starts
 * them always): with no port they sleep in epoll_wait (an idle daemon
 * measured 20 ms of CPU in 10 s, control loop included: docs/DESIGN.md),
 * so a tap added later needs no thread started then.
 *
 * Who calls it: control.c (vxd_execute: commands first, prune after `port
 * del`), config.c (prune after a reload; internal ports skipped),
 * stats_print.c (port show), vxd.c (close).  Control thread only. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "control/kdp_ports.h"
#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"
#include "dp/kernel/kdp_link.h"
#include "port/port.h"
#include "port/rtnl.h"
#include "util/vlog.h"

/* The pair's MTU: the largest a veth takes, so no frame either datapath
 * forwards is refused on the link (each VM port has its own MTU). */
enum { SL_MTU = 65535 };

static void sl_names(uint32_t vni, char k[IF_NAMESIZE], char u[IF_NAMESIZE])
{
	snprintf(k, IF_NAMESIZE, "vxsl%" PRIu32, vni);
	snprintf(u, IF_NAMESIZE, "vxsl%" PRIu32 "u", vni);
}

static struct vxd_slowlink *sl_of(struct vxd *vxd, uint32_t vni)
{
	for (unsigned i = 0; i < VXD_MAX_SLOWLINKS; i++)
		if (vxd->slow[i].used && vxd->slow[i].vni == vni)
			return &vxd->slow[i];
	return NULL;
}

static void sl_no_ipv6(const char *dev)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", dev);
	FILE *f = fopen(path, "w");
	if (!f)
		return; /* no IPv6 here, or no right to: the host stack may send its RS/MLD into the VNI */
	fputs("1\n", f);
	fclose(f);
}

static int sl_make(struct vxd *vxd, uint32_t vni, struct ctl_err *err)
{
	struct vxd_slowlink *slot = NULL;
	for (unsigned i = 0; i < VXD_MAX_SLOWLINKS && !slot; i++)
		if (!vxd->slow[i].used)
			slot = &vxd->slow[i];
	if (!slot)
		return vxd_refuse(err, -ENOSPC, "vni %u: taps beside the kernel datapath in more than %d VNIs", vni,
				  VXD_MAX_SLOWLINKS);
	char k[IF_NAMESIZE], u[IF_NAMESIZE];
	sl_names(vni, k, u);
	rtnl_link_delete(-1, k); /* a killed run's; ENODEV otherwise */
	int idx = kdp_link_veth_create(k, u, -1, SL_MTU);
	if (idx < 0)
		return vxd_refuse(err, idx, "vni %u: cannot make the slow-path link %s <-> %s: %s", vni, k, u,
				  strerror(-idx));
	sl_no_ipv6(k);
	sl_no_ipv6(u);
	uint16_t kid;
	int ret = kdp_ctl_internal_add(kdp_ctl_of(vxd->kdp), k, vni, &kid, err);
	if (ret < 0) {
		rtnl_link_delete(-1, k);
		return ret;
	}
	struct ctl_port_add pa = { .type = CTL_PORT_AFPACKET, .vni = vni };
	snprintf(pa.name, sizeof(pa.name), "%s", u);
	snprintf(pa.dev, sizeof(pa.dev), "%s", u);
	struct ctl_print out;
	ctl_print_init(&out, false, 0);
	ret = vxd_port_add(vxd, &pa, &out, err);
	ctl_print_finish(&out);
	ctl_print_release(&out);
	if (ret < 0) {
		kdp_ctl_internal_del(kdp_ctl_of(vxd->kdp), k);
		rtnl_link_delete(-1, k);
		return ret;
	}
	*slot = (struct vxd_slowlink){ .used = true, .vni = vni, .kid = kid };
	VLOG_INFO("port", "vni %u: slow-path link %s (kernel datapath) <-> %s (userspace datapath) for its taps", vni,
		  k, u);
	return 0;
}

static void sl_unmake(struct vxd *vxd, struct vxd_slowlink *sl)
{
	char k[IF_NAMESIZE], u[IF_NAMESIZE];
	sl_names(sl->vni, k, u);
	struct port *up = vxd_port_by_name(vxd, u);
	struct ctl_err e = { 0 };
	if (up && vxd_port_remove(vxd, up->id, &e) < 0)
		VLOG_ERR("port", "%s: cannot be removed: %s", u, e.msg);
	vxd_capture_port_removed(vxd, vxd->kdp, sl->kid);
	kdp_ctl_internal_del(kdp_ctl_of(vxd->kdp), k);
	int ret = rtnl_link_delete(-1, k); /* its peer goes with it */
	if (ret < 0 && ret != -ENODEV)
		VLOG_WARN("port", "vni %u: slow-path link %s: cannot delete it: %s", sl->vni, k, strerror(-ret));
	else
		VLOG_INFO("port", "vni %u: slow-path link %s removed (no tap left)", sl->vni, k);
	sl->used = false;
}

static bool sl_vni_has_tap(const struct vxd *vxd, uint32_t vni)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_tap(vxd->ports[i]) && vxd->ports[i]->vni == vni)
			return true;
	return false;
}

void vxd_slowpath_prune(struct vxd *vxd)
{
	for (unsigned i = 0; vxd->kdp && i < VXD_MAX_SLOWLINKS; i++)
		if (vxd->slow[i].used && !sl_vni_has_tap(vxd, vxd->slow[i].vni))
			sl_unmake(vxd, &vxd->slow[i]);
}

void vxd_slowpath_close(struct vxd *vxd)
{
	for (unsigned i = 0; vxd->kdp && i < VXD_MAX_SLOWLINKS; i++)
		if (vxd->slow[i].used)
			sl_unmake(vxd, &vxd->slow[i]);
}

/* The link whose kernel end is named `name` (NULL: any name) and has
 * kernel port id `kid` (0: any id); that end's name in k. */
static const struct vxd_slowlink *sl_kernel_end(const struct vxd *vxd, const char *name, uint16_t kid,
						 char k[IF_NAMESIZE])
{
	for (unsigned i = 0; vxd->kdp && i < VXD_MAX_SLOWLINKS; i++) {
		const struct vxd_slowlink *sl = &vxd->slow[i];
		char u[IF_NAMESIZE];
		if (!sl->used || (kid && sl->kid != kid))
			continue;
		sl_names(sl->vni, k, u);
		if (!name || !strcmp(k, name))
			return sl;
	}
	return NULL;
}

bool vxd_slowpath_kernel_end(const struct vxd *vxd, uint16_t kid, char name[IF_NAMESIZE])
{
	return kid && sl_kernel_end(vxd, NULL, kid, name);
}

bool vxd_slowpath_kernel_end_named(const struct vxd *vxd, const char *name, uint16_t *kid, uint32_t *vni)
{
	char k[IF_NAMESIZE];
	const struct vxd_slowlink *sl = sl_kernel_end(vxd, name, 0, k);
	if (sl) {
		*kid = sl->kid;
		*vni = sl->vni;
	}
	return sl != NULL;
}

bool vxd_port_internal(const struct vxd *vxd, uint16_t id)
{
	const struct port *p = vxd->ports[id];
	if (!vxd->kdp || !p || port_is_tap(p))
		return false;
	for (unsigned i = 0; i < VXD_MAX_SLOWLINKS; i++) {
		char k[IF_NAMESIZE], u[IF_NAMESIZE];
		if (!vxd->slow[i].used)
			continue;
		sl_names(vxd->slow[i].vni, k, u);
		if (!strcmp(p->name, u))
			return true;
	}
	return false;
}

void vxd_slowpath_print(struct ctl_print *p, const struct vxd *vxd, const struct port *port)
{
	if (!vxd->kdp)
		return;
	char k[IF_NAMESIZE], u[IF_NAMESIZE];
	sl_names(port->vni, k, u);
	if (vxd_port_internal(vxd, port->id)) {
		ctl_print_uint(p, CTL_PRINT_ANY, "slow_path_link", " (slow-path link of vni %" PRIu64, port->vni);
		ctl_print_string(p, CTL_PRINT_ANY, "peer", ", peer %s)", k);
	} else if (port_is_tap(port)) {
		ctl_print_string(p, CTL_PRINT_ANY, "slow_path", " (slow path via %s)", k);
	}
}

/* `port add` of a tap: its VNI's link first, then the tap; a tap that
 * fails takes a link made for it along. */
static int sl_tap_add(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_print *out, struct ctl_err *err)
{
	if (vxd_port_by_name(vxd, pa->name))
		return vxd_refuse(err, -EEXIST, "port %s: exists", pa->name);
	if (!sl_of(vxd, pa->vni)) {
		int ret = sl_make(vxd, pa->vni, err);
		if (ret < 0) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			return vxd_refuse(err, ret, "port %s: %s", pa->name, msg);
		}
	}
	int ret = vxd_port_add(vxd, pa, out, err);
	if (ret < 0)
		vxd_slowpath_prune(vxd);
	return ret;
}

bool vxd_slowpath_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err,
			  int *ret)
{
	if (cmd->verb == CTL_PORT_ADD) {
		const struct ctl_port_add *pa = &cmd->port_add;
		if (pa->type == CTL_PORT_TAP) {
			if (kdp_ctl_port_info(kdp_ctl_of(vxd->kdp), pa->name, &(struct kdp_ctl_port_info){ 0 }) == 0)
				*ret = vxd_refuse(err, -EEXIST, "port %s: exists (a kernel datapath port)", pa->name);
			else
				*ret = sl_tap_add(vxd, pa, out, err);
			return true;
		}
		if (vxd_port_by_name(vxd, pa->name)) {
			*ret = vxd_refuse(err, -EEXIST, "port %s: exists (a tap on the userspace datapath)", pa->name);
			return true;
		}
		return false;
	}
	if (cmd->verb == CTL_PORT_DEL) {
		const struct port *p = vxd_port_by_name(vxd, cmd->port.name);
		struct kdp_ctl_port_info ki;
		uint32_t vni = p && vxd_port_internal(vxd, p->id) ? p->vni
			       : kdp_ctl_port_info(kdp_ctl_of(vxd->kdp), cmd->port.name, &ki) == 0 && ki.internal ? ki.spec->vni
			       : 0;
		if (vni) { /* either end of a link */
			*ret = vxd_refuse(err, -EPERM, "port %s: the slow-path link of vni %u: it goes with the VNI's last tap",
					  cmd->port.name, vni);
			return true;
		}
	}
	return false;
}
