/* Adding and removing ports.  The order of each step is what keeps the
 * worker safe without locks:
 *   add:    open -> worker sets up its io (request) -> VNI table + view
 *           published -> fd watched (so no event arrives for a port the
 *           worker cannot see yet)
 *   remove: new VNI table built (the only step that can fail: then nothing
 *           has changed) -> fd unwatched -> view published and a grace
 *           period waited -> worker drops its io and the port's FDB entries
 *           (request) -> port destroyed, its id free again.
 * A port id is reused only after the VNI table without it is published, so
 * a new port never inherits an old port's VNI membership. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "control/evpn.h"
#include "control/vxd_internal.h"
#include "port/afpacket.h"
#include "port/frame.h"
#include "port/rtnl.h"
#include "port/tap.h"
#include "port/vxlan.h"
#include "util/vlog.h"

_Static_assert((int)CTL_SRCPORT_MAX_PORTS == (int)VXLAN_SRCPORT_MAX_PORTS, "the grammar takes what the port can hold");

struct port *vxd_port_by_name(const struct vxd *vxd, const char *name)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && strcmp(vxd->ports[i]->name, name) == 0)
			return vxd->ports[i];
	return NULL;
}

struct port *vxd_vxlan_of_vni(const struct vxd *vxd, uint32_t vni)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_vxlan(vxd->ports[i]) && vxd->ports[i]->vni == vni)
			return vxd->ports[i];
	return NULL;
}

static int vxd_free_id(const struct vxd *vxd)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (!vxd->ports[i])
			return (int)i;
	return -ENOSPC;
}

static struct vxlan_addr vxd_addr_from_ctl(const struct ctl_ip *ip)
{
	struct vxlan_addr a = { .family = ip->family == AF_INET6 ? 6 : 4 };
	memcpy(a.bytes, ip->bytes, ip->family == AF_INET6 ? 16 : 4);
	return a;
}

/* ---- the VNI table ---------------------------------------------------------- */

/* A copy of the published VNI table with `port` added or removed, in
 * *out; the published one is untouched. */
static int vxd_vnis_with(const struct vxd *vxd, const struct port *port, bool add, struct vni_table **out)
{
	struct vni_table *t;
	int err = vni_table_clone(vxd_view(vxd)->vnis, &t);
	if (err < 0)
		return err;
	const struct vxlan_options *vx = port_is_vxlan(port) ? vxlan_port_options(port) : NULL;
	uint32_t vni = port->vni;
	if (add) {
		err = vni_add(t, vni);
		if (err == -EEXIST)
			err = 0;
		if (err == 0 && !vx)
			err = vni_add_port(t, vni, port->id);
		for (unsigned i = 0; err == 0 && vx && i < vx->n_remotes; i++) {
			struct fdb_dst d = fdb_dst_vtep(port->id, vx->remotes[i].family, vx->remotes[i].bytes);
			err = vni_add_vtep(t, vni, &d);
			if (err == -EEXIST)
				err = 0;
		}
	} else {
		if (!vx)
			vni_del_port(t, vni, port->id);
		for (unsigned i = 0; vx && i < vx->n_remotes; i++) {
			struct fdb_dst d = fdb_dst_vtep(port->id, vx->remotes[i].family, vx->remotes[i].bytes);
			vni_del_vtep(t, vni, &d);
		}
		const struct vni *v = vni_lookup(t, vni);
		if (v && v->n_ports == 0 && v->n_vteps == 0)
			vni_del(t, vni);
	}
	if (err < 0) {
		vni_table_destroy(t);
		return err;
	}
	*out = t;
	return 0;
}

/* ---- removal ---------------------------------------------------------------- */

static int vxd_sock_slot(const struct vxd *vxd, const struct vxlan_sock *sock)
{
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
		if (vxd->socks[i] && vxd->socks[i] == sock)
			return (int)i;
	return -1;
}

static bool vxd_sock_in_use(const struct vxd *vxd, const struct vxlan_sock *sock)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_vxlan(vxd->ports[i]) && vxlan_port_sock(vxd->ports[i]) == sock)
			return true;
	return false;
}

/* The worker dropped every FDB entry behind a removed port: so does the
 * running configuration (an entry via a remote goes with the VNI's last
 * vxlan port). */
