/* GRO engine: see gro.h for the contract and the rules.
 *
 * Layering follows the kernel: gro_seg_locate() finds the headers of a
 * segment and its flow identity (tunnel, L2, L3 addresses, TCP ports);
 * gro_seg_pass_reason() decides whether it may be held at all;
 * gro_merge_check() compares it with the held run, outer IP, inner IP and
 * TCP in turn; gro_complete() writes the merged frame's headers and
 * offload metadata.
 *
 * In front of all that, gro_fast_merge() takes the common case, the next
 * full-MSS segment of a train, with one masked compare of the whole header
 * stack against the header that segment must have (gro_expect_next()); it
 * either merges exactly as the rules would or declines, and the layered
 * path above decides.
 *
 * Sections: helpers; names; constructor; locating a segment; may it be
 * held; same flow; may it join the run; output; the table; fast path;
 * entry points. */
#include "offload/gro.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/hdr.h"

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
	uint64_t first_ns;   /* arrival of the first segment: the deadline base */
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

/* ---- names ---------------------------------------------------------- */

static const char *const gro_flush_names[] = {
#define GRO_FLUSH_NAME(name, str) str,
	GRO_FLUSH_REASONS(GRO_FLUSH_NAME)
#undef GRO_FLUSH_NAME
};

static const char *const gro_pass_names[] = {
#define GRO_PASS_NAME(name, str) str,
	GRO_PASS_REASONS(GRO_PASS_NAME)
#undef GRO_PASS_NAME
};

const char *gro_flush_reason_name(enum gro_flush_reason reason)
{
	if ((unsigned)reason >= GRO_FLUSH_REASON_COUNT)
		return "invalid";
	return gro_flush_names[reason];
}

const char *gro_pass_reason_name(enum gro_pass_reason reason)
{
	if ((unsigned)reason >= GRO_PASS_REASON_COUNT)
		return "invalid";
	return gro_pass_names[reason];
}

/* ---- constructor / destructor ---------------------------------------- */

struct gro_table *gro_create(const struct gro_config *config)
{
	uint32_t max_flows = config->max_flows ? config->max_flows : GRO_DEFAULT_MAX_FLOWS;
	uint32_t max_size = config->max_size ? config->max_size : GRO_DEFAULT_MAX_SIZE;

	if (!config->emit || max_size > GRO_DEFAULT_MAX_SIZE || max_flows > GRO_MAX_FLOWS) {
		errno = EINVAL;
		return NULL;
	}
	uint32_t slots = max_flows < GRO_BUCKET_SLOTS ? max_flows : GRO_BUCKET_SLOTS;
	uint32_t buckets = 1;
	while (buckets * 2 * slots <= max_flows)
		buckets *= 2;

