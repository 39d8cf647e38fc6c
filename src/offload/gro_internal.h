/* What the GRO files share, and nothing else: the engine's state (a
 * segment's located headers, a held run, the bucketed table) and the small
 * helpers more than one layer runs per segment.  Not a public header:
 * callers use gro.h.
 *
 * The engine is layered like the kernel's (tcp_offload.c, af_inet.c /
 * ip6_offload.c, udp_offload.c + vxlan.c, net/core/gro.c):
 *
 *   gro.c        entry points, the per-segment loop (built twice: baseline
 *                x86-64 and AVX2) and its fast path, which must be in one
 *                translation unit with the loop to be inlined into it;
 *   gro_tcp.c    the inner IP and TCP rules: locating the headers, may a
 *                segment be held, same flow, may it join the run, merging
 *                and writing the merged frame's headers (tcp_gro_receive,
 *                inet_gro_receive, tcp4/6_gro_complete);
 *   gro_vxlan.c  the tunnel layer: outer headers and VXLAN, same tunnel,
 *                and decapsulating what leaves (udp_gro_receive,
 *                vxlan_gro_receive);
 *   gro_table.c  the bounded table: create/destroy, buckets, completing a
 *                run and emitting it, flushing, stats and names
 *                (napi_gro_flush, gro_flush_oldest).
 *
 * Conventions: functions returning enum gro_pass_reason /
 * gro_flush_reason return GRO_PASS_REASON_COUNT / GRO_FLUSH_REASON_COUNT
 * for "nothing to object". */
#ifndef VX_OFFLOAD_GRO_INTERNAL_H
#define VX_OFFLOAD_GRO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "offload/gro.h"
#include "packet/bytes.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"

enum {
	/* The TCP flags that end a run right after the segment carrying them
	 * (kernel tcp_gro_receive out_check_final). */
	GRO_TCP_FLAGS_FINAL = TCP_URG | TCP_PSH | TCP_RST | TCP_SYN | TCP_FIN,
	/* Flags allowed to differ between the held header and a segment. */
	GRO_TCP_FLAGS_MAY_DIFFER = TCP_CWR | TCP_FIN | TCP_PSH,
	GRO_FIXEDID_INNER = 1 << 0,
	GRO_FIXEDID_OUTER = 1 << 1,
	/* IPv6 first word without the traffic class: version + flow label. */
	GRO_IPV6_FLOW_MASK = 0xF00FFFFF,
	GRO_MAX_L2_LEN = ETH_HDR_LEN + 2 * VLAN_HDR_LEN,
	/* Headers compared in one go by the fast path: outer Eth + IPv6 +
	 * UDP + VXLAN + inner Eth/VLANs + IPv6 + TCP with options fit. */
	GRO_CMP_CHUNK = 32,
	GRO_CMP_MAX = 224,
};

/* One segment's headers, as pointers into its pkt's linear part.  Held runs
 * keep the one of their first segment; nothing in those bytes moves until
 * the run completes. */
struct gro_seg {
	struct pkt *pkt;
	/* Full VXLAN frames only (NULL otherwise). */
	const uint8_t *outer_l2;
	const uint8_t *outer_l3;
	const struct udp_hdr *outer_udp;
	/* Tunnelled frames only. */
	const struct vxlan_hdr *vxlan;
	/* The frame GRO merges: the inner one when tunnelled. */
	const uint8_t *l2;
	uint8_t *l3;
	struct tcp_hdr *th;
	uint32_t hash;
	uint32_t l3_len;      /* IP header to end of payload, as measured */
	uint32_t payload_ofs; /* from pkt->data */
	uint32_t payload_len;
	uint16_t outer_l2_len;
	uint16_t l2_len;
	uint16_t ip_hdr_len;
	uint16_t th_len;
	uint8_t outer_family; /* 0 when no outer IP header is in the frame */
	uint8_t family;
};

/* Everything the positions of the compared fields depend on. */
struct gro_layout {
	uint16_t ofs[9]; /* pkt l2_ofs .. inner_payload_ofs */
	uint16_t th_len;
	uint16_t ip_hdr_len;
	uint8_t family;
	uint8_t outer_family;
	uint8_t outer_udp_csum;
};

