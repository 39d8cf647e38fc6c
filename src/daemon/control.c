/* vxswitchd's control commands: struct ctl_cmd -> changes to the switch and
 * printed answers (text or JSON through one printer).  Runs on the datapath
 * thread between two batches, so nothing here races the data path. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "daemon/vxd_internal.h"
#include "port/tap.h"
#include "port/vxlan.h"

#define VXD_VERSION "vxswitchd 0.1"

static int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static struct port *vxd_port_by_name(const struct vxd *vxd, const char *name)
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

/* ---- printing ---------------------------------------------------------------- */

static void vxd_print_ip(struct ctl_print *p, const char *key, const char *fmt, uint8_t family,
			 const uint8_t *bytes)
{
	struct ctl_ip ip = { .family = family == 6 ? AF_INET6 : AF_INET };
	memcpy(ip.bytes, bytes, family == 6 ? 16 : 4);
	ctl_print_ip(p, CTL_PRINT_ANY, key, fmt, &ip);
}

static void vxd_print_port_line(struct ctl_print *p, const struct port *port)
{
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "%s", port->name);
	ctl_print_uint(p, CTL_PRINT_ANY, "id", " id %" PRIu64, port->id);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " type %s", port->cls->kind_name);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, port->vni);
	ctl_print_uint(p, CTL_PRINT_ANY, "mtu", " mtu %" PRIu64, port->mtu);
	if (port_is_tap(port)) {
		struct tap_port_info ti;
		tap_port_get_info(port, &ti);
		ctl_print_bool(p, CTL_PRINT_ANY, "tso", " tso %s", ti.offloads_active & TAP_OL_TSO);
		ctl_print_bool(p, CTL_PRINT_ANY, "csum", " csum %s", ti.offloads_active & TAP_OL_CSUM);
		ctl_print_bool(p, CTL_PRINT_ANY, "uso", " uso %s", ti.offloads_active & TAP_OL_USO);
	} else if (port_is_vxlan(port)) {
		const struct vxlan_options *vo = vxlan_port_options(port);
		vxd_print_ip(p, "local", " local %s", vo->local.family, vo->local.bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "dstport", " dstport %" PRIu64, vo->dst_port);
		ctl_print_open_array(p, "remotes");
		for (unsigned i = 0; i < vo->n_remotes; i++)
			vxd_print_ip(p, NULL, " remote %s", vo->remotes[i].family, vo->remotes[i].bytes);
		ctl_print_close_array(p);
	}
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void vxd_print_drops(struct ctl_print *p, const uint64_t *drops, const char *indent)
{
	ctl_print_open_object(p, "drops");
	bool any = false;
	for (unsigned r = 1; r < DROP_REASON_COUNT; r++) {
		if (!drops[r])
			continue;
		if (!any)
			ctl_print_text(p, "%sdrops:", indent);
		any = true;
		char fmt[80];
		snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, drop_reason_name(r));
		ctl_print_uint(p, CTL_PRINT_ANY, drop_reason_name(r), fmt, drops[r]);
	}
	if (any)
		ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void vxd_print_hist(struct ctl_print *p, const struct port_stats *st)
{
	ctl_print_open_array(p, "tx_size_hist");
	if (st->tx_frames)
		ctl_print_text(p, "    tx sizes:");
	for (unsigned b = 0; b < PORT_HIST_BUCKETS; b++) {
		ctl_print_open_object(p, NULL);
		ctl_print_string(p, CTL_PRINT_JSON, "bucket", "%s", port_hist_names[b]);
		if (st->tx_frames) {
			ctl_print_string(p, CTL_PRINT_TEXT, NULL, " %s:", port_hist_names[b]);
			ctl_print_uint(p, CTL_PRINT_TEXT, NULL, " %" PRIu64 " frames", st->tx_hist_frames[b]);
			ctl_print_uint(p, CTL_PRINT_TEXT, NULL, " %" PRIu64 " bytes", st->tx_hist_bytes[b]);
		}
		ctl_print_uint(p, CTL_PRINT_JSON, "frames", "%" PRIu64, st->tx_hist_frames[b]);
		ctl_print_uint(p, CTL_PRINT_JSON, "bytes", "%" PRIu64, st->tx_hist_bytes[b]);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	if (st->tx_frames)
		ctl_print_nl(p);
}

static void vxd_print_port_stats(struct ctl_print *p, const struct port *port)
{
	const struct port_stats *st = &port->stats;
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "port %s", port->name);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " (%s", port->cls->kind_name);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64 ")", port->vni);
	ctl_print_nl(p);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", "    rx %" PRIu64 " frames", st->rx_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " %" PRIu64 " bytes", st->rx_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", "  tx %" PRIu64 " frames", st->tx_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_bytes", " %" PRIu64 " bytes", st->tx_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "tx_avg_frame", "  avg tx frame %" PRIu64,
		       st->tx_frames ? st->tx_bytes / st->tx_frames : 0);
	ctl_print_nl(p);
	vxd_print_drops(p, st->drops, "    ");
	vxd_print_hist(p, st);
	if (port_is_tap(port)) {
		struct tap_port_info ti;
		tap_port_get_info(port, &ti);
		ctl_print_open_object(p, "tap");
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_gso_frames", "    tap: rx gso %" PRIu64, ti.rx_gso_frames);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_partial_csum", " partial csum %" PRIu64, ti.rx_partial_csum);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_gso_frames", " tx gso %" PRIu64, ti.tx_gso_frames);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_errors", " tx errors %" PRIu64, ti.tx_errors);
		ctl_print_bool(p, CTL_PRINT_ANY, "tso_probed", " tso probed %s", ti.offloads_probed & TAP_OL_TSO);
		ctl_print_bool(p, CTL_PRINT_ANY, "uso_probed", " uso probed %s", ti.offloads_probed & TAP_OL_USO);
		ctl_print_bool(p, CTL_PRINT_ANY, "tso_active", " tso active %s", ti.offloads_active & TAP_OL_TSO);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	} else if (port_is_vxlan(port)) {
		struct vxlan_port_info vi;
		struct vxlan_sock_stats ss;
		vxlan_port_get_info(port, &vi);
		vxlan_sock_get_stats(vi.sock, &ss);
		ctl_print_open_object(p, "vxlan");
		ctl_print_uint(p, CTL_PRINT_ANY, "underlay_mtu", "    vxlan: underlay mtu %" PRIu64, vi.underlay_mtu);
		ctl_print_uint(p, CTL_PRINT_ANY, "inner_mtu_fit", " inner mtu fit %" PRIu64, vi.inner_mtu_fit);
		ctl_print_uint(p, CTL_PRINT_ANY, "gso_frames", " gso frames %" PRIu64, vi.tx_gso_frames);
		ctl_print_uint(p, CTL_PRINT_ANY, "gso_segments", " gso segments %" PRIu64, vi.tx_gso_segments);
		ctl_print_uint(p, CTL_PRINT_ANY, "plain_frames", " plain frames %" PRIu64, vi.tx_plain_frames);
		ctl_print_nl(p);
		ctl_print_open_object(p, "socket");
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_calls", "    socket: rx msgs %" PRIu64, ss.rx_calls);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_gro_buffers", " udp-gro msgs %" PRIu64, ss.rx_gro_buffers);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_datagrams", " datagrams %" PRIu64, ss.rx_datagrams);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_no_buffer", " no buffer %" PRIu64, ss.rx_no_buffer);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_sends", " tx sends %" PRIu64, ss.tx_sends);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_gso_sends", " udp-segment sends %" PRIu64, ss.tx_gso_sends);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_datagrams", " datagrams %" PRIu64, ss.tx_datagrams);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_errors", " errors %" PRIu64, ss.tx_errors);
		ctl_print_uint(p, CTL_PRINT_ANY, "udp_segment_fallbacks", " udp-segment fallbacks %" PRIu64,
			       ss.udp_segment_fallbacks);
		ctl_print_bool(p, CTL_PRINT_ANY, "udp_gro", " udp-gro %s", ss.udp_gro_on);
		ctl_print_bool(p, CTL_PRINT_ANY, "udp_segment", " udp-segment %s", ss.udp_segment_on);
		ctl_print_nl(p);
		ctl_print_close_object(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_object(p);
}