	struct gro_table *table = calloc(1, sizeof(*table) + (size_t)buckets * slots * sizeof(struct gro_flow));
	if (!table)
		goto err_nomem;
	table->buckets = calloc(buckets, sizeof(*table->buckets));
	if (!table->buckets)
		goto err_free_table;
	table->emit = config->emit;
	table->emit_aux = config->emit_aux;
	table->hold_ns = config->hold_ns ? config->hold_ns : GRO_DEFAULT_HOLD_NS;
	table->max_size = max_size;
	table->bucket_slots = slots;
	table->n_buckets = buckets;
	table->n_flows = buckets * slots;
#if defined(__x86_64__)
	table->avx2 = __builtin_cpu_supports("avx2");
#endif
	return table;

err_free_table:
	free(table);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

void gro_destroy(struct gro_table *table)
{
	if (!table)
		return;
	for (uint32_t i = 0; i < table->n_flows; i++)
		pkt_free(table->flows[i].head.pkt);
	free(table->buckets);
	free(table);
}

void gro_get_stats(const struct gro_table *table, struct gro_stats *out)
{
	*out = table->stats;
}

/* ---- locating a segment's headers ------------------------------------ */

/* Walks IPv6 extension headers from `ofs` (the byte after the fixed
 * header), the way the parser did, to learn whether the L4 header the
 * parser found at `l4_ofs` is TCP.  Only needed for frames we will not
 * merge anyway, to flush their flow's run first. */
static bool gro_ipv6_l4_is_tcp(const struct pkt *pkt, uint32_t ofs, uint8_t next, uint16_t l4_ofs)
{
	for (int i = 0; i <= 8 && ofs < l4_ofs; i++) {
		const uint8_t *ext = pkt_at(pkt, ofs, 2);
		if (!ext)
			return false;
		switch (next) {
		case IP_PROTO_HOPOPTS:
		case IP_PROTO_ROUTING:
		case IP_PROTO_DSTOPTS:
			ofs += (ext[1] + 1u) * 8;
			break;
		case IP_PROTO_FRAGMENT:
			ofs += IPV6_FRAG_HDR_LEN;
			break;
		case IP_PROTO_AH:
			ofs += (ext[1] + 2u) * 4;
			break;
		default:
			return false;
		}
		next = ext[0];
	}
	return ofs == l4_ofs && next == IP_PROTO_TCP;
}

/* Picks the bucket; equality is decided by gro_same_flow(), so this only
 * has to spread flows, and is short: one multiply on the critical path. */
static uint32_t gro_hash(const struct gro_seg *seg)
{
	uint64_t x = load32(&seg->th->src_be);

	if (seg->family == 4) {
		x ^= load64(seg->l3 + 12);
	} else {
		x ^= load64(seg->l3 + 8) ^ load64(seg->l3 + 16);
		x ^= load64(seg->l3 + 24) ^ load64(seg->l3 + 32);
	}
	if (seg->vxlan)
		x ^= (uint64_t)seg->vxlan->vni_be << 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(x >> 32);
}

/* Finds the headers GRO looks at and the flow identity.  False if the frame
 * is not TCP over IPv4/IPv6 (or its offsets were never set): such frames
 * belong to no TCP run and pass straight through. */
static bool gro_seg_locate(struct pkt *pkt, struct gro_seg *seg)
{
	uint16_t l2_ofs, l3_ofs, l4_ofs;

	/* Everything else is set on the way to `return true`. */
	seg->pkt = pkt;
	seg->outer_l2 = seg->outer_l3 = NULL;
	seg->outer_udp = NULL;
	seg->vxlan = NULL;
	seg->outer_l2_len = 0;
	seg->outer_family = 0;
	if (pkt->tunnel_ofs != PKT_OFS_NONE) {
		seg->vxlan = (const struct vxlan_hdr *)pkt_at(pkt, pkt->tunnel_ofs, VXLAN_HDR_LEN);
		if (!seg->vxlan)
			return false;
		l2_ofs = pkt->inner_l2_ofs;
		l3_ofs = pkt->inner_l3_ofs;
		l4_ofs = pkt->inner_l4_ofs;
		if (pkt->l3_ofs != PKT_OFS_NONE && pkt->l4_ofs != PKT_OFS_NONE) {
			const uint8_t *outer_l3 = pkt_at(pkt, pkt->l3_ofs, IPV4_HDR_LEN);
			seg->outer_udp = (const struct udp_hdr *)pkt_at(pkt, pkt->l4_ofs, UDP_HDR_LEN);
			if (!outer_l3 || !seg->outer_udp)
				return false;
			seg->outer_family = outer_l3[0] >> 4;
			if (seg->outer_family == 6 && !pkt_at(pkt, pkt->l3_ofs, IPV6_HDR_LEN))
				return false;
			if (seg->outer_family != 4 && seg->outer_family != 6)
				return false;
			seg->outer_l3 = outer_l3;
			if (pkt->l2_ofs != PKT_OFS_NONE && pkt->l2_ofs < pkt->l3_ofs) {
				seg->outer_l2 = pkt->data + pkt->l2_ofs;
				seg->outer_l2_len = (uint16_t)(pkt->l3_ofs - pkt->l2_ofs);
			}
		}
	} else {
		l2_ofs = pkt->l2_ofs;
		l3_ofs = pkt->l3_ofs;
		l4_ofs = pkt->l4_ofs;
	}
	if (l2_ofs == PKT_OFS_NONE || l3_ofs == PKT_OFS_NONE || l4_ofs == PKT_OFS_NONE)
		return false;
	if (l3_ofs <= l2_ofs || l3_ofs - l2_ofs > GRO_MAX_L2_LEN || l4_ofs <= l3_ofs)
		return false;

	uint8_t *l3 = (uint8_t *)pkt_at(pkt, l3_ofs, IPV4_HDR_LEN);
	if (!l3)
		return false;
	seg->family = l3[0] >> 4;
	if (seg->family == 4) {
		if (((const struct ipv4_hdr *)l3)->proto != IP_PROTO_TCP)
			return false;
		seg->ip_hdr_len = (uint16_t)((l3[0] & 0xf) * 4);
		if (seg->ip_hdr_len < IPV4_HDR_LEN || l3_ofs + seg->ip_hdr_len != l4_ofs)
			return false;
	} else if (seg->family == 6) {
		if (!pkt_at(pkt, l3_ofs, IPV6_HDR_LEN))
			return false;
		uint8_t next = ((const struct ipv6_hdr *)l3)->next_hdr;
		if (!(next == IP_PROTO_TCP && l4_ofs == l3_ofs + IPV6_HDR_LEN) &&
		    !gro_ipv6_l4_is_tcp(pkt, l3_ofs + IPV6_HDR_LEN, next, l4_ofs))
			return false;
		seg->ip_hdr_len = (uint16_t)(l4_ofs - l3_ofs); /* incl. ext headers */
	} else {
		return false;
	}

	struct tcp_hdr *th = (struct tcp_hdr *)pkt_at(pkt, l4_ofs, TCP_HDR_LEN);
	if (!th)
		return false;
	seg->th_len = (uint16_t)((th->doff_res >> 4) * 4);
	if (seg->th_len < TCP_HDR_LEN || !pkt_at(pkt, l4_ofs, seg->th_len))
		return false;

	seg->l2 = pkt->data + l2_ofs;
	seg->l2_len = (uint16_t)(l3_ofs - l2_ofs);
	seg->l3 = l3;
	seg->th = th;
	seg->l3_len = pkt_len(pkt) - l3_ofs;
	seg->payload_ofs = (uint32_t)l4_ofs + seg->th_len;
	seg->payload_len = pkt_len(pkt) - seg->payload_ofs;
	seg->hash = gro_hash(seg);
	return true;
}

/* ---- may this segment be held at all? -------------------------------- */

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

static enum gro_pass_reason gro_ipv4_pass_reason(const uint8_t *l3, uint32_t l3_len)
{
	const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;

