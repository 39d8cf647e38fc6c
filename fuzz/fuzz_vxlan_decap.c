/* fuzz_vxlan_decap: what the underlay socket hands the datapath, as an
 * attacker on the underlay would send it.
 *
 * Input: two control bytes, then one receive buffer (UDP payload bytes:
 * VXLAN header, inner frame), which is cut into datagrams the way
 * vxlan_sock_rx_batch() cuts a UDP_GRO buffer.
 *   byte 0: datagram size: 0 = the whole buffer is one datagram, else
 *           byte0 * 16 bytes (a coalesced buffer: the last one shorter)
 *   byte 1: 0x01 GRO on, 0x02 rx checksum check on, 0x04 IPv6 underlay,
 *           0x08 mark big TCP (MTU 1500) on what GRO did not merge
 *
 * Each datagram goes the datapath's way (dp/user/datapath.c dp_datagram):
 * vxlan_rx_datagram() (headers copied, TCP payload left in the receive
 * buffer as a frag view), the VNI, flow_extract_vxlan(), the rx checksum,
 * then GRO (or its passthrough), whose output is checked as the tap would
 * write it to a VM:
 *   - the cut keeps every byte: pkt_len == datagram length, same bytes;
 *   - a refusal has a known reason; a success keeps flow_invariants.h;
 *   - every datagram ends exactly once: dropped by one reason or emitted
 *     inside one output frame (GRO's segment count);
 *   - a frame with GSO metadata (merged, or marked big TCP) re-parses as
 *     a plain frame and passes vnet_hdr_validate(): the metadata a VM's
 *     kernel would get is what we would accept from a VM; a NEEDS_CSUM
 *     field lies in the linear part and completes;
 *   - every pkt and receive buffer goes back to the pool (no leak, no
 *     double free of a view's owner: ASan and the pool's in_use). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow_invariants.h"
#include "offload/gro.h"
#include "offload/rx_csum.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"
#include "parse/vnet_hdr_check.h"
#include "port/vxlan.h"

#define CHECK(cond)                          \
	do {                                 \
		if (!(cond))                 \
			__builtin_trap();    \
	} while (0)

enum { CTL_GRO = 0x01, CTL_RX_CSUM = 0x02, CTL_V6 = 0x04, CTL_BIG_TCP = 0x08 };
enum { POOL_PKTS = 256, MAX_DGRAMS = 64 };

static struct pkt_pool *pool;
static struct gro_table *gro;

struct run {
	uint8_t ctl;
	unsigned emitted; /* frames out, as the tap would write them */
};
static struct run run;

static void check_gso_frame(struct pkt *pkt)
{
	struct flow_key key;
	CHECK(flow_extract(pkt, 0, &key) == DROP_NONE);
	CHECK(vnet_hdr_validate(pkt, &key) == DROP_NONE);
}

static void emit(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	(void)aux;
	(void)key;
	CHECK(pkt->tunnel_ofs == PKT_OFS_NONE && pkt->inner_l2_ofs == PKT_OFS_NONE);
	if (!(pkt->ol.gso_type & ~PKT_GSO_ECN) && (run.ctl & CTL_BIG_TCP))
		gro_mark_big_tcp(pkt, 1500);
	if (pkt->ol.flags & PKT_OL_NEEDS_CSUM) {
		CHECK((uint32_t)pkt->ol.csum_start + pkt->ol.csum_offset + 2 <= pkt->size);
		if (pkt->ol.gso_type & ~PKT_GSO_ECN)
			check_gso_frame(pkt);
		CHECK(csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset) == 0);
	}
	run.emitted++;
	pkt_free(pkt);
}

static void setup(void)
{
	if (pool)
		return;
	if (pkt_pool_create(POOL_PKTS, &pool) < 0)
		abort();
	struct gro_config cfg = { .hold_ns = 0, .emit = emit };
	if (gro_create(&cfg, &gro) < 0)
		abort();
}

static void fill_tunnel(struct pkt *pkt, bool v6)
{
	static const uint8_t src4[4] = { 198, 51, 100, 1 }, dst4[4] = { 198, 51, 100, 2 };
	static const uint8_t src6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	pkt->tunnel.family = v6 ? 6 : 4;
	memcpy(pkt->tunnel.src, v6 ? src6 : src4, v6 ? 16 : 4);
	memcpy(pkt->tunnel.dst, v6 ? dst6 : dst4, v6 ? 16 : 4);
	pkt->tunnel.src_port = 49152;
	pkt->tunnel.dst_port = VXLAN_DEFAULT_PORT;
}

