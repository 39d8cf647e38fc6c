/* Fuzz target for flow_extract() and flow_extract_vxlan().
 *
 * Input: one control byte, then the frame.
 *   control & 3:    0 = flow_extract with vxlan_port 4789,
 *                   1 = flow_extract with vxlan_port 0 (never decap),
 *                   2 = flow_extract_vxlan (frame starts at the VXLAN header),
 *                   3 = like 0, with the frame split: the first
 *                       (control >> 2) * 4 bytes linear, the rest in a frag
 *                       (payload sitting in frags, as after GRO).
 *
 * Besides ASan/UBSan, every parse must keep these invariants (abort()
 * otherwise):
 *  - the reason is a known one; the frame only ever gets shorter;
 *  - on success: every offset is absent or inside the linear part, layers
 *    are in order, inner offsets exist only with a tunnel offset;
 *  - the key is zero in every layer that is absent (tunnel section without
 *    a tunnel, L3 fields without L3, ports/flags/options without L4, VLAN
 *    slots past n_vlans), and in_port is copied;
 *  - parsing is deterministic: the same pkt parses to the same key again
 *    (for non-tunnelled frames, whose bytes are unchanged but trimmed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"

static struct pkt_pool *pool;

#define CHECK(cond)                  \
	do {                         \
		if (!(cond))         \
			abort();     \
	} while (0)

static bool is_zero(const void *mem, size_t size)
{
	const uint8_t *b = mem;
	for (size_t i = 0; i < size; i++)
		if (b[i])
			return false;
	return true;
}

static void check_ofs(const struct pkt *p, uint16_t ofs)
{
	CHECK(ofs == PKT_OFS_NONE || ofs <= p->size);
}

/* a <= b when both present; b absent when a is absent. */
static void check_order(uint16_t a, uint16_t b)
{
	if (a == PKT_OFS_NONE)
		CHECK(b == PKT_OFS_NONE);
	else if (b != PKT_OFS_NONE)
		CHECK(a <= b);
}

static void check_layers(uint16_t l2, uint16_t l3, uint16_t l4, uint16_t payload)
{
	check_order(l2, l3);
	check_order(l3, l4);
	check_order(l4, payload);
}

