/* vxswitchd's control commands: struct ctl_cmd -> changes to the switch
 * (ports, FDB entries, knobs) and the dispatch of every verb; the long
 * answers are printed by stats_print.c and diagnose.c.  Runs on the datapath
 * thread between two batches, so nothing here races the data path. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "daemon/vxd_internal.h"
#include "port/tap.h"
#include "port/vxlan.h"

#define VXD_VERSION "vxswitchd 0.1"

int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

struct port *vxd_port_by_name(const struct vxd *vxd, const char *name)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && strcmp(vxd->ports[i]->name, name) == 0)
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

/* The vxlan port of `vni`, if any (the first one). */
static struct port *vxd_vxlan_of_vni(const struct vxd *vxd, uint32_t vni)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_vxlan(vxd->ports[i]) && vxd->ports[i]->vni == vni)
			return vxd->ports[i];
	return NULL;
}

/* Applies `edit` to a clone of the VNI table and publishes it.  Single
 * thread: the old table can go at once. */
typedef int vni_edit_fn(struct vni_table *table, const void *arg);

static int vxd_vni_edit(struct vxd *vxd, vni_edit_fn *edit, const void *arg)
{
	struct vni_table *next = vni_table_clone(vni_table_current(&vxd->vni_ref));
	if (!next)
		return -ENOMEM;
	int err = edit(next, arg);
	if (err < 0) {
		vni_table_destroy(next);
		return err;
	}
	vni_table_destroy(vni_table_publish(&vxd->vni_ref, next));
	vxd->fwd.vnis = vni_table_current(&vxd->vni_ref);
	return 0;
}

struct vxd_vni_port_arg {
	const struct port *port;
	const struct vxlan_options *vx; /* vxlan ports: the remotes */
	bool add;
};

static int vxd_vni_port_edit(struct vni_table *table, const void *varg)
{
	const struct vxd_vni_port_arg *arg = varg;
	uint32_t vni = arg->port->vni;
	int err;
	if (arg->add) {
		err = vni_add(table, vni);
		if (err < 0 && err != -EEXIST)
			return err;
		if (!arg->vx)
			return vni_add_port(table, vni, arg->port->id);
		for (unsigned i = 0; i < arg->vx->n_remotes; i++) {
			struct fdb_dst d = fdb_dst_vtep(arg->port->id, arg->vx->remotes[i].family,
							arg->vx->remotes[i].bytes);
			err = vni_add_vtep(table, vni, &d);
			if (err < 0 && err != -EEXIST)
				return err;
		}
		return 0;
	}
	if (!arg->vx) {
		vni_del_port(table, vni, arg->port->id);
	} else {
		for (unsigned i = 0; i < arg->vx->n_remotes; i++) {
			struct fdb_dst d = fdb_dst_vtep(arg->port->id, arg->vx->remotes[i].family,
							arg->vx->remotes[i].bytes);
			vni_del_vtep(table, vni, &d);
		}
	}
	const struct vni *v = vni_lookup(table, vni);
	if (v && v->n_ports == 0 && v->n_vteps == 0)
		vni_del(table, vni);
	return 0;
}

static void vxd_sock_src_rebuild_vnis(struct vxd *vxd, struct vxd_src *src)
{
	src->n_vnis = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *p = vxd->ports[i];
		if (p && port_is_vxlan(p) && vxlan_port_sock(p) == src->sock &&
		    src->n_vnis < VXD_SOCK_MAX_VNIS)
			src->vnis[src->n_vnis++] = (struct vxd_sock_vni){ p->vni, p->id };
	}
}

static void vxd_sock_src_release(struct vxd *vxd, unsigned idx)
{
	struct vxd_src *src = vxd->socks[idx];
	epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, vxlan_sock_fd(src->sock), NULL);
	vxlan_sock_unref(src->sock);
	free(src);
	vxd->socks[idx] = NULL;
}

