/* The worker's counters of remote VTEPs (struct vxd_vtep_stats, worker.h):
 * what each VTEP of a vxlan port was sent (the output stage, dp_output.c)
 * and sent us (the underlay input, datapath.c), and how long a VTEP has
 * left us unanswered, which diagnose reads as a silent VTEP.  A table per
 * worker, looked up by (port, family, address) with the last hit tried
 * first: a stream keeps one VTEP busy. */
#include <string.h>

#include "dp/user/worker_internal.h"

struct vxd_vtep_stats *dp_vtep(struct vxd_worker *w, uint16_t port, uint8_t family, const uint8_t addr[16])
{
	unsigned n = w->n_vteps;
	struct vxd_vtep_stats *v = &w->vteps[w->last_vtep];
	if (w->last_vtep < n && v->port == port && v->family == family && memcmp(v->addr, addr, 16) == 0)
		return v;
	for (unsigned i = 0; i < n; i++) {
		v = &w->vteps[i];
		if (v->port == port && v->family == family && memcmp(v->addr, addr, 16) == 0) {
			w->last_vtep = i;
			return v;
		}
	}
	if (n == VXD_MAX_VTEPS) {
		w->vteps_untracked++;
		return NULL;
	}
	v = &w->vteps[n];
	*v = (struct vxd_vtep_stats){ .port = port, .family = family, .first_ns = w->now_ns };
	memcpy(v->addr, addr, 16);
	w->last_vtep = n;
	w->n_vteps = n + 1;
	return v;
}

void dp_vtep_forget(struct vxd_worker *w, uint16_t port)
{
	unsigned k = 0;
	for (unsigned i = 0; i < w->n_vteps; i++)
		if (w->vteps[i].port != port)
			w->vteps[k++] = w->vteps[i];
	w->n_vteps = k;
	w->last_vtep = 0;
}

void dp_vtep_tx(struct vxd_worker *w, const struct fdb_dst *dst)
{
	struct vxd_vtep_stats *v = dp_vtep(w, dst->port, dst->family, dst->addr);
	if (!v)
		return;
	v->tx_frames++;
	v->last_tx_ns = w->now_ns;
	if (v->tx_since_rx++ == 0)
		v->unanswered_ns = w->now_ns;
}

void dp_vtep_rx(struct vxd_worker *w, uint16_t port, const struct pkt_tunnel *tun)
{
	struct vxd_vtep_stats *v = dp_vtep(w, port, tun->family, tun->src);
	if (!v)
		return;
	v->rx_datagrams++;
	v->last_rx_ns = w->now_ns;
	v->tx_since_rx = 0;
	v->unanswered_ns = 0;
}
