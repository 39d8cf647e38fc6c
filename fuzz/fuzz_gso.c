/* fuzz_gso: a TAP read (virtio_net_hdr + frame) through parse, validation
 * and GSO, in every output form.
 *
 * Input: one control byte, a 10-byte virtio_net_hdr, the Ethernet frame.
 * Control bits:
 *   0x01  move the payload into frags (size from bits 0xf8)
 *   0x02  gso_ref_segment() with GSO_CSUM_PARTIAL
 *   0x04  outer IPv6 for the full-frame VXLAN train
 *   0xf8  frag size - 1, in units of 8 bytes
 *
 * GSO runs on every frame flow_extract() accepts, validated or not (the
 * engine must defend itself).  Whenever gso_plan() accepts it:
 *   - gso_ref_segment() gives plan.nr_segs segments whose payloads add up to the
 *     input payload, each <= mss, all but the last exactly mss;
 *   - every segment parses cleanly again, its IP length matches, and its L4
 *     checksum is complete (or the pseudo-header sum when partial);
 *   - the plain train holds the same bytes at one stride; the VXLAN UDP
 *     train the same behind a VXLAN header; the full-frame train parses as
 *     VXLAN with our VNI and a correct outer UDP checksum;
 *   - gso_ref_train_sends() covers the train exactly within its limits. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/bytes.h"
#include "packet/pkt.h"
#include "packet/vnet_hdr.h"
#include "parse/flow_extract.h"
#include "parse/vnet_hdr_check.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

enum { CTL_FRAGS = 0x01, CTL_PARTIAL = 0x02, CTL_OUTER6 = 0x04 };

static struct pkt_pool *pool;
static struct pkt *segs[GSO_MAX_SEGS];
static uint8_t train_buf[3 * 65536];

/* Moves everything past the headers into frags of `frag_size` bytes that
 * live in `owner`. */
static void move_payload_to_frags(struct pkt *pkt, struct pkt *owner, uint32_t hdr, uint32_t frag_size)
{
	uint32_t len = pkt->size;
	if (hdr >= len)
		return;
	if (pkt_set_data(owner, pkt->data + hdr, len - hdr))
		return;
	pkt_trim(pkt, hdr);
	for (uint32_t ofs = 0; ofs < owner->size; ofs += frag_size) {
		uint32_t n = owner->size - ofs < frag_size ? owner->size - ofs : frag_size;
		if (pkt_add_frag(pkt, owner->data + ofs, n, owner)) {
			/* Out of frags: put the rest back in the linear part. */
			pkt_linearize(pkt);
			uint8_t *tail = pkt_put(pkt, owner->size - ofs);
			CHECK(tail);
			memcpy(tail, owner->data + ofs, owner->size - ofs);
			return;
		}
	}
}

static void check_l4_csum(const struct gso_plan *plan, const uint8_t *seg, uint32_t len, bool partial)
{
	const uint8_t *l3 = seg + plan->l3_ofs;
	const uint8_t *l4 = seg + plan->l4_ofs;
	uint32_t l4_len = len - plan->l4_ofs;
	uint32_t pseudo = plan->ip_version == 4
		? csum_pseudo_ipv4(l3 + 12, l3 + 16, plan->l4_proto, l4_len)
		: csum_pseudo_ipv6(l3 + 8, l3 + 24, plan->l4_proto, l4_len);
	if (plan->ip_version == 4)
		CHECK(load_be16(l3 + 2) == len - plan->l3_ofs);
	else
		CHECK(load_be16(l3 + 4) == len - plan->l3_ofs - IPV6_HDR_LEN);
	if (partial) {
		uint16_t field;
		memcpy(&field, l4 + (plan->l4_proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET), 2);
		CHECK(field == csum_fold_nocomplement(pseudo));
	} else {
		CHECK(csum_fold(csum_partial(l4, l4_len, pseudo)) == 0);
	}
}

static void check_segments(const struct pkt *in, const struct gso_plan *plan, int n, bool partial)
{
	CHECK(n == (int)plan->nr_segs);
	uint64_t payload = 0;
	for (int i = 0; i < n; i++) {
		struct pkt *seg = segs[i];
		CHECK(seg->nr_frags == 0);
		if (plan->ip_version == 0) {
			CHECK(pkt_len(seg) == pkt_len(in));
			continue;
		}
		CHECK(seg->size >= plan->hdr_len);
		uint32_t seg_payload = seg->size - plan->hdr_len;
		CHECK(seg_payload <= plan->mss);
		if (i + 1 < n)
			CHECK(seg_payload == plan->mss);
		payload += seg_payload;
		check_l4_csum(plan, seg->data, seg->size, partial);

		struct flow_key key;
		seg->in_port = 0;
		CHECK(flow_extract(seg, 0, &key) == DROP_NONE);
		CHECK(seg->l4_ofs == plan->l4_ofs);
	}
	if (plan->ip_version != 0)
		CHECK(payload == plan->payload_len);
}