static void vxd_forget_statics_of(struct vxd *vxd, const struct port *port)
{
	for (size_t i = 0; i < vxd->n_statics;) {
		const struct ctl_fdb *f = &vxd->statics[i];
		bool gone = f->dst == CTL_FDB_DST_PORT ? strcmp(f->port, port->name) == 0
						       : port_is_vxlan(port) && !vxd_vxlan_of_vni(vxd, f->vni);
		if (gone)
			vxd_statics_forget(vxd, f->vni, f->mac);
		else
			i++;
	}
}

/* Every FDB entry behind a port that is gone, and its MAC cap. */
static void vxd_fdb_forget_port(struct vxd *vxd, const struct port *port)
{
	struct fdb_dst dst = fdb_dst_port(port->id);
	if (port_is_vxlan(port)) {
		memset(&dst, 0, sizeof(dst));
		dst.type = FDB_DST_VTEP;
		dst.port = port->id;
	}
	struct fdb_flush_filter filter = { .vni = FDB_VNI_ANY, .dst = &dst, .kinds = FDB_FLUSH_ALL };
	vxd->dp->class->fdb_flush(vxd->dp, &filter);
	vxd->dp->class->fdb_port_forget(vxd->dp, port->id);
}

int vxd_port_remove(struct vxd *vxd, uint16_t id, struct ctl_err *err)
{
	struct port *port = vxd->ports[id];
	if (!port)
		return vxd_refuse(err, -ENOENT, "port id %u: no such port", id);
	vxd_evpn_port_removed(vxd, vxd->port_cfg[id].name);
	struct vni_table *vnis;
	int ret = vxd_vnis_with(vxd, port, false, &vnis);
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: cannot build the VNI table without it (%s): the port stays",
				  port->name, strerror(-ret));
	vxd_capture_port_removed(vxd, vxd->dp, id);
	vxd->ports[id] = NULL;
	struct vxlan_sock *sock = port_is_vxlan(port) ? vxlan_port_sock(port) : NULL;
	int slot = sock && !vxd_sock_in_use(vxd, sock) ? vxd_sock_slot(vxd, sock) : -1;
	if (slot >= 0)
		vxd->socks[slot] = NULL;
	ret = vxd_publish(vxd, vnis);
	if (ret < 0) {
		vxd->ports[id] = port;
		if (slot >= 0)
			vxd->socks[slot] = sock;
		vni_table_destroy(vnis);
		return vxd_refuse(err, ret, "port %s: cannot publish the switch without it (%s): the port stays",
				  port->name, strerror(-ret));
	}
	/* No worker sees the port: stop its events, take its io, then forget
	 * every FDB entry behind it (for a vxlan port: every VTEP on it),
	 * which no worker can learn again. */
	if (port_is_frame(port))
		vxd_unwatch_port(vxd, port);
	if (slot >= 0)
		vxd_unwatch_sock(vxd, sock);
	vxd->dp->class->port_detach(vxd->dp, id, slot >= 0);
	vxd_fdb_forget_port(vxd, port);
	vxd_forget_statics_of(vxd, port);
	vxd_links_port_removed(vxd, id);
	memset(&vxd->port_cfg[id], 0, sizeof(vxd->port_cfg[id]));
	port_destroy(port);
	if (slot >= 0)
		vxlan_sock_unref(sock);
	return 0;
}

/* ---- addition ---------------------------------------------------------------- */

/* Tells the operator, once, when a VM-facing MTU does not fit the underlay
 * or the vxlan port's own `mtu`, whichever is smaller: frames over it that
 * come without TSO (a retransmitted full segment among them) are dropped,
 * which stalls TCP. */
static void vxd_check_mtu(struct vxd *vxd, struct ctl_print *out, uint32_t vni)
{
	struct port *vx = vxd_vxlan_of_vni(vxd, vni);
	if (!vx)
		return;
	struct vxlan_port_info info;
	vxlan_port_get_info(vx, NULL, &info);
	const char *fam = vxlan_port_options(vx)->local.family == 6 ? "IPv6" : "IPv4";
	uint32_t limit = vx->mtu < info.inner_mtu_fit ? vx->mtu : info.inner_mtu_fit;
	char why[96];
	if (limit < info.inner_mtu_fit)
		snprintf(why, sizeof(why), "the mtu %u of %s", limit, vx->name);
	else
		snprintf(why, sizeof(why), "the %u that fits VXLAN over a %u-byte %s underlay", limit,
			 info.underlay_mtu, fam);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *p = vxd->ports[i];
		if (!p || !port_is_frame(p) || p->vni != vni || p->mtu <= limit)
			continue;
		ctl_print_text(out, "warning: %s MTU %u is larger than %s: "
			       "frames over %u without TSO are dropped (mtu_exceeded); set the VM MTU to %u\n",
			       p->name, p->mtu, why, limit, limit);
		VLOG_WARN("port", "%s: MTU %u > %s (VNI %u)", p->name, p->mtu, why, vni);
	}
}

