/* The vxlan port: one VNI on a shared socket.  Open, settings, info; the
 * send path is vxlan_tx.c. */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void vxlan_destroy(struct port *port);

static const struct port_class vxlan_port_class = {
	.kind_name = "vxlan",
	.kind = PORT_KIND_VXLAN,
	.rx_batch = NULL,
	.tx_batch = vxlan_tx_batch,
	.io_init = vxlan_tx_io_init,
	.io_fini = vxlan_tx_io_fini,
	.destroy = vxlan_destroy,
};

bool port_is_vxlan(const struct port *port)
{
	return port && port->cls == &vxlan_port_class;
}

struct vxlan_sock *vxlan_port_sock(const struct port *port)
{
	return vxlan_port_cast(port)->sock;
}

const struct vxlan_options *vxlan_port_options(const struct port *port)
{
	return &vxlan_port_cast(port)->opts;
}

bool vxlan_port_is_remote(const struct port *port, uint8_t family, const uint8_t *addr)
{
	const struct vxlan_options *o = &vxlan_port_cast(port)->opts;
	size_t len = family == 6 ? 16 : 4;
	for (unsigned i = 0; i < o->n_remotes; i++)
		if (o->remotes[i].family == family && memcmp(o->remotes[i].bytes, addr, len) == 0)
			return true;
	return false;
}

void vxlan_port_get_info(const struct port *port, const struct port_io *io, struct vxlan_port_info *out)
{
	const struct vxlan_port *vp = vxlan_port_cast(port);
	memset(out, 0, sizeof(*out));
	out->sock = vp->sock;
	out->underlay_mtu = vp->underlay_mtu;
	out->inner_mtu_fit = vp->inner_mtu_fit;
	memcpy(out->remote_mtu, vp->remote_mtu, sizeof(out->remote_mtu));
	vxlan_tx_io_counters(io, out);
}

void vxlan_port_set_gso(struct port *port, bool on)
{
	atomic_store_explicit(&vxlan_port_cast(port)->gso_on, on, memory_order_relaxed);
}

/* Probes the path MTU towards every remote; the port's underlay MTU is
 * the smallest.  A remote without a route (yet) counts as 1500. */
static void vxlan_probe_remotes(struct vxlan_port *vp)
{
	const struct vxlan_options *opts = &vp->opts;
	vp->underlay_mtu = 1500;
	for (unsigned i = 0; i < opts->n_remotes; i++) {
		int mtu = vxlan_path_mtu(&opts->local, &opts->remotes[i]);
		vp->remote_mtu[i] = mtu > 0 ? (uint32_t)mtu : 1500;
		if (i == 0 || vp->remote_mtu[i] < vp->underlay_mtu)
			vp->underlay_mtu = vp->remote_mtu[i];
	}
}

int vxlan_port_open(const struct vxlan_options *opts, struct vxlan_sock *sock, struct port **out)
{
	if (opts->n_remotes > VXLAN_MAX_REMOTES || opts->vni > VXLAN_VNI_MAX)
		return -EINVAL;
	char why[160];
	if (sock && vxlan_sock_check_options(sock, opts, why, sizeof(why)) < 0)
		return -EINVAL; /* the daemon asks vxlan_sock_check_options() first, for the words */
	struct vxlan_port *vp = calloc(1, sizeof(*vp));
	if (!vp)
		return -ENOMEM;
	vp->up.cls = &vxlan_port_class;
	vp->up.vni = opts->vni;
	vp->up.fd = -1;
	vp->opts = *opts;
	if (!vp->opts.dst_port)
		vp->opts.dst_port = VXLAN_DEFAULT_PORT;
	atomic_init(&vp->gso_on, true);
	if (sock) {
		vxlan_sock_ref(sock);
	} else {
		int err = vxlan_sock_open_opts(opts, vp->opts.dst_port, &sock);
		if (err < 0) {
			free(vp);
			return err;
		}
	}
	vp->sock = sock;

	/* On top of an inner L3 packet the underlay's L3 MTU must carry the
	 * inner Ethernet header, VXLAN, UDP and the outer IP header: 50 bytes
	 * for IPv4, 70 for IPv6, the same numbers as the full encap (whose
	 * outer Ethernet header the underlay MTU does not count). */
	vp->encap_overhead = opts->local.family == 6 ? VXLAN_ENCAP_LEN_IPV6 : VXLAN_ENCAP_LEN_IPV4;
	vxlan_probe_remotes(vp);
	vp->inner_mtu_fit = vp->underlay_mtu - vp->encap_overhead;
	vp->up.mtu = opts->mtu ? opts->mtu : vp->inner_mtu_fit;

	vp->encap.vni = opts->vni;
	vp->encap.family = opts->local.family;
	memcpy(vp->encap.src_ip, opts->local.bytes, 16);
	if (opts->n_remotes)
		memcpy(vp->encap.dst_ip, opts->remotes[0].bytes, 16);
	vp->encap.dst_port = vp->opts.dst_port;
	*out = &vp->up;
	return 0;
}

static void vxlan_destroy(struct port *port)
{
	struct vxlan_port *vp = vxlan_port_cast(port);
	vxlan_sock_unref(vp->sock);
	free(vp);
}