static void vxd_gro_stats(const struct vxd *vxd, struct gro_stats *st)
{
	gro_get_stats(vxd->gro, st);
	if (!vxd->gro_stats_carried)
		return;
	const struct gro_stats *b = &vxd->gro_stats_base;
	st->segments_in += b->segments_in;
	st->frames_out += b->frames_out;
	st->merged_frames += b->merged_frames;
	st->merged_segments += b->merged_segments;
	st->bytes_out += b->bytes_out;
	for (unsigned i = 0; i < GRO_SIZE_BUCKETS; i++)
		st->segs_per_frame[i] += b->segs_per_frame[i];
	for (unsigned i = 0; i < GRO_FLUSH_REASON_COUNT; i++)
		st->flushes[i] += b->flushes[i];
	for (unsigned i = 0; i < GRO_PASS_REASON_COUNT; i++)
		st->passthrough[i] += b->passthrough[i];
}

static void vxd_print_gro(struct ctl_print *p, const struct vxd *vxd)
{
	struct gro_stats st;
	vxd_gro_stats(vxd, &st);
	ctl_print_open_object(p, "gro");
	ctl_print_bool(p, CTL_PRINT_ANY, "on", "gro %s", vxd->knobs[CTL_KNOB_GRO]);
	ctl_print_uint(p, CTL_PRINT_ANY, "segments_in", ": segments in %" PRIu64, st.segments_in);
	ctl_print_uint(p, CTL_PRINT_ANY, "frames_out", " frames out %" PRIu64, st.frames_out);
	ctl_print_uint(p, CTL_PRINT_ANY, "merged_frames", " merged %" PRIu64, st.merged_frames);
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
	for (unsigned i = 0; i < GRO_FLUSH_REASON_COUNT; i++) {
		if (!st.flushes[i])
			continue;
		char fmt[80];
		snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, gro_flush_reason_name(i));
		ctl_print_uint(p, CTL_PRINT_ANY, gro_flush_reason_name(i), fmt, st.flushes[i]);
	}
	ctl_print_close_object(p);
	ctl_print_nl(p);
	ctl_print_open_object(p, "passthrough");
	ctl_print_text(p, "    passed through:");
	for (unsigned i = 0; i < GRO_PASS_REASON_COUNT; i++) {
		if (!st.passthrough[i])
			continue;
		char fmt[80];
		snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, gro_pass_reason_name(i));
		ctl_print_uint(p, CTL_PRINT_ANY, gro_pass_reason_name(i), fmt, st.passthrough[i]);
	}
	ctl_print_close_object(p);
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