	if (ip->ver_ihl != 0x45)
		return GRO_PASS_IP_OPTIONS;
	if (load_be16(&ip->frag_off_be) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK))
		return GRO_PASS_IP_FRAGMENT;
	if (load_be16(&ip->tot_len_be) != l3_len)
		return GRO_PASS_LEN_MISMATCH;
	if (!gro_ipv4_hdr_csum_ok(l3))
		return GRO_PASS_IP_CSUM_BAD;
	return GRO_PASS_REASON_COUNT;
}

static enum gro_pass_reason gro_ipv6_pass_reason(const uint8_t *l3, uint32_t l3_len, uint8_t want_next)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;

	if (ip6->next_hdr != want_next)
		return GRO_PASS_IPV6_EXT;
	if (load_be16(&ip6->payload_len_be) + (uint32_t)IPV6_HDR_LEN != l3_len)
		return GRO_PASS_LEN_MISMATCH;
	return GRO_PASS_REASON_COUNT;
}

static bool gro_tcp_csum_ok_at(const struct pkt *pkt, const uint8_t *l3, uint8_t family, uint32_t l4_ofs)
{
	uint32_t l4_len = pkt_len(pkt) - l4_ofs;
	uint32_t sum;

	if (family == 4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;
		sum = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l4_len);
	} else {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;
		sum = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l4_len);
	}
	if (pkt->nr_frags == 0)
		sum = csum_partial(pkt->data + l4_ofs, l4_len, sum);
	else
		sum = csum_pkt(pkt, l4_ofs, l4_len, sum);
	return csum_fold(sum) == 0;
}

static bool gro_tcp_csum_ok(const struct gro_seg *seg)
{
	const struct pkt *pkt = seg->pkt;
	return gro_tcp_csum_ok_at(pkt, seg->l3, seg->family, (uint32_t)((const uint8_t *)seg->th - pkt->data));
}

/* GRO_PASS_REASON_COUNT when the segment may be held or merged. */
static enum gro_pass_reason gro_seg_pass_reason(const struct gro_seg *seg)
{
	const struct pkt *pkt = seg->pkt;
	enum gro_pass_reason why;

	if (pkt->ol.gso_type != PKT_GSO_NONE || (pkt->ol.flags & PKT_OL_NEEDS_CSUM))
		return GRO_PASS_OFFLOADED;
	if (seg->outer_l3) {
		uint32_t outer_l3_len = pkt_len(pkt) - pkt->l3_ofs;
		if (seg->outer_family == 4)
			why = gro_ipv4_pass_reason(seg->outer_l3, outer_l3_len);
		else
			why = gro_ipv6_pass_reason(seg->outer_l3, outer_l3_len, IP_PROTO_UDP);
		if (why != GRO_PASS_REASON_COUNT)
			return why;
		if (load_be16(&seg->outer_udp->len_be) != pkt_len(pkt) - pkt->l4_ofs)
			return GRO_PASS_LEN_MISMATCH;
	}
	if (seg->family == 4)
		why = gro_ipv4_pass_reason(seg->l3, seg->l3_len);
	else
		why = gro_ipv6_pass_reason(seg->l3, seg->l3_len, IP_PROTO_TCP);
	if (why != GRO_PASS_REASON_COUNT)
		return why;
	if (seg->payload_len == 0)
		return GRO_PASS_PURE_ACK;
	if (!(pkt->ol.flags & PKT_OL_DATA_VALID) && !gro_tcp_csum_ok(seg))
		return GRO_PASS_CSUM_BAD;
	return GRO_PASS_REASON_COUNT;
}

