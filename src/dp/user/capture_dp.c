/* The worker's side of capture (capture.h): attach/detach on request, and
 * the copy of a batch's frames into each tapping capture's ring.  Only
 * reached when a capture runs: the datapath's one check per batch guards
 * every call here. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "dp/capture_rec.h"
#include "dp/user/worker_internal.h"
#include "packet/csum.h"
#include "port/vxlan.h"

static const uint8_t mac_here[ETH_ADDR_LEN] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t mac_there[ETH_ADDR_LEN] = { 0x02, 0, 0, 0, 0, 0x02 };

/* What one frame to capture is made of: bytes [ofs, ofs + len) of a pkt,
 * and, for an outer frame, the outer headers vxlan_encap_write() puts in
 * front: the pkt's bytes then go at offset `at` of the frame (the full
 * outer header length when the pkt is the inner frame, 8 bytes less when
 * it starts at its own VXLAN header, which the writer rewrites alike). */
struct cap_src {
	const struct pkt *pkt;
	uint32_t ofs, len;
	const struct vxlan_encap *encap; /* NULL: the bytes as they are */
	uint32_t at;
	uint32_t flow_hash;
	uint8_t dir;
};

static bool cap_match(const struct vxd_capture *cap, const uint8_t *frame, uint32_t len)
{
	return !cap->insns || bpf_filter(cap->insns, frame, len, len) != 0;
}

