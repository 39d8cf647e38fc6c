#include "daemon/datapath.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"
#include "ctl/ctl_server.h"
#include "daemon/vxd_internal.h"
#include "offload/gro.h"
#include "offload/rx_csum.h"
#include "packet/hdr.h"
#include "packet/vnet_hdr.h"
#include "parse/flow_extract.h"
#include "port/tap.h"
#include "port/vxlan.h"

uint64_t vxd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vxd_log(const struct vxd *vxd, const char *fmt, ...)
{
	if (vxd->opts.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- output queues ------------------------------------------------------- */

static void vxd_flush_port(struct vxd *vxd, uint16_t id)
{
	struct vxd_txq *q = &vxd->txq[id];
	if (q->n == 0)
		return;
	struct port *port = vxd->ports[id];
	unsigned n = q->n;
	q->n = 0;
	if (!port) {
		for (unsigned i = 0; i < n; i++)
			pkt_free(q->pkts[i]);
		return;
	}
	port->cls->tx_batch(port, q->pkts, n);
}

void vxd_flush_all(struct vxd *vxd)
{
	for (unsigned i = 0; i < vxd->n_dirty; i++)
		vxd_flush_port(vxd, vxd->dirty[i]);
	vxd->n_dirty = 0;
}

static void vxd_enqueue(struct vxd *vxd, uint16_t id, struct pkt *pkt)
{
	struct vxd_txq *q = &vxd->txq[id];
	if (q->n == VXD_TXQ_LEN)
		vxd_flush_port(vxd, id);
	if (q->n == 0)
		vxd->dirty[vxd->n_dirty++] = id;
	q->pkts[q->n++] = pkt;
}

/* A private copy of a frame for one more output of a flood.  Floods are
 * ARP, ND and unknown unicast: rare, so a copy is fine. */
static struct pkt *vxd_clone(struct vxd *vxd, const struct pkt *pkt)
{
	struct pkt *copy = pkt_alloc(vxd->pool);
	if (!copy)
		return NULL;
	uint32_t len = pkt_len(pkt);
	if (len > PKT_MAX_FRAME || pkt_copy_out(pkt, 0, len, copy->data) < 0) {
		pkt_free(copy);
		return NULL;
	}
	copy->size = len;
	copy->ol = pkt->ol;
	copy->l2_ofs = pkt->l2_ofs;
	copy->l3_ofs = pkt->l3_ofs;
	copy->l4_ofs = pkt->l4_ofs;
	copy->payload_ofs = pkt->payload_ofs;
	copy->in_port = pkt->in_port;
	copy->tunnel = pkt->tunnel;
	copy->timestamp_ns = pkt->timestamp_ns;
	return copy;
}

static void vxd_count_drop(struct vxd *vxd, uint16_t port_id, enum drop_reason reason)
{
	struct port *port = port_id < VXD_MAX_PORTS ? vxd->ports[port_id] : NULL;
	if (port)
		port_count_drop(port, reason);
	else if ((unsigned)reason < DROP_REASON_COUNT)
		vxd->drops[reason]++;
}

/* Sends `pkt` (consumed) to every output of `res`. */
static void vxd_output(struct vxd *vxd, struct pkt *pkt, const struct fwd_result *res)
{
	if (res->action == FWD_DROP || res->n_outputs == 0) {
		vxd_count_drop(vxd, pkt->in_port, res->action == FWD_DROP ? res->reason : DROP_FDB_DST_UNKNOWN);
		pkt_free(pkt);
		return;
	}
	for (uint16_t i = 0; i < res->n_outputs; i++) {
		const struct fdb_dst *dst = &res->outputs[i];
		bool last = i + 1 == res->n_outputs;
		struct port *port = dst->port < VXD_MAX_PORTS ? vxd->ports[dst->port] : NULL;
		if (!port) {
			vxd_count_drop(vxd, pkt->in_port, DROP_FDB_DST_UNKNOWN);
			if (last)
				pkt_free(pkt);
			continue;
		}
		struct pkt *out = last ? pkt : vxd_clone(vxd, pkt);
		if (!out) {
			port_count_drop(port, DROP_NO_BUFFER);
			continue;
		}
		if (dst->type == FDB_DST_VTEP) {
			out->tunnel.family = dst->family;
			memcpy(out->tunnel.dst, dst->addr, 16);
		} else if (out->ol.gso_type == PKT_GSO_NONE && pkt_len(out) > port->mtu + ETH_HDR_LEN &&
			   port_is_tap(port) && gro_mark_big_tcp(out, port->mtu)) {
			vxd->whole_big_tcp_marked++;
		}
		vxd_enqueue(vxd, port->id, out);
	}
}

/* ---- from a tap ------------------------------------------------------------ */

static void vxd_switch_from_tap(struct vxd *vxd, struct port *port, struct pkt *pkt)
{
	struct flow_key key;
	pkt->in_port = port->id;
	enum drop_reason reason = flow_extract(pkt, 0, &key);
	if (reason == DROP_NONE)
		reason = vnet_hdr_validate(pkt, &key);
	if (reason != DROP_NONE) {
		port_count_drop(port, reason);
		pkt_free(pkt);
		return;
	}
	struct fdb_dst ingress = fdb_dst_port(port->id);
	fwd_frame(&vxd->fwd, &ingress, port->vni, key.dl_dst, key.dl_src, vxd->now_ns, &vxd->fwd_res);
	vxd_output(vxd, pkt, &vxd->fwd_res);
}

static void vxd_tap_input(struct vxd *vxd, struct port *port)
{
	struct pkt *pkts[VXD_RX_BATCH];
	for (unsigned round = 0; round < VXD_RX_ROUNDS; round++) {
		int n = port->cls->rx_batch(port, vxd->pool, pkts, VXD_RX_BATCH);
		if (n <= 0)
			break;
		vxd->now_ns = vxd_now_ns();
		for (int i = 0; i < n; i++)
			vxd_switch_from_tap(vxd, port, pkts[i]);
		vxd_flush_all(vxd);
		if (n < VXD_RX_BATCH)
			break;
	}
}

/* ---- from the underlay ------------------------------------------------------ */

/* A decapsulated inner frame (from GRO, or decapsulated directly when GRO
 * is off): learn its source behind the VTEP it came from and forward it. */
static void vxd_switch_decapped(struct vxd *vxd, struct pkt *pkt)
{
	struct port *port = pkt->in_port < VXD_MAX_PORTS ? vxd->ports[pkt->in_port] : NULL;
	const uint8_t *eth = pkt_at(pkt, 0, ETH_HDR_LEN);
	if (!port || !eth) {
		vxd_count_drop(vxd, pkt->in_port, DROP_TRUNCATED_ETH);
		pkt_free(pkt);
		return;
	}
	struct fdb_dst ingress = fdb_dst_vtep(port->id, pkt->tunnel.family, pkt->tunnel.src);
	fwd_frame(&vxd->fwd, &ingress, port->vni, eth, eth + ETH_ADDR_LEN, vxd->now_ns, &vxd->fwd_res);
	vxd_output(vxd, pkt, &vxd->fwd_res);
}

static void vxd_gro_emit(void *aux, struct pkt *pkt)
{
	vxd_switch_decapped(aux, pkt);
}

static struct port *vxd_vxlan_port_for(struct vxd *vxd, struct vxd_src *src, uint32_t vni)
{
	for (unsigned i = 0; i < src->n_vnis; i++)
		if (src->vnis[i].vni == vni)
			return vxd->ports[src->vnis[i].port_id];
	return NULL;
}

/* The inner checksum of a datagram the kernel did not vouch for (not
 * coalesced by UDP GRO), checked once here so that neither GRO nor the VM
 * checks it again.  False when the frame was dropped. */
static bool vxd_rx_csum(struct vxd *vxd, struct port *port, struct pkt *pkt, const struct flow_key *key)
{
	if ((pkt->ol.flags & PKT_OL_DATA_VALID) || !vxd->knobs[CTL_KNOB_RX_CSUM])
		return true;
	if (key->nw_frag || pkt->inner_l3_ofs == PKT_OFS_NONE || pkt->inner_l4_ofs == PKT_OFS_NONE) {
		vxd->rx_csum.not_checked++;
		return true;
	}
	switch (rx_csum_check(pkt, pkt->inner_l3_ofs, pkt->inner_l4_ofs, key->nw_proto, true)) {
	case RX_CSUM_GOOD:
		vxd->rx_csum.good++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		return true;
	case RX_CSUM_FINISHED:
		vxd->rx_csum.finished++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		return true;
	case RX_CSUM_BAD:
		vxd->rx_csum.bad++;
		port_count_drop(port, DROP_BAD_L4_CSUM);
		pkt_free(pkt);
		return false;
	case RX_CSUM_UNFINISHED:
	case RX_CSUM_NOT_CHECKED:
		break;
	}
	vxd->rx_csum.not_checked++;
	return true;
}

/* True when another receive round might not find its buffers: held GRO
 * runs pin the buffers their segments sit in (one per datagram when the
 * kernel did not coalesce them), so they are completed early instead. */
static bool vxd_pool_low(const struct vxd *vxd)
{
	struct pkt_pool_stats st;
	pkt_pool_get_stats(vxd->pool, &st);
	/* One more round takes at most one pkt per datagram plus its buffers. */
	return (uint64_t)st.in_use + VXD_SOCK_RX_MAX + VXD_RX_BATCH >= vxd->pool_size;
}

static void vxd_sock_input(struct vxd *vxd, struct vxd_src *src)
{
	struct pkt **pkts = vxd->sock_rx;
	unsigned budget = VXD_SOCK_POLL_BUDGET;
	for (unsigned round = 0; round < VXD_SOCK_POLL_ROUNDS && budget; round++) {
		int n = vxlan_sock_rx_batch(src->sock, vxd->pool, pkts, VXD_SOCK_RX_MAX);
		if (n <= 0)
			break;
		budget -= (unsigned)n < budget ? (unsigned)n : budget;
		vxd->now_ns = vxd_now_ns();
		bool gro_on = vxd->knobs[CTL_KNOB_GRO] && vxd->gro;
		for (int i = 0; i < n; i++) {
			struct pkt *pkt = pkts[i];
			int64_t vni = vxlan_pkt_vni(pkt);
			struct port *port = vni < 0 ? NULL : vxd_vxlan_port_for(vxd, src, (uint32_t)vni);
			if (!port) {
				vxd->drops[DROP_VXLAN_UNKNOWN_VNI]++;
				pkt_free(pkt);
				continue;
			}
			pkt->in_port = port->id;
			struct flow_key key;
			enum drop_reason reason = flow_extract_vxlan(pkt, &key);
			if (reason != DROP_NONE) {
				port_count_drop(port, reason);
				pkt_free(pkt);
				continue;
			}
			port->stats.rx_frames++;
			port->stats.rx_bytes += pkt_len(pkt) - VXLAN_HDR_LEN;
			if (!vxd_rx_csum(vxd, port, pkt, &key))
				continue;
			if (gro_on) {
				gro_receive(vxd->gro, pkt, vxd->now_ns);
				continue;
			}
			/* GRO off: decapsulate here, one frame per datagram. */
			pkt_pull(pkt, pkt->inner_l2_ofs);
			pkt->l2_ofs = 0;
			pkt->l3_ofs = pkt->inner_l3_ofs;
			pkt->l4_ofs = pkt->inner_l4_ofs;
			pkt->payload_ofs = pkt->inner_payload_ofs;
			pkt->tunnel_ofs = pkt->inner_l2_ofs = pkt->inner_l3_ofs = PKT_OFS_NONE;
			pkt->inner_l4_ofs = pkt->inner_payload_ofs = PKT_OFS_NONE;
			vxd_switch_decapped(vxd, pkt);
		}
		if (gro_on && vxd_pool_low(vxd)) {
			gro_flush(vxd->gro, GRO_FLUSH_ALL, vxd->now_ns);
			vxd->gro_pool_low_flushes++;
		}
		vxd_flush_all(vxd);
	}
	/* Runs stay held while the socket keeps delivering and complete when
	 * this poll of it ends, as NAPI completes GRO at napi_complete_done():
	 * datagrams the kernel did not coalesce (zero outer checksums, UDP_GRO
	 * refused) arrive a few per recvmmsg and would otherwise make frames
	 * of a few segments. */
	if (vxd->knobs[CTL_KNOB_GRO] && vxd->gro) {
		gro_flush(vxd->gro, GRO_FLUSH_ALL, vxd->now_ns);
		vxd_flush_all(vxd);
	}
}

/* ---- the loop ----------------------------------------------------------------- */

void vxd_diag_snapshot(struct vxd *vxd, bool restart)
{
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		struct vxd_diag_snap now = { 0, 0 };
		if (vxd->ports[i])
			now = (struct vxd_diag_snap){ vxd->ports[i]->stats.tx_frames, vxd->ports[i]->stats.tx_bytes };
		vxd->diag_prev[i] = restart ? now : vxd->diag_cur[i];
		vxd->diag_cur[i] = now;
	}
	vxd->diag_cur_ns = vxd_now_ns();
}

int vxd_gro_rebuild(struct vxd *vxd)
{
	if (vxd->gro) {
		gro_flush(vxd->gro, GRO_FLUSH_ALL, vxd_now_ns());
		vxd_flush_all(vxd);
		/* Keep the counters across a rebuild. */
		gro_get_stats(vxd->gro, &vxd->gro_stats_base);
		vxd->gro_stats_carried = true;
	}
	struct gro_config cfg = {
		.max_flows = GRO_DEFAULT_MAX_FLOWS,
		.max_size = vxd->knobs[CTL_KNOB_GRO_MAX_SIZE] ? vxd->knobs[CTL_KNOB_GRO_MAX_SIZE] : GRO_DEFAULT_MAX_SIZE,
		.hold_ns = (uint64_t)vxd->knobs[CTL_KNOB_GRO_HOLD_US] * 1000ull,
		.emit = vxd_gro_emit,
		.emit_aux = vxd,
	};
	if (cfg.max_size > GRO_DEFAULT_MAX_SIZE)
		cfg.max_size = GRO_DEFAULT_MAX_SIZE;
	struct gro_table *gro = gro_create(&cfg);
	if (!gro)
		return -errno;
	gro_destroy(vxd->gro);
	vxd->gro = gro;
	return 0;
}

int vxd_create(const struct vxd_options *opts, struct vxd **out)
{
	struct vxd *vxd = calloc(1, sizeof(*vxd));
	if (!vxd)
		return -ENOMEM;
	int err;
	vxd->opts = *opts;
	vxd->epfd = -1;
	vxd->knobs[CTL_KNOB_GRO] = 1;
	vxd->knobs[CTL_KNOB_GSO] = 1;
	vxd->knobs[CTL_KNOB_TAP_TSO] = 1;
	vxd->knobs[CTL_KNOB_UDP_GRO] = 1;
	vxd->knobs[CTL_KNOB_UDP_SEGMENT] = 1;
	vxd->knobs[CTL_KNOB_RX_CSUM] = 1;
	vxd->knobs[CTL_KNOB_GRO_HOLD_US] = (uint32_t)(GRO_DEFAULT_HOLD_NS / 1000);
	vxd->knobs[CTL_KNOB_GRO_MAX_SIZE] = 65535;
	vxd->knobs[CTL_KNOB_FDB_AGEING] = (uint32_t)(FDB_DEFAULT_AGEING_NS / 1000000000ull);

	vxd->pool_size = opts->pool_size ? opts->pool_size : VXD_POOL_DEFAULT;
	vxd->pool = pkt_pool_create(vxd->pool_size);
	if (!vxd->pool) {
		err = -ENOMEM;
		goto err_free;
	}
	struct fdb_config fcfg = {
		.max_learned = opts->fdb_size ? opts->fdb_size : VXD_FDB_SIZE_DEFAULT,
		.max_learned_per_vni = FDB_DEFAULT_MAX_LEARNED,
		.hash_seed = (uint64_t)vxd_now_ns() ^ (uint64_t)getpid() << 32,
	};
	if (fcfg.max_learned_per_vni > fcfg.max_learned)
		fcfg.max_learned_per_vni = fcfg.max_learned;
	vxd->knobs[CTL_KNOB_FDB_MAX] = fcfg.max_learned_per_vni;
	vxd->fdb = fdb_create(&fcfg);
	struct vni_table *vnis = vni_table_create();
	if (!vxd->fdb || !vnis) {
		vni_table_destroy(vnis);
		err = -ENOMEM;
		goto err_destroy;
	}
	vni_table_publish(&vxd->vni_ref, vnis);
	fwd_init(&vxd->fwd, vxd->fdb, vni_table_current(&vxd->vni_ref));
	err = vxd_gro_rebuild(vxd);
	if (err < 0)
		goto err_destroy;
	vxd->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (vxd->epfd < 0) {
		err = -errno;
		goto err_destroy;
	}
	if (opts->ctl_path) {
		struct ctl_server_opts sopts = { .path = opts->ctl_path };
		err = ctl_server_create(&sopts, &vxd->ctl);
		if (err < 0)
			goto err_destroy;
		vxd->ctl_src.kind = VXD_SRC_CTL;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &vxd->ctl_src };
		if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, ctl_server_fd(vxd->ctl), &ev) < 0) {
			err = -errno;
			goto err_destroy;
		}
	}
	vxd->start_ns = vxd_now_ns();
	*out = vxd;
	return 0;