/* ---- same flow? ------------------------------------------------------ */

static bool gro_same_tunnel(const struct gro_seg *a, const struct gro_seg *b)
{
	if (!a->vxlan != !b->vxlan)
		return false;
	if (!a->vxlan)
		return true;
	/* VXLAN flags and VNI words, as vxlan_gro_prepare_receive. */
	if (!bytes_equal(a->vxlan, b->vxlan, VXLAN_HDR_LEN))
		return false;
	const struct pkt_tunnel *ta = &a->pkt->tunnel, *tb = &b->pkt->tunnel;
	size_t addr_len = ta->family == 6 ? 16 : 4;
	if (ta->family != tb->family || ta->src_port != tb->src_port || ta->dst_port != tb->dst_port ||
	    !bytes_equal(ta->src, tb->src, addr_len) || !bytes_equal(ta->dst, tb->dst, addr_len))
		return false;
	if (a->outer_family != b->outer_family || a->outer_l2_len != b->outer_l2_len)
		return false;
	if (!a->outer_l3)
		return true;
	if (!bytes_equal(a->outer_l2, b->outer_l2, a->outer_l2_len))
		return false;
	/* Outer UDP checksums both zero or both non-zero (udp_gro_receive). */
	if (!a->outer_udp->csum != !b->outer_udp->csum)
		return false;
	if (a->outer_family == 4) {
		/* Outer addresses are in pkt->tunnel already compared. */
		return true;
	}
	return ((load_be32(a->outer_l3) ^ load_be32(b->outer_l3)) & GRO_IPV6_FLOW_MASK) == 0;
}

static bool gro_same_flow(const struct gro_seg *a, const struct gro_seg *b)
{
	if (a->hash != b->hash || a->family != b->family || a->l2_len != b->l2_len ||
	    a->pkt->in_port != b->pkt->in_port)
		return false;
	if (load32(&a->th->src_be) != load32(&b->th->src_be))
		return false;
	if (a->family == 4) {
		if (!bytes_equal(a->l3 + 12, b->l3 + 12, 8))
			return false;
	} else {
		if (!bytes_equal(a->l3 + 8, b->l3 + 8, 32) ||
		    ((load_be32(a->l3) ^ load_be32(b->l3)) & GRO_IPV6_FLOW_MASK) != 0)
			return false;
	}
	if (!bytes_equal(a->l2, b->l2, a->l2_len))
		return false;
	return gro_same_tunnel(a, b);
}

/* ---- may this segment join the held run? ----------------------------- */

/* inet_gro_flush / ipv6_gro_flush for one IP header (inner or outer).
 * `fixed_bit` is this header's GRO_FIXEDID_* bit in flow->fixed_id. */
static enum gro_flush_reason gro_ip_flush(struct gro_flow *flow, const uint8_t *held, const uint8_t *seg,
					  uint8_t family, uint8_t fixed_bit)
{
	if (family == 6) {
		const struct ipv6_hdr *h = (const struct ipv6_hdr *)held, *s = (const struct ipv6_hdr *)seg;
		if (h->hop_limit != s->hop_limit ||
		    ((load_be32(&h->ver_tc_flow_be) ^ load_be32(&s->ver_tc_flow_be)) & 0x0ff00000u))
			return GRO_FLUSH_IP_FIELDS;
		return GRO_FLUSH_REASON_COUNT;
	}
	const struct ipv4_hdr *h = (const struct ipv4_hdr *)held, *s = (const struct ipv4_hdr *)seg;
	if (h->ttl != s->ttl || h->tos != s->tos ||
	    ((h->frag_off_be ^ s->frag_off_be) & __builtin_bswap16(IPV4_DF)))
		return GRO_FLUSH_IP_FIELDS;
	/* Mainline rule: the second segment decides whether the run keeps a
	 * fixed ID or increments it; from then on it must stay that way. */
	uint16_t id_offset = (uint16_t)(load_be16(&s->id_be) - load_be16(&h->id_be));
	if (flow->count == 1 && id_offset == 0)
		flow->fixed_id |= fixed_bit;
	uint16_t want = (flow->fixed_id & fixed_bit) ? 0 : flow->count;
	if (id_offset != want)
		return GRO_FLUSH_IP_ID;
	return GRO_FLUSH_REASON_COUNT;
}