static void check_success(const struct pkt *p, const struct flow_key *key, bool from_vxlan)
{
	const uint16_t all[] = { p->l2_ofs, p->l3_ofs, p->l4_ofs, p->payload_ofs, p->tunnel_ofs,
				 p->inner_l2_ofs, p->inner_l3_ofs, p->inner_l4_ofs,
				 p->inner_payload_ofs };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		check_ofs(p, all[i]);
	CHECK(key->in_port == p->in_port);

	if (from_vxlan) {
		CHECK(p->l2_ofs == PKT_OFS_NONE && p->l3_ofs == PKT_OFS_NONE);
		CHECK(p->l4_ofs == PKT_OFS_NONE && p->payload_ofs == PKT_OFS_NONE);
		CHECK(p->tunnel_ofs == 0);
	} else {
		CHECK(p->l2_ofs == 0);
		check_layers(p->l2_ofs, p->l3_ofs, p->l4_ofs, p->payload_ofs);
	}
	if (p->tunnel_ofs == PKT_OFS_NONE) {
		CHECK(p->inner_l2_ofs == PKT_OFS_NONE && p->inner_l3_ofs == PKT_OFS_NONE);
		CHECK(p->inner_l4_ofs == PKT_OFS_NONE && p->inner_payload_ofs == PKT_OFS_NONE);
		CHECK(is_zero(key, offsetof(struct flow_key, in_port)));
	} else {
		CHECK(p->inner_l2_ofs == p->tunnel_ofs + VXLAN_HDR_LEN);
		if (!from_vxlan)
			CHECK(p->payload_ofs == p->tunnel_ofs && key->tun_dst_port == VXLAN_DEFAULT_PORT);
		check_layers(p->inner_l2_ofs, p->inner_l3_ofs, p->inner_l4_ofs, p->inner_payload_ofs);
		CHECK(key->tun_vni <= VXLAN_VNI_MAX && key->tun_vni == p->tunnel.vni);
	}

	CHECK(key->n_vlans <= 2);
	for (unsigned i = key->n_vlans; i < 2; i++)
		CHECK(key->vlan_tci[i] == 0 && key->vlan_tpid[i] == 0);

	uint16_t l3 = pkt_innermost_l3(p), l4 = pkt_innermost_l4(p);
	if (l3 == PKT_OFS_NONE) {
		/* Nothing after dl_type/VLANs. */
		CHECK(is_zero(&key->nw_family, sizeof(*key) - offsetof(struct flow_key, nw_family)));
	} else if (key->nw_family == 0) {
		CHECK(key->dl_type == ETH_TYPE_ARP);
		CHECK(key->nw_tos == 0 && key->nw_ttl == 0 && key->nw_frag == 0 && key->ipv6_label == 0);
	} else {
		CHECK(key->nw_family == 4 || key->nw_family == 6);
		CHECK(key->dl_type == (key->nw_family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6));
		if (key->nw_family == 4)
			CHECK(is_zero(key->nw_src + 4, 12) && is_zero(key->nw_dst + 4, 12) &&
			      key->ipv6_label == 0);
		CHECK(key->ipv6_label <= 0xfffff);
		CHECK(is_zero(key->arp_sha, 12));
		if (key->nw_frag & FLOW_FRAG_LATER)
			CHECK(l4 == PKT_OFS_NONE && (key->nw_frag & FLOW_FRAG_ANY));
	}
	if (l4 == PKT_OFS_NONE) {
		CHECK(key->tp_src == 0 && key->tp_dst == 0 && key->tcp_flags == 0);
		CHECK(is_zero(&key->tcp_opts, sizeof(key->tcp_opts)));
	}
	if (key->nw_proto != IP_PROTO_TCP || key->nw_family == 0) {
		CHECK(key->tcp_flags == 0);
		CHECK(is_zero(&key->tcp_opts, sizeof(key->tcp_opts)));
	}
	CHECK(key->tun_pad[0] == 0 && key->tun_pad[1] == 0 && key->tun_pad[2] == 0);
	CHECK(key->nw_pad[0] == 0 && key->nw_pad[1] == 0 && key->l4_pad == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pool)
		pool = pkt_pool_create(2);
	if (size < 1 || size - 1 > PKT_MAX_FRAME)
		return 0;
	uint8_t control = data[0];
	unsigned mode = control & 3;
	const uint8_t *frame = data + 1;
	uint32_t len = (uint32_t)(size - 1);

	struct pkt *p = pkt_alloc(pool), *body = NULL;
	uint32_t linear = len;
	if (mode == 3) {
		linear = (uint32_t)(control >> 2) * 4;
		if (linear > len)
			linear = len;
	}
	CHECK(pkt_set_data(p, frame, linear) == 0);
	if (linear < len) {
		body = pkt_alloc(pool);
		CHECK(pkt_set_data(body, frame + linear, len - linear) == 0);
		CHECK(pkt_add_frag(p, body->data, body->size, body) == 0);
	}
	p->in_port = 3;

	struct flow_key key;
	enum drop_reason reason;
	if (mode == 2) {
		static const uint8_t src[4] = { 198, 51, 100, 1 }, dst[4] = { 198, 51, 100, 2 };
		p->tunnel.family = 4;
		memcpy(p->tunnel.src, src, 4);
		memcpy(p->tunnel.dst, dst, 4);
		p->tunnel.src_port = 49152;
		p->tunnel.dst_port = VXLAN_DEFAULT_PORT;
		reason = flow_extract_vxlan(p, &key);
	} else {
		reason = flow_extract(p, mode == 1 ? 0 : VXLAN_DEFAULT_PORT, &key);
	}
	CHECK((unsigned)reason < DROP_REASON_COUNT);
	CHECK(pkt_len(p) <= len);

	if (reason == DROP_NONE) {
		check_success(p, &key, mode == 2);
		if (mode != 2 && p->tunnel_ofs == PKT_OFS_NONE) {
			struct flow_key again;
			uint32_t before = pkt_len(p);
			CHECK(flow_extract(p, mode == 1 ? 0 : VXLAN_DEFAULT_PORT, &again) == DROP_NONE);
			CHECK(memcmp(&key, &again, sizeof(key)) == 0);
			CHECK(pkt_len(p) == before);
		}
	}
	pkt_free(p);
	pkt_free(body);
	return 0;
}