struct gro_flow {
	struct gro_seg head; /* head.pkt == NULL: slot free */
	uint64_t deadline_ns; /* first segment's arrival + hold_ns (gro_run_deadline) */
	uint64_t age;        /* start order, for evicting the oldest */
	uint32_t next_seq;   /* host order */
	uint32_t l3_len;     /* merged L3 length so far */
	uint16_t mss;
	uint16_t count;
	uint16_t hdr_len;    /* head: frame start to end of the TCP header;
			      * 0: headers too long, the fast path is off */
	uint16_t mask_len;   /* hdr_len rounded up to GRO_CMP_CHUNK */
	uint32_t seg_len;    /* pkt_len() of the head: a full-MSS segment;
			      * UINT32_MAX while `fast` is off */
	uint16_t bucket;     /* where the run is indexed */
	uint8_t slot;
	uint8_t fixed_id;    /* GRO_FIXEDID_* */
	uint8_t ecn;         /* first segment had CWR */
	uint8_t fast;        /* gro_fast_merge() may take this run's segments */
	uint8_t outer_udp_csum; /* the head's outer UDP checksum is non-zero */
	/* Where the IPv4 headers are (from pkt->data; 0: none or IPv6), their
	 * IDs in the head (host order) and the one's complement sum of
	 * their words but ID and checksum: the checksum for any ID. */
	uint16_t outer_ip_ofs, inner_ip_ofs;
	uint16_t outer_id0, inner_id0;
	uint32_t outer_ip_sum, inner_ip_sum;
	/* The header bytes the next full-MSS segment must have: the head's,
	 * with seq, IP IDs and IP checksums advanced (gro_expect_next). */
	uint8_t expect[GRO_CMP_MAX];
	/* 0xff where a segment's header byte must equal `expect`: all but the
	 * TCP checksum, the urgent pointer and a non-zero outer UDP checksum
	 * (gro_fast_merge). */
	uint8_t cmp_mask[GRO_CMP_MAX];
	/* cmp_mask[hdr_len - GRO_CMP_CHUNK .. hdr_len): the last, overlapping
	 * chunk, so the compare never reads past the headers. */
	uint8_t cmp_tail[GRO_CMP_CHUNK];
	/* What cmp_mask was built for: a slot's next run of the same shape
	 * finds it ready. */
	struct gro_layout mask_layout;
	/* The head's flow key as the caller parsed it, so the frame leaves with
	 * it (gro_emit_fn) and nobody parses it again; NULL: the head came
	 * without one.  While the receive call that started the run lasts it
	 * points into the caller's keys (borrowed: copying its 160 bytes at
	 * every run start, as 1a25980 did, cost bench_gro burst32 ~5 % on
	 * short trains); a run still held when that call returns gets its
	 * slot's own copy (table->keys) then, gro_keys_settle().  The
	 * FIN/PSH merged into the head's header are added to the emitted key's
	 * tcp_flags at completion (merged_flags). */
	const struct flow_key *key;
	uint8_t merged_flags;
};

/* The index of one hash bucket: compact, so a lookup touches one cache line
 * of hashes and only the matching run's flow. */
struct gro_bucket {
	uint32_t hash[GRO_BUCKET_SLOTS];
	uint8_t used; /* bit i: slot i holds a run */
};

struct gro_table {
	gro_emit_fn *emit;
	void *emit_aux;
	uint64_t hold_ns;
	uint32_t max_size;
	uint32_t bucket_slots;
	uint32_t n_buckets;   /* power of two */
	uint32_t n_flows;     /* bucket_slots * n_buckets */
	uint64_t next_age;
	struct gro_stats stats;
	struct gro_flow *last; /* run the previous segment went to */
	bool avx2;             /* gro_receive_burst() may use its AVX2 build */
	/* The last compare mask built, by header layout: runs of one traffic
	 * shape share it, so starting a run is a copy. */
	struct gro_layout mask_layout;
	uint8_t mask[GRO_CMP_MAX];
	struct gro_bucket *buckets;
	/* One key per slot, for a run that outlives the receive call that
	 * started it (struct gro_flow, key): apart from the flows, so the
	 * per-segment path never touches these lines. */
	struct flow_key *keys;
	struct gro_flow flows[]; /* bucket b, slot i at b * bucket_slots + i */
};

/* memcmp() == 0 for the short header pieces compared per segment (MACs,
 * addresses, options), without a library call: overlapping word loads. */
