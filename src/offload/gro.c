/* GRO entry points and the per-segment loop: see gro.h for the contract and
 * the rules, gro_internal.h for how the engine is split into layers.
 *
 * gro_receive_slow() is the layered path: gro_seg_locate() finds the
 * headers of a segment and its flow identity (tunnel, L2, L3 addresses,
 * TCP ports); gro_seg_pass_reason() decides whether it may be held at all;
 * gro_merge_check() compares it with the held run, outer IP, inner IP and
 * TCP in turn; gro_complete() writes the merged frame's headers and
 * offload metadata.
 *
 * In front of all that, gro_fast_merge() takes the common case, the next
 * full-MSS segment of a train, with one masked compare of the whole header
 * stack against the header that segment must have (gro_expect_next()); it
 * either merges exactly as the rules would or declines, and the layered
 * path decides.  The fast path lives here, with the loop it is inlined
 * into, because that loop is compiled twice (baseline and AVX2). */
#include "offload/gro_internal.h"

static void gro_mask_field(struct gro_flow *flow, const void *field, uint32_t size)
{
	uint32_t ofs = (uint32_t)((const uint8_t *)field - flow->head.pkt->data);
	memset(flow->cmp_mask + ofs, 0, size);
}

static void gro_layout_of(const struct gro_seg *seg, struct gro_layout *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->ofs, &seg->pkt->l2_ofs, sizeof(out->ofs));
	out->th_len = seg->th_len;
	out->ip_hdr_len = seg->ip_hdr_len;
	out->family = seg->family;
	out->outer_family = seg->outer_family;
	out->outer_udp_csum = seg->outer_udp && seg->outer_udp->csum;
}

/* What may differ between `expect` and a further segment without the slow
 * path having to look: the TCP checksum and urgent pointer (Linux compares
 * neither) and a non-zero outer UDP checksum (gro_fast_merge() checks it is
 * non-zero).  A head whose headers are too long for the mask gets hdr_len
 * 0, which keeps its run on the slow path. */
static void gro_build_cmp_mask(struct gro_table *table, struct gro_flow *flow)
{
	const struct gro_seg *h = &flow->head;
	uint32_t hdr_len = h->payload_ofs;
	struct gro_layout layout;

	flow->hdr_len = 0;
	if (hdr_len > GRO_CMP_MAX || hdr_len < GRO_CMP_CHUNK || hdr_len > h->pkt->size)
		return;
	flow->hdr_len = (uint16_t)hdr_len;
	flow->mask_len = (uint16_t)((hdr_len + GRO_CMP_CHUNK - 1) & ~(GRO_CMP_CHUNK - 1u));
	gro_layout_of(h, &layout);
	if (bytes_equal(&layout, &flow->mask_layout, sizeof(layout)))
		return;
	flow->mask_layout = layout;
	if (bytes_equal(&layout, &table->mask_layout, sizeof(layout))) {
		memcpy(flow->cmp_mask, table->mask, flow->mask_len);
		memcpy(flow->cmp_tail, flow->cmp_mask + hdr_len - GRO_CMP_CHUNK, GRO_CMP_CHUNK);
		return;
	}
	memset(flow->cmp_mask, 0xff, hdr_len);
	memset(flow->cmp_mask + hdr_len, 0, flow->mask_len - hdr_len);
	if (layout.outer_udp_csum)
		gro_mask_field(flow, &h->outer_udp->csum, 2);
	gro_mask_field(flow, &h->th->csum, 2);
	gro_mask_field(flow, &h->th->urg_be, 2);
	memcpy(flow->cmp_tail, flow->cmp_mask + hdr_len - GRO_CMP_CHUNK, GRO_CMP_CHUNK);
	table->mask_layout = layout;
	memcpy(table->mask, flow->cmp_mask, flow->mask_len);
}

/* memcpy() of `len` (GRO_CMP_CHUNK .. GRO_CMP_MAX) header bytes in whole
 * chunks, the last one overlapping: no library call, nothing read past
 * `len`. */
