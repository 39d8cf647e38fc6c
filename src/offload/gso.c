/* GSO engine: cuts a TSO/USO frame into segments.  See gso.h for the
 * per-segment rules and the two output forms.
 *
 * One routine, gso_write_segment(), writes segment i of a frame into any
 * buffer; the pkt and train outputs only decide where that buffer is and
 * what goes in front of it. */
#include "offload/gso.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/vnet_hdr.h"

/* Adds two unfolded sums without losing the carry out of 32 bits. */
static uint32_t csum_add(uint32_t a, uint32_t b)
{
	uint64_t wide = (uint64_t)a + b;
	return (uint32_t)(wide & 0xffffffff) + (uint32_t)(wide >> 32);
}

/* ---- plan ------------------------------------------------------------------ */

/* Walks the IPv6 extension headers the parser accepts and checks that they
 * end at l4_ofs with `want` as the upper protocol.  A fragment header means
 * the frame is not segmentable. */
static bool ipv6_chain_ends_at(const struct pkt *pkt, uint16_t l3_ofs, uint16_t l4_ofs, uint8_t want)
{
	const uint8_t *ip = pkt_at(pkt, l3_ofs, IPV6_HDR_LEN);
	if (!ip)
		return false;
	uint8_t next = ip[6];
	uint32_t ofs = l3_ofs + IPV6_HDR_LEN;
	for (int n = 0; n <= 8 && ofs < l4_ofs; n++) {
		if (next != IP_PROTO_HOPOPTS && next != IP_PROTO_ROUTING && next != IP_PROTO_DSTOPTS)
			return false;
		const uint8_t *ext = pkt_at(pkt, ofs, 2);
		if (!ext)
			return false;
		next = ext[0];
		ofs += ((uint32_t)ext[1] + 1) * 8;
	}
	return ofs == l4_ofs && next == want;
}

int gso_plan(const struct pkt *pkt, struct gso_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->nr_segs = 1;
	plan->payload_len = pkt_len(pkt);
	plan->l3_ofs = pkt->l3_ofs;
	plan->l4_ofs = pkt->l4_ofs;
	plan->csum_needed = (pkt->ol.flags & PKT_OL_NEEDS_CSUM) != 0;

	uint8_t type = pkt->ol.gso_type & (uint8_t)~PKT_GSO_ECN;
	if (type == PKT_GSO_NONE)
		return 0;
	if (type != PKT_GSO_TCPV4 && type != PKT_GSO_TCPV6 && type != PKT_GSO_UDP_L4)
		return -EOPNOTSUPP; /* UFO (IP fragmentation) and unknown types */
	if (pkt->tunnel_ofs != PKT_OFS_NONE)
		return -EOPNOTSUPP; /* inner TSO in a VXLAN frame: not from a TAP */

	uint16_t l3 = pkt->l3_ofs, l4 = pkt->l4_ofs;
	if (l3 == PKT_OFS_NONE || l4 == PKT_OFS_NONE || l4 <= l3)
		return -EINVAL;
	const uint8_t *ip = pkt_at(pkt, l3, 1);
	if (!ip)
		return -EINVAL;
	uint8_t version = ip[0] >> 4;
	uint8_t proto = type == PKT_GSO_UDP_L4 ? IP_PROTO_UDP : IP_PROTO_TCP;
	if ((type == PKT_GSO_TCPV4 && version != 4) || (type == PKT_GSO_TCPV6 && version != 6))
		return -EINVAL;

	/* The IP length must describe exactly this frame: flow_extract()
	 * trimmed Ethernet padding, so anything else is a lie. */
	uint32_t total = pkt_len(pkt);
	if (version == 4) {
		const uint8_t *ip4 = pkt_at(pkt, l3, IPV4_HDR_LEN);
		if (!ip4 || (uint32_t)(ip4[0] & 0xf) * 4 != (uint32_t)(l4 - l3) || l4 - l3 < IPV4_HDR_LEN)
			return -EINVAL;
		if (ip4[9] != proto || (load_be16(ip4 + 6) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)))
			return -EINVAL;
		if (load_be16(ip4 + 2) != total - l3)
			return -EINVAL;
	} else if (version == 6) {
		if (!ipv6_chain_ends_at(pkt, l3, l4, proto))
			return -EINVAL;
		const uint8_t *ip6 = pkt_at(pkt, l3, IPV6_HDR_LEN);
		if (load_be16(ip6 + 4) != total - l3 - IPV6_HDR_LEN)
			return -EINVAL;
	} else {
		return -EINVAL;
	}

	/* Never trust hdr_len from the TAP: recompute it from L4. */
	uint32_t hdr_len;
	if (proto == IP_PROTO_TCP) {
		const uint8_t *th = pkt_at(pkt, l4, TCP_HDR_LEN);
		if (!th || th[12] >> 4 < 5)
			return -EINVAL;
		hdr_len = l4 + (uint32_t)(th[12] >> 4) * 4;
	} else {
		hdr_len = l4 + UDP_HDR_LEN;
	}
	if (!pkt_at(pkt, 0, hdr_len))
		return -EINVAL; /* headers must be linear */
	if (pkt->ol.gso_size == 0)
		return -EINVAL;

	plan->hdr_len = (uint16_t)hdr_len;
	plan->mss = pkt->ol.gso_size;
	plan->payload_len = total - hdr_len;
	plan->ip_version = version;
	plan->l4_proto = proto;
	plan->csum_needed = true;
	if (plan->payload_len > plan->mss)
		plan->nr_segs = (plan->payload_len + plan->mss - 1) / plan->mss;
	if (plan->nr_segs > GSO_MAX_SEGS)
		return -E2BIG;
	return 0;
}

