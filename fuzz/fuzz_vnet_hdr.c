/* fuzz_vnet_hdr: a TAP read as an attacker would write it.
 *
 * Input: one control byte, then a virtio_net_hdr (10 or 12 bytes), then the
 * Ethernet frame.  Control bits:
 *   0x01  the header is the 12-byte v1 layout
 *   0x02  parse with VXLAN decap on port 4789 (offsets become inner)
 *   0x04  also run with the payload moved into frags
 *   0xf8  frag size - 1, in units of 8 bytes (odd sizes via +1 below)
 *
 * Runs vnet_hdr_read, flow_extract and vnet_hdr_validate, and checks what a
 * validated header promises to everything downstream:
 *   - the checksum field lies in the linear part at the parsed L4 header,
 *     with the protocol's offset, and csum_complete_partial() accepts it;
 *   - a GSO frame has NEEDS_CSUM, a type matching the parse, payload, a
 *     gso_size in (0, 65535 - headers], and at most 128 UDP segments;
 *   - hdr_len, given or recomputed, is inside the frame.
 * Also: header write/read round-trips, and csum_partial agrees with the
 * one-word-at-a-time loop on the raw bytes at two alignments. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csum_reference.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "packet/vnet_hdr.h"
#include "parse/flow_extract.h"
#include "parse/vnet_hdr_check.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

enum { CTL_V1 = 0x01, CTL_VXLAN = 0x02, CTL_FRAGS = 0x04 };

static struct pkt_pool *pool;

static void check_validated(struct pkt *pkt, const struct flow_key *key)
{
	const struct pkt_offload ol = pkt->ol;
	uint32_t len = pkt_len(pkt);
	uint8_t base = ol.gso_type & (uint8_t)~PKT_GSO_ECN;

	CHECK(ol.hdr_len <= len);

	if (base != PKT_GSO_NONE) {
		CHECK(ol.flags & PKT_OL_NEEDS_CSUM);
		CHECK(ol.gso_size > 0 && ol.gso_size < 0xffff);
		uint16_t l3 = pkt_innermost_l3(pkt), l4 = pkt_innermost_l4(pkt);
		uint16_t payload = pkt_innermost_payload(pkt);
		CHECK(l3 != PKT_OFS_NONE && l4 != PKT_OFS_NONE && payload != PKT_OFS_NONE);
		CHECK(payload < len);
		CHECK((uint32_t)payload - l3 + ol.gso_size <= 65535u + (key->nw_family == 6 ? IPV6_HDR_LEN : 0));
		if (base == PKT_GSO_TCPV4)
			CHECK(key->nw_family == 4 && key->nw_proto == IP_PROTO_TCP);
		else if (base == PKT_GSO_TCPV6)
			CHECK(key->nw_family == 6 && key->nw_proto == IP_PROTO_TCP);
		else {
			CHECK(base == PKT_GSO_UDP_L4 && key->nw_proto == IP_PROTO_UDP);
			CHECK(!(ol.gso_type & PKT_GSO_ECN));
			uint32_t segs = (len - payload + ol.gso_size - 1) / ol.gso_size;
			CHECK(segs <= VNET_UDP_MAX_SEGMENTS);
		}
	} else {
		CHECK(!(ol.gso_type & PKT_GSO_ECN));
	}

	if (ol.flags & PKT_OL_NEEDS_CSUM) {
		CHECK(ol.csum_start == pkt_innermost_l4(pkt));
		CHECK(ol.csum_offset == (key->nw_proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET));
		CHECK((uint32_t)ol.csum_start + ol.csum_offset + 2 <= pkt->size);
		CHECK(csum_complete_partial(pkt, ol.csum_start, ol.csum_offset) == 0);
	}

	vnet_hdr_recompute_hdr_len(pkt);
	CHECK(pkt->ol.hdr_len <= len);
}

/* Validates `pkt` (frame loaded, ol set); on success checks the promises. */
static void parse_and_validate(struct pkt *pkt, uint16_t vxlan_port)
{
	struct flow_key key;
	if (flow_extract(pkt, vxlan_port, &key) != DROP_NONE)
		return;
	enum drop_reason reason = vnet_hdr_validate(pkt, &key);
	CHECK(reason < DROP_REASON_COUNT);
	if (reason == DROP_NONE)
		check_validated(pkt, &key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!pool && pkt_pool_create(2, &pool) < 0)
		abort();
	uint8_t ctl = data[0];
	data++;
	size--;

	size_t hdr_size = ctl & CTL_V1 ? VNET_HDR_V1_LEN : VNET_HDR_LEN;
	struct pkt_offload ol;
	if (vnet_hdr_read(data, size, hdr_size, &ol) != DROP_NONE) {
		CHECK(size < hdr_size);
		return 0;
	}
	uint8_t written[VNET_HDR_V1_LEN];
	struct pkt_offload back;
	vnet_hdr_write(&ol, written, hdr_size);
	CHECK(vnet_hdr_read(written, hdr_size, hdr_size, &back) == DROP_NONE);
	CHECK(memcmp(&ol, &back, sizeof(ol)) == 0);

	const uint8_t *frame = data + hdr_size;
	size_t len = size - hdr_size;
	if (len > PKT_MAX_FRAME)
		return 0;

	CHECK(csum_fold_nocomplement(csum_partial(frame, len, 0)) == (uint16_t)csum_ref_sum(frame, len, 0));
	if (len > 1)
		CHECK(csum_fold_nocomplement(csum_partial(frame + 1, len - 1, 0)) == (uint16_t)csum_ref_sum(frame + 1, len - 1, 0));

	uint16_t vxlan_port = ctl & CTL_VXLAN ? VXLAN_DEFAULT_PORT : 0;
	struct pkt *pkt = pkt_alloc(pool);
	CHECK(pkt != NULL);
	CHECK(pkt_set_data(pkt, frame, (uint32_t)len) == 0);
	pkt->ol = ol;
	parse_and_validate(pkt, vxlan_port);

	/* The same frame with its payload in frags, as after GRO: offsets and
	 * checks must not depend on where the bytes live. */
	uint16_t payload = pkt_innermost_payload(pkt);
	if ((ctl & CTL_FRAGS) && payload != PKT_OFS_NONE && payload < len) {
		uint32_t frag_size = ((uint32_t)(ctl >> 3) * 8) + 1;
		struct pkt *split = pkt_alloc(pool);
		CHECK(split != NULL);
		CHECK(pkt_set_data(split, frame, payload) == 0);
		for (uint32_t at = payload; at < len;) {
			uint32_t n = (uint32_t)len - at;
			if (n > frag_size && split->nr_frags < PKT_MAX_FRAGS - 1)
				n = frag_size;
			CHECK(pkt_add_frag(split, frame + at, n, NULL) == 0);
			at += n;
		}
		CHECK(pkt_len(split) == len);
		split->ol = ol;
		parse_and_validate(split, vxlan_port);
		pkt_free(split);
	}
	pkt_free(pkt);
	return 0;
}