static uint32_t gro_seg_nr_frags(const struct gro_seg *seg)
{
	return (seg->payload_ofs < seg->pkt->size) + seg->pkt->nr_frags;
}

/* GRO_FLUSH_REASON_COUNT when `seg` can be appended to `flow`; otherwise
 * why the held run must be completed first. */
static enum gro_flush_reason gro_merge_check(const struct gro_table *table, struct gro_flow *flow,
					     const struct gro_seg *seg)
{
	const struct gro_seg *held = &flow->head;
	const struct tcp_hdr *th = seg->th, *th2 = held->th;
	enum gro_flush_reason why;

	if (th->flags & TCP_CWR)
		return GRO_FLUSH_FLAGS;
	if ((th->flags ^ th2->flags) & (uint8_t)~GRO_TCP_FLAGS_MAY_DIFFER)
		return GRO_FLUSH_FLAGS_CHANGED;
	if (th->ack_be != th2->ack_be)
		return GRO_FLUSH_ACK_CHANGED;
	/* Linux compares the whole flag word (doff, flags, window), so a
	 * window update ends the run too. */
	if (th->window_be != th2->window_be)
		return GRO_FLUSH_WINDOW_CHANGED;
	/* Data offset, NS bit and every option byte (a TSval tick too). */
	if (th->doff_res != th2->doff_res ||
	    !bytes_equal((const uint8_t *)th + TCP_HDR_LEN, (const uint8_t *)th2 + TCP_HDR_LEN,
			 seg->th_len - TCP_HDR_LEN))
		return GRO_FLUSH_OPTIONS_CHANGED;
	if (seg->outer_l3) {
		why = gro_ip_flush(flow, held->outer_l3, seg->outer_l3, seg->outer_family, GRO_FIXEDID_OUTER);
		if (why != GRO_FLUSH_REASON_COUNT)
			return why;
	}
	why = gro_ip_flush(flow, held->l3, seg->l3, seg->family, GRO_FIXEDID_INNER);
	if (why != GRO_FLUSH_REASON_COUNT)
		return why;
	if (seg->payload_len > flow->mss)
		return GRO_FLUSH_OVERSIZED_SEGMENT;
	if (load_be32(&th->seq_be) != flow->next_seq)
		return GRO_FLUSH_SEQ_GAP;
	if (flow->l3_len + seg->payload_len >= table->max_size)
		return GRO_FLUSH_SIZE_CAP;
	if (flow->head.pkt->nr_frags + gro_seg_nr_frags(seg) > PKT_MAX_FRAGS)
		return GRO_FLUSH_FRAGS_FULL;
	return GRO_FLUSH_REASON_COUNT;
}

/* ---- output ----------------------------------------------------------- */

static inline uint16_t gro_ofs_sub(uint16_t ofs, uint16_t delta)
{
	return ofs == PKT_OFS_NONE ? PKT_OFS_NONE : (uint16_t)(ofs - delta);
}

/* Strips the outer headers of a tunnelled frame and makes the inner frame's
 * offsets the plain ones: what a TAP is given. */
static void gro_decap(struct pkt *pkt)
{
	uint16_t inner = pkt->inner_l2_ofs;

	if (pkt->tunnel_ofs == PKT_OFS_NONE || inner == PKT_OFS_NONE || inner > pkt->size)
		return;
	/* pkt_pull() without its offset fix-up: every offset is rewritten. */
	pkt->data += inner;
	pkt->size -= inner;
	pkt->l2_ofs = 0;
	pkt->l3_ofs = gro_ofs_sub(pkt->inner_l3_ofs, inner);
	pkt->l4_ofs = gro_ofs_sub(pkt->inner_l4_ofs, inner);
	pkt->payload_ofs = gro_ofs_sub(pkt->inner_payload_ofs, inner);
	pkt->tunnel_ofs = PKT_OFS_NONE;
	pkt->inner_l2_ofs = pkt->inner_l3_ofs = PKT_OFS_NONE;
	pkt->inner_l4_ofs = pkt->inner_payload_ofs = PKT_OFS_NONE;
}

