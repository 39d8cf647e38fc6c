/* The worker's packet path, its input side: rx -> parse -> switch, then
 * the output stage (dp_output.c) takes the frame; nothing else.
 *
 *   frame rx: (tap, afpacket) rx_batch -> flow_extract -> vnet_hdr_validate -> dp_switch
 *   vxlan rx: recvmmsg (UDP_GRO) -> VNI demux -> flow_extract_vxlan
 *             -> rx-csum -> GRO, gro_receive_burst() on 32 datagrams at a
 *             time with the keys parsed here (merge + decap), which leaves
 *             what it completed in w->gro_out -> dp_switch on each
 *   dp_switch: flower rules (dp_rules.c) or L2 switching -> dp_output:
 *             egress rules, frame ports (whole, TSO metadata kept) / vxlan
 *             ports (GSO + UDP_SEGMENT when the frame has TSO metadata)
 * Frames are queued per output port and sent at the end of each batch
 * (dp_flush_all).  Nothing later calls back into this file: GRO's emit
 * (dp_gro_collect) only collects, the output queues only hold.
 * A capture (capture.h) costs one check per batch here when none runs.
 * Everything read from the control side comes from w->view (worker.h). */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "dp/user/worker_internal.h"
#include "offload/gro.h"
#include "offload/rx_csum.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "parse/vnet_hdr_check.h"
#include "port/tap.h"
#include "port/vxlan.h"
#include "util/vlog.h"

void dp_count_drop(struct vxd_worker *w, uint16_t port_id, enum drop_reason reason)
{
	if ((unsigned)reason >= DROP_REASON_COUNT)
		return;
	if (port_id < VXD_MAX_PORTS && w->ports[port_id].port)
		port_count_drop(&w->ports[port_id].io, reason);
	else
		w->drops[reason]++;
}

/* The one place both input paths meet: a frame with its parsed key and
 * where it came from.  Flower rules first (dp_rules.c), when the ingress
 * port has any: a port without rules pays one lookup in the table's port
 * list, and no table at all one predictable branch. */
static void dp_switch(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key,
		      const struct fdb_dst *ingress, uint32_t vni)
{
	const struct flower_table *ft = w->view->flower;
	if (__builtin_expect(ft != NULL, 0) && flower_table_port_has_rules(ft, key->in_port) &&
	    dp_rules(w, ft, pkt, &key)) /* key: as the rules' vlan actions left it */
		return;
	fwd_frame(&w->fwd, ingress, vni, key->dl_dst, key->dl_src, w->now_ns, &w->fwd_res);
	dp_output(w, pkt, key, &w->fwd_res);
}

/* ---- from a tap or an afpacket port ----------------------------------------- */

static void dp_switch_from_frame(struct vxd_worker *w, struct port *port, struct pkt *pkt)
{
	struct flow_key key;
	pkt->in_port = port->id;
	enum drop_reason reason = flow_extract(pkt, 0, &key);
	if (reason == DROP_NONE)
		reason = vnet_hdr_validate(pkt, &key);
	if (reason != DROP_NONE) {
		port_count_drop(&w->ports[port->id].io, reason);
		pkt_free(pkt);
		return;
	}
	struct fdb_dst ingress = fdb_dst_port(port->id);
	dp_switch(w, pkt, &key, &ingress, port->vni);
}

void dp_frame_input(struct vxd_worker *w, struct port *port)
{
	struct vxd_wport *wp = &w->ports[port->id];
	if (wp->port != port)
		return; /* not attached yet, or already detached */
	struct pkt *pkts[VXD_RX_BATCH];
	for (unsigned round = 0; round < VXD_RX_ROUNDS; round++) {
		int n = port->cls->rx_batch(port, &wp->io, w->pool, pkts, VXD_RX_BATCH);
		if (n <= 0)
			break;
		w->now_ns = w->clock();
		if (wp->n_caps)
			vxd_capture_frames(w, wp, DP_CAPTURE_IN, pkts, (unsigned)n);
		for (int i = 0; i < n; i++)
			dp_switch_from_frame(w, port, pkts[i]);
		dp_flush_all(w);
		if (n < VXD_RX_BATCH)
			break;
	}
}

void dp_frame_lost(struct vxd_worker *w, struct port *port)
{
	struct vxd_wport *wp = &w->ports[port->id];
	if (wp->port != port || wp->lost_ns)
		return;
	if (port->cls->poll_error && port->cls->poll_error(port) == 0)
		return; /* only down: it reads again once up (links.c marks it down) */
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, port_io_fd(port, &wp->io), NULL);
	wp->lost_ns = w->clock();
	wp->lost_events++;
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
	VLOG_WARN_RL(&rl, "port", "%s: its device went away: port down, out of the poll set "
		     "(it reattaches when a device of its name is back)", port->name);
}

/* ---- from the underlay ------------------------------------------------------ */

/* A decapsulated inner frame (from GRO, or decapsulated directly when GRO
 * is off): learn its source behind the VTEP it came from and forward it. */