/* ---- one segment ----------------------------------------------------------- */

/* Per-frame constants every segment starts from. */
struct gso_base {
	uint16_t ip_id;
	uint32_t seq;
	uint8_t tcp_flags;
};

static void gso_base_init(const struct pkt *pkt, const struct gso_plan *plan, struct gso_base *base)
{
	memset(base, 0, sizeof(*base));
	if (plan->ip_version == 4)
		base->ip_id = load_be16(pkt->data + plan->l3_ofs + 4);
	if (plan->l4_proto == IP_PROTO_TCP) {
		base->seq = load_be32(pkt->data + plan->l4_ofs + 4);
		base->tcp_flags = pkt->data[plan->l4_ofs + 13];
	}
}

static int copy_range(const struct pkt *pkt, uint32_t ofs, uint32_t len, uint8_t *dst)
{
	if (ofs + len <= pkt->size) {
		memcpy(dst, pkt->data + ofs, len);
		return 0;
	}
	return pkt_copy_out(pkt, ofs, len, dst);
}

/* Writes the headers of segment `i` (plan->hdr_len bytes) at `out`, its
 * payload being elsewhere: lengths, IP ID, seq, flags and checksums per
 * gso.h.  `payload_sum` is the unfolded csum_partial() of the segment's
 * payload (L4 headers are a multiple of 4 bytes, so it adds in phase); it
 * is ignored with `partial`, where the L4 checksum field gets the
 * pseudo-header sum only.  If `frame_sum` is non-NULL it receives the
 * unfolded sum of the whole segment, headers and payload (for an outer UDP
 * checksum).  Returns the segment's length. */