void vxd_port_remove(struct vxd *vxd, uint16_t id)
{
	struct port *port = vxd->ports[id];
	if (!port)
		return;
	vxd_flush_all(vxd);
	struct vxd_vni_port_arg arg = {
		.port = port,
		.vx = port_is_vxlan(port) ? vxlan_port_options(port) : NULL,
		.add = false,
	};
	vxd_vni_edit(vxd, vxd_vni_port_edit, &arg);
	/* Every entry behind this port: for a vxlan port, every VTEP on it. */
	struct fdb_dst dst = fdb_dst_port(id);
	if (port_is_vxlan(port)) {
		memset(&dst, 0, sizeof(dst));
		dst.type = FDB_DST_VTEP;
		dst.port = id;
	}
	struct fdb_flush_filter filter = { .vni = FDB_VNI_ANY, .dst = &dst, .kinds = FDB_FLUSH_ALL };
	fdb_flush(vxd->fdb, &filter);

	if (port_is_tap(port)) {
		epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, port->fd, NULL);
		free(vxd->tap_srcs[id]);
		vxd->tap_srcs[id] = NULL;
	}
	struct vxlan_sock *sock = port_is_vxlan(port) ? vxlan_port_sock(port) : NULL;
	vxd->ports[id] = NULL;
	vxd->txq[id].n = 0;
	for (unsigned i = 0; sock && i < VXD_MAX_SOCKS; i++) {
		struct vxd_src *src = vxd->socks[i];
		if (!src || src->sock != sock)
			continue;
		vxd_sock_src_rebuild_vnis(vxd, src);
		if (src->n_vnis == 0)
			vxd_sock_src_release(vxd, i);
	}
	port_destroy(port);
}

/* Tells the operator, once, when a VM-facing MTU does not fit the underlay. */
static void vxd_check_mtu(struct vxd *vxd, struct ctl_print *out, uint32_t vni)
{
	struct port *vx = vxd_vxlan_of_vni(vxd, vni);
	if (!vx)
		return;
	struct vxlan_port_info info;
	vxlan_port_get_info(vx, &info);
	const char *fam = vxlan_port_options(vx)->local.family == 6 ? "IPv6" : "IPv4";
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *p = vxd->ports[i];
		if (!p || !port_is_tap(p) || p->vni != vni || p->mtu <= info.inner_mtu_fit)
			continue;
		ctl_print_text(out, "warning: %s MTU %u is larger than the %u that fits VXLAN over a %u-byte %s underlay: "
			       "frames over %u without TSO are dropped (mtu_exceeded); set the VM MTU to %u\n",
			       p->name, p->mtu, info.inner_mtu_fit, info.underlay_mtu, fam,
			       info.inner_mtu_fit, info.inner_mtu_fit);
		vxd_log(vxd, "%s: MTU %u > %u that fits a %u-byte %s underlay (VNI %u)", p->name, p->mtu,
			info.inner_mtu_fit, info.underlay_mtu, fam, vni);
	}
}

static int vxd_add_tap(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_print *out,
		       struct ctl_err *err)
{
	int id = vxd_free_id(vxd);
	if (id < 0)
		return vxd_refuse(err, id, "port %s: too many ports (%d)", pa->name, VXD_MAX_PORTS - 1);
	uint32_t mtu = pa->mtu;
	if (!mtu) {
		/* Default: what fits the VNI's underlay, when we know it. */
		struct port *vx = vxd_vxlan_of_vni(vxd, pa->vni);
		if (vx) {
			struct vxlan_port_info info;
			vxlan_port_get_info(vx, &info);
			mtu = info.inner_mtu_fit;
		}
	}
	struct tap_options topts = {
		.name = pa->name,
		.netns = pa->netns[0] ? pa->netns : NULL,
		.mtu = mtu,
		.vni = pa->vni,
	};
	struct port *port;
	int ret = tap_port_open(&topts, &port);
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: cannot open tap: %s", pa->name, strerror(-ret));
	port->id = (uint16_t)id;
	if (!vxd->knobs[CTL_KNOB_TAP_TSO] || !vxd->knobs[CTL_KNOB_GSO])
		tap_port_set_offload(port, false);
	struct vxd_src *src = calloc(1, sizeof(*src));
	if (!src) {
		ret = -ENOMEM;
		goto err_destroy;
	}
	src->kind = VXD_SRC_TAP;
	src->port = port;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };
	if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, port->fd, &ev) < 0) {
		ret = -errno;
		goto err_free_src;
	}
	vxd->ports[id] = port;
	vxd->tap_srcs[id] = src;
	struct vxd_vni_port_arg arg = { .port = port, .add = true };
	ret = vxd_vni_edit(vxd, vxd_vni_port_edit, &arg);
	if (ret < 0) {
		vxd_port_remove(vxd, (uint16_t)id);
		return vxd_refuse(err, ret, "port %s: VNI %u: %s", pa->name, pa->vni, strerror(-ret));
	}
	vxd_check_mtu(vxd, out, pa->vni);
	vxd_log(vxd, "port %s: tap, vni %u%s%s, mtu %u", pa->name, pa->vni,
		topts.netns ? ", netns " : "", topts.netns ? topts.netns : "", port->mtu);
	return 0;

