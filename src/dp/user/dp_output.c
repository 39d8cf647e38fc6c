/* The output stage, the last of the worker's packet path: a switching or
 * rule verdict's outputs -> egress rules of the port (dp_egress.c) ->
 * what leaving by the port takes (a VTEP's address and counters; a big
 * TCP frame for a tap or afpacket port marked for the kernel to cut) ->
 * the port's output queue (txq.h) -> at the end of the batch, or when the
 * queue fills, the port's tx_batch, and a capture's copy of what left.
 * Nothing here calls back into an earlier stage: the input paths
 * (datapath.c) call dp_output() and dp_flush_all(), and the queues only
 * hold frames. */
#include <string.h>

#include "dp/user/worker_internal.h"
#include "offload/gro.h"
#include "packet/hdr.h"
#include "port/frame.h"

/* Sends n frames taken out of port id's queue (consumed). */
static void dp_send(struct vxd_worker *w, uint16_t id, struct pkt **pkts, unsigned n)
{
	struct vxd_wport *wp = &w->ports[id];
	if (!wp->port) {
		for (unsigned i = 0; i < n; i++)
			pkt_free(pkts[i]);
		return;
	}
	if (wp->n_caps) /* a capture runs: the one check per batch */
		vxd_capture_frames(w, wp, DP_CAPTURE_OUT, pkts, n);
	wp->port->cls->tx_batch(wp->port, &wp->io, pkts, n);
}

static void dp_enqueue(struct vxd_worker *w, uint16_t id, struct pkt *pkt)
{
	if (!txq_room(&w->txqs, id)) {
		struct pkt **full;
		unsigned n = txq_take(&w->txqs, id, &full);
		dp_send(w, id, full, n);
	}
	txq_enqueue(&w->txqs, id, pkt);
}

void dp_flush_all(struct vxd_worker *w)
{
	uint16_t id;
	struct pkt **pkts;
	unsigned n;
	while ((n = txq_take_next(&w->txqs, &id, &pkts)))
		dp_send(w, id, pkts, n);
}

/* A frame for a tap or afpacket port longer than the port's MTU and
 * without TSO metadata (one GRO merged whole, or a jumbo from the
 * underlay): a TCP one is marked for the kernel to segment; any other
 * past the MTU and a VLAN tag is dropped, as the kernel's bridge drops
 * a frame over the egress MTU.  False when it was dropped. */
static bool dp_fit_frame_port(struct vxd_worker *w, const struct port *port, struct pkt *out)
{
	if (out->ol.gso_type != PKT_GSO_NONE || pkt_len(out) <= port->mtu + ETH_HDR_LEN)
		return true;
	if (gro_mark_big_tcp(out, port->mtu)) {
		w->whole_big_tcp_marked++;
		return true;
	}
	if (pkt_len(out) <= port->mtu + ETH_HDR_LEN + VLAN_HDR_LEN)
		return true;
	port_count_drop(&w->ports[port->id].io, DROP_MTU_EXCEEDED);
	pkt_free(out);
	return false;
}

/* Sends `pkt` (consumed) to every output of `res`.  Flood copies share the
 * payload (pkt_clone): only headers are copied per output. */
void dp_output(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key,
	       const struct fwd_result *res)
{
	if (res->action == FWD_DROP || res->n_outputs == 0) {
		dp_count_drop(w, pkt->in_port, res->action == FWD_DROP ? res->reason : DROP_FDB_DST_UNKNOWN);
		pkt_free(pkt);
		return;
	}
	for (uint16_t i = 0; i < res->n_outputs; i++) {
		const struct fdb_dst *dst = &res->outputs[i];
		struct fdb_dst edst; /* dst, as the port's egress rules leave it */
		bool last = i + 1 == res->n_outputs;
		struct port *port = dp_port(w, dst->port);
		if (!port || !w->ports[dst->port].port || w->view->link_down[dst->port]) {
			if (port && w->ports[dst->port].port)
				port_count_drop(&w->ports[dst->port].io, DROP_PORT_LINK_DOWN);
			else
				dp_count_drop(w, pkt->in_port, DROP_FDB_DST_UNKNOWN);
			if (last)
				pkt_free(pkt);
			continue;
		}
		struct pkt *out = last ? pkt : pkt_clone(w->pool, pkt);
		if (!out) {
			port_count_drop(&w->ports[dst->port].io, DROP_NO_BUFFER);
			continue;
		}
		if (__builtin_expect(w->view->egress_rules[dst->port], 0)) {
			edst = *dst;
			if (dp_egress(w, out, key, &edst))
				continue;
			dst = &edst;
		}
		if (dst->type == FDB_DST_VTEP) {
			dp_vtep_tx(w, dst);
			out->tunnel.family = dst->family;
			memcpy(out->tunnel.dst, dst->addr, 16);
		} else if (port_is_frame(port) && !dp_fit_frame_port(w, port, out)) {
			continue;
		}
		dp_enqueue(w, port->id, out);
	}
}