static uint32_t gso_write_segment_hdrs(const struct pkt *pkt, const struct gso_plan *plan,
				       const struct gso_base *base, uint32_t i, bool partial,
				       uint32_t payload_sum, uint8_t *out, uint32_t *frame_sum)
{
	uint32_t payload_ofs = i * plan->mss;
	uint32_t seg_payload = plan->payload_len - payload_ofs;
	if (seg_payload > plan->mss)
		seg_payload = plan->mss;
	bool last = i + 1 == plan->nr_segs;
	uint32_t seg_len = plan->hdr_len + seg_payload;

	memcpy(out, pkt->data, plan->hdr_len);

	uint8_t *l3 = out + plan->l3_ofs;
	uint8_t *l4 = out + plan->l4_ofs;
	uint32_t l4_len = seg_len - plan->l4_ofs;
	uint32_t pseudo;
	if (plan->ip_version == 4) {
		store_be16(l3 + 2, (uint16_t)(seg_len - plan->l3_ofs));
		store_be16(l3 + 4, (uint16_t)(base->ip_id + i));
		csum_ipv4_hdr_set(l3, plan->l4_ofs - plan->l3_ofs);
		pseudo = csum_pseudo_ipv4(l3 + 12, l3 + 16, plan->l4_proto, l4_len);
	} else {
		store_be16(l3 + 4, (uint16_t)(seg_len - plan->l3_ofs - IPV6_HDR_LEN));
		pseudo = csum_pseudo_ipv6(l3 + 8, l3 + 24, plan->l4_proto, l4_len);
	}

	uint32_t csum_offset;
	if (plan->l4_proto == IP_PROTO_TCP) {
		store_be32(l4 + 4, base->seq + payload_ofs);
		uint8_t flags = base->tcp_flags;
		if (i > 0)
			flags &= (uint8_t)~TCP_CWR;
		if (!last)
			flags &= (uint8_t)~(TCP_FIN | TCP_PSH);
		l4[13] = flags;
		csum_offset = TCP_CSUM_OFFSET;
	} else {
		store_be16(l4 + 4, (uint16_t)l4_len);
		csum_offset = UDP_CSUM_OFFSET;
	}

	uint32_t l4_hdr_len = plan->hdr_len - plan->l4_ofs;
	uint16_t csum;
	if (partial) {
		csum = csum_fold_nocomplement(pseudo);
		memcpy(l4 + csum_offset, &csum, 2);
		if (frame_sum)
			*frame_sum = csum_add(csum_partial(out, plan->hdr_len, 0), payload_sum);
		return seg_len;
	}
	memset(l4 + csum_offset, 0, 2);
	uint32_t l4_sum = csum_add(csum_partial(l4, l4_hdr_len, 0), payload_sum);
	csum = csum_fold(csum_add(pseudo, l4_sum));
	if (csum == 0 && plan->l4_proto == IP_PROTO_UDP)
		csum = 0xffff;
	memcpy(l4 + csum_offset, &csum, 2);
	if (frame_sum) {
		/* L4 starts at an even offset (14 + 4k + IP header), so the
		 * pieces add up without re-reading the payload. */
		uint32_t sum = csum_partial(out, plan->l4_ofs, 0);
		sum = csum_add(sum, l4_sum);
		*frame_sum = csum_add(sum, csum);
	}
	return seg_len;
}

/* Writes segment `i` of a segmented frame at `out`, payload copied after
 * the headers; returns its length.  Arguments as gso_write_segment_hdrs(). */
static uint32_t gso_write_segment(const struct pkt *pkt, const struct gso_plan *plan,
				  const struct gso_base *base, uint32_t i, bool partial,
				  uint8_t *out, uint32_t *frame_sum)
{
	uint32_t payload_ofs = i * plan->mss;
	uint32_t seg_payload = plan->payload_len - payload_ofs;
	if (seg_payload > plan->mss)
		seg_payload = plan->mss;
	uint8_t *payload = out + plan->hdr_len;
	/* Cannot fail: gso_plan() checked the lengths against the frame. */
	(void)copy_range(pkt, plan->hdr_len + payload_ofs, seg_payload, payload);
	/* The payload sum is needed unless the checksum stays partial and
	 * nobody asked for the frame's sum. */
	uint32_t payload_sum = !partial || frame_sum ? csum_partial(payload, seg_payload, 0) : 0;
	return gso_write_segment_hdrs(pkt, plan, base, i, partial, payload_sum, out, frame_sum);
}

