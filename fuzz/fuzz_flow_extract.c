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
 * otherwise; the ones on success are tests/unit/support/flow_invariants.h,
 * which the unit test checks too):
 *  - the reason is a known one; the frame only ever gets shorter;
 *  - on success: every offset is absent or inside the linear part, layers
 *    are in order, inner offsets exist only with a tunnel offset;
 *  - the key is zero in every layer that is absent (tunnel section without
 *    a tunnel, L3 fields without L3, ports/flags/options without L4, VLAN
 *    slots past n_vlans), and in_port is copied;
 *  - parsing is deterministic: the same pkt parses to the same key again
 *    (for non-tunnelled frames, whose bytes are unchanged but trimmed);
 *  - offload/rx_csum over the parsed inner (or only) L3/L4 offsets: a known
 *    verdict; it changes no byte unless it says it finished a checksum,
 *    and a finished checksum checks good the second time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packet/hdr.h"
#include "packet/pkt.h"
#include "offload/rx_csum.h"
#include "parse/flow_extract.h"
#include "flow_invariants.h"

static struct pkt_pool *pool;

#define CHECK(cond)                  \
	do {                         \
		if (!(cond))         \
			abort();     \
	} while (0)

static void check_rx_csum(struct pkt *p, const struct flow_key *key)
{
	bool inner = p->inner_l3_ofs != PKT_OFS_NONE;
	uint16_t l3 = inner ? p->inner_l3_ofs : p->l3_ofs, l4 = inner ? p->inner_l4_ofs : p->l4_ofs;
	if (l3 == PKT_OFS_NONE || l4 == PKT_OFS_NONE || key->nw_frag)
		return;
	static uint8_t before[PKT_MAX_FRAME], after[PKT_MAX_FRAME];
	uint32_t len = pkt_len(p);
	CHECK(pkt_copy_out(p, 0, len, before) == 0);
	enum rx_csum_verdict v = rx_csum_check(p, l3, l4, key->nw_proto, true);
	CHECK((unsigned)v <= RX_CSUM_BAD);
	CHECK(pkt_len(p) == len);
	CHECK(pkt_copy_out(p, 0, len, after) == 0);
	if (v == RX_CSUM_FINISHED) {
		CHECK(memcmp(before, after, l4) == 0);
		CHECK(rx_csum_check(p, l3, l4, key->nw_proto, true) == RX_CSUM_GOOD);
	} else {
		CHECK(memcmp(before, after, len) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pool && pkt_pool_create(2, &pool) < 0)
		abort();
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
		CHECK(flow_invariant_violated(p, &key, mode == 2) == NULL);
		if (mode != 2 && p->tunnel_ofs == PKT_OFS_NONE) {
			struct flow_key again;
			uint32_t before = pkt_len(p);
			CHECK(flow_extract(p, mode == 1 ? 0 : VXLAN_DEFAULT_PORT, &again) == DROP_NONE);
			CHECK(memcmp(&key, &again, sizeof(key)) == 0);
			CHECK(pkt_len(p) == before);
		}
		check_rx_csum(p, &key);
	}
	pkt_free(p);
	pkt_free(body);
	return 0;
}
