/* fuzz_gro: random batches of random TCP segments (and raw frames) through
 * GRO, checking what must hold whatever the input:
 *  - every segment of a flow comes out exactly once, in order: each output
 *    frame is a run of consecutive input segments of one flow (same order,
 *    contiguous seq), nothing lost, nothing duplicated;
 *  - payload bytes are the ones sent (pattern by stream offset), across the
 *    linear part and the frags;
 *  - a segment with a bad TCP or IPv4 header checksum is never merged;
 *  - no merged frame reaches max_size, IP lengths match the frame, and a
 *    merged frame's partial checksum completes to a valid one;
 *  - every pkt goes back to the pool (no leak, no double free: ASan).
 *
 * The input is a little program: a config byte string, then operations
 * (send a segment of stream k with these changes, send a raw frame, advance
 * time, flush expired, end batch).  Frames are written here (not with the
 * unit-test frame builder, which the fuzz build does not link) and parsed
 * with flow_extract() as the datapath does. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offload/gro.h"
#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"

enum {
	N_STREAMS = 6,
	BASE_PORT = 41000,
	MAX_OPS = 160,
	MAX_QUEUE = 256,
	POOL_PKTS = 384,
	MAX_PAYLOAD = 9000,
};

#define FUZZ_ASSERT(cond) do { if (!(cond)) __builtin_trap(); } while (0)

/* A byte reader over the fuzz input that yields zeros when exhausted. */
struct reader {
	const uint8_t *p;
	size_t left;
};

static uint8_t rd8(struct reader *r)
{
	if (!r->left)
		return 0;
	r->left--;
	return *r->p++;
}

static uint16_t rd16(struct reader *r)
{
	return (uint16_t)(rd8(r) | rd8(r) << 8);
}

enum stream_mode { MODE_PLAIN, MODE_VXLAN_FRAME, MODE_VXLAN_UDP };

struct sent {
	uint32_t seq, len;
	bool bad_csum;
};

struct stream {
	uint8_t family, mode, outer_family, ttl, tos, outer_ttl;
	uint32_t seq, ack, tsval, vni;
	uint16_t ip_id, outer_id;
	bool df;
	bool tsopt;
	/* Segments given to GRO, not yet seen in its output. */
	struct sent queue[MAX_QUEUE];
	unsigned head, tail;
};

struct harness {
	struct stream s[N_STREAMS];
	uint32_t max_size;
	bool failed_queue; /* a stream queue overflowed: stop sending */
};

static struct pkt_pool *pool;
static uint8_t frame[PKT_MAX_FRAME];
static uint8_t flat[PKT_BUF_SIZE];

static uint8_t payload_byte(unsigned stream, uint32_t seq)
{
	return (uint8_t)(seq + stream * 7);
}

/* Writes Ethernet + IP + TCP (+ payload) at `buf`; returns the length. */
static size_t write_inner(const struct stream *st, unsigned k, uint8_t flags, uint32_t len, bool bad_csum,
			  bool bad_ip_csum, uint8_t *buf)
{
	static const uint8_t mac_dst[6] = { 2, 0, 0, 0, 0, 2 }, mac_src[6] = { 2, 0, 0, 0, 0, 1 };
	size_t th_len = st->tsopt ? 32 : 20;
	size_t ip_len = st->family == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN;
	uint8_t *ip = buf + ETH_HDR_LEN, *th = ip + ip_len;
	uint32_t l4_len = (uint32_t)th_len + len;

	memcpy(buf, mac_dst, 6);
	memcpy(buf + 6, mac_src, 6);
	store_be16(buf + 12, st->family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6);
	memset(ip, 0, ip_len);
	if (st->family == 4) {
		ip[0] = 0x45;
		ip[1] = st->tos;
		store_be16(ip + 2, (uint16_t)(ip_len + l4_len));
		store_be16(ip + 4, st->ip_id);
		store_be16(ip + 6, st->df ? IPV4_DF : 0);
		ip[8] = st->ttl;
		ip[9] = IP_PROTO_TCP;
		ip[12] = 192; ip[13] = 0; ip[14] = 2; ip[15] = 1;
		ip[16] = 192; ip[17] = 0; ip[18] = 2; ip[19] = 2;
		csum_ipv4_hdr_set(ip, IPV4_HDR_LEN);
		if (bad_ip_csum)
			ip[10] ^= 0x40;
	} else {
		store_be32(ip, 6u << 28 | (uint32_t)st->tos << 20 | 0x12345);
		store_be16(ip + 4, (uint16_t)l4_len);
		ip[6] = IP_PROTO_TCP;
		ip[7] = st->ttl;
		ip[8] = 0x20; ip[9] = 0x01; ip[10] = 0x0d; ip[11] = 0xb8; ip[23] = 1;
		ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8; ip[39] = 2;
	}
	memset(th, 0, th_len);
	store_be16(th, (uint16_t)(BASE_PORT + k));
	store_be16(th + 2, 80);
	store_be32(th + 4, st->seq);
	store_be32(th + 8, st->ack);
	th[12] = (uint8_t)(th_len / 4) << 4;
	th[13] = flags;
	store_be16(th + 14, 512);
	if (st->tsopt) {
		th[20] = 1; th[21] = 1; th[22] = 8; th[23] = 10;
		store_be32(th + 24, st->tsval);
		store_be32(th + 28, 7);
	}
	for (uint32_t i = 0; i < len; i++)
		th[th_len + i] = payload_byte(k, st->seq + i);
	uint32_t pseudo = st->family == 4 ? csum_pseudo_ipv4(ip + 12, ip + 16, IP_PROTO_TCP, l4_len)
					  : csum_pseudo_ipv6(ip + 8, ip + 24, IP_PROTO_TCP, l4_len);
	uint16_t csum = csum_fold(csum_partial(th, l4_len, pseudo));
	if (bad_csum)
		csum ^= 0x0101;
	memcpy(th + 16, &csum, 2);
	return ETH_HDR_LEN + ip_len + l4_len;
}