/* A frame without gso is copied whole; its partial checksum is completed
 * in the copy unless `partial`.  Returns the length or -EINVAL. */
static int gso_write_whole(const struct pkt *pkt, bool partial, uint8_t *out, uint32_t *frame_sum)
{
	uint32_t len = pkt_len(pkt);
	if (copy_range(pkt, 0, len, out))
		return -EINVAL;
	if (!partial && (pkt->ol.flags & PKT_OL_NEEDS_CSUM)) {
		uint32_t start = pkt->ol.csum_start, field = start + pkt->ol.csum_offset;
		if (field + 2 > len || field < start)
			return -EINVAL;
		uint16_t csum = csum_fold(csum_partial(out + start, len - start, 0));
		if (csum == 0 && pkt->ol.csum_offset == UDP_CSUM_OFFSET)
			csum = 0xffff;
		memcpy(out + field, &csum, 2);
	}
	if (frame_sum)
		*frame_sum = csum_partial(out, len, 0);
	return (int)len;
}

static uint32_t gso_seg_len(const struct gso_plan *plan, uint32_t i)
{
	if (plan->ip_version == 0)
		return plan->payload_len; /* whole frame */
	uint32_t rest = plan->payload_len - i * plan->mss;
	return plan->hdr_len + (rest < plan->mss ? rest : plan->mss);
}

/* ---- output into pkts ---------------------------------------------------- */

int gso_ref_segment(const struct pkt *pkt, unsigned flags, struct pkt_pool *pool,
		struct pkt **segs, unsigned max_segs)
{
	struct gso_plan plan;
	int err = gso_plan(pkt, &plan);
	if (err)
		return err;
	if (plan.nr_segs > max_segs)
		return -ENOSPC;
	bool partial = flags & GSO_CSUM_PARTIAL;
	struct gso_base base;
	gso_base_init(pkt, &plan, &base);

	uint32_t n = 0;
	while (n < plan.nr_segs) {
		struct pkt *seg = pkt_alloc(pool);
		if (!seg) {
			err = -ENOBUFS;
			goto err_free_segs;
		}
		segs[n++] = seg;
		uint32_t i = n - 1;
		uint8_t *out = pkt_put(seg, gso_seg_len(&plan, i));
		if (!out) {
			err = -ENOBUFS;
			goto err_free_segs;
		}
		seg->in_port = pkt->in_port;
		seg->timestamp_ns = pkt->timestamp_ns;
		seg->l2_ofs = pkt->l2_ofs;
		seg->l3_ofs = pkt->l3_ofs;
		seg->l4_ofs = pkt->l4_ofs;
		seg->payload_ofs = pkt->payload_ofs;

		if (plan.ip_version == 0) {
			int len = gso_write_whole(pkt, partial, out, NULL);
			if (len < 0) {
				err = len;
				goto err_free_segs;
			}
			seg->ol = pkt->ol;
			if (!partial)
				seg->ol.flags &= (uint8_t)~PKT_OL_NEEDS_CSUM;
			continue;
		}
		gso_write_segment(pkt, &plan, &base, i, partial, out, NULL);
		seg->payload_ofs = plan.hdr_len;
		if (partial) {
			seg->ol.flags = PKT_OL_NEEDS_CSUM;
			seg->ol.csum_start = plan.l4_ofs;
			seg->ol.csum_offset = plan.l4_proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
		}
	}
	return (int)n;

err_free_segs:
	for (uint32_t k = 0; k < n; k++)
		pkt_free(segs[k]);
	return err;
}

/* ---- output into a train ------------------------------------------------- */