static void gro_emit(struct gro_table *table, struct pkt *pkt, uint32_t nr_segs)
{
	/* [k] holds 2^k .. 2^(k+1) - 1 segments (nr_segs >= 1). */
	unsigned bucket = 31u - (unsigned)__builtin_clz(nr_segs);

	if (bucket >= GRO_SIZE_BUCKETS)
		bucket = GRO_SIZE_BUCKETS - 1;
	table->stats.segs_per_frame[bucket]++;
	table->stats.frames_out++;
	table->stats.bytes_out += pkt_len(pkt);
	if (nr_segs > 1) {
		table->stats.merged_frames++;
		table->stats.merged_segments += nr_segs;
	}
	table->emit(table->emit_aux, pkt);
}

static void gro_pass(struct gro_table *table, struct pkt *pkt, enum gro_pass_reason why)
{
	table->stats.passthrough[why]++;
	gro_decap(pkt);
	gro_emit(table, pkt, 1);
}

/* Writes the merged frame's headers (inet_gro_complete, tcp4/6_gro_complete)
 * and hands the run's frame out. */
static void gro_complete(struct gro_table *table, struct gro_flow *flow, enum gro_flush_reason why)
{
	struct gro_seg *head = &flow->head;
	struct pkt *pkt = head->pkt;
	uint16_t count = flow->count;

	table->stats.flushes[why]++;
	table->stats.flows_held--;
	table->buckets[flow->bucket].used &= (uint8_t)~(1u << flow->slot);
	head->pkt = NULL;

	if (count == 1) {
		table->stats.passthrough[GRO_PASS_FLUSHED_ALONE]++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		gro_decap(pkt);
		gro_emit(table, pkt, 1);
		return;
	}

	uint32_t l4_len = flow->l3_len - head->ip_hdr_len;
	uint32_t pseudo;
	if (head->family == 4) {
		struct ipv4_hdr *ip = (struct ipv4_hdr *)head->l3;
		store_be16(&ip->tot_len_be, (uint16_t)flow->l3_len);
		gro_ipv4_hdr_csum_set(head->l3);
		pseudo = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l4_len);
	} else {
		struct ipv6_hdr *ip6 = (struct ipv6_hdr *)head->l3;
		store_be16(&ip6->payload_len_be, (uint16_t)(flow->l3_len - IPV6_HDR_LEN));
		pseudo = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l4_len);
	}
	uint16_t partial = csum_fold_nocomplement(pseudo);
	memcpy(&head->th->csum, &partial, sizeof(partial));

	gro_decap(pkt);
	uint16_t l4_ofs = (uint16_t)((uint8_t *)head->th - pkt->data);
	pkt->ol.flags = PKT_OL_NEEDS_CSUM;
	pkt->ol.gso_type = (uint8_t)((head->family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) |
				     (flow->ecn ? PKT_GSO_ECN : 0));
	pkt->ol.gso_size = flow->mss;
	pkt->ol.hdr_len = (uint16_t)(l4_ofs + head->th_len);
	pkt->ol.csum_start = l4_ofs;
	pkt->ol.csum_offset = TCP_CSUM_OFFSET;
	gro_emit(table, pkt, count);
}