/* One datagram down dp_datagram's path; false if it was dropped. */
static bool datagram(struct pkt *buf, uint32_t ofs, uint32_t dlen, bool coalesced)
{
	struct pkt *pkt = pkt_alloc(pool);
	CHECK(pkt != NULL);
	vxlan_rx_datagram(pkt, buf, ofs, dlen, coalesced);
	CHECK(pkt_len(pkt) == dlen);
	static uint8_t copy[PKT_MAX_FRAME];
	CHECK(pkt_copy_out(pkt, 0, dlen, copy) == 0);
	CHECK(memcmp(copy, buf->data + ofs, dlen) == 0);
	fill_tunnel(pkt, run.ctl & CTL_V6);
	pkt->in_port = 2;

	if (vxlan_pkt_vni(pkt) < 0) {
		CHECK(dlen < VXLAN_HDR_LEN);
		pkt_free(pkt);
		return false;
	}
	struct flow_key key;
	enum drop_reason reason = flow_extract_vxlan(pkt, &key);
	CHECK((unsigned)reason < DROP_REASON_COUNT);
	CHECK(pkt_len(pkt) <= dlen);
	if (reason != DROP_NONE) {
		pkt_free(pkt);
		return false;
	}
	CHECK(flow_invariant_violated(pkt, &key, true) == NULL);
	if ((run.ctl & CTL_RX_CSUM) && !(pkt->ol.flags & PKT_OL_DATA_VALID) && !key.nw_frag &&
	    pkt->inner_l3_ofs != PKT_OFS_NONE && pkt->inner_l4_ofs != PKT_OFS_NONE) {
		enum rx_csum_verdict v =
			rx_csum_check(pkt, pkt->inner_l3_ofs, pkt->inner_l4_ofs, key.nw_proto, true);
		CHECK((unsigned)v <= RX_CSUM_BAD);
		if (v == RX_CSUM_BAD) {
			pkt_free(pkt);
			return false;
		}
		if (v == RX_CSUM_GOOD || v == RX_CSUM_FINISHED)
			pkt->ol.flags |= PKT_OL_DATA_VALID;
	}
	if (run.ctl & CTL_GRO) {
		gro_receive(gro, pkt, &key, 0);
	} else {
		gro_decap_passthrough(pkt);
		emit(NULL, pkt, &key);
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size - 2 > PKT_MAX_FRAME)
		return 0;
	setup();
	uint32_t seg = (uint32_t)data[0] * 16;
	run = (struct run){ .ctl = data[1] };
	uint32_t len = (uint32_t)(size - 2);
	if (seg == 0 || seg > len)
		seg = len;
	if (len && (len + seg - 1) / seg > MAX_DGRAMS)
		return 0;

	struct pkt *buf = pkt_alloc(pool);
	CHECK(buf != NULL);
	CHECK(pkt_set_data(buf, data + 2, len) == 0);
	struct gro_stats before;
	gro_get_stats(gro, &before);
	unsigned delivered = 0;
	uint32_t ofs = 0;
	do { /* at least once: an empty datagram is one too */
		uint32_t dlen = len - ofs < seg ? len - ofs : seg;
		delivered += datagram(buf, ofs, dlen, seg < len);
	} while ((ofs += seg) < len);
	pkt_free(buf); /* views keep it until their frames are out */
	gro_flush(gro, GRO_FLUSH_ALL, 0);

	/* Every datagram that was not dropped is in exactly one output frame:
	 * GRO took all of them, and its frames carry them (one each unless
	 * merged); without GRO each is one frame. */
	struct gro_stats after;
	gro_get_stats(gro, &after);
	if (run.ctl & CTL_GRO) {
		uint64_t out = after.frames_out - before.frames_out;
		uint64_t merged = after.merged_frames - before.merged_frames;
		uint64_t segs = after.merged_segments - before.merged_segments;
		CHECK(after.segments_in - before.segments_in == delivered);
		CHECK(run.emitted == out);
		CHECK(out - merged + segs == delivered);
	} else {
		CHECK(run.emitted == delivered);
	}
	CHECK(after.flows_held == 0);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(pool, &ps);
	CHECK(ps.in_use == 0);
	return 0;
}