static int train_prefix_len(enum gso_train_shape shape, const struct vxlan_encap *encap, uint32_t *prefix)
{
	switch (shape) {
	case GSO_TRAIN_PLAIN:
		*prefix = 0;
		return 0;
	case GSO_TRAIN_VXLAN_UDP:
		if (!encap || encap->vni > VXLAN_VNI_MAX)
			return -EINVAL;
		*prefix = VXLAN_HDR_LEN;
		return 0;
	case GSO_TRAIN_VXLAN_FRAME:
		if (!encap || vxlan_encap_check(encap))
			return -EINVAL;
		*prefix = vxlan_encap_hdr_len(encap);
		return 0;
	}
	return -EINVAL;
}

/* What every train starts from: the bytes each segment carries before its
 * own headers (by shape), and the cut of the frame into segments. */
static int train_prepare(const struct pkt *pkt, enum gso_train_shape shape,
			 const struct vxlan_encap *encap, uint32_t *prefix, struct gso_plan *plan)
{
	int err = train_prefix_len(shape, encap, prefix);
	return err ? err : gso_plan(pkt, plan);
}

uint32_t gso_ref_train_size(const struct pkt *pkt, enum gso_train_shape shape,
			const struct vxlan_encap *encap)
{
	struct gso_plan plan;
	uint32_t prefix;
	if (train_prepare(pkt, shape, encap, &prefix, &plan))
		return 0;
	return plan.nr_segs * prefix + plan.payload_len + plan.nr_segs * plan.hdr_len;
}

int gso_ref_train_build(const struct pkt *pkt, enum gso_train_shape shape,
		    const struct vxlan_encap *encap, uint16_t *outer_ip_id,
		    unsigned flags, struct gso_train *train)
{
	if (flags & GSO_CSUM_PARTIAL)
		return -EINVAL;
	uint32_t prefix;
	struct gso_plan plan;
	int err = train_prepare(pkt, shape, encap, &prefix, &plan);
	if (err)
		return err;

	uint32_t stride = prefix + gso_seg_len(&plan, 0);
	uint32_t last_size = prefix + gso_seg_len(&plan, plan.nr_segs - 1);
	uint64_t need = (uint64_t)stride * (plan.nr_segs - 1) + last_size;
	if (need > train->cap)
		return -ENOSPC;
	/* An encapsulated segment must still fit one IP datagram. */
	if (shape != GSO_TRAIN_PLAIN) {
		uint32_t ip_hdr = encap->family == 6 ? 0 : IPV4_HDR_LEN;
		uint32_t udp_payload = stride - (shape == GSO_TRAIN_VXLAN_FRAME ? prefix - VXLAN_HDR_LEN : 0);
		if (ip_hdr + UDP_HDR_LEN + udp_payload > 65535)
			return -EMSGSIZE;
	}

	struct gso_base base;
	gso_base_init(pkt, &plan, &base);
	bool want_sum = shape == GSO_TRAIN_VXLAN_FRAME && !encap->udp_zero_csum;
	uint32_t flow_hash = shape == GSO_TRAIN_VXLAN_FRAME ? vxlan_flow_hash(pkt->data, pkt->size) : 0;
	uint16_t ip_id = outer_ip_id ? *outer_ip_id : 0;

	for (uint32_t i = 0; i < plan.nr_segs; i++) {
		uint8_t *seg = train->buf + (size_t)i * stride;
		uint8_t *inner = seg + prefix;
		uint32_t inner_sum = 0, inner_len;
		if (plan.ip_version == 0) {
			int len = gso_write_whole(pkt, false, inner, want_sum ? &inner_sum : NULL);
			if (len < 0)
				return len;
			inner_len = (uint32_t)len;
		} else {
			inner_len = gso_write_segment(pkt, &plan, &base, i, false, inner,
						      want_sum ? &inner_sum : NULL);
		}
		if (shape == GSO_TRAIN_VXLAN_UDP)
			vxlan_hdr_write(seg, encap->vni);
		else if (shape == GSO_TRAIN_VXLAN_FRAME)
			vxlan_encap_write(seg, encap, flow_hash, ip_id++, inner_len, inner_sum);
	}
	if (outer_ip_id && shape == GSO_TRAIN_VXLAN_FRAME)
		*outer_ip_id = ip_id;

	train->stride = stride;
	train->nr_segs = plan.nr_segs;
	train->last_size = last_size;
	train->len = (uint32_t)need;
	return 0;
}