/* Says so when a vxlan port's datagrams will cross a veth with their UDP
 * checksum unfinished: a kernel peer takes them, a raw reader (Open
 * vSwitch's userspace datapath) drops them all. */
static void vxd_check_wire_csum(const struct vxd *vxd, uint16_t id, struct ctl_print *out)
{
	const struct ctl_port_add *pa = &vxd->port_cfg[id];
	const struct vxd_link_state *ls = &vxd->links[id];
	if (pa->type != CTL_PORT_VXLAN || !pa->udpcsum || !ls->csum_unfinished)
		return;
	ctl_print_text(out, "note: %s: its underlay %s is a veth with tx checksum offload: datagrams reach the peer "
		       "with unfinished UDP checksums. A kernel peer takes them; one that reads the wire raw (Open "
		       "vSwitch's userspace datapath) drops them all: there, use udpcsum off%s or ethtool -K %s tx off\n",
		       pa->name, ls->dev, pa->local.family == AF_INET6 ? " (not allowed over IPv6)" : "", ls->dev);
	VLOG_INFO("port", "%s: underlay %s is a veth with tx checksum offload: UDP checksums leave unfinished",
		  pa->name, ls->dev);
}

/* Makes an opened port part of the switch (see the order at the top).  On
 * failure the port is destroyed, and so is `new_sock_slot`'s socket
 * reference when the port brought a new socket. */
static int vxd_port_commit(struct vxd *vxd, struct port *port, int new_sock_slot, struct ctl_err *err)
{
	uint16_t id = port->id;
	struct vni_table *vnis = NULL;
	int ret = vxd->dp->class->port_attach(vxd->dp, id, port, new_sock_slot >= 0);
	if (ret < 0)
		goto err_destroy;
	ret = vxd_vnis_with(vxd, port, true, &vnis);
	if (ret < 0)
		goto err_detach;
	vxd->ports[id] = port;
	if (new_sock_slot >= 0)
		vxd->socks[new_sock_slot] = vxlan_port_sock(port);
	ret = vxd_publish(vxd, vnis);
	if (ret < 0)
		goto err_unpublished;
	if (port_is_frame(port))
		ret = vxd_watch_port(vxd, port);
	else if (new_sock_slot >= 0)
		ret = vxd_watch_sock(vxd, (unsigned)new_sock_slot, vxlan_port_sock(port));
	if (ret < 0) {
		char name[IF_NAMESIZE];
		snprintf(name, sizeof(name), "%s", port->name);
		vxd_port_remove(vxd, id, NULL);
		return vxd_refuse(err, ret, "port %s: epoll: %s", name, strerror(-ret));
	}
	return 0;

err_unpublished:
	vxd->ports[id] = NULL;
	if (new_sock_slot >= 0)
		vxd->socks[new_sock_slot] = NULL;
	vni_table_destroy(vnis);
err_detach:
	vxd->dp->class->port_detach(vxd->dp, id, new_sock_slot >= 0);
err_destroy:
	vxd_refuse(err, ret, "port %s: %s", port->name, strerror(-ret));
	if (new_sock_slot >= 0)
		vxlan_sock_unref(vxlan_port_sock(port));
	port_destroy(port);
	return ret;
}

/* A tap's or an afpacket port's commit: max-macs before the first frame
 * can be read, set for the id now and forgotten again if the port does
 * not make it. */
static int vxd_commit_frame(struct vxd *vxd, struct port *port, const struct ctl_port_add *pa, struct ctl_err *err)
{
	uint16_t id = port->id;
	vxd->dp->class->fdb_set_port_max(vxd->dp, id, (pa->given & CTL_PK_MAX_MACS) ? pa->max_macs : 0);
	int ret = vxd_port_commit(vxd, port, -1, err);
	if (ret < 0)
		vxd->dp->class->fdb_set_port_max(vxd->dp, id, 0);
	return ret;
}

/* An afpacket port opens a link that is there (port/afpacket.h); its MTU
 * is the link's. */