/* The iovec train of a frame is the VXLAN_UDP train `t` (in train_buf),
 * byte for byte, with the payload left where it is. */
static void check_iov_train(const struct pkt *in, const struct vxlan_encap *enc, const struct gso_train *t)
{
	static uint8_t iov_hdrs[GSO_MAX_SEGS * 256];
	static struct iovec iov[3 * GSO_MAX_SEGS];
	static struct gso_iov_train it;
	it.hdr_buf = iov_hdrs;
	it.hdr_cap = sizeof(iov_hdrs);
	it.iov = iov;
	it.iov_cap = 3 * GSO_MAX_SEGS;
	uint32_t need_hdr = 0, need_iov = 0;
	CHECK(gso_iov_train_needs(in, GSO_TRAIN_VXLAN_UDP, enc, &need_hdr, &need_iov));
	int err = gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, enc, &it);
	if (need_hdr > it.hdr_cap || need_iov > it.iov_cap) {
		CHECK(err == 0 || err == -ENOSPC);
		return;
	}
	CHECK(err == 0);
	CHECK(it.len == t->len && it.stride == t->stride && it.nr_segs == t->nr_segs);
	CHECK(it.hdr_used == need_hdr && it.n_iov <= need_iov);
	uint32_t at = 0;
	for (uint32_t k = 0; k < it.n_iov; k++) {
		CHECK(at + it.iov[k].iov_len <= t->len);
		CHECK(memcmp(train_buf + at, it.iov[k].iov_base, it.iov[k].iov_len) == 0);
		at += (uint32_t)it.iov[k].iov_len;
	}
	CHECK(at == t->len);
}