static inline bool bytes_equal(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;
	uint64_t diff = 0;

	if (len >= 8) {
		size_t i;
		for (i = 0; i + 8 <= len; i += 8)
			diff |= load64(x + i) ^ load64(y + i);
		if (i < len)
			diff |= load64(x + len - 8) ^ load64(y + len - 8);
		return diff == 0;
	}
	if (len >= 4)
		return ((load32(x) ^ load32(y)) | (load32(x + len - 4) ^ load32(y + len - 4))) == 0;
	for (size_t i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/* csum_ipv4_hdr_ok() for exactly 20 bytes, inline: it runs twice per
 * VXLAN segment (outer and inner header). */
static inline __attribute__((always_inline)) bool gro_ipv4_hdr_csum_ok(const uint8_t *ip)
{
	uint64_t sum = (uint64_t)load32(ip) + load32(ip + 4) + load32(ip + 8) + load32(ip + 12) + load32(ip + 16);

	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return sum == 0xffff;
}

/* Recomputes the IPv4 header checksum (csum_ipv4_hdr_set() for 20 bytes,
 * inline: once per merged frame). */
static inline void gro_ipv4_hdr_csum_set(uint8_t *ip)
{
	memset(ip + 10, 0, 2);
	uint64_t sum = (uint64_t)load32(ip) + load32(ip + 4) + load32(ip + 8) + load32(ip + 12) + load32(ip + 16);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	uint16_t csum = (uint16_t)~sum;
	memcpy(ip + 10, &csum, 2);
}

/* The one's complement sum, folded to 16 bits, of the IPv4 header words
 * other than ID and checksum (native byte order, like load16()). */
static inline uint32_t gro_ipv4_sum_but_id(const uint8_t *ip)
{
	uint64_t sum = (uint64_t)load32(ip) + load16(ip + 6) + load16(ip + 8) + load32(ip + 12) + load32(ip + 16);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint32_t)sum;
}

/* The header checksum (as stored) of an IPv4 header whose other words sum
 * to `sum_but_id` and whose ID field holds `id_native` (as stored). */
static inline uint16_t gro_ipv4_csum_with_id(uint32_t sum_but_id, uint16_t id_native)
{
	uint32_t x = sum_but_id + id_native;
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (uint16_t)~x;
}

/* The IP ID the run's next segment must carry: the head's if the run keeps
 * a fixed ID, else head + count (gro_ip_flush()).  A run of one has not
 * decided yet; incrementing is expected, a fixed ID takes the slow path. */
static inline uint16_t gro_expected_id(const struct gro_flow *flow, uint16_t id0, uint8_t fixed_bit)
{
	return (flow->fixed_id & fixed_bit) ? id0 : (uint16_t)(id0 + flow->count);
}

/* Brings `expect` up to the run's state: seq, IP IDs and checksums of the
 * next full-MSS segment.  Everything else stays the head's. */
static inline void gro_expect_next(struct gro_flow *flow)
{
	uint8_t *e = flow->expect;
	uint32_t seq_be = __builtin_bswap32(flow->next_seq);

	memcpy(e + flow->hdr_len - flow->head.th_len + 4, &seq_be, 4);
	if (flow->outer_ip_ofs) {
		uint16_t id = __builtin_bswap16(gro_expected_id(flow, flow->outer_id0, GRO_FIXEDID_OUTER));
		uint16_t csum = gro_ipv4_csum_with_id(flow->outer_ip_sum, id);
		memcpy(e + flow->outer_ip_ofs + 4, &id, 2);
		memcpy(e + flow->outer_ip_ofs + 10, &csum, 2);
	}
	if (flow->inner_ip_ofs) {
		uint16_t id = __builtin_bswap16(gro_expected_id(flow, flow->inner_id0, GRO_FIXEDID_INNER));
		uint16_t csum = gro_ipv4_csum_with_id(flow->inner_ip_sum, id);
		memcpy(e + flow->inner_ip_ofs + 4, &id, 2);
		memcpy(e + flow->inner_ip_ofs + 10, &csum, 2);
	}
}

/* The hold timer (gro.h, "Flushing").  A run's deadline is its first
 * segment's arrival + hold_ns, never moved by later segments (seeds/001:
 * a timer re-armed by every arrival never fires under load).  Segments that
 * arrive up to and including the deadline still join the run -- with
 * hold_ns 0 that is every segment of the poll it started in, whose frames
 * all carry the same now_ns -- and GRO_FLUSH_EXPIRED completes it from the
 * deadline on, so hold 0 means "until this poll ends". */
static inline uint64_t gro_run_deadline(const struct gro_table *table, uint64_t first_ns)
{
	uint64_t deadline = first_ns + table->hold_ns;
	return deadline < first_ns ? UINT64_MAX : deadline;
}

/* GRO_FLUSH_EXPIRED at now_ns completes the run. */
static inline bool gro_run_expired(const struct gro_flow *flow, uint64_t now_ns)
{
	return now_ns >= flow->deadline_ns;
}

/* A segment arriving at now_ns comes after the deadline: the run completes
 * (as a timeout) before the segment is looked at.  One compare with the
 * deadline kept in the flow: the fast path asks it of every segment. */
static inline bool gro_run_late(const struct gro_flow *flow, uint64_t now_ns)
{
	return now_ns > flow->deadline_ns;
}

/* ---- gro_tcp.c: the inner IP and TCP layer ---------------------------- */

/* Finds the headers GRO looks at and the flow identity.  False if the frame
 * is not TCP over IPv4/IPv6 (or its offsets were never set): such frames
 * belong to no TCP run and pass straight through. */
bool gro_seg_locate(struct pkt *pkt, struct gro_seg *seg);
/* Whether the segment may be held or merged at all. */
enum gro_pass_reason gro_seg_pass_reason(const struct gro_seg *seg);
/* The IP length/option/fragment/checksum rules for one IP header, inner or
 * outer; `want_next` is the protocol an IPv6 header must carry directly. */
enum gro_pass_reason gro_ipv4_pass_reason(const uint8_t *l3, uint32_t l3_len);
enum gro_pass_reason gro_ipv6_pass_reason(const uint8_t *l3, uint32_t l3_len, uint8_t want_next);
/* inet_gro_flush / ipv6_gro_flush for one IP header, inner or outer. */
enum gro_flush_reason gro_ip_flush(struct gro_flow *flow, const uint8_t *held, const uint8_t *seg,
				   uint8_t family, uint8_t fixed_bit);
bool gro_tcp_csum_ok_at(const struct pkt *pkt, const uint8_t *l3, uint8_t family, uint32_t l4_ofs);
bool gro_same_flow(const struct gro_seg *a, const struct gro_seg *b);
enum gro_flush_reason gro_merge_check(const struct gro_table *table, struct gro_flow *flow,
				      const struct gro_seg *seg);
void gro_merge(struct gro_flow *flow, const struct gro_seg *seg);
/* Writes the merged frame `pkt` of a run just taken out of the table
 * (flow->head.pkt already NULL): IP length, IPv4 header checksum, the TCP
 * pseudo-header seed and the offload metadata (tcp4/6_gro_complete).  The
 * frame must already be decapsulated (head.l3/th still point at its
 * headers; decapsulation moves no bytes). */
void gro_tcp_finish_merged(const struct gro_flow *flow, struct pkt *pkt);

/* ---- gro_vxlan.c: the tunnel layer ------------------------------------ */

/* For a tunnelled frame, finds the VXLAN header and (full frames) the outer
 * Ethernet/IP/UDP headers, and returns in *l2/l3/l4 the inner frame's
 * offsets; for a plain frame, its offsets.  False if a tunnel header is
 * missing or malformed. */
bool gro_vxlan_locate(struct pkt *pkt, struct gro_seg *seg, uint16_t *l2_ofs, uint16_t *l3_ofs, uint16_t *l4_ofs);
/* The outer IP and UDP length rules of a full VXLAN frame. */
enum gro_pass_reason gro_vxlan_pass_reason(const struct gro_seg *seg);
/* Same VXLAN header, outer addresses and ports (pkt->tunnel), outer
 * Ethernet header and UDP checksum presence (udp_gro_receive). */
bool gro_same_tunnel(const struct gro_seg *a, const struct gro_seg *b);
/* gro_decap_passthrough() (gro.h) is defined in gro_vxlan.c too. */

/* ---- gro_table.c: the table ------------------------------------------- */

struct gro_flow *gro_lookup(struct gro_table *table, const struct gro_seg *seg);
/* A free slot in the segment's bucket, completing the oldest run there if
 * the bucket is full; the slot is indexed under the segment's hash. */
struct gro_flow *gro_slot_for(struct gro_table *table, const struct gro_seg *seg);
/* Ends a receive call that found next_age at age0: every run it started
 * (age >= age0) that is still held takes a copy of its key, which lived
 * only as long as the call.  Found by age, not listed at each start: a
 * list cost bench_gro burst32 ~14 instructions a frame on short trains. */
void gro_keys_settle(struct gro_table *table, uint64_t age0);
/* Completes a held run: emits it, merged or alone, and frees its slot. */
void gro_complete(struct gro_table *table, struct gro_flow *flow, enum gro_flush_reason why);
/* Emits a frame that was never held, decapsulated, counted under `why`,
 * with the key it came with. */
void gro_pass(struct gro_table *table, struct pkt *pkt, const struct flow_key *key, enum gro_pass_reason why);

#endif