uint32_t gso_segs_per_send(uint32_t stride, uint32_t max_bytes, uint32_t max_segs)
{
	if (stride == 0 || stride > max_bytes)
		return 0;
	uint32_t n = max_bytes / stride;
	return n < max_segs ? n : max_segs;
}

/* How a train of `nr_segs` segments at one stride (the last `last_size`
 * long) is cut into UDP_SEGMENT sends; shared by the buffer and the iovec
 * trains so both cut at the same places. */
struct gso_cut {
	uint32_t per;      /* segments per send */
	uint32_t nr_sends;
};

struct gso_cut_send {
	uint32_t first, count, len;
};

static int gso_cut_plan(uint32_t stride, uint32_t nr_segs, uint32_t max_bytes, uint32_t max_segs,
			unsigned max_sends, struct gso_cut *cut)
{
	uint32_t per = gso_segs_per_send(stride, max_bytes, max_segs);
	if (per == 0)
		return -EMSGSIZE;
	if (per > UINT16_MAX)
		per = UINT16_MAX;
	cut->per = per;
	cut->nr_sends = (nr_segs + per - 1) / per;
	return cut->nr_sends > max_sends ? -ENOSPC : 0;
}

static struct gso_cut_send gso_cut_at(const struct gso_cut *cut, uint32_t k, uint32_t stride,
				      uint32_t nr_segs, uint32_t last_size)
{
	struct gso_cut_send send = { .first = k * cut->per };
	send.count = nr_segs - send.first < cut->per ? nr_segs - send.first : cut->per;
	bool has_last = send.first + send.count == nr_segs;
	send.len = (send.count - 1) * stride + (has_last ? last_size : stride);
	return send;
}

int gso_ref_train_sends(const struct gso_train *train, uint32_t max_bytes, uint32_t max_segs,
		    struct gso_send *sends, unsigned max_sends)
{
	struct gso_cut cut;
	int err = gso_cut_plan(train->stride, train->nr_segs, max_bytes, max_segs, max_sends, &cut);
	if (err)
		return err;
	for (uint32_t k = 0; k < cut.nr_sends; k++) {
		struct gso_cut_send c = gso_cut_at(&cut, k, train->stride, train->nr_segs, train->last_size);
		sends[k].ofs = c.first * train->stride;
		sends[k].len = c.len;
		sends[k].gso_size = (uint16_t)train->stride;
		sends[k].nr_segs = (uint16_t)c.count;
	}
	return (int)cut.nr_sends;
}

/* ---- output as iovecs ---------------------------------------------------- */

bool gso_iov_train_needs(const struct pkt *pkt, enum gso_train_shape shape,
			 const struct vxlan_encap *encap, uint32_t *hdr_bytes, uint32_t *iovs)
{
	struct gso_plan plan;
	uint32_t prefix;
	if (shape == GSO_TRAIN_VXLAN_FRAME || train_prepare(pkt, shape, encap, &prefix, &plan) ||
	    plan.ip_version == 0)
		return false;
	*hdr_bytes = plan.nr_segs * (prefix + plan.hdr_len);
	/* A header block and a payload piece per segment, plus one more
	 * piece wherever a segment's payload crosses into the next frag. */
	*iovs = 2 * plan.nr_segs + pkt->nr_frags;
	return true;
}

/* Appends iovecs for frame bytes [ofs, ofs + len) (linear part, then
 * frags); returns false if `cap` runs out. */