static int vxd_add_afpacket(struct vxd *vxd, const struct ctl_port_add *pa, int id, struct ctl_print *out,
			    struct ctl_err *err)
{
	struct afpacket_options ao = {
		.name = pa->name,
		.dev = pa->dev,
		.netns = pa->netns[0] ? pa->netns : NULL,
		.vni = pa->vni,
	};
	if (!vxd->knobs[CTL_KNOB_GSO])
		return vxd_refuse(err, -EBUSY, "port %s: gso is off: the link's TSO frames come whole (a packet socket "
				  "cannot ask for them cut) and the vxlan port would drop them all: set gso on first",
				  pa->name);
	struct port *port;
	char why[CTL_ERR_SIZE - 32] = "";
	int ret = afpacket_port_open(&ao, &port, why, sizeof(why));
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: %s", pa->name, why[0] ? why : strerror(-ret));
	port->id = (uint16_t)id;
	ret = vxd_commit_frame(vxd, port, pa, err);
	if (ret < 0)
		return ret;
	struct afpacket_port_info ai;
	afpacket_port_get_info(port, NULL, &ai);
	vxd_check_mtu(vxd, out, pa->vni);
	VLOG_INFO("port", "%s: afpacket on %s%s%s, vni %u, mtu %u, vnet_hdr %u bytes, link tso %s", pa->name, ai.dev,
		  ao.netns ? " in netns " : "", ao.netns ? ao.netns : "", pa->vni, port->mtu, ai.hdr_size,
		  ai.link_tso ? "on" : "off");
	return 0;
}

/* A tap is created persistent or attached as it is (see port/tap.h): the
 * default MTU (what fits the VNI's underlay) is only for one the switch
 * creates; a device made now goes again if the add fails. */
static int vxd_add_tap(struct vxd *vxd, const struct ctl_port_add *pa, int id, struct ctl_print *out,
		       struct ctl_err *err)
{
	uint32_t default_mtu = 0;
	struct port *vx = vxd_vxlan_of_vni(vxd, pa->vni);
	if (vx) {
		struct vxlan_port_info info;
		vxlan_port_get_info(vx, NULL, &info);
		default_mtu = info.inner_mtu_fit;
	}
	struct tap_options topts = {
		.name = pa->name,
		.netns = pa->netns[0] ? pa->netns : NULL,
		.mtu = pa->mtu,
		.default_mtu = default_mtu,
		.mac = (pa->given & CTL_PK_TAP_MAC) ? pa->mac : NULL,
		.vni = pa->vni,
		.queues = vxd->n_workers,
	};
	struct port *port;
	char why[CTL_ERR_SIZE - 32] = "";
	int ret = tap_port_open(&topts, &port, why, sizeof(why));
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: %s", pa->name, why[0] ? why : strerror(-ret));
	port->id = (uint16_t)id;
	struct tap_port_info ti;
	tap_port_get_info(port, NULL, &ti);
	tap_port_set_delete(port, ti.created);
	if (!vxd->knobs[CTL_KNOB_TAP_TSO] || !vxd->knobs[CTL_KNOB_GSO]) {
		ret = tap_port_set_offload(port, false);
		if (ret < 0) {
			port_destroy(port);
			return vxd_refuse(err, ret, "port %s: cannot turn the tap's offloads off (tap-tso/gso off): %s",
					  pa->name, strerror(-ret));
		}
	}
	ret = vxd_commit_frame(vxd, port, pa, err);
	if (ret < 0)
		return ret;
	tap_port_set_delete(port, false);
	vxd_check_mtu(vxd, out, pa->vni);
	VLOG_INFO("port", "%s: tap (%s), vni %u%s%s, mtu %u", pa->name,
		  ti.created ? "created, persistent" : "attached to the existing device", pa->vni,
		  topts.netns ? ", netns " : "", topts.netns ? topts.netns : "", port->mtu);
	return 0;
}