err_free_src:
	free(src);
err_destroy:
	port_destroy(port);
	return vxd_refuse(err, ret, "port %s: %s", pa->name, strerror(-ret));
}

static int vxd_add_vxlan(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_print *out,
			 struct ctl_err *err)
{
	int id = vxd_free_id(vxd);
	if (id < 0)
		return vxd_refuse(err, id, "port %s: too many ports", pa->name);
	struct vxlan_options vo = {
		.vni = pa->vni,
		.local = vxd_addr_from_ctl(&pa->local),
		.dst_port = pa->dstport,
		.mtu = pa->mtu,
	};
	for (unsigned i = 0; i < pa->n_remotes && i < VXLAN_MAX_REMOTES; i++)
		vo.remotes[vo.n_remotes++] = vxd_addr_from_ctl(&pa->remotes[i]);

	/* Two VNIs on one (local IP, port) share the socket: find it. */
	struct vxd_src *src = NULL;
	int free_slot = -1;
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
		if (!vxd->socks[i]) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (vxlan_sock_matches(vxd->socks[i]->sock, &vo.local, pa->dstport))
			src = vxd->socks[i];
	}
	if (src) {
		for (unsigned i = 0; i < src->n_vnis; i++)
			if (src->vnis[i].vni == pa->vni)
				return vxd_refuse(err, -EEXIST, "port %s: vni %u already has a vxlan port on that address and port",
						  pa->name, pa->vni);
		if (src->n_vnis == VXD_SOCK_MAX_VNIS)
			return vxd_refuse(err, -ENOSPC, "port %s: too many VNIs on one socket", pa->name);
	} else if (free_slot < 0) {
		return vxd_refuse(err, -ENOSPC, "port %s: too many underlay sockets", pa->name);
	}

	struct port *port;
	int ret = vxlan_port_open(&vo, src ? src->sock : NULL, &port);
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: cannot open the underlay socket: %s", pa->name, strerror(-ret));
	snprintf(port->name, sizeof(port->name), "%s", pa->name);
	port->id = (uint16_t)id;
	struct vxlan_sock *sock = vxlan_port_sock(port);
	vxlan_sock_set_udp_segment(sock, vxd->knobs[CTL_KNOB_UDP_SEGMENT]);
	if (!vxd->knobs[CTL_KNOB_UDP_GRO])
		vxlan_sock_set_udp_gro(sock, false);
	vxlan_port_set_gso(port, vxd->knobs[CTL_KNOB_GSO]);
	if (!src) {
		src = calloc(1, sizeof(*src));
		if (!src) {
			port_destroy(port);
			return vxd_refuse(err, -ENOMEM, "port %s: out of memory", pa->name);
		}
		src->kind = VXD_SRC_SOCK;
		src->sock = sock;
		vxlan_sock_ref(sock);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };
		if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, vxlan_sock_fd(sock), &ev) < 0) {
			ret = -errno;
			vxlan_sock_unref(sock);
			free(src);
			port_destroy(port);
			return vxd_refuse(err, ret, "port %s: epoll: %s", pa->name, strerror(-ret));
		}
		vxd->socks[free_slot] = src;
	}
	vxd->ports[id] = port;
	vxd_sock_src_rebuild_vnis(vxd, src);
	struct vxd_vni_port_arg arg = { .port = port, .vx = vxlan_port_options(port), .add = true };
	ret = vxd_vni_edit(vxd, vxd_vni_port_edit, &arg);
	if (ret < 0) {
		vxd_port_remove(vxd, (uint16_t)id);
		return vxd_refuse(err, ret, "port %s: VNI %u: %s", pa->name, pa->vni, strerror(-ret));
	}
	struct vxlan_port_info info;
	vxlan_port_get_info(port, &info);
	const char *fam = vo.local.family == 6 ? "IPv6" : "IPv4";
	ctl_print_text(out, "%s: underlay MTU %u (%s): inner MTU that fits is %u\n", pa->name,
		       info.underlay_mtu, fam, info.inner_mtu_fit);
	vxd_log(vxd, "port %s: vxlan vni %u, underlay MTU %u (%s): inner MTU that fits is %u", pa->name,
		pa->vni, info.underlay_mtu, fam, info.inner_mtu_fit);
	vxd_check_mtu(vxd, out, pa->vni);
	return 0;
}