static bool gso_iov_add_range(const struct pkt *pkt, uint32_t ofs, uint32_t len,
			      struct iovec *iov, uint32_t cap, uint32_t *n)
{
	if (len == 0)
		return true;
	if (ofs < pkt->size) {
		uint32_t piece = pkt->size - ofs < len ? pkt->size - ofs : len;
		if (*n == cap)
			return false;
		iov[(*n)++] = (struct iovec){ pkt->data + ofs, piece };
		len -= piece;
		ofs = 0;
	} else {
		ofs -= pkt->size;
	}
	for (uint16_t f = 0; f < pkt->nr_frags && len > 0; f++) {
		const struct pkt_frag *frag = &pkt->frags[f];
		if (ofs >= frag->size) {
			ofs -= frag->size;
			continue;
		}
		uint32_t piece = frag->size - ofs < len ? frag->size - ofs : len;
		if (*n == cap)
			return false;
		iov[(*n)++] = (struct iovec){ (void *)(frag->data + ofs), piece };
		len -= piece;
		ofs = 0;
	}
	return len == 0;
}

int gso_train_build_iov(const struct pkt *pkt, enum gso_train_shape shape,
			const struct vxlan_encap *encap, struct gso_iov_train *train)
{
	if (shape == GSO_TRAIN_VXLAN_FRAME)
		return -EINVAL;
	uint32_t prefix;
	struct gso_plan plan;
	int err = train_prepare(pkt, shape, encap, &prefix, &plan);
	if (err)
		return err;
	if (plan.ip_version == 0)
		return -EINVAL;

	uint32_t block = prefix + plan.hdr_len;
	if ((uint64_t)block * plan.nr_segs > train->hdr_cap)
		return -ENOSPC;
	uint32_t stride = prefix + gso_seg_len(&plan, 0);
	uint32_t last_size = prefix + gso_seg_len(&plan, plan.nr_segs - 1);
	if (shape != GSO_TRAIN_PLAIN && (encap->family == 6 ? 0 : IPV4_HDR_LEN) + UDP_HDR_LEN + stride > 65535)
		return -EMSGSIZE;

	struct gso_base base;
	gso_base_init(pkt, &plan, &base);
	uint32_t n = 0;
	for (uint32_t i = 0; i < plan.nr_segs; i++) {
		uint8_t *hdr = train->hdr_buf + (size_t)i * block;
		uint32_t payload_ofs = plan.hdr_len + i * plan.mss;
		uint32_t seg_payload = gso_seg_len(&plan, i) - plan.hdr_len;
		train->seg_iov[i] = (uint16_t)n;
		if (n == train->iov_cap)
			return -ENOSPC;
		train->iov[n++] = (struct iovec){ hdr, block };
		if (!gso_iov_add_range(pkt, payload_ofs, seg_payload, train->iov, train->iov_cap, &n))
			return -ENOSPC;
		/* Summed where it lies: the one pass over the payload left. */
		uint32_t sum = csum_pkt(pkt, payload_ofs, seg_payload, 0);
		gso_write_segment_hdrs(pkt, &plan, &base, i, false, sum, hdr + prefix, NULL);
		if (shape == GSO_TRAIN_VXLAN_UDP)
			vxlan_hdr_write(hdr, encap->vni);
	}
	train->seg_iov[plan.nr_segs] = (uint16_t)n;
	train->n_iov = n;
	train->hdr_used = block * plan.nr_segs;
	train->stride = stride;
	train->nr_segs = plan.nr_segs;
	train->last_size = last_size;
	train->len = stride * (plan.nr_segs - 1) + last_size;
	return 0;
}