static int vxd_stats(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p,
		     struct ctl_err *err)
{
	const struct port *only = NULL;
	if (ref->has_port) {
		only = vxd_port_by_name(vxd, ref->name);
		if (!only)
			return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	}
	ctl_print_open_object(p, NULL);
	ctl_print_open_array(p, "ports");
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && (!only || only == vxd->ports[i]))
			vxd_print_port_stats(p, vxd->ports[i]);
	ctl_print_close_array(p);
	if (only) {
		ctl_print_close_object(p);
		return 0;
	}
	vxd_print_drops(p, vxd->drops, "switch ");

	const struct fwd_stats *fs = &vxd->fwd.stats;
	struct fdb_stats fdb;
	fdb_get_stats(vxd->fdb, &fdb);
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
	ctl_print_uint(p, CTL_PRINT_ANY, "fdb_entries", " entries %" PRIu64, (uint64_t)fdb.n_learned + fdb.n_static);
	ctl_print_nl(p);
	ctl_print_close_object(p);

	vxd_print_gro(p, vxd);

	uint64_t gso_frames = 0, gso_segs = 0, bytes = 0, fallbacks = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (!port)
			continue;
		bytes += port->stats.rx_bytes;
		if (port_is_vxlan(port)) {
			struct vxlan_port_info vi;
			struct vxlan_sock_stats ss;
			vxlan_port_get_info(port, &vi);
			vxlan_sock_get_stats(vi.sock, &ss);
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
	ctl_print_nl(p);
	ctl_print_close_object(p);

	struct pkt_pool_stats ps;
	pkt_pool_get_stats(vxd->pool, &ps);
	ctl_print_open_object(p, "pool");
	ctl_print_uint(p, CTL_PRINT_ANY, "in_use", "pool: in use %" PRIu64, ps.in_use);
	ctl_print_uint(p, CTL_PRINT_ANY, "in_use_max", " max %" PRIu64, ps.in_use_max);
	ctl_print_uint(p, CTL_PRINT_ANY, "alloc_failures", " alloc failures %" PRIu64, ps.alloc_failures);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	ctl_print_close_object(p);
	return 0;
}