static void dp_switch_decapped(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key)
{
	struct port *port = dp_port(w, pkt->in_port);
	if (!port || !key || pkt_len(pkt) < ETH_HDR_LEN) {
		dp_count_drop(w, pkt->in_port, DROP_TRUNCATED_ETH);
		pkt_free(pkt);
		return;
	}
	struct fdb_dst ingress = fdb_dst_vtep(port->id, pkt->tunnel.family, pkt->tunnel.src);
	dp_switch(w, pkt, key, &ingress, port->vni);
}

void dp_gro_collect(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct vxd_worker *w = aux;
	struct dp_gro_out *o = &w->gro_out;
	if (o->n == DP_GRO_OUT_MAX) { /* past the bound worker_internal.h gives */
		dp_count_drop(w, pkt->in_port, DROP_NO_BUFFER);
		pkt_free(pkt);
		return;
	}
	uintptr_t at = (uintptr_t)key, burst = (uintptr_t)w->sock_keys;
	if (key && (at < burst || at >= burst + sizeof(w->sock_keys))) {
		o->own[o->n] = *key; /* GRO's own: valid only during this call */
		key = &o->own[o->n];
	}
	o->pkts[o->n] = pkt;
	o->keys[o->n] = key;
	o->n++;
}

/* What the call into GRO just made completed: captured (inner captures
 * of vxlan ports), then switched, in order. */
static void dp_gro_switch(struct vxd_worker *w)
{
	struct dp_gro_out *o = &w->gro_out;
	if (w->n_gro_caps) /* a capture runs: the one check per call */
		vxd_capture_decapped(w, o->pkts, o->n);
	for (unsigned i = 0; i < o->n; i++)
		dp_switch_decapped(w, o->pkts[i], o->keys[i]);
	o->n = 0;
}

/* The inner checksum of a datagram the kernel did not vouch for (not
 * coalesced by UDP GRO), checked once here so that neither GRO nor the VM
 * checks it again.  False when the frame was dropped. */
static bool dp_rx_csum(struct vxd_worker *w, struct port_io *io, struct pkt *pkt, const struct flow_key *key)
{
	if ((pkt->ol.flags & PKT_OL_DATA_VALID) || !w->view->knobs.rx_csum)
		return true;
	if (key->nw_frag || pkt->inner_l3_ofs == PKT_OFS_NONE || pkt->inner_l4_ofs == PKT_OFS_NONE) {
		w->rx_csum.not_checked++;
		return true;
	}
	switch (rx_csum_check(pkt, pkt->inner_l3_ofs, pkt->inner_l4_ofs, key->nw_proto, true)) {
	case RX_CSUM_GOOD:
		w->rx_csum.good++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		return true;
	case RX_CSUM_FINISHED:
		w->rx_csum.finished++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		return true;
	case RX_CSUM_BAD:
		w->rx_csum.bad++;
		port_count_drop(io, DROP_BAD_L4_CSUM);
		pkt_free(pkt);
		return false;
	case RX_CSUM_UNFINISHED:
	case RX_CSUM_NOT_CHECKED:
		break;
	}
	w->rx_csum.not_checked++;
	return true;
}

/* True when another receive round might not find its buffers: held GRO
 * runs pin the buffers their segments sit in (one per datagram when the
 * kernel did not coalesce them), so they are completed early instead. */
static bool dp_pool_low(const struct vxd_worker *w)
{
	struct pkt_pool_stats st;
	pkt_pool_get_stats(w->pool, &st);
	/* One more round takes at most one pkt per datagram plus its buffers. */
	return (uint64_t)st.in_use + VXD_SOCK_RX_MAX + VXD_RX_BATCH >= w->pool_size;
}

/* A VTEP of the VNI's flood set that is not among the port's own remotes:
 * one BGP EVPN told us of (control/evpn.h), published in the VNI table. */
static bool dp_is_vni_vtep(const struct vxd_worker *w, uint16_t port_id, uint32_t vni,
			   const struct pkt_tunnel *t)
{
	const struct vni *v = vni_lookup(w->view->vnis, vni);
	if (!v)
		return false;
	struct fdb_dst d = fdb_dst_vtep(port_id, t->family, t->src);
	return vni_has_vtep(v, &d);
}

/* One datagram: demux by VNI, parse into *key, check.  False when it was
 * dropped; else it goes on to GRO (with the batch) or straight on. */