/* The socket a new vxlan port shares, or the slot a new socket takes. */
static int vxd_find_sock(struct vxd *vxd, const struct ctl_port_add *pa, const struct vxlan_addr *local,
			 struct vxlan_sock **shared, struct ctl_err *err)
{
	int free_slot = -1;
	*shared = NULL;
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
		if (!vxd->socks[i]) {
			if (free_slot < 0)
				free_slot = (int)i;
		} else if (vxlan_sock_matches(vxd->socks[i], local, pa->dstport)) {
			*shared = vxd->socks[i];
		}
	}
	if (!*shared)
		return free_slot >= 0 ? free_slot
				      : vxd_refuse(err, -ENOSPC, "port %s: too many underlay sockets", pa->name);
	unsigned n = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct port *p = vxd->ports[i];
		if (!p || !port_is_vxlan(p) || vxlan_port_sock(p) != *shared)
			continue;
		if (p->vni == pa->vni)
			return vxd_refuse(err, -EEXIST, "port %s: vni %u already has a vxlan port on that address and port",
					  pa->name, pa->vni);
		n++;
	}
	if (n >= VXD_SOCK_MAX_VNIS)
		return vxd_refuse(err, -ENOSPC, "port %s: too many VNIs on one socket (%d)", pa->name,
				  VXD_SOCK_MAX_VNIS);
	return -1; /* shared: no new slot */
}

static void vxd_apply_sock_knobs(struct vxd *vxd, struct port *port)
{
	struct vxlan_sock *sock = vxlan_port_sock(port);
	vxlan_sock_set_udp_segment(sock, vxd->knobs[CTL_KNOB_UDP_SEGMENT]);
	if (!vxd->knobs[CTL_KNOB_UDP_GRO])
		vxlan_sock_set_udp_gro(sock, false);
	vxlan_port_set_gso(port, vxd->knobs[CTL_KNOB_GSO]);
}

static int vxd_add_vxlan(struct vxd *vxd, const struct ctl_port_add *pa, int id, struct ctl_print *out,
			 struct ctl_err *err)
{
	struct vxlan_options vo = {
		.vni = pa->vni,
		.local = vxd_addr_from_ctl(&pa->local),
		.dst_port = pa->dstport,
		.mtu = pa->mtu,
		/* outer headers (the grammar refused what cannot be honoured) */
		.udp_zero_csum = !pa->udpcsum,
		.df = pa->df == CTL_DF_UNSET ? VXLAN_DF_UNSET : pa->df == CTL_DF_INHERIT ? VXLAN_DF_INHERIT : VXLAN_DF_SET,
		.src_port_min = pa->srcport_min,
		.src_port_max = pa->srcport_max,
		.lanes = vxd->n_workers,
	};
	_Static_assert((int)CTL_SRCPORT_MAX_PORTS == (int)VXLAN_SRCPORT_MAX_PORTS, "srcport cap");
	for (unsigned i = 0; i < pa->n_remotes && i < VXLAN_MAX_REMOTES; i++)
		vo.remotes[vo.n_remotes++] = vxd_addr_from_ctl(&pa->remotes[i]);
	struct vxlan_sock *shared;
	int slot = vxd_find_sock(vxd, pa, &vo.local, &shared, err);
	if (slot < -1)
		return slot;
	char why[160];
	if (shared && vxlan_sock_check_options(shared, &vo, why, sizeof(why)) < 0)
		return vxd_refuse(err, -EINVAL, "port %s: %s", pa->name, why);
	struct port *port;
	int ret = vxlan_port_open(&vo, shared, &port);
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: cannot open the underlay socket: %s", pa->name, strerror(-ret));
	snprintf(port->name, sizeof(port->name), "%s", pa->name);
	port->id = (uint16_t)id;
	if (slot >= 0)
		vxlan_sock_ref(vxlan_port_sock(port)); /* the slot's reference */
	vxd_apply_sock_knobs(vxd, port);
	ret = vxd_port_commit(vxd, port, slot, err);
	if (ret < 0)
		return ret;
	struct vxlan_port_info info;
	vxlan_port_get_info(port, NULL, &info);
	const char *fam = vo.local.family == 6 ? "IPv6" : "IPv4";
	ctl_print_text(out, "%s: underlay MTU %u (%s): inner MTU that fits is %u\n", pa->name,
		       info.underlay_mtu, fam, info.inner_mtu_fit);
	VLOG_INFO("port", "%s: vxlan vni %u, underlay MTU %u (%s): inner MTU that fits is %u", pa->name,
		  pa->vni, info.underlay_mtu, fam, info.inner_mtu_fit);
	vxd_check_mtu(vxd, out, pa->vni);
	return 0;
}

/* The device of a lost frame port is there to attach to: an afpacket
 * port's link exists; a tap exists and nobody holds it (tap.h). */