static inline void gro_copy_hdr(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	uint32_t i;

	for (i = 0; i + GRO_CMP_CHUNK <= len; i += GRO_CMP_CHUNK)
		memcpy(dst + i, src + i, GRO_CMP_CHUNK);
	if (i < len)
		memcpy(dst + len - GRO_CMP_CHUNK, src + len - GRO_CMP_CHUNK, GRO_CMP_CHUNK);
}

/* Sets up the fast path of a run just started: mask and expected header. */
static void gro_fast_setup(struct gro_table *table, struct gro_flow *flow)
{
	const struct gro_seg *h = &flow->head;
	const uint8_t *data = h->pkt->data;

	gro_build_cmp_mask(table, flow);
	flow->fast = flow->hdr_len && !flow->ecn;
	flow->seg_len = UINT32_MAX; /* no pkt is that long: one test for both */
	if (!flow->fast)
		return;
	flow->seg_len = pkt_len(h->pkt);
	flow->outer_udp_csum = h->outer_udp && h->outer_udp->csum;
	flow->outer_ip_ofs = flow->inner_ip_ofs = 0;
	if (h->outer_family == 4) {
		flow->outer_ip_ofs = (uint16_t)(h->outer_l3 - data);
		flow->outer_id0 = load_be16(h->outer_l3 + 4);
		flow->outer_ip_sum = gro_ipv4_sum_but_id(h->outer_l3);
	}
	if (h->family == 4) {
		flow->inner_ip_ofs = (uint16_t)(h->l3 - data);
		flow->inner_id0 = load_be16(h->l3 + 4);
		flow->inner_ip_sum = gro_ipv4_sum_but_id(h->l3);
	}
	gro_copy_hdr(flow->expect, data, flow->hdr_len);
	gro_expect_next(flow);
}

static void gro_start_run(struct gro_table *table, const struct gro_seg *seg, const struct flow_key *key,
			  uint64_t now_ns)
{
	struct gro_flow *flow = gro_slot_for(table, seg);

	flow->head = *seg;
	flow->key = key;
	flow->merged_flags = 0;
	flow->deadline_ns = gro_run_deadline(table, now_ns);
	flow->age = table->next_age++;
	flow->next_seq = load_be32(&seg->th->seq_be) + seg->payload_len;
	flow->l3_len = seg->l3_len;
	flow->mss = (uint16_t)seg->payload_len;
	flow->count = 1;
	flow->fixed_id = 0;
	flow->ecn = (seg->th->flags & TCP_CWR) != 0;
	gro_fast_setup(table, flow);
	table->stats.flows_held++;
	table->last = flow;
}

typedef uint64_t gro_chunk __attribute__((vector_size(GRO_CMP_CHUNK)));

/* (seg ^ expect) & mask == 0 over the first `len` (>= GRO_CMP_CHUNK)
 * header bytes: whole chunks, then one chunk ending at `len` under
 * `tail_mask` (overlapping the previous one), so nothing past `len` is
 * read. */