/* cfg bit 7: socket payloads as views (build_segment). */
static bool feed_views;

/* Builds the segment (encapsulated per the stream), parses it into *key;
 * NULL if the parser refuses it (never expected for these frames). */
static struct pkt *build_segment(struct stream *st, unsigned k, uint8_t flags, uint32_t len, bool bad_csum,
				 bool bad_ip_csum, bool bad_outer_ip_csum, struct flow_key *key)
{
	size_t outer = 0;
	if (st->mode == MODE_VXLAN_FRAME)
		outer = st->outer_family == 4 ? VXLAN_ENCAP_LEN_IPV4 : VXLAN_ENCAP_LEN_IPV6;
	else if (st->mode == MODE_VXLAN_UDP)
		outer = VXLAN_HDR_LEN;
	size_t inner_len = write_inner(st, k, flags, len, bad_csum, bad_ip_csum, frame + outer);
	if (st->mode != MODE_PLAIN) {
		uint8_t *vx = frame + outer - VXLAN_HDR_LEN;
		store_be32(vx, VXLAN_FLAG_VNI);
		store_be32(vx + 4, st->vni << 8);
	}
	if (st->mode == MODE_VXLAN_FRAME) {
		uint8_t *ip = frame + ETH_HDR_LEN;
		size_t ip_len = st->outer_family == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN;
		uint8_t *udp = ip + ip_len;
		uint32_t udp_len = (uint32_t)(UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len);
		memset(frame, 0x02, 12);
		store_be16(frame + 12, st->outer_family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6);
		memset(ip, 0, ip_len);
		if (st->outer_family == 4) {
			ip[0] = 0x45;
			store_be16(ip + 2, (uint16_t)(IPV4_HDR_LEN + udp_len));
			store_be16(ip + 4, st->outer_id);
			store_be16(ip + 6, IPV4_DF);
			ip[8] = st->outer_ttl;
			ip[9] = IP_PROTO_UDP;
			ip[12] = 198; ip[13] = 51; ip[14] = 100; ip[15] = 1;
			ip[16] = 198; ip[17] = 51; ip[18] = 100; ip[19] = 2;
			csum_ipv4_hdr_set(ip, IPV4_HDR_LEN);
			if (bad_outer_ip_csum)
				ip[10] ^= 0x08;
		} else {
			store_be32(ip, 6u << 28);
			store_be16(ip + 4, (uint16_t)udp_len);
			ip[6] = IP_PROTO_UDP;
			ip[7] = st->outer_ttl;
			ip[8] = 0x20; ip[9] = 0x01; ip[23] = 1;
			ip[24] = 0x20; ip[25] = 0x01; ip[39] = 2;
		}
		store_be16(udp, 49152);
		store_be16(udp + 2, VXLAN_DEFAULT_PORT);
		store_be16(udp + 4, (uint16_t)udp_len);
		store_be16(udp + 6, 0);
	}

	struct pkt *pkt = pkt_alloc(pool);
	if (!pkt)
		return NULL;
	if (pkt_set_data(pkt, frame, (uint32_t)(outer + inner_len)) < 0) {
		pkt_free(pkt);
		return NULL;
	}
	enum drop_reason why;
	if (st->mode == MODE_VXLAN_UDP) {
		pkt->tunnel.family = 4;
		pkt->tunnel.src[0] = 198;
		pkt->tunnel.dst[0] = 198;
		pkt->tunnel.src_port = 49152;
		pkt->tunnel.dst_port = VXLAN_DEFAULT_PORT;
		why = flow_extract_vxlan(pkt, key);
	} else {
		why = flow_extract(pkt, VXLAN_DEFAULT_PORT, key);
	}
	if (why != DROP_NONE) {
		pkt_free(pkt);
		return NULL;
	}
	/* Inputs with cfg bit 7: socket payloads arrive as views, as the
	 * VXLAN port makes them (headers here, payload a frag into a
	 * receive buffer pkt). */
	uint16_t hdr = pkt->inner_payload_ofs;
	if (feed_views && st->mode == MODE_VXLAN_UDP && hdr != PKT_OFS_NONE && hdr < pkt->size) {
		struct pkt *buf = pkt_alloc(pool);
		if (!buf || pkt_set_data(buf, pkt->data + hdr, pkt->size - hdr) < 0) {
			pkt_free(buf);
			pkt_free(pkt);
			return NULL;
		}
		pkt_trim(pkt, hdr);
		pkt_add_frag(pkt, buf->data, buf->size, buf);
		pkt_free(buf);
	}
	return pkt;
}