err_destroy:
	vxd_destroy(vxd);
	return err;
err_free:
	free(vxd);
	return err;
}

void vxd_destroy(struct vxd *vxd)
{
	if (!vxd)
		return;
	vxd_flush_all(vxd);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i])
			vxd_port_remove(vxd, (uint16_t)i);
	ctl_server_destroy(vxd->ctl);
	if (vxd->epfd >= 0)
		close(vxd->epfd);
	gro_destroy(vxd->gro);
	struct vni_table *old = vni_table_publish(&vxd->vni_ref, NULL);
	vni_table_destroy(old);
	fdb_destroy(vxd->fdb);
	pkt_pool_destroy(vxd->pool);
	free(vxd);
}

void vxd_stop(struct vxd *vxd)
{
	vxd->stop = 1;
}

static int vxd_dispatch(void *ctx, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	return vxd_execute(ctx, cmd, out, err);
}

int vxd_run(struct vxd *vxd)
{
	struct epoll_event events[VXD_MAX_EVENTS];
	while (!vxd->stop) {
		int n = epoll_wait(vxd->epfd, events, VXD_MAX_EVENTS, 1000);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		bool ctl_ready = false;
		/* Data first; the control socket last, so a `port del` never
		 * frees a port that a later event of this round points at. */
		for (int i = 0; i < n; i++) {
			struct vxd_src *src = events[i].data.ptr;
			switch (src->kind) {
			case VXD_SRC_TAP:
				vxd_tap_input(vxd, src->port);
				break;
			case VXD_SRC_SOCK:
				vxd_sock_input(vxd, src);
				break;
			case VXD_SRC_CTL:
				ctl_ready = true;
				break;
			}
		}
		if (ctl_ready)
			ctl_server_handle(vxd->ctl, vxd_dispatch, vxd);
		uint64_t now = vxd_now_ns();
		if (now - vxd->last_age_ns > 1000000000ull) {
			fdb_age(vxd->fdb, now);
			vxd->last_age_ns = now;
		}
		if (now - vxd->diag_cur_ns > VXD_DIAG_WINDOW_NS)
			vxd_diag_snapshot(vxd, false);
	}
	return 0;
}