static bool vxd_frame_device_ready(const struct ctl_port_add *cfg)
{
	const char *netns = cfg->netns[0] ? cfg->netns : NULL;
	if (cfg->type != CTL_PORT_AFPACKET)
		return tap_device_free(cfg->name, netns);
	struct rtnl_link_info li;
	return rtnl_link_get_in(netns, cfg->dev, 0, &li) == 0;
}

int vxd_reattach_port(struct vxd *vxd, uint16_t id, const char *why)
{
	if (!vxd->ports[id] || !port_is_frame(vxd->ports[id]) || !vxd_snapshot(vxd)->ports[id].lost_ns)
		return 0;
	const struct ctl_port_add *cfg = &vxd->port_cfg[id];
	if (!vxd_frame_device_ready(cfg))
		return 0;
	struct ctl_port_add pa = *cfg; /* the removal clears port_cfg[id] */
	uint64_t reattaches = vxd->links[id].reattaches;
	struct ctl_print out;
	struct ctl_err err = { 0 };
	ctl_print_init(&out, false, 0);
	int ret = vxd_port_add(vxd, &pa, &out, &err);
	ctl_print_finish(&out);
	ctl_print_release(&out);
	struct port *back = ret == 0 ? vxd_port_by_name(vxd, pa.name) : NULL;
	if (back) {
		vxd->links[back->id].reattaches = reattaches + 1;
		vxd->links[back->id].reattached_by = why;
		VLOG_INFO("port", "%s: its device is back: reattached (%s)", pa.name, why);
		return 1;
	}
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
	VLOG_WARN_RL(&rl, "port", "%s: its device is back but cannot be attached yet: %s", pa.name, err.msg);
	return -1;
}

/* A tap or afpacket port whose device went away comes back by itself once a device of its
 * name is there again (made by a container runtime, `ip tuntap add`, a
 * VM manager): at once on its link event (links.c), and, in case that
 * message was lost, checked from the control loop once a second, no
 * faster, and only while some tap is down. */
unsigned vxd_reattach_lost(struct vxd *vxd, const char *why)
{
	const struct vxd_snapshot *snap = NULL;
	unsigned still = 0;
	for (uint16_t i = 1; i < VXD_MAX_PORTS; i++) {
		if (!vxd->ports[i] || !port_is_frame(vxd->ports[i]))
			continue;
		if (!snap)
			snap = vxd_snapshot(vxd);
		if (!snap->ports[i].lost_ns)
			continue;
		if (vxd_reattach_port(vxd, i, why) > 0)
			snap = NULL; /* ids moved: take a fresh one for the next */
		else
			still++;
	}
	return still;
}

int vxd_port_add(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_print *out, struct ctl_err *err)
{
	struct port *old = vxd_port_by_name(vxd, pa->name);
	/* A port whose device went away is replaced; the new one is made
	 * first and the lost one removed only once it works, so an attempt
	 * that fails (the device still held by whoever made it) leaves the
	 * lost port there for the next attempt. */
	bool replace = old && vxd_snapshot(vxd)->ports[old->id].lost_ns;
	if (old && !replace)
		return vxd_refuse(err, -EEXIST, "port %s: exists", pa->name);
	int id = vxd_free_id(vxd);
	if (id < 0)
		return vxd_refuse(err, id, "port %s: too many ports (%d)", pa->name, VXD_MAX_PORTS - 1);
	int ret = pa->type == CTL_PORT_TAP	? vxd_add_tap(vxd, pa, id, out, err)
		  : pa->type == CTL_PORT_AFPACKET ? vxd_add_afpacket(vxd, pa, id, out, err)
						  : vxd_add_vxlan(vxd, pa, id, out, err);
	if (ret < 0)
		return ret;
	if (replace) {
		struct ctl_err e = { 0 };
		if (vxd_port_remove(vxd, old->id, &e) < 0)
			VLOG_ERR("port", "%s: the lost port it replaces cannot be removed: %s", pa->name, e.msg);
	}
	vxd->port_cfg[id] = *pa;
	if (pa->type == CTL_PORT_VXLAN && (pa->given & CTL_PK_EVPN) &&
	    (ret = vxd_evpn_port_added(vxd, (uint16_t)id, err)) < 0) {
		if (vxd_port_remove(vxd, (uint16_t)id, NULL) < 0)
			VLOG_ERR("port", "%s: refused for evpn but cannot be removed", pa->name);
		return ret;
	}
	vxd_links_port_added(vxd, (uint16_t)id);
	vxd_check_wire_csum(vxd, (uint16_t)id, out);
	return 0;
}