/* Frames go in one at a time through gro_receive() or, for inputs with
 * cfg bit 6, through gro_receive_burst() (the loop built for the CPU's
 * vector unit). */
static bool feed_burst;
/* Frames emitted so far: a call on one frame emits at most two, a flush
 * at most the runs held (gro.h, "Ownership"; the daemon's fixed output
 * array relies on it). */
static uint64_t emitted;

static void gro_feed(struct gro_table *gro, struct pkt *pkt, const struct flow_key *key, uint64_t now)
{
	uint64_t before = emitted;
	if (feed_burst)
		gro_receive_burst(gro, &pkt, key, 1, now);
	else
		gro_receive(gro, pkt, key, now);
	FUZZ_ASSERT(emitted - before <= 2);
}

static void gro_flush_checked(struct gro_table *gro, enum gro_flush_scope scope, uint64_t now)
{
	struct gro_stats st;
	gro_get_stats(gro, &st);
	uint64_t before = emitted;
	gro_flush(gro, scope, now);
	FUZZ_ASSERT(emitted - before <= st.flows_held);
}

/* Stream index of an output frame from our streams, or -1. */
static int output_stream(const struct pkt *pkt, uint32_t *seq, uint32_t *payload)
{
	if (pkt->l3_ofs == PKT_OFS_NONE || pkt->l4_ofs == PKT_OFS_NONE || pkt->payload_ofs == PKT_OFS_NONE)
		return -1;
	uint32_t len = pkt_len(pkt);
	FUZZ_ASSERT(pkt_copy_out(pkt, 0, len, flat) == 0);
	const uint8_t *l3 = flat + pkt->l3_ofs;
	uint8_t proto = (l3[0] >> 4) == 4 ? l3[9] : l3[6];
	if (proto != IP_PROTO_TCP)
		return -1;
	const uint8_t *th = flat + pkt->l4_ofs;
	int k = (th[0] << 8 | th[1]) - BASE_PORT;
	if (k < 0 || k >= N_STREAMS)
		return -1;
	*seq = load_be32(th + 4);
	*payload = len - pkt->payload_ofs;
	return k;
}