/* ---- diagnose ------------------------------------------------------------------ */

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

static int vxd_diagnose(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p,
			struct ctl_err *err)
{
	if (ref->has_port && !vxd_port_by_name(vxd, ref->name))
		return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	struct gro_stats gs;
	vxd_gro_stats(vxd, &gs);
	ctl_print_open_object(p, NULL);
	ctl_print_open_array(p, "findings");
	unsigned n = 0;
	bool any_udp_gro_refused = false, any_udp_gro_off = false;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (!port || !port_is_vxlan(port))
			continue;
		struct vxlan_sock_stats ss;
		vxlan_sock_get_stats(vxlan_port_sock(port), &ss);
		any_udp_gro_refused |= !ss.udp_gro_probed;
		any_udp_gro_off |= ss.udp_gro_probed && !ss.udp_gro_on;
	}
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (!port || (ref->has_port && strcmp(ref->name, port->name) != 0))
			continue;
		const struct port_stats *st = &port->stats;
		if (port_is_tap(port)) {
			struct tap_port_info ti;
			tap_port_get_info(port, &ti);
			/* Recent traffic if there was enough of it, else all. */
			uint64_t frames = 0, bytes = 0;
			if (st->tx_frames >= vxd->diag_prev[i].tx_frames) { /* else: a new port in this slot */
				frames = st->tx_frames - vxd->diag_prev[i].tx_frames;
				bytes = st->tx_bytes - vxd->diag_prev[i].tx_bytes;
			}
			if (frames < 100) {
				frames = st->tx_frames;
				bytes = st->tx_bytes;
			}
			uint64_t avg = frames ? bytes / frames : 0;
			if (frames >= 100 && avg < 8192) {
				const char *why;
				if (!vxd->knobs[CTL_KNOB_GRO])
					why = "GRO is off (vxctl set gro on)";
				else if (any_udp_gro_refused)
					why = "UDP_GRO refused by kernel: datagrams arrive one by one";
				else if (any_udp_gro_off)
					why = "udp-gro is off (vxctl set udp-gro on)";
				else if (gs.segments_in && gs.merged_frames * 4 < gs.frames_out)
					why = "GRO rarely merges: segments arrive out of order, with PSH, or interleaved (see gro flushes)";
				else
					why = "the traffic is small frames (not bulk TCP)";
				n = vxd_diag_line(p, n, "frames to %s average %.1f KB: %s", port->name,
						  (double)avg / 1024.0, why);
			}
			if (!(ti.offloads_active & TAP_OL_TSO))
				n = vxd_diag_line(p, n, "%s: TSO from the VM is off (%s): every 1.4 KB segment crosses the switch alone",
						  port->name, (ti.offloads_probed & TAP_OL_TSO) ? "by knob tap-tso/gso" : "TUNSETOFFLOAD refused by kernel");
			if (ti.tx_errors)
				n = vxd_diag_line(p, n, "%s: %" PRIu64 " writes to the tap failed (last: %s)", port->name,
						  ti.tx_errors, strerror(ti.last_tx_errno));
		} else if (port_is_vxlan(port)) {
			struct vxlan_port_info vi;
			struct vxlan_sock_stats ss;
			vxlan_port_get_info(port, &vi);
			vxlan_sock_get_stats(vi.sock, &ss);
			if (!ss.udp_gro_probed)
				n = vxd_diag_line(p, n, "%s: UDP_GRO refused by kernel: every datagram is a separate receive", port->name);
			if (ss.udp_segment_fallbacks)
				n = vxd_diag_line(p, n, "%s: UDP_SEGMENT refused by kernel (%" PRIu64 " fallbacks): every datagram is a separate send",
						  port->name, ss.udp_segment_fallbacks);
			else if (!ss.udp_segment_on)
				n = vxd_diag_line(p, n, "%s: udp-segment is off: every datagram is a separate send", port->name);
			if (ss.rx_no_buffer)
				n = vxd_diag_line(p, n, "%s: %" PRIu64 " datagrams lost for want of packet buffers", port->name,
						  ss.rx_no_buffer);
			if (ss.tx_errors)
				n = vxd_diag_line(p, n, "%s: %" PRIu64 " sends failed (last: %s)", port->name, ss.tx_errors,
						  strerror(ss.last_tx_errno));
		}
		uint64_t worst = 0;
		unsigned worst_reason = 0;
		for (unsigned r = 1; r < DROP_REASON_COUNT; r++)
			if (st->drops[r] > worst)
				worst = st->drops[r], worst_reason = r;
		if (worst)
			n = vxd_diag_line(p, n, "%s: %" PRIu64 " frames dropped as %s%s", port->name, worst,
					  drop_reason_name(worst_reason),
					  worst_reason == DROP_MTU_EXCEEDED ? " (VM MTU larger than what fits the underlay)" : "");
	}
	if (gs.passthrough[GRO_PASS_CSUM_BAD])
		n = vxd_diag_line(p, n, "%" PRIu64 " received TCP segments had a bad inner checksum and were not merged; "
				  "if the sender is a kernel on a veth with tx checksum offload, its checksums arrive unfinished "
				  "(ethtool -K DEV tx off on its underlay)", gs.passthrough[GRO_PASS_CSUM_BAD]);
	if (vxd->drops[DROP_VXLAN_UNKNOWN_VNI])
		n = vxd_diag_line(p, n, "%" PRIu64 " datagrams for a VNI no port serves (vxlan_unknown_vni)",
				  vxd->drops[DROP_VXLAN_UNKNOWN_VNI]);
	if (!vxd->knobs[CTL_KNOB_GSO])
		n = vxd_diag_line(p, n, "gso is off: the VMs' TSO is off too, the kernel cuts every frame to MTU size before we read it");
	if (n == 0)
		n = vxd_diag_line(p, n, "no problem found");
	ctl_print_close_array(p);
	ctl_print_close_object(p);
	return 0;
}