static void cap_lock(struct vxd_capture *cap)
{
	while (atomic_flag_test_and_set_explicit(&cap->producer, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

static void cap_unlock(struct vxd_capture *cap)
{
	atomic_flag_clear_explicit(&cap->producer, memory_order_release);
}

static bool cap_put_locked(struct vxd_capture *cap, const struct cap_src *src, uint64_t now);

/* Copies one frame in, if it passes the filter.  True when a record was
 * added. */
static bool cap_put(struct vxd_capture *cap, const struct cap_src *src, uint64_t now)
{
	cap_lock(cap);
	bool put = cap_put_locked(cap, src, now);
	cap_unlock(cap);
	return put;
}

static bool cap_put_locked(struct vxd_capture *cap, const struct cap_src *src, uint64_t now)
{
	uint32_t at = src->encap ? src->at : 0;
	uint32_t len = at + src->len;
	bool contiguous = !src->encap && src->ofs + src->len <= src->pkt->size;
	/* Contiguous bytes are judged where they are, before any copy. */
	if (contiguous && !cap_match(cap, src->pkt->data + src->ofs, src->len))
		return false;
	struct dp_capture_rec *rec = rec_ring_reserve(&cap->ring, sizeof(*rec) + len);
	if (!rec) {
		atomic_fetch_add_explicit(&cap->dropped, 1, memory_order_relaxed);
		return false;
	}
	uint8_t *frame = (uint8_t *)(rec + 1);
	pkt_copy_out(src->pkt, src->ofs, src->len, frame + at);
	if (src->encap) {
		uint32_t hdr = vxlan_encap_hdr_len(src->encap);
		uint32_t inner_len = len - hdr;
		uint32_t sum = csum_partial(frame + hdr, inner_len, 0);
		/* A TSO frame may not fit the IP length field: clamped (on the
		 * wire the kernel cuts it into datagrams that fit). */
		uint32_t fit = 65535 - (hdr - ETH_HDR_LEN);
		vxlan_encap_write(frame, src->encap, src->flow_hash, 0, inner_len < fit ? inner_len : fit, sum);
	}
	if (!contiguous && !cap_match(cap, frame, len))
		return false; /* the reservation is given up */
	*rec = (struct dp_capture_rec){
		.ts_ns = (uint64_t)((int64_t)now + cap->realtime_offset_ns),
		.caplen = len,
		.len = len,
		.dir = src->dir,
		.outer = src->encap != NULL,
	};
	rec_ring_commit(&cap->ring, sizeof(*rec) + len);
	atomic_fetch_add_explicit(&cap->captured, 1, memory_order_relaxed);
	return true;
}

/* After a batch: wake the control thread if it asked to be. */
static void cap_ring_bell(struct vxd_capture *cap)
{
	if (!atomic_load_explicit(cap->want_wake, memory_order_relaxed) ||
	    !atomic_exchange(cap->want_wake, false))
		return;
	uint64_t one = 1;
	if (write(cap->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: it is already awake */
	}
}

void vxd_capture_frames(struct vxd_worker *w, struct vxd_wport *wp, uint8_t dir, struct pkt *const *pkts,
			unsigned n)
{
	uint64_t now = w->clock();
	for (unsigned c = 0; c < wp->n_caps; c++) {
		struct vxd_capture *cap = wp->caps[c];
		/* A vxlan port's received frames come through
		 * vxd_capture_decapped() or vxd_capture_datagrams(), not here. */
		if (!(cap->dirs & dir) || (cap->vxlan && dir == DP_CAPTURE_IN && cap->outer))
			continue;
		bool added = false;
		for (unsigned i = 0; i < n; i++) {
			struct vxlan_encap e;
			struct cap_src src = { .pkt = pkts[i], .len = pkt_len(pkts[i]), .dir = dir };
			if (cap->outer) {
				e = cap->tx_encap;
				memcpy(e.dst_ip, pkts[i]->tunnel.dst, 16);
				src.flow_hash = vxlan_flow_hash(pkts[i]->data, pkts[i]->size);
				src.encap = &e;
				src.at = vxlan_encap_hdr_len(&e);
			}
			added |= cap_put(cap, &src, now);
		}
		if (added)
			cap_ring_bell(cap);
	}
}

/* A received datagram (it starts at its VXLAN header) with the outer
 * headers it came with, from its addresses and ports. */
static bool cap_datagram(struct vxd_capture *cap, const struct pkt *pkt, uint32_t vni, uint64_t now)
{
	struct cap_src src = { .pkt = pkt, .len = pkt_len(pkt), .dir = DP_CAPTURE_IN };
	if (!cap->outer) {
		src.ofs = VXLAN_HDR_LEN; /* gro off: the decapsulated frame is the rest */
		src.len -= VXLAN_HDR_LEN;
		return cap_put(cap, &src, now);
	}
	struct vxlan_encap e = {
		.vni = vni,
		.family = pkt->tunnel.family,
		.udp_zero_csum = false,
		.dst_port = pkt->tunnel.dst_port,
		.src_port_min = pkt->tunnel.src_port,
		.src_port_max = pkt->tunnel.src_port,
	};
	memcpy(e.src_mac, mac_there, ETH_ADDR_LEN);
	memcpy(e.dst_mac, mac_here, ETH_ADDR_LEN);
	memcpy(e.src_ip, pkt->tunnel.src, 16);
	memcpy(e.dst_ip, pkt->tunnel.dst, 16);
	src.encap = &e;
	src.at = vxlan_encap_hdr_len(&e) - VXLAN_HDR_LEN;
	return cap_put(cap, &src, now);
}

void vxd_capture_datagrams(struct vxd_worker *w, const struct vxd_view_sock *vs, struct pkt *const *pkts,
			   unsigned n, bool gro_on)
{
	uint64_t now = w->clock();
	struct vxd_capture *rang[VXD_CAPTURE_MAX];
	unsigned n_rang = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t vni = vxlan_pkt_vni(pkts[i]);
		int id = vni < 0 ? -1 : vni_map_lookup(vs->demux, (uint32_t)vni);
		if (id < 0 || id >= VXD_MAX_PORTS)
			continue;
		struct vxd_wport *wp = &w->ports[id];
		for (unsigned c = 0; c < wp->n_caps; c++) {
			struct vxd_capture *cap = wp->caps[c];
			if (!(cap->dirs & DP_CAPTURE_IN) || (!cap->outer && gro_on))
				continue;
			if (pkt_len(pkts[i]) < VXLAN_HDR_LEN || !cap_datagram(cap, pkts[i], (uint32_t)vni, now))
				continue;
			unsigned r = 0;
			while (r < n_rang && rang[r] != cap)
				r++;
			if (r == n_rang && n_rang < VXD_CAPTURE_MAX)
				rang[n_rang++] = cap;
		}
	}
	for (unsigned r = 0; r < n_rang; r++)
		cap_ring_bell(rang[r]);
}

void vxd_capture_decapped(struct vxd_worker *w, struct pkt *const *pkts, unsigned n)
{
	uint64_t now = w->clock();
	for (unsigned i = 0; i < n; i++) {
		struct pkt *pkt = pkts[i];
		if (pkt->in_port >= VXD_MAX_PORTS)
			continue;
		struct vxd_wport *wp = &w->ports[pkt->in_port];
		for (unsigned c = 0; c < wp->n_caps; c++) {
			struct vxd_capture *cap = wp->caps[c];
			if (!(cap->dirs & DP_CAPTURE_IN) || cap->outer)
				continue;
			struct cap_src src = { .pkt = pkt, .len = pkt_len(pkt), .dir = DP_CAPTURE_IN };
			if (cap_put(cap, &src, now))
				cap_ring_bell(cap);
		}
	}
}

/* ---- attach / detach (requests) --------------------------------------------- */

static bool cap_decaps(const struct vxd_capture *cap)
{
	return cap->vxlan && !cap->outer && (cap->dirs & DP_CAPTURE_IN);
}

static void cap_recount(struct vxd_worker *w, const struct vxd_capture *cap, int delta)
{
	if (cap->vxlan)
		w->n_sock_caps = (unsigned)((int)w->n_sock_caps + delta);
	if (cap_decaps(cap))
		w->n_gro_caps = (unsigned)((int)w->n_gro_caps + delta);
}

int vxd_capture_attach(struct vxd_worker *w, struct vxd_capture *cap)
{
	if (cap->port_id >= VXD_MAX_PORTS)
		return -EINVAL;
	struct vxd_wport *wp = &w->ports[cap->port_id];
	if (!wp->port)
		return -ENOENT;
	if (wp->n_caps == VXD_CAPTURE_MAX)
		return -EBUSY;
	wp->caps[wp->n_caps++] = cap;
	cap_recount(w, cap, +1);
	return 0;
}

int vxd_capture_detach(struct vxd_worker *w, struct vxd_capture *cap)
{
	if (cap->port_id >= VXD_MAX_PORTS)
		return -EINVAL;
	struct vxd_wport *wp = &w->ports[cap->port_id];
	for (unsigned c = 0; c < wp->n_caps; c++) {
		if (wp->caps[c] != cap)
			continue;
		wp->caps[c] = wp->caps[--wp->n_caps];
		wp->caps[wp->n_caps] = NULL;
		cap_recount(w, cap, -1);
		return 0;
	}
	return -ENOENT; /* already let go with its port */
}

void vxd_capture_detach_port(struct vxd_worker *w, uint16_t port_id)
{
	struct vxd_wport *wp = &w->ports[port_id];
	while (wp->n_caps)
		vxd_capture_detach(w, wp->caps[0]);
}

void vxd_capture_get_state(const struct vxd_worker *w, struct vxd_capture_state *out)
{
	*out = (struct vxd_capture_state){ .sock_caps = w->n_sock_caps, .gro_caps = w->n_gro_caps };
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		out->port_caps += w->ports[i].n_caps;
		out->ports_tapped += w->ports[i].n_caps > 0;
	}
}