/* ---- fdb -------------------------------------------------------------------------- */

static int vxd_fdb_dst_from_cmd(struct vxd *vxd, const struct ctl_fdb *f, struct fdb_dst *dst,
				struct ctl_err *err)
{
	if (f->dst == CTL_FDB_DST_PORT) {
		struct port *port = vxd_port_by_name(vxd, f->port);
		if (!port)
			return vxd_refuse(err, -ENOENT, "port %s: no such port", f->port);
		*dst = fdb_dst_port(port->id);
		return 0;
	}
	struct vxlan_addr a = vxd_addr_from_ctl(&f->remote);
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (port && port_is_vxlan(port) && port->vni == f->vni &&
		    vxlan_port_options(port)->local.family == a.family) {
			*dst = fdb_dst_vtep(port->id, a.family, a.bytes);
			return 0;
		}
	}
	return vxd_refuse(err, -ENOENT, "vni %u: no vxlan port of that address family", f->vni);
}

/* ---- knobs ---------------------------------------------------------------------- */

static void vxd_apply_tap_offload(struct vxd *vxd)
{
	bool on = vxd->knobs[CTL_KNOB_TAP_TSO] && vxd->knobs[CTL_KNOB_GSO];
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_tap(vxd->ports[i]))
			tap_port_set_offload(vxd->ports[i], on);
}

static int vxd_set(struct vxd *vxd, const struct ctl_set *set, struct ctl_err *err)
{
	uint32_t old = vxd->knobs[set->knob];
	vxd_diag_snapshot(vxd, true);
	vxd->knobs[set->knob] = set->value;
	int ret = 0;
	switch (set->knob) {
	case CTL_KNOB_GRO:
		vxd_flush_all(vxd);
		gro_flush(vxd->gro, GRO_FLUSH_ALL, vxd_now_ns());
		vxd_flush_all(vxd);
		break;
	case CTL_KNOB_GSO:
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i] && port_is_vxlan(vxd->ports[i]))
				vxlan_port_set_gso(vxd->ports[i], set->value);
		vxd_apply_tap_offload(vxd);
		break;
	case CTL_KNOB_TAP_TSO:
		vxd_apply_tap_offload(vxd);
		break;
	case CTL_KNOB_UDP_GRO:
		for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
			if (!vxd->socks[i])
				continue;
			int r = vxlan_sock_set_udp_gro(vxd->socks[i]->sock, set->value);
			if (r < 0)
				ret = r;
		}
		if (ret < 0) {
			vxd->knobs[set->knob] = old;
			return vxd_refuse(err, ret, "udp-gro: %s",
					  ret == -EOPNOTSUPP ? "refused by the kernel at start-up" : strerror(-ret));
		}
		break;
	case CTL_KNOB_UDP_SEGMENT:
		for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
			if (vxd->socks[i])
				vxlan_sock_set_udp_segment(vxd->socks[i]->sock, set->value);
		break;
	case CTL_KNOB_GRO_HOLD_US:
	case CTL_KNOB_GRO_MAX_SIZE:
		ret = vxd_gro_rebuild(vxd);
		if (ret < 0) {
			vxd->knobs[set->knob] = old;
			vxd_gro_rebuild(vxd);
			return vxd_refuse(err, ret, "%s: %s", ctl_knob_info(set->knob)->name, strerror(-ret));
		}
		break;
	case CTL_KNOB_FDB_AGEING:
		fdb_set_ageing(vxd->fdb, set->value ? (uint64_t)set->value * 1000000000ull : UINT64_MAX / 2);
		break;
	case CTL_KNOB_FDB_MAX:
		if (fdb_set_max_learned_per_vni(vxd->fdb, set->value) < 0) {
			vxd->knobs[set->knob] = old;
			return vxd_refuse(err, -ERANGE, "fdb-max %u: above the %u learned entries the table was sized for "
					  "at start-up (vxswitchd --fdb-size)", set->value, fdb_get_max_learned(vxd->fdb));
		}
		break;
	default:
		break;
	}
	return 0;
}