static bool dp_datagram(struct vxd_worker *w, const struct vxd_view_sock *vs, struct pkt *pkt,
			struct flow_key *key)
{
	int64_t vni = vxlan_pkt_vni(pkt);
	if (vni < 0) {
		w->drops[DROP_TRUNCATED_VXLAN]++;
		pkt_free(pkt);
		return false;
	}
	int id = vni_map_lookup(vs->demux, (uint32_t)vni);
	struct port *port = id < 0 ? NULL : dp_port(w, (uint16_t)id);
	if (!port || !w->ports[id].port) {
		w->drops[DROP_VXLAN_UNKNOWN_VNI]++;
		pkt_free(pkt);
		return false;
	}
	struct port_io *io = &w->ports[id].io;
	if (!vxlan_port_is_remote(port, pkt->tunnel.family, pkt->tunnel.src) &&
	    !dp_is_vni_vtep(w, port->id, (uint32_t)vni, &pkt->tunnel)) {
		port_count_drop(io, DROP_VXLAN_UNKNOWN_REMOTE);
		pkt_free(pkt);
		return false;
	}
	pkt->in_port = port->id;
	dp_vtep_rx(w, port->id, &pkt->tunnel);
	enum drop_reason reason = flow_extract_vxlan(pkt, key);
	if (reason != DROP_NONE) {
		port_count_drop(io, reason);
		pkt_free(pkt);
		return false;
	}
	io->stats.rx_frames++;
	io->stats.rx_bytes += pkt_len(pkt) - VXLAN_HDR_LEN;
	return dp_rx_csum(w, io, pkt, key);
}

/* One recvmmsg batch, VXD_GRO_BURST datagrams at a time: each parsed once;
 * with GRO on, what is left goes to gro_receive_burst() in one call, with
 * its keys (the loop the benchmarks, fuzzers and differential test
 * measure), else straight on. */
static void dp_datagrams(struct vxd_worker *w, const struct vxd_view_sock *vs, struct pkt **pkts, unsigned n,
			 bool gro_on)
{
	for (unsigned first = 0; first < n; first += VXD_GRO_BURST) {
		unsigned end = n - first < VXD_GRO_BURST ? n : first + VXD_GRO_BURST;
		unsigned kept = 0;
		for (unsigned i = first; i < end; i++) {
			struct pkt *pkt = pkts[i];
			struct flow_key *key = &w->sock_keys[kept];
			if (!dp_datagram(w, vs, pkt, key))
				continue;
			if (gro_on) {
				pkts[first + kept++] = pkt;
				continue;
			}
			gro_decap_passthrough(pkt);
			dp_switch_decapped(w, pkt, key);
		}
		if (kept) {
			gro_receive_burst(w->gro, &pkts[first], w->sock_keys, kept, w->now_ns);
			dp_gro_switch(w);
		}
	}
}

void dp_sock_input(struct vxd_worker *w, unsigned sock_idx)
{
	const struct vxd_view_sock *vs = &w->view->socks[sock_idx];
	if (!vs->sock)
		return;
	struct pkt **pkts = w->sock_rx;
	unsigned budget = VXD_SOCK_POLL_BUDGET;
	bool gro_on = w->view->knobs.gro && w->gro;
	/* One time for the whole poll, as NAPI's: a run started in this poll
	 * is never "older" than a later datagram of the same poll, so with
	 * gro-hold-us 0 it stays open until the poll ends. */
	w->now_ns = w->clock();
	struct vxlan_sock *lane = vxlan_sock_lane(vs->sock, w->index);
	for (unsigned round = 0; round < VXD_SOCK_POLL_ROUNDS && budget; round++) {
		int n = vxlan_sock_rx_batch(lane, w->pool, pkts, VXD_SOCK_RX_MAX);
		if (n <= 0)
			break; /* errors are counted by the socket (rx_errors) */
		budget -= (unsigned)n < budget ? (unsigned)n : budget;
		if (w->n_sock_caps)
			vxd_capture_datagrams(w, vs, pkts, (unsigned)n, gro_on);
		dp_datagrams(w, vs, pkts, (unsigned)n, gro_on);
		if (gro_on && dp_pool_low(w)) {
			gro_flush(w->gro, GRO_FLUSH_ALL, w->now_ns);
			dp_gro_switch(w);
			w->gro_pool_low_flushes++;
		}
		dp_flush_all(w);
	}
	/* Runs stay held while the socket keeps delivering; when this poll of
	 * it ends, the ones whose hold time is over complete (all of them
	 * with gro-hold-us 0, as NAPI completes GRO at napi_complete_done()):
	 * datagrams the kernel did not coalesce (zero outer checksums, UDP_GRO
	 * refused) arrive a few per recvmmsg and would otherwise make frames
	 * of a few segments. */
	dp_gro_complete(w, !gro_on);
}

void dp_gro_complete(struct vxd_worker *w, bool all)
{
	if (!w->gro)
		return;
	w->now_ns = w->clock();
	gro_flush(w->gro, all ? GRO_FLUSH_ALL : GRO_FLUSH_EXPIRED, w->now_ns);
	dp_gro_switch(w);
	dp_flush_all(w);
}

void dp_sock_writable(struct vxd_worker *w, unsigned sock_idx)
{
	const struct vxd_view_sock *vs = &w->view->socks[sock_idx];
	if (vs->sock)
		vxlan_sock_tx_resume(vxlan_sock_lane(vs->sock, w->index));
}