static inline bool gro_hdr_match(const uint8_t *seg, const uint8_t *expect, const uint8_t *mask,
				 const uint8_t *tail_mask, uint32_t len)
{
	gro_chunk diff0 = { 0 }, diff1 = { 0 };
	uint32_t i = 0;

	/* Two chunks a round, two accumulators: no loop-carried chain. */
	for (; i + 2 * GRO_CMP_CHUNK <= len; i += 2 * GRO_CMP_CHUNK) {
		gro_chunk a0, b0, m0, a1, b1, m1;
		memcpy(&a0, seg + i, sizeof(a0));
		memcpy(&b0, expect + i, sizeof(b0));
		memcpy(&m0, mask + i, sizeof(m0));
		memcpy(&a1, seg + i + GRO_CMP_CHUNK, sizeof(a1));
		memcpy(&b1, expect + i + GRO_CMP_CHUNK, sizeof(b1));
		memcpy(&m1, mask + i + GRO_CMP_CHUNK, sizeof(m1));
		diff0 |= (a0 ^ b0) & m0;
		diff1 |= (a1 ^ b1) & m1;
	}
	if (i + GRO_CMP_CHUNK <= len) {
		gro_chunk a, b, m;
		memcpy(&a, seg + i, sizeof(a));
		memcpy(&b, expect + i, sizeof(b));
		memcpy(&m, mask + i, sizeof(m));
		diff0 |= (a ^ b) & m;
		i += GRO_CMP_CHUNK;
	}
	if (i < len) {
		gro_chunk a, b, m;
		memcpy(&a, seg + len - GRO_CMP_CHUNK, sizeof(a));
		memcpy(&b, expect + len - GRO_CMP_CHUNK, sizeof(b));
		memcpy(&m, tail_mask, sizeof(m));
		diff1 |= (a ^ b) & m;
	}
	diff0 |= diff1;
	return (diff0[0] | diff0[1] | diff0[2] | diff0[3]) == 0;
}

/* Fast path: the segment is the next full-MSS one of the run the previous
 * segment joined (a train) and merges without any rule being in question.
 * Its header bytes must equal `expect`: the head's (same flow: MACs,
 * addresses, ports, VNI and VXLAN flags; TTL/TOS/DF, hop limit, traffic
 * class, flow label, ACK, doff, flags, window, options; lengths, so the
 * payload is exactly MSS) with seq = next_seq and each IPv4 ID what the ID
 * rule asks and its header checksum the valid one for it.  Equal flags
 * mean no CWR and no flag that ends a run (a head has none).  Anything
 * else (another flow, a short or changed segment, a bad checksum, a
 * fixed ID not yet known) returns false and the slow path decides, so both
 * paths give the same result. */
static inline __attribute__((always_inline)) bool gro_fast_merge(struct gro_table *table, struct gro_flow *flow,
								  struct pkt *pkt, uint64_t now_ns)
{
	struct pkt *hp = flow->head.pkt;
	uint32_t hdr_len = flow->hdr_len;

	if (pkt_len(pkt) != flow->seg_len || pkt->size < hdr_len || pkt->in_port != hp->in_port ||
	    ((pkt->ol.flags & PKT_OL_NEEDS_CSUM) | pkt->ol.gso_type) || gro_run_late(flow, now_ns))
		return false;
	/* Same layout: the nine offsets l2_ofs .. inner_payload_ofs. */
	if (!bytes_equal(&pkt->l2_ofs, &hp->l2_ofs, 9 * sizeof(uint16_t)))
		return false;
	/* Another flow's train starting: its ports differ, say so cheaply. */
	uint32_t l4_ofs = hdr_len - flow->head.th_len;
	if (load32(pkt->data + l4_ofs) != load32(flow->expect + l4_ofs))
		return false;
	if (!gro_hdr_match(pkt->data, flow->expect, flow->cmp_mask, flow->cmp_tail, hdr_len))
		return false;
	const struct gro_seg *h = &flow->head;
	if (flow->outer_udp_csum && !load16(pkt->data + pkt->l4_ofs + 6))
		return false;
	/* Socket input: the outer headers are only metadata.  (In a full
	 * frame they are among the compared header bytes.) */
	if (h->vxlan && !h->outer_l3) {
		const struct pkt_tunnel *a = &pkt->tunnel, *b = &hp->tunnel;
		if (a->family != b->family || a->src_port != b->src_port || a->dst_port != b->dst_port ||
		    !bytes_equal(a->src, b->src, 16) || !bytes_equal(a->dst, b->dst, 16))
			return false;
	}
	uint32_t payload = flow->mss;
	/* A linear segment (its length says so: any frags are empty ones,
	 * left with it) needs one frag; a view, one per piece. */
	bool linear = pkt->frags_size == 0;
	uint32_t in_linear = hdr_len < pkt->size;
	uint32_t frags_needed = linear ? 1 : in_linear + pkt->nr_frags;
	if (flow->l3_len + payload >= table->max_size || hp->nr_frags + frags_needed > PKT_MAX_FRAGS)
		return false;
	if (!(pkt->ol.flags & PKT_OL_DATA_VALID) &&
	    !gro_tcp_csum_ok_at(pkt, pkt->data + (h->l3 - hp->data), h->family, l4_ofs)) {
		/* Let the slow path count it and keep the flow in order. */
		return false;
	}