static void check_trains(const struct pkt *in, const struct gso_plan *plan, int n, uint8_t ctl)
{
	struct vxlan_encap enc = { .family = (ctl & CTL_OUTER6) ? 6 : 4, .vni = 4242,
				   .src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
				   .src_ip = { 198, 51, 100, 1 }, .dst_ip = { 198, 51, 100, 2 } };
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };

	CHECK(gso_ref_train_build(in, GSO_TRAIN_PLAIN, NULL, NULL, 0, &t) == 0);
	CHECK(t.nr_segs == plan->nr_segs && t.len == gso_ref_train_size(in, GSO_TRAIN_PLAIN, NULL));
	if (!(ctl & CTL_PARTIAL)) {
		for (int i = 0; i < n; i++)
			CHECK(memcmp(train_buf + (size_t)i * t.stride, segs[i]->data, segs[i]->size) == 0);
	}

	int err = gso_ref_train_build(in, GSO_TRAIN_VXLAN_UDP, &enc, NULL, 0, &t);
	if (err == 0 && plan->ip_version != 0)
		check_iov_train(in, &enc, &t);
	if (err == 0) {
		for (uint32_t i = 0; i < t.nr_segs; i++)
			CHECK(load_be16(train_buf + (size_t)i * t.stride) == VXLAN_FLAG_VNI >> 16);
		struct gso_send sends[GSO_MAX_SEGS];
		int ns = gso_ref_train_sends(&t, GSO_UDP_SEND_MAX_BYTES_IPV4, GSO_UDP_MAX_SEGMENTS_OLD,
					 sends, GSO_MAX_SEGS);
		if (ns > 0) {
			uint32_t covered = 0, count = 0;
			for (int k = 0; k < ns; k++) {
				CHECK(sends[k].ofs == covered);
				CHECK(sends[k].len <= GSO_UDP_SEND_MAX_BYTES_IPV4);
				CHECK(sends[k].nr_segs <= GSO_UDP_MAX_SEGMENTS_OLD);
				covered += sends[k].len;
				count += sends[k].nr_segs;
			}
			CHECK(covered == t.len && count == t.nr_segs);
		} else {
			CHECK(ns == -EMSGSIZE && t.stride > GSO_UDP_SEND_MAX_BYTES_IPV4);
		}
	} else {
		CHECK(err == -EMSGSIZE);
	}

	uint16_t ip_id = 100;
	err = gso_ref_train_build(in, GSO_TRAIN_VXLAN_FRAME, &enc, &ip_id, 0, &t);
	if (err) {
		CHECK(err == -EMSGSIZE);
		return;
	}
	if (enc.family == 4)
		CHECK(ip_id == (uint16_t)(100 + t.nr_segs));
	struct pkt *frame = pkt_alloc(pool);
	CHECK(frame);
	uint16_t first_port = 0;
	for (uint32_t i = 0; i < t.nr_segs; i++) {
		uint32_t len = i + 1 < t.nr_segs ? t.stride : t.last_size;
		const uint8_t *f = train_buf + (size_t)i * t.stride;
		CHECK(pkt_set_data(frame, f, len) == 0);
		struct flow_key key;
		enum drop_reason why = flow_extract(frame, VXLAN_DEFAULT_PORT, &key);
		/* Inner frames that flow_extract itself would refuse stay refused
		 * inside the tunnel; everything the engine built must parse. */
		CHECK(why == DROP_NONE);
		CHECK(key.tun_vni == enc.vni && key.tun_family == enc.family);
		if (i == 0)
			first_port = key.tun_src_port;
		CHECK(key.tun_src_port == first_port);
		const uint8_t *l3 = f + ETH_HDR_LEN;
		uint32_t ip_hdr = enc.family == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN;
		uint32_t udp_len = len - ETH_HDR_LEN - ip_hdr;
		uint32_t pseudo = enc.family == 4
			? csum_pseudo_ipv4(l3 + 12, l3 + 16, IP_PROTO_UDP, udp_len)
			: csum_pseudo_ipv6(l3 + 8, l3 + 24, IP_PROTO_UDP, udp_len);
		CHECK(csum_fold(csum_partial(l3 + ip_hdr, udp_len, pseudo)) == 0);
	}
	pkt_free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pool && pkt_pool_create(GSO_MAX_SEGS + 4, &pool) < 0)
		abort();
	if (size < 1 + VNET_HDR_LEN)
		return 0;
	uint8_t ctl = data[0];
	const uint8_t *frame = data + 1 + VNET_HDR_LEN;
	size_t frame_len = size - 1 - VNET_HDR_LEN;
	if (frame_len > PKT_MAX_FRAME)
		return 0;

	struct pkt *in = pkt_alloc(pool), *owner = pkt_alloc(pool);
	CHECK(in && owner);
	CHECK(pkt_set_data(in, frame, (uint32_t)frame_len) == 0);
	struct pkt_offload ol;
	CHECK(vnet_hdr_read(data + 1, VNET_HDR_LEN, VNET_HDR_LEN, &ol) == DROP_NONE);
	struct flow_key key;
	if (flow_extract(in, 0, &key) != DROP_NONE)
		goto out;
	in->ol = ol;
	bool valid = vnet_hdr_validate(in, &key) == DROP_NONE;

	if (ctl & CTL_FRAGS) {
		uint32_t hdr = in->payload_ofs != PKT_OFS_NONE ? in->payload_ofs : in->size;
		move_payload_to_frags(in, owner, hdr, ((uint32_t)(ctl >> 3) + 1) * 8 + 1);
	}

	struct gso_plan plan;
	int err = gso_plan(in, &plan);
	if (err) {
		/* What validation accepts, the engine segments (UFO aside). */
		CHECK(!valid || err == -EOPNOTSUPP || err == -E2BIG);
		CHECK(gso_ref_segment(in, 0, pool, segs, GSO_MAX_SEGS) == err);
		goto out;
	}
	bool partial = ctl & CTL_PARTIAL;
	memset(segs, 0, sizeof(segs));
	int n = gso_ref_segment(in, partial ? GSO_CSUM_PARTIAL : 0, pool, segs, GSO_MAX_SEGS);
	if (n == -EINVAL && plan.ip_version == 0) {
		/* Only a bad partial-checksum field on a non-GSO frame. */
		CHECK(!valid && (in->ol.flags & PKT_OL_NEEDS_CSUM));
		goto out;
	}
	CHECK(n > 0);
	if (plan.ip_version != 0 || !(in->ol.flags & PKT_OL_NEEDS_CSUM) || valid)
		check_segments(in, &plan, n, partial);
	if (plan.ip_version != 0)
		check_trains(in, &plan, n, ctl);
	for (int i = 0; i < n; i++)
		pkt_free(segs[i]);
out:
	pkt_free(owner);
	pkt_free(in);
	return 0;
}
