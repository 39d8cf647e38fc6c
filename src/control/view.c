/* Publishing what the worker reads: a view (worker.h) is built whole from
 * the control thread's state, published with one store, and the old one is
 * freed after a grace period (util/qsbr.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "switch/flower_hook.h"
#include "control/vxd_internal.h"
#include "port/frame.h"
#include "port/vxlan.h"

const struct vxd_view *vxd_view(const struct vxd *vxd)
{
	return atomic_load_explicit(&((struct vxd *)vxd)->view, memory_order_relaxed);
}

void vxd_view_free(struct vxd_view *view)
{
	if (!view)
		return;
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
		vni_map_destroy(view->socks[i].demux);
	vni_table_destroy(view->vnis);
	free(view);
}

/* The VNI -> vxlan port map of one socket. */
static int vxd_build_demux(const struct vxd *vxd, const struct vxlan_sock *sock, struct vni_map **out)
{
	uint32_t vnis[VXD_SOCK_MAX_VNIS];
	uint16_t ids[VXD_SOCK_MAX_VNIS];
	unsigned n = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS && n < VXD_SOCK_MAX_VNIS; i++) {
		const struct port *p = vxd->ports[i];
		if (p && port_is_vxlan(p) && vxlan_port_sock(p) == sock) {
			vnis[n] = p->vni;
			ids[n++] = p->id;
		}
	}
	return vni_map_build(vnis, ids, n, out);
}

static int vxd_view_build(const struct vxd *vxd, struct vni_table *vnis, struct vxd_view **out)
{
	struct vxd_view *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int err = 0;
	if (vnis)
		v->vnis = vnis;
	else
		err = vni_table_clone(vxd_view(vxd)->vnis, &v->vnis);
	for (unsigned i = 0; i < VXD_MAX_SOCKS && err == 0; i++) {
		if (!vxd->socks[i])
			continue;
		v->socks[i].sock = vxd->socks[i];
		err = vxd_build_demux(vxd, vxd->socks[i], &v->socks[i].demux);
	}
	if (err < 0) {
		if (vnis)
			v->vnis = NULL; /* still the caller's */
		vxd_view_free(v);
		return err;
	}
	memcpy(v->ports, vxd->ports, sizeof(v->ports));
	v->knobs = (struct vxd_dp_knobs){
		.gro = vxd->knobs[CTL_KNOB_GRO] != 0,
		.rx_csum = vxd->knobs[CTL_KNOB_RX_CSUM] != 0,
		.poll_us = vxd->knobs[CTL_KNOB_POLL_US],
	};
	v->flower = vxd->flower;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		v->link_down[i] = port_is_frame(vxd->ports[i]) && vxd->links[i].down_ns;
		v->egress_rules[i] = v->flower && vxd->ports[i] &&
				     flower_table_port_has_rules(v->flower, (uint16_t)(i | FLOWER_HOOK_EGRESS));
	}
	*out = v;
	return 0;
}

int vxd_publish(struct vxd *vxd, struct vni_table *vnis)
{
	struct vxd_view *next;
	int err = vxd_view_build(vxd, vnis, &next);
	if (err < 0)
		return err;
	next->version = ++vxd->view_version;
	struct vxd_view *old = atomic_exchange_explicit(&vxd->view, next, memory_order_acq_rel);
	qsbr_synchronize(&vxd->qsbr);
	vxd_view_free(old);
	return 0;
}