static void check_output(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct harness *h = aux;
	uint32_t seq, payload;
	int k = output_stream(pkt, &seq, &payload);
	emitted++;

	/* Every frame here was parsed; the key that comes out is the one of
	 * the frame as it leaves (a merged frame: its head's, with the
	 * FIN/PSH merged into its header). */
	FUZZ_ASSERT(key != NULL && key->in_port == pkt->in_port);
	if (k >= 0) {
		const uint8_t *th = flat + pkt->l4_ofs;
		FUZZ_ASSERT(key->nw_proto == IP_PROTO_TCP && key->tp_src == (th[0] << 8 | th[1]));
		FUZZ_ASSERT((key->tcp_flags & 0xff) == th[13]);
		FUZZ_ASSERT((key->tun_family != 0) == (h->s[k].mode != MODE_PLAIN));
		FUZZ_ASSERT(key->tun_family == 0 || key->tun_vni == h->s[k].vni);
	}
	if (k >= 0) {
		struct stream *st = &h->s[k];
		uint32_t len = pkt_len(pkt);
		const uint8_t *l3 = flat + pkt->l3_ofs;
		bool v4 = (l3[0] >> 4) == 4;
		uint32_t ip_len = v4 ? (uint32_t)(l3[2] << 8 | l3[3]) : (uint32_t)(l3[4] << 8 | l3[5]) + IPV6_HDR_LEN;
		FUZZ_ASSERT(ip_len == len - pkt->l3_ofs);
		/* Consume the queue: one run of consecutive sent segments. */
		FUZZ_ASSERT(st->head != st->tail);
		struct sent *first = &st->queue[st->head % MAX_QUEUE];
		FUZZ_ASSERT(first->seq == seq);
		uint32_t left = payload, next = seq, nr = 0;
		bool any_bad = false;
		do {
			FUZZ_ASSERT(st->head != st->tail);
			struct sent *in = &st->queue[st->head % MAX_QUEUE];
			FUZZ_ASSERT(in->seq == next && in->len <= left);
			any_bad |= in->bad_csum;
			left -= in->len;
			next += in->len;
			st->head++;
			nr++;
		} while (left > 0);
		FUZZ_ASSERT(nr == 1 || !any_bad);
		for (uint32_t i = 0; i < payload; i++)
			FUZZ_ASSERT(flat[pkt->payload_ofs + i] == payload_byte((unsigned)k, seq + i));
		if (nr > 1) {
			FUZZ_ASSERT(ip_len < h->max_size);
			FUZZ_ASSERT(pkt->ol.flags == PKT_OL_NEEDS_CSUM && pkt->ol.gso_size > 0);
			FUZZ_ASSERT(pkt->ol.csum_start == pkt->l4_ofs && pkt->ol.csum_offset == TCP_CSUM_OFFSET);
			uint32_t l4_len = len - pkt->l4_ofs;
			uint32_t pseudo = v4 ? csum_pseudo_ipv4(l3 + 12, l3 + 16, IP_PROTO_TCP, l4_len)
					     : csum_pseudo_ipv6(l3 + 8, l3 + 24, IP_PROTO_TCP, l4_len);
			FUZZ_ASSERT(csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset) == 0);
			FUZZ_ASSERT(csum_fold(csum_pkt(pkt, pkt->l4_ofs, l4_len, pseudo)) == 0);
		} else {
			FUZZ_ASSERT(pkt->ol.gso_type == PKT_GSO_NONE);
		}
	}
	pkt_free(pkt);
}

static void stream_init(struct stream *st, struct reader *r, unsigned k)
{
	uint8_t shape = rd8(r);
	memset(st, 0, sizeof(*st));
	st->family = shape & 1 ? 6 : 4;
	st->mode = (uint8_t)((shape >> 1) % 3);
	st->outer_family = shape & 8 ? 6 : 4;
	st->tsopt = !(shape & 16);
	st->df = !(shape & 32);
	st->ttl = st->outer_ttl = 64;
	st->seq = (uint32_t)rd16(r) << 16 | k;
	st->ack = 1;
	st->ip_id = rd16(r);
	st->outer_id = rd16(r);
	st->vni = (shape & 64) ? 100 : 99;
}