	if (linear) {
		/* The common case: the frag takes over the reference the
		 * caller gave us (pkt_add_frag() + pkt_free() in one). */
		hp->frags[hp->nr_frags++] = (struct pkt_frag){ pkt->data + hdr_len, pkt->size - hdr_len, pkt };
		hp->frags_size += pkt->size - hdr_len;
	} else if (!in_linear && pkt->refcnt == 1) {
		/* A view (the VXLAN port's shape: headers here, payload in
		 * the receive buffer) that only we hold: its frags move to
		 * the head with the references they carry. */
		for (uint16_t i = 0; i < pkt->nr_frags; i++)
			hp->frags[hp->nr_frags++] = pkt->frags[i];
		hp->frags_size += pkt->frags_size;
		pkt->nr_frags = 0;
		pkt->frags_size = 0;
		pkt_free(pkt);
	} else {
		if (in_linear)
			pkt_add_frag(hp, pkt->data + hdr_len, pkt->size - hdr_len, pkt);
		for (uint16_t i = 0; i < pkt->nr_frags; i++)
			pkt_add_frag(hp, pkt->frags[i].data, pkt->frags[i].size, pkt->frags[i].owner);
		pkt_free(pkt);
	}
	flow->next_seq += payload;
	flow->l3_len += payload;
	flow->count++;
	gro_expect_next(flow);
	return true;
}

/* The layered path, for every segment the fast path declined: kept out of
 * line so the per-segment loop around the fast path stays small. */
static __attribute__((noinline)) void gro_receive_slow(struct gro_table *table, struct pkt *pkt,
							const struct flow_key *key, uint64_t now_ns)
{
	struct gro_seg seg;
	struct gro_flow *flow;

	if (!gro_seg_locate(pkt, &seg)) {
		gro_pass(table, pkt, key, GRO_PASS_NOT_TCP);
		return;
	}
	flow = gro_lookup(table, &seg);
	if (flow && gro_run_late(flow, now_ns)) {
		gro_complete(table, flow, GRO_FLUSH_TIMEOUT);
		flow = NULL;
	}

	enum gro_pass_reason pass = gro_seg_pass_reason(&seg);
	if (pass != GRO_PASS_REASON_COUNT) {
		/* Keep the flow in order: what is held goes out first. */
		if (flow)
			gro_complete(table, flow, GRO_FLUSH_PASSTHROUGH);
		gro_pass(table, pkt, key, pass);
		return;
	}

	if (flow) {
		enum gro_flush_reason why = gro_merge_check(table, flow, &seg);
		if (why == GRO_FLUSH_REASON_COUNT) {
			uint16_t mss = flow->mss;
			gro_merge(flow, &seg);
			table->last = flow;
			if (seg.payload_len < mss)
				gro_complete(table, flow, GRO_FLUSH_SHORT_SEGMENT);
			else if (seg.th->flags & GRO_TCP_FLAGS_FINAL)
				gro_complete(table, flow, GRO_FLUSH_FLAGS);
			return;
		}
		gro_complete(table, flow, why);
	}

	if (seg.th->flags & GRO_TCP_FLAGS_FINAL) {
		gro_pass(table, pkt, key, GRO_PASS_FLAGS);
		return;
	}
	gro_start_run(table, &seg, key, now_ns);
}

static inline __attribute__((always_inline)) void gro_receive_one(struct gro_table *table, struct pkt *pkt,
								   const struct flow_key *key, uint64_t now_ns)
{
	struct gro_flow *last = table->last;

	table->stats.segments_in++;
	if (last && last->head.pkt && gro_fast_merge(table, last, pkt, now_ns))
		return;
	gro_receive_slow(table, pkt, key, now_ns);
}