bool gro_mark_big_tcp(struct pkt *pkt, uint32_t mtu)
{
	if (pkt->ol.gso_type != PKT_GSO_NONE || !(pkt->ol.flags & PKT_OL_DATA_VALID) ||
	    pkt->l3_ofs == PKT_OFS_NONE || pkt->l4_ofs == PKT_OFS_NONE)
		return false;
	uint32_t l3_len = pkt_len(pkt) - pkt->l3_ofs;
	const uint8_t *l3 = pkt_at(pkt, pkt->l3_ofs, IPV6_HDR_LEN);
	if (l3_len <= mtu || !l3)
		return false;
	uint32_t ip_hdr_len = pkt->l4_ofs - pkt->l3_ofs;
	uint32_t pseudo;
	uint8_t family = l3[0] >> 4;
	if (family == 4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;
		if (ip->proto != IP_PROTO_TCP || ip_hdr_len != IPV4_HDR_LEN || (ip->ver_ihl & 0xf) != 5 ||
		    (load_be16(&ip->frag_off_be) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)) ||
		    load_be16(&ip->tot_len_be) != l3_len)
			return false;
		pseudo = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l3_len - ip_hdr_len);
	} else if (family == 6) {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;
		if (ip6->next_hdr != IP_PROTO_TCP || ip_hdr_len != IPV6_HDR_LEN ||
		    (uint32_t)load_be16(&ip6->payload_len_be) + IPV6_HDR_LEN != l3_len)
			return false;
		pseudo = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l3_len - ip_hdr_len);
	} else {
		return false;
	}
	struct tcp_hdr *th = (struct tcp_hdr *)(uintptr_t)pkt_at(pkt, pkt->l4_ofs, TCP_HDR_LEN);
	if (!th)
		return false;
	uint32_t th_len = (uint32_t)(th->doff_res >> 4) * 4;
	if (th_len < TCP_HDR_LEN || !pkt_at(pkt, pkt->l4_ofs, th_len) || ip_hdr_len + th_len >= mtu ||
	    l3_len - ip_hdr_len <= th_len)
		return false;
	uint16_t seed = csum_fold_nocomplement(pseudo);
	memcpy(&th->csum, &seed, sizeof(seed));
	pkt->ol.flags = PKT_OL_NEEDS_CSUM;
	pkt->ol.gso_type = (uint8_t)((family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) |
				     ((th->flags & TCP_CWR) ? PKT_GSO_ECN : 0));
	pkt->ol.gso_size = (uint16_t)(mtu - ip_hdr_len - th_len);
	pkt->ol.hdr_len = (uint16_t)(pkt->l4_ofs + th_len);
	pkt->ol.csum_start = pkt->l4_ofs;
	pkt->ol.csum_offset = TCP_CSUM_OFFSET;
	return true;
}

/* ---- the table -------------------------------------------------------- */

static uint32_t gro_bucket_index(const struct gro_table *table, uint32_t hash)
{
	return (uint32_t)(((uint64_t)hash * table->n_buckets) >> 32);
}

static struct gro_flow *gro_lookup(struct gro_table *table, const struct gro_seg *seg)
{
	uint32_t b = gro_bucket_index(table, seg->hash);
	const struct gro_bucket *bucket = &table->buckets[b];

	for (unsigned used = bucket->used; used; used &= used - 1) {
		unsigned i = (unsigned)__builtin_ctz(used);
		struct gro_flow *flow = &table->flows[b * table->bucket_slots + i];
		if (bucket->hash[i] == seg->hash && gro_same_flow(&flow->head, seg))
			return flow;
	}
	return NULL;
}

/* A free slot in the segment's bucket, completing the oldest run there if
 * the bucket is full (gro_flush_oldest). */
static struct gro_flow *gro_slot_for(struct gro_table *table, const struct gro_seg *seg)
{
	uint32_t b = gro_bucket_index(table, seg->hash);
	struct gro_bucket *bucket = &table->buckets[b];
	struct gro_flow *flows = &table->flows[b * table->bucket_slots];
	unsigned all = (1u << table->bucket_slots) - 1;
	unsigned free_slots = ~(unsigned)bucket->used & all;
	struct gro_flow *flow;

	if (free_slots) {
		flow = &flows[__builtin_ctz(free_slots)];
	} else {
		flow = &flows[0];
		for (uint32_t i = 1; i < table->bucket_slots; i++)
			if (flows[i].age < flow->age)
				flow = &flows[i];
		gro_complete(table, flow, GRO_FLUSH_TABLE_FULL);
	}
	flow->bucket = (uint16_t)b;
	flow->slot = (uint8_t)(flow - flows);
	bucket->hash[flow->slot] = seg->hash;
	bucket->used |= (uint8_t)(1u << flow->slot);
	return flow;
}

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