static void send_segment(struct gro_table *gro, struct harness *h, struct reader *r, uint64_t now)
{
	uint8_t op = rd8(r);
	unsigned k = op % N_STREAMS;
	struct stream *st = &h->s[k];
	uint8_t change = rd8(r);
	uint8_t flags = TCP_ACK;
	uint32_t len;

	switch (rd8(r) & 7) {
	case 0: len = 0; break;
	case 1: len = rd8(r); break;
	case 2: len = rd16(r) % (MAX_PAYLOAD + 1); break;
	default: len = 1448; break;
	}
	if (change & 1)
		flags |= (uint8_t)(rd8(r) & ~TCP_ACK);
	if (change & 2)
		st->seq += (uint32_t)(int8_t)rd8(r); /* gap or retransmit */
	if (change & 4)
		st->ack += rd8(r);
	if (change & 8)
		st->tsval++;
	if (change & 16)
		st->ttl ^= rd8(r) & 3;
	if (change & 32)
		st->ip_id = rd16(r);
	if (change & 64)
		st->outer_id += rd8(r);
	/* Corruption: TCP checksum, IPv4 header checksums (the parser checks
	 * none of them; GRO must). */
	uint8_t corrupt = (change & 0x80) ? rd8(r) : 0;
	bool bad_csum = corrupt & 1;
	bool bad_ip_csum = (corrupt & 2) && st->family == 4;
	bool bad_outer_ip_csum = (corrupt & 4) && st->mode == MODE_VXLAN_FRAME && st->outer_family == 4;

	if (st->tail - st->head >= MAX_QUEUE) {
		h->failed_queue = true;
		return;
	}
	struct flow_key key;
	struct pkt *pkt = build_segment(st, k, flags, len, bad_csum, bad_ip_csum, bad_outer_ip_csum, &key);
	if (!pkt)
		return;
	st->queue[st->tail % MAX_QUEUE] = (struct sent){ st->seq, len, bad_csum || bad_ip_csum || bad_outer_ip_csum };
	st->tail++;
	st->seq += len;
	st->ip_id++;
	st->outer_id++;
	gro_feed(gro, pkt, &key, now);
}

/* A frame straight from the input: only GRO's robustness is at stake. */
static void send_raw(struct gro_table *gro, struct reader *r, uint64_t now)
{
	size_t len = rd8(r) + 14;
	if (len > r->left)
		len = r->left;
	struct pkt *pkt = pkt_alloc(pool);
	if (!pkt)
		return;
	pkt_set_data(pkt, r->p, (uint32_t)len);
	r->p += len;
	r->left -= len;
	struct flow_key key;
	if (flow_extract(pkt, VXLAN_DEFAULT_PORT, &key) != DROP_NONE ||
	    (key.nw_proto == IP_PROTO_TCP && key.tp_src >= BASE_PORT && key.tp_src < BASE_PORT + N_STREAMS)) {
		pkt_free(pkt); /* would be taken for one of our streams */
		return;
	}
	gro_feed(gro, pkt, &key, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct harness h;
	struct reader r = { data, size };

	if (!pool && pkt_pool_create(POOL_PKTS, &pool) < 0)
		abort();
	memset(&h, 0, sizeof(h));
	uint8_t cfg = rd8(&r);
	feed_burst = cfg & 0x40;
	feed_views = cfg & 0x80;
	static const uint32_t sizes[] = { 0, 65536, 20000, 3000 };
	h.max_size = sizes[cfg & 3] ? sizes[cfg & 3] : GRO_DEFAULT_MAX_SIZE;
	struct gro_config config = {
		.max_flows = (uint32_t)((cfg >> 2) & 15) * 4, /* 0 = default */
		.max_size = sizes[cfg & 3],
		.hold_ns = (uint64_t)rd8(&r) * 100, /* 0 too: until the poll ends */
		.emit = check_output,
		.emit_aux = &h,
	};
	struct gro_table *gro;
	FUZZ_ASSERT(gro_create(&config, &gro) == 0);
	for (unsigned k = 0; k < N_STREAMS; k++)
		stream_init(&h.s[k], &r, k);

	uint64_t now = 0;
	for (int ops = 0; ops < MAX_OPS && r.left > 0 && !h.failed_queue; ops++) {
		uint8_t op = rd8(&r);
		switch (op & 7) {
		case 0:
			now += rd8(&r) * 10u;
			break;
		case 1:
			gro_flush_checked(gro, GRO_FLUSH_EXPIRED, now);
			break;
		case 2:
			gro_flush_checked(gro, GRO_FLUSH_ALL, now);
			break;
		case 3:
			send_raw(gro, &r, now);
			break;
		default:
			send_segment(gro, &h, &r, now);
			break;
		}
	}
	gro_flush_checked(gro, GRO_FLUSH_ALL, now);

	struct gro_stats st;
	gro_get_stats(gro, &st);
	FUZZ_ASSERT(st.flows_held == 0);
	gro_destroy(gro);
	for (unsigned k = 0; k < N_STREAMS; k++)
		FUZZ_ASSERT(h.s[k].head == h.s[k].tail);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(pool, &ps);
	FUZZ_ASSERT(ps.in_use == 0);
	return 0;
}