/* ---- fdb -------------------------------------------------------------------------- */

struct vxd_fdb_dump_ctx {
	struct vxd *vxd;
	struct ctl_print *p;
};

static int vxd_fdb_dump_one(const struct fdb_entry_info *e, void *ctx)
{
	struct vxd_fdb_dump_ctx *c = ctx;
	struct ctl_print *p = c->p;
	struct port *port = e->dst.port < VXD_MAX_PORTS ? c->vxd->ports[e->dst.port] : NULL;
	ctl_print_open_object(p, NULL);
	ctl_print_mac(p, CTL_PRINT_ANY, "mac", "%s", e->mac);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, e->vni);
	ctl_print_string(p, CTL_PRINT_ANY, "port", " port %s", port ? port->name : "?");
	if (e->dst.type == FDB_DST_VTEP)
		vxd_print_ip(p, "remote", " remote %s", e->dst.family, e->dst.addr);
	ctl_print_bool(p, CTL_PRINT_JSON, "static", "%s", e->is_static);
	if (e->is_static)
		ctl_print_text(p, " static");
	ctl_print_uint(p, CTL_PRINT_ANY, "age_s", " age %" PRIu64 "s", e->age_ns / 1000000000ull);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	return 0;
}

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
		vxd->knobs[set->knob] = old;
		return vxd_refuse(err, -EOPNOTSUPP, "fdb-max: the table is sized at start-up; not changeable while running");
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
		ctl_print_open_array(out, NULL);
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i])
				vxd_print_port_line(out, vxd->ports[i]);
		ctl_print_close_array(out);
		return 0;
	case CTL_FDB_SHOW: {
		struct vxd_fdb_dump_ctx c = { vxd, out };
		ctl_print_open_array(out, NULL);
		fdb_dump(vxd->fdb, cmd->fdb.has_vni ? cmd->fdb.vni : FDB_VNI_ANY, vxd_now_ns(), vxd_fdb_dump_one, &c);
		ctl_print_close_array(out);
		return 0;
	}
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