static void gro_start_run(struct gro_table *table, const struct gro_seg *seg, uint64_t now_ns)
{
	struct gro_flow *flow = gro_slot_for(table, seg);

	flow->head = *seg;
	flow->first_ns = now_ns;
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

/* Appends the segment's payload to the run as frags owned by the segment. */
static void gro_merge(struct gro_flow *flow, const struct gro_seg *seg)
{
	struct pkt *head = flow->head.pkt, *pkt = seg->pkt;

	if (seg->payload_ofs < pkt->size)
		pkt_add_frag(head, pkt->data + seg->payload_ofs, pkt->size - seg->payload_ofs, pkt);
	for (uint16_t i = 0; i < pkt->nr_frags; i++)
		pkt_add_frag(head, pkt->frags[i].data, pkt->frags[i].size, pkt->frags[i].owner);
	flow->head.th->flags |= seg->th->flags & (TCP_FIN | TCP_PSH);
	flow->next_seq += seg->payload_len;
	flow->l3_len += seg->payload_len;
	flow->count++;
	pkt_free(pkt); /* the frags hold what is still needed */
	/* The slow path may have decided a fixed ID: the fast path follows. */
	if (flow->fast)
		gro_expect_next(flow);
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
	    ((pkt->ol.flags & PKT_OL_NEEDS_CSUM) | pkt->ol.gso_type) || now_ns - flow->first_ns >= table->hold_ns)
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
static __attribute__((noinline)) void gro_receive_slow(struct gro_table *table, struct pkt *pkt, uint64_t now_ns)
{
	struct gro_seg seg;
	struct gro_flow *flow;

	if (!gro_seg_locate(pkt, &seg)) {
		gro_pass(table, pkt, GRO_PASS_NOT_TCP);
		return;
	}
	flow = gro_lookup(table, &seg);
	if (flow && now_ns - flow->first_ns >= table->hold_ns) {
		gro_complete(table, flow, GRO_FLUSH_TIMEOUT);
		flow = NULL;
	}

	enum gro_pass_reason pass = gro_seg_pass_reason(&seg);
	if (pass != GRO_PASS_REASON_COUNT) {
		/* Keep the flow in order: what is held goes out first. */
		if (flow)
			gro_complete(table, flow, GRO_FLUSH_PASSTHROUGH);
		gro_pass(table, pkt, pass);
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
		gro_pass(table, pkt, GRO_PASS_FLAGS);
		return;
	}
	gro_start_run(table, &seg, now_ns);
}

static inline __attribute__((always_inline)) void gro_receive_one(struct gro_table *table, struct pkt *pkt,
								   uint64_t now_ns)
{
	struct gro_flow *last = table->last;

	table->stats.segments_in++;
	if (last && last->head.pkt && gro_fast_merge(table, last, pkt, now_ns))
		return;
	gro_receive_slow(table, pkt, now_ns);
}

void gro_receive(struct gro_table *table, struct pkt *pkt, uint64_t now_ns)
{
	gro_receive_one(table, pkt, now_ns);
}

void gro_flush(struct gro_table *table, enum gro_flush_scope scope, uint64_t now_ns)
{
	for (uint32_t b = 0; b < table->n_buckets && table->stats.flows_held; b++) {
		for (unsigned used = table->buckets[b].used; used; used &= used - 1) {
			struct gro_flow *flow = &table->flows[b * table->bucket_slots + (unsigned)__builtin_ctz(used)];
			if (scope == GRO_FLUSH_ALL)
				gro_complete(table, flow, GRO_FLUSH_BATCH_END);
			else if (now_ns - flow->first_ns >= table->hold_ns)
				gro_complete(table, flow, GRO_FLUSH_TIMEOUT);
		}
	}
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

static inline __attribute__((always_inline)) void gro_burst(struct gro_table *table, struct pkt **pkts, uint32_t n,
							      uint64_t now_ns)
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
		gro_receive_one(table, pkts[i], now_ns);
	}
}

/* The same loop twice: built for the baseline x86-64 and, where the CPU
 * has it, with AVX2, whose 32-byte compares and three-operand forms take
 * the fast path's header compare in a third of the instructions.  Chosen
 * once by gro_create(). */
#if defined(__x86_64__)
static __attribute__((target("avx2"))) void gro_burst_avx2(struct gro_table *table, struct pkt **pkts, uint32_t n,
							   uint64_t now_ns)
{
	gro_burst(table, pkts, n, now_ns);
}
#endif

static void gro_burst_generic(struct gro_table *table, struct pkt **pkts, uint32_t n, uint64_t now_ns)
{
	gro_burst(table, pkts, n, now_ns);
}

void gro_receive_burst(struct gro_table *table, struct pkt **pkts, uint32_t n, uint64_t now_ns)
{
#if defined(__x86_64__)
	if (table->avx2) {
		gro_burst_avx2(table, pkts, n, now_ns);
		return;
	}
#endif
	gro_burst_generic(table, pkts, n, now_ns);
}

void gro_receive_batch(struct gro_table *table, struct pkt **pkts, uint32_t n, uint64_t now_ns)
{
	gro_receive_burst(table, pkts, n, now_ns);
	gro_flush(table, GRO_FLUSH_ALL, now_ns);
}

uint64_t gro_next_deadline(const struct gro_table *table)
{
	uint64_t deadline = UINT64_MAX;

	for (uint32_t i = 0; i < table->n_flows; i++) {
		const struct gro_flow *flow = &table->flows[i];
		if (flow->head.pkt && flow->first_ns + table->hold_ns < deadline)
			deadline = flow->first_ns + table->hold_ns;
	}
	return deadline;
}