void gro_receive(struct gro_table *table, struct pkt *pkt, const struct flow_key *key, uint64_t now_ns)
{
	uint64_t age0 = table->next_age;

	gro_receive_one(table, pkt, key, now_ns);
	gro_keys_settle(table, age0);
}

/* Prefetch distances: the pkt struct a few frames ahead, its headers (whose
 * address needs the struct) a little closer.  A receive batch sits in
 * buffers 2 to 64 KB apart, so every frame is a cache miss otherwise (4 to
 * 16 ahead measured the same). */
enum { GRO_PREFETCH_PKT = 8, GRO_PREFETCH_HDR = 4 };

/* The fields GRO reads (data .. tunnel, nr_frags, refcnt) span the first
 * two cache lines of struct pkt. */
static inline void gro_prefetch_pkt(const struct pkt *pkt)
{
	__builtin_prefetch(pkt);
	__builtin_prefetch((const uint8_t *)pkt + 64);
}

/* The first 128 bytes: every header stack but IPv6 over IPv6 VXLAN, whose
 * last line comes on demand (looking at the offsets to know cost more than
 * it saved: bench_gro, vxlan_tcp4.pcap, ~2%). */
static inline void gro_prefetch_headers(const struct pkt *pkt)
{
	__builtin_prefetch(pkt->data);
	__builtin_prefetch(pkt->data + 64);
}

static inline __attribute__((always_inline)) void gro_burst(struct gro_table *table, struct pkt **pkts,
							      const struct flow_key *keys, uint32_t n, uint64_t now_ns)
{
	for (uint32_t i = 0; i < n && i < GRO_PREFETCH_PKT; i++)
		gro_prefetch_pkt(pkts[i]);
	for (uint32_t i = 0; i < n && i < GRO_PREFETCH_HDR; i++)
		gro_prefetch_headers(pkts[i]);
	for (uint32_t i = 0; i < n; i++) {
		if (i + GRO_PREFETCH_PKT < n)
			gro_prefetch_pkt(pkts[i + GRO_PREFETCH_PKT]);
		if (i + GRO_PREFETCH_HDR < n)
			gro_prefetch_headers(pkts[i + GRO_PREFETCH_HDR]);
		gro_receive_one(table, pkts[i], keys ? &keys[i] : NULL, now_ns);
	}
}

/* The same loop twice: built for the baseline x86-64 and, where the CPU
 * has it, with AVX2, whose 32-byte compares and three-operand forms take
 * the fast path's header compare in a third of the instructions.  Chosen
 * once by gro_create(). */
#if defined(__x86_64__)
static __attribute__((target("avx2"))) void gro_burst_avx2(struct gro_table *table, struct pkt **pkts,
							   const struct flow_key *keys, uint32_t n, uint64_t now_ns)
{
	gro_burst(table, pkts, keys, n, now_ns);
}
#endif

static void gro_burst_generic(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
			      uint64_t now_ns)
{
	gro_burst(table, pkts, keys, n, now_ns);
}

/* The burst without settling the keys: gro_receive_batch() completes every
 * run before it returns, so none needs its key copied. */
static void gro_burst_pick(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
			   uint64_t now_ns)
{
#if defined(__x86_64__)
	if (table->avx2) {
		gro_burst_avx2(table, pkts, keys, n, now_ns);
		return;
	}
#endif
	gro_burst_generic(table, pkts, keys, n, now_ns);
}

void gro_receive_burst(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
		       uint64_t now_ns)
{
	uint64_t age0 = table->next_age;

	gro_burst_pick(table, pkts, keys, n, now_ns);
	gro_keys_settle(table, age0);
}

void gro_receive_batch(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
		       uint64_t now_ns)
{
	gro_burst_pick(table, pkts, keys, n, now_ns);
	gro_flush(table, GRO_FLUSH_ALL, now_ns);
}