static void vxd_show_knobs(const struct vxd *vxd, struct ctl_print *p)
{
	ctl_print_open_object(p, NULL);
	for (unsigned k = 0; k < CTL_KNOB_COUNT; k++) {
		const struct ctl_knob_info *ki = ctl_knob_info(k);
		char fmt[96];
		if (ki->kind == CTL_KNOB_BOOL) {
			snprintf(fmt, sizeof(fmt), "%s %%s\n", ki->name);
			ctl_print_bool(p, CTL_PRINT_ANY, ki->name, fmt, vxd->knobs[k]);
		} else {
			snprintf(fmt, sizeof(fmt), "%s %%" PRIu64 "\n", ki->name);
			ctl_print_uint(p, CTL_PRINT_ANY, ki->name, fmt, vxd->knobs[k]);
		}
	}
	ctl_print_close_object(p);
}

/* ---- dispatch ------------------------------------------------------------------- */

int vxd_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	switch (cmd->verb) {
	case CTL_PORT_ADD: {
		const struct ctl_port_add *pa = &cmd->port_add;
		if (vxd_port_by_name(vxd, pa->name))
			return vxd_refuse(err, -EEXIST, "port %s: exists", pa->name);
		return pa->type == CTL_PORT_TAP ? vxd_add_tap(vxd, pa, out, err) : vxd_add_vxlan(vxd, pa, out, err);
	}
	case CTL_PORT_DEL: {
		struct port *port = vxd_port_by_name(vxd, cmd->port.name);
		if (!port)
			return vxd_refuse(err, -ENOENT, "port %s: no such port", cmd->port.name);
		vxd_port_remove(vxd, port->id);
		vxd_log(vxd, "port %s: removed", cmd->port.name);
		return 0;
	}
	case CTL_PORT_SHOW:
		vxd_port_show(vxd, out);
		return 0;
	case CTL_FDB_SHOW:
		vxd_fdb_show(vxd, cmd->fdb.has_vni ? cmd->fdb.vni : FDB_VNI_ANY, out);
		return 0;
	case CTL_FDB_ADD: {
		struct fdb_dst dst;
		int ret = vxd_fdb_dst_from_cmd(vxd, &cmd->fdb, &dst, err);
		if (ret < 0)
			return ret;
		ret = fdb_add_static(vxd->fdb, cmd->fdb.vni, cmd->fdb.mac, &dst, vxd_now_ns());
		return ret < 0 ? vxd_refuse(err, ret, "fdb add: %s", strerror(-ret)) : 0;
	}
	case CTL_FDB_DEL: {
		int ret = fdb_del(vxd->fdb, cmd->fdb.vni, cmd->fdb.mac);
		return ret < 0 ? vxd_refuse(err, ret, "fdb del: no such entry") : 0;
	}
	case CTL_FDB_FLUSH: {
		struct fdb_flush_filter f = {
			.vni = cmd->fdb.has_vni ? cmd->fdb.vni : FDB_VNI_ANY,
			.kinds = FDB_FLUSH_LEARNED,
		};
		size_t gone = fdb_flush(vxd->fdb, &f);
		ctl_print_open_object(out, NULL);
		ctl_print_uint(out, CTL_PRINT_ANY, "flushed", "flushed %" PRIu64 " entries\n", gone);
		ctl_print_close_object(out);
		return 0;
	}
	case CTL_STATS:
		return vxd_stats(vxd, &cmd->port, out, err);
	case CTL_SET:
		return vxd_set(vxd, &cmd->set, err);
	case CTL_SHOW_KNOBS:
		vxd_show_knobs(vxd, out);
		return 0;
	case CTL_DIAGNOSE:
		return vxd_diagnose(vxd, &cmd->port, out, err);
	case CTL_VERSION:
		ctl_print_open_object(out, NULL);
		ctl_print_string(out, CTL_PRINT_ANY, "version", "%s\n", VXD_VERSION);
		ctl_print_close_object(out);
		return 0;
	default:
		return vxd_refuse(err, -EOPNOTSUPP, "unknown command");
	}
}