int gso_iov_train_sends(const struct gso_iov_train *train, uint32_t max_bytes, uint32_t max_segs,
			struct gso_iov_send *sends, unsigned max_sends)
{
	struct gso_cut cut;
	int err = gso_cut_plan(train->stride, train->nr_segs, max_bytes, max_segs, max_sends, &cut);
	if (err)
		return err;
	for (uint32_t k = 0; k < cut.nr_sends; k++) {
		struct gso_cut_send c = gso_cut_at(&cut, k, train->stride, train->nr_segs, train->last_size);
		sends[k].iov_first = train->seg_iov[c.first];
		sends[k].iov_count = (uint32_t)train->seg_iov[c.first + c.count] - train->seg_iov[c.first];
		sends[k].len = c.len;
		sends[k].gso_size = (uint16_t)train->stride;
		sends[k].nr_segs = (uint16_t)c.count;
	}
	return (int)cut.nr_sends;
}

/* ---- checksum-only frames and the TAP write check -------------------------- */

int gso_csum_complete(struct pkt *pkt)
{
	if (!(pkt->ol.flags & PKT_OL_NEEDS_CSUM))
		return 0;
	int err = csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset);
	if (err)
		return err;
	pkt->ol.flags &= (uint8_t)~PKT_OL_NEEDS_CSUM;
	return 0;
}

bool gso_tap_frame_ok(const struct pkt *pkt)
{
	const struct pkt_offload *ol = &pkt->ol;
	uint32_t len = pkt_len(pkt);
	uint8_t type = ol->gso_type & (uint8_t)~PKT_GSO_ECN;
	bool ecn = ol->gso_type & PKT_GSO_ECN;

	if (type != PKT_GSO_NONE && type != PKT_GSO_TCPV4 && type != PKT_GSO_TCPV6 &&
	    type != PKT_GSO_UDP_L4)
		return false;
	if (ecn && type != PKT_GSO_TCPV4 && type != PKT_GSO_TCPV6)
		return false;
	if (ol->hdr_len > len)
		return false;
	if (ol->flags & PKT_OL_NEEDS_CSUM) {
		/* The kernel's skb_partial_csum_set(): the field must be in the
		 * linear header. */
		if ((uint32_t)ol->csum_start + ol->csum_offset + 2 > pkt->size)
			return false;
	}
	if (type == PKT_GSO_NONE)
		return true;

	if (ol->gso_size == 0 || !(ol->flags & PKT_OL_NEEDS_CSUM))
		return false;
	uint32_t min_l4 = ETH_HDR_LEN + (type == PKT_GSO_TCPV6 ? IPV6_HDR_LEN : IPV4_HDR_LEN);
	if (ol->csum_start < min_l4)
		return false;
	uint32_t l4_hdr_len;
	if (type == PKT_GSO_UDP_L4) {
		if (ol->csum_offset != UDP_CSUM_OFFSET)
			return false;
		l4_hdr_len = UDP_HDR_LEN;
	} else {
		if (ol->csum_offset != TCP_CSUM_OFFSET)
			return false;
		const uint8_t *th = pkt_at(pkt, ol->csum_start, TCP_HDR_LEN);
		if (!th || th[12] >> 4 < 5)
			return false;
		l4_hdr_len = (uint32_t)(th[12] >> 4) * 4;
	}
	if ((uint32_t)ol->csum_start + l4_hdr_len > len)
		return false;
	uint32_t payload = len - ol->csum_start - l4_hdr_len;
	/* A GSO frame that is one segment must say so (no gso). */
	if (payload <= ol->gso_size)
		return false;
	if (type == PKT_GSO_UDP_L4 && payload > (uint32_t)ol->gso_size * VNET_UDP_MAX_SEGMENTS)
		return false;
	return true;
}

enum drop_reason gso_drop_reason(int err)
{
	switch (err) {
	case 0:
		return DROP_NONE;
	case -ENOBUFS:
	case -ENOSPC:
		return DROP_GSO_NO_BUFFER;
	case -EMSGSIZE:
		return DROP_MTU_EXCEEDED;
	default:
		return DROP_GSO_UNSUPPORTED;
	}
}
