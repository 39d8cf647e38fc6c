/* gro_diff's cases: TCP segment sequences built with the unit tests' frame
 * builder, and the table that says for each which families run and how it
 * is compared (gro_diff.h). */
#include "gro_diff.h"

/* ---- cases ------------------------------------------------------------- */


/* TCP timestamp options (NOP NOP TS): the second one is a TSval tick. */
static const uint8_t ts_opt_a[12] = { 1, 1, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 7 };
static const uint8_t ts_opt_b[12] = { 1, 1, 8, 10, 0, 0, 0x10, 1, 0, 0, 0, 7 };

/* One flow's template: seq and IP ID advance per appended segment. */

static void stream_init(struct stream *s, uint8_t family, uint16_t src_port, const uint8_t *dst_mac)
{
	fb_frame_init(&s->t, family, IP_PROTO_TCP);
	memcpy(s->t.dst_mac, dst_mac, 6);
	/* 198.51.100.2 -> .3 (the tap has .1): not local and forwarding is
	 * off, so after GRO and AF_PACKET the stack drops them quietly (no
	 * RSTs).  IPv6 likewise 2001:db8::2 -> ::3. */
	if (family == 4) {
		const uint8_t src[4] = { 198, 51, 100, 2 }, dst[4] = { 198, 51, 100, 3 };
		memcpy(s->t.src_ip, src, 4);
		memcpy(s->t.dst_ip, dst, 4);
	} else {
		s->t.src_ip[0] = s->t.dst_ip[0] = 0x20;
		s->t.src_ip[1] = s->t.dst_ip[1] = 0x01;
		s->t.src_ip[2] = s->t.dst_ip[2] = 0x0d;
		s->t.src_ip[3] = s->t.dst_ip[3] = 0xb8;
		s->t.src_ip[15] = 2;
		s->t.dst_ip[15] = 3;
	}
	s->t.src_port = src_port;
	s->t.dst_port = 5001;
	s->t.seq = 100000;
	s->t.ack = 777;
	s->t.ip_id = 1000;
	s->t.tcp_opts = ts_opt_a;
	s->t.tcp_opts_len = sizeof(ts_opt_a);
}

/* Appends the next segment of `s` with `payload` bytes; the returned frame
 * may be tweaked (flags...) without touching the stream. */
static struct fb_frame *add(struct seg_list *l, struct stream *s, size_t payload)
{
	if (l->n >= MAX_SEGS) {
		fprintf(stderr, "gro_diff: case too long\n");
		exit(2);
	}
	struct fb_frame *f = &l->f[l->n++];
	*f = s->t;
	f->payload_len = payload;
	f->payload_seed = (uint8_t)s->t.seq;
	s->t.seq += (uint32_t)payload;
	s->t.ip_id++;
	return f;
}

void add_run(struct seg_list *l, struct stream *s, unsigned count, size_t payload)
{
	for (unsigned i = 0; i < count; i++)
		add(l, s, payload);
}


/* Outer headers of the VXLAN cases: to the tap's address, where a vxlan
 * device listens on port 4789 (the script makes it). */
void vxlan_outer(struct fb_vxlan *vx, const uint8_t *dst_mac)
{
	static const uint8_t src[4] = { 198, 51, 100, 2 }, dst[4] = { 198, 51, 100, 1 };
	fb_vxlan_init(vx, 4, 42);
	memcpy(vx->dst_mac, dst_mac, 6);
	memcpy(vx->src_ip, src, 4);
	memcpy(vx->dst_ip, dst, 4);
	vx->ip_id = 3000;
}

/* Every segment's outer headers: `vx`, the IPv4 ID advancing per segment
 * in send order, as a sender's GSO makes them. */
void seg_list_set_outer(struct seg_list *l, const struct fb_vxlan *vx)
{
	for (unsigned i = 0; i < MAX_SEGS; i++) {
		l->outer[i] = *vx;
		l->outer[i].ip_id = (uint16_t)(vx->ip_id + i);
	}
}

void one_stream(const struct case_ctx *c, struct stream *s)
{
	stream_init(s, c->family, 40000, c->dst_mac);
}

static void case_in_order(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 8, MSS);
}

static void case_short_last(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 6, MSS);
	add(c->l, &s, 700);     /* ends the run */
	add_run(c->l, &s, 3, MSS); /* a new one */
}

static void case_psh_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH;
	add_run(c->l, &s, 4, MSS);
}

static void case_psh_first(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH; /* never starts a run */
	add_run(c->l, &s, 4, MSS);
}

static void case_fin_last(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_FIN;
}

static void case_reorder(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 8, MSS);
	struct fb_frame tmp = c->l->f[3];
	c->l->f[3] = c->l->f[4];
	c->l->f[4] = tmp;
}

static void case_retransmit(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	c->l->f[c->l->n] = c->l->f[2]; /* segment 2 again */
	c->l->n++;
	add_run(c->l, &s, 3, MSS);
}

static void case_two_flows(const struct case_ctx *c)
{
	struct stream a, b;
	stream_init(&a, c->family, 40000, c->dst_mac);
	stream_init(&b, c->family, 40001, c->dst_mac);
	b.t.seq = 5000000;
	for (int i = 0; i < 6; i++) {
		add(c->l, &a, MSS);
		add(c->l, &b, MSS);
	}
}

static void case_four_flows_psh(const struct case_ctx *c)
{
	struct stream s[4];
	for (int k = 0; k < 4; k++) {
		stream_init(&s[k], c->family, (uint16_t)(40000 + k), c->dst_mac);
		s[k].t.seq = 1000000u * (uint32_t)(k + 1);
	}
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 4; k++) {
			struct fb_frame *f = add(c->l, &s[k], MSS);
			if (i == k)
				f->tcp_flags |= TCP_PSH;
		}
}

static void case_ip_id_jump(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.ip_id += 100;
	add_run(c->l, &s, 4, MSS);
}

static void case_no_df_inc(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.frag_off = 0; /* IDs increment, DF clear: the classic case */
	add_run(c->l, &s, 6, MSS);
}

static void case_ip_id_wrap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.ip_id = 0xfffd;
	add_run(c->l, &s, 6, MSS);
}

/* Fixed IDs after the first segment: ID of segment 1 equals segment 0. */
static void fixed_id(const struct case_ctx *c, bool df)
{
	struct stream s;
	one_stream(c, &s);
	if (!df)
		s.t.frag_off = 0;
	for (int i = 0; i < 6; i++) {
		add(c->l, &s, MSS);
		s.t.ip_id--; /* undo the increment */
	}
}

static void case_fixed_id_df(const struct case_ctx *c) { fixed_id(c, true); }
static void case_fixed_id_nodf(const struct case_ctx *c) { fixed_id(c, false); }

/* Fixed for a while, then incrementing: mainline decides at the 2nd
 * segment. */
static void case_fixed_then_inc(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	for (int i = 0; i < 3; i++) {
		add(c->l, &s, MSS);
		s.t.ip_id--;
	}
	add_run(c->l, &s, 3, MSS);
}

static void case_df_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.frag_off = 0;
	add_run(c->l, &s, 3, MSS);
}

static void case_ts_tick(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.tcp_opts = ts_opt_b;
	add_run(c->l, &s, 4, MSS);
}

static void case_no_options(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_opts = NULL;
	s.t.tcp_opts_len = 0;
	add_run(c->l, &s, 8, MSS + 12);
}

static void case_options_dropped(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_opts = NULL; /* doff changes */
	s.t.tcp_opts_len = 0;
	add_run(c->l, &s, 3, MSS);
}

static void case_ttl_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.ttl = 63;
	add_run(c->l, &s, 4, MSS);
}

static void case_tos_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tos = 0x10;
	add_run(c->l, &s, 3, MSS);
}

static void case_ecn_ce_mark(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tos = 0x02; /* ECT(0) */
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tos = 0x03; /* CE on one segment */
	add_run(c->l, &s, 3, MSS);
}

static void case_flow_label_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.ipv6_label = 0x12345;
	add_run(c->l, &s, 3, MSS);
	s.t.ipv6_label = 0x54321;
	add_run(c->l, &s, 3, MSS);
}

static void case_ack_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.ack += 1000;
	add_run(c->l, &s, 3, MSS);
}

static void case_window_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.window = 1000; /* window is not compared: still one run */
	add_run(c->l, &s, 3, MSS);
}

static void case_ece_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_flags |= TCP_ECE;
	add_run(c->l, &s, 6, MSS);
}

static void case_ece_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_flags |= TCP_ECE;
	add_run(c->l, &s, 3, MSS);
}

static void case_cwr_first(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add(c->l, &s, MSS)->tcp_flags |= TCP_CWR; /* gso_type gets ECN */
	add_run(c->l, &s, 5, MSS);
}

static void case_cwr_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_CWR;
	add_run(c->l, &s, 3, MSS);
}

static void case_urg_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_URG;
	add_run(c->l, &s, 3, MSS);
}

static void case_pure_acks(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	for (int i = 0; i < 5; i++) {
		add(c->l, &s, 0);
		s.t.ack += 2896;
	}
}

static void case_data_then_ack(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, 0); /* same ack, no payload */
	add_run(c->l, &s, 3, MSS);
}

static void case_mss_grows(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, 1000);
	add_run(c->l, &s, 3, MSS); /* larger than the run's mss: flush */
}

static void case_small_mss(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 12, 536);
}

/* 50 full segments: the 64 KB cap (gro_max_size 65536) splits them. */
static void case_size_cap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 50, MSS);
}

static void case_bad_csum_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->csum = FB_CSUM_BAD;
	add_run(c->l, &s, 3, MSS);
}

static void case_padded_short(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, 1)->pad_to = 60; /* Ethernet padding after 1 byte */
}

static void case_window_update_psh(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.window = 65000;
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH;
}

static void case_ns_bit_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_flags |= TCP_NS; /* the reserved/AE bit next to doff */
	add_run(c->l, &s, 3, MSS);
}

static void case_rst_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_RST;
	add_run(c->l, &s, 3, MSS);
}

static void case_seq_gap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.seq += MSS; /* one segment lost */
	add_run(c->l, &s, 4, MSS);
}

static void case_ip_options(const struct case_ctx *c)
{
	static const uint8_t nop_eol[4] = { 1, 1, 1, 0 };
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	struct fb_frame *f = add(c->l, &s, MSS - 4);
	f->ip_opts = nop_eol;
	f->ip_opts_len = sizeof(nop_eol);
	add_run(c->l, &s, 3, MSS);
}

/* IPv6 destination options on every segment: the kernel pulls the
 * extension headers and GROs through them (ipv6_gro_receive). */
static void case_ipv6_dstopts_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.n_ipv6_ext = 1;
	s.t.ipv6_ext[0].type = IP_PROTO_DSTOPTS;
	s.t.ipv6_ext[0].len8 = 0;
	add_run(c->l, &s, 6, MSS - 8);
}

/* More flows than one kernel hash bucket holds (8): which run is evicted
 * depends on the bucket hash, so only totals are comparable here. */
static void case_ten_flows(const struct case_ctx *c)
{
	struct stream s[10];
	for (int k = 0; k < 10; k++) {
		stream_init(&s[k], c->family, (uint16_t)(41000 + k), c->dst_mac);
		s[k].t.seq = 1000000u * (uint32_t)(k + 1);
	}
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 10; k++)
			add(c->l, &s[k], MSS);
}

static void case_cwr_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_flags |= TCP_CWR;
	add_run(c->l, &s, 4, MSS);
}

/* VXLAN-only: 6 segments of one flow, the outer headers of segments 3..5
 * changed by `change`. */
static void outer_change(const struct case_ctx *c, void (*change)(struct fb_vxlan *vx, unsigned i))
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 6, MSS);
	for (unsigned i = 0; i < 6; i++)
		change(&c->l->outer[i], i);
}

static void set_ttl(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->ttl = 63; }
static void set_tos(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->tos = 0x10; }
static void set_df_off(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->frag_off = 0; }
static void set_id_jump(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->ip_id += 50; }
static void set_id_fixed(struct fb_vxlan *vx, unsigned i) { vx->ip_id = (uint16_t)(vx->ip_id - i); }
static void set_vni(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->vni = 43; }
static void set_sport(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->src_port = 49153; }
static void set_csum_all(struct fb_vxlan *vx, unsigned i) { (void)i; vx->udp_csum = true; }
static void set_csum_some(struct fb_vxlan *vx, unsigned i) { vx->udp_csum = i >= 3; }

static void case_vx_outer_ttl(const struct case_ctx *c) { outer_change(c, set_ttl); }
static void case_vx_outer_tos(const struct case_ctx *c) { outer_change(c, set_tos); }
static void case_vx_outer_df(const struct case_ctx *c) { outer_change(c, set_df_off); }
static void case_vx_outer_id_jump(const struct case_ctx *c) { outer_change(c, set_id_jump); }
static void case_vx_outer_id_fixed(const struct case_ctx *c) { outer_change(c, set_id_fixed); }
static void case_vx_vni_change(const struct case_ctx *c) { outer_change(c, set_vni); }
static void case_vx_sport_change(const struct case_ctx *c) { outer_change(c, set_sport); }
static void case_vx_udp_csum(const struct case_ctx *c) { outer_change(c, set_csum_all); }
static void case_vx_udp_csum_mixed(const struct case_ctx *c) { outer_change(c, set_csum_some); }


/* Inner families; FVX: also run with each frame in VXLAN (option -x);
 * VXO: only in VXLAN (the case changes outer headers). */

/* Where the kernel legitimately differs from ours, the case says why and
 * how much of the output is still compared. */

/* The cases where the kernel's CWR handling matters.  It changed twice:
 *  - up to 6.17: a CWR segment flushes the held run and may start a run;
 *    later segments without CWR merge into it (gso_type gets ECN);
 *  - 6.18 (AccECN series, "flags ^ th2" mask no longer excludes CWR): a
 *    CWR change also flushes, so a CWR segment always travels alone;
 *  - 7.0 (ab4c8b6f "gro: flushing when CWR is set negatively affects
 *    AccECN"): CWR no longer flushes by itself; runs of CWR segments
 *    merge, a CWR change flushes.
 * Ours follows shared/reference/gro-gso-rules.md (the first form), which
 * GSO undoes exactly (TCP_ECN: CWR on the first segment only). */
#define CWR_NOTE "the kernel's CWR rule is version-specific (<=6.17 / 6.18 / 7.0 differ)"

const struct gd_case gd_cases[] = {
	{ "in_order", case_in_order, F4 | F6 | FVX },
	{ "short_last", case_short_last, F4 | F6 | FVX },
	{ "psh_middle", case_psh_middle, F4 | F6 | FVX },
	{ "psh_first", case_psh_first, F4 | F6 },
	{ "fin_last", case_fin_last, F4 | F6 },
	{ "reorder_swap", case_reorder, F4 | F6 | FVX },
	{ "retransmit", case_retransmit, F4 | F6 },
	{ "two_flows", case_two_flows, F4 | F6 | FVX },
	{ "four_flows_psh", case_four_flows_psh, F4 | F6 },
	{ "ip_id_jump", case_ip_id_jump, F4 | FVX },
	{ "ip_id_wrap", case_ip_id_wrap, F4 },
	{ "no_df_inc", case_no_df_inc, F4 | FVX },
	{ "fixed_id_df", case_fixed_id_df, F4 | FVX },
	{ "fixed_id_nodf", case_fixed_id_nodf, F4 },
	{ "fixed_then_inc", case_fixed_then_inc, F4 },
	{ "df_change", case_df_change, F4 },
	{ "ts_tick", case_ts_tick, F4 | F6 | FVX },
	{ "no_options", case_no_options, F4 | F6 },
	{ "options_dropped", case_options_dropped, F4 | F6 },
	{ "ttl_change", case_ttl_change, F4 | F6 | FVX },
	{ "tos_change", case_tos_change, F4 | F6 },
	{ "ecn_ce_mark", case_ecn_ce_mark, F4 | F6 },
	{ "flow_label_change", case_flow_label_change, F6 },
	{ "ack_change", case_ack_change, F4 | F6 },
	{ "window_change", case_window_change, F4 | F6 },
	{ "ece_all", case_ece_all, F4 | F6 },
	{ "ece_middle", case_ece_middle, F4 | F6 },
	{ "cwr_first", case_cwr_first, F4 | F6, CMP_REPORT, CWR_NOTE, "6" },
	{ "cwr_middle", case_cwr_middle, F4 | F6, CMP_REPORT, CWR_NOTE, "3,4" },
	{ "cwr_all", case_cwr_all, F4 | F6, CMP_REPORT, CWR_NOTE, "1,1,1,1" },
	{ "urg_middle", case_urg_middle, F4 | F6 },
	{ "pure_acks", case_pure_acks, F4 | F6 | FVX },
	{ "data_then_ack", case_data_then_ack, F4 | F6 },
	{ "mss_grows", case_mss_grows, F4 | F6 },
	{ "small_mss", case_small_mss, F4 | F6 },
	{ "size_cap", case_size_cap, F4 | F6 | FVX },
	/* The kernel checks the TCP checksum (and IPv4 options) before it
	 * looks up the flow, so such a segment goes up at once, ahead of the
	 * run still held; ours completes the run first so that the flow
	 * stays in order (gro.h "Never held").  Same frames, other order. */
	{ "bad_csum_middle", case_bad_csum_middle, F4 | F6, CMP_ANY_ORDER,
	  "kernel delivers a bad-checksum segment ahead of the held run" },
	{ "ip_options", case_ip_options, F4, CMP_ANY_ORDER,
	  "kernel delivers an IPv4-options segment ahead of the held run" },
	{ "padded_short", case_padded_short, F4 },
	{ "window_update_psh", case_window_update_psh, F4 | F6 },
	{ "ns_bit_middle", case_ns_bit_middle, F4 | F6 },
	{ "rst_middle", case_rst_middle, F4 | F6 },
	{ "seq_gap", case_seq_gap, F4 | F6 },
	/* A known limitation of ours (gro.h: IPv6 extension headers are
	 * never held); the kernel merges through identical ones. */
	{ "ipv6_dstopts_all", case_ipv6_dstopts_all, F6, CMP_REPORT,
	  "ours never holds IPv6 with extension headers; the kernel merges through them",
	  "1,1,1,1,1,1" },
	/* The kernel holds at most 8 runs per hash bucket and evicts the
	 * oldest of the bucket; tun gives these skbs no hash, so all ten
	 * flows share bucket 0 and evictions depend on the bucket layout,
	 * which ours does not copy (its own hash, 8 x 8). */
	{ "outer_ttl", case_vx_outer_ttl, F4 | F6 | VXO },
	{ "outer_tos", case_vx_outer_tos, F4 | VXO },
	{ "outer_df_off", case_vx_outer_df, F4 | VXO },
	{ "outer_id_jump", case_vx_outer_id_jump, F4 | F6 | VXO },
	{ "outer_id_fixed", case_vx_outer_id_fixed, F4 | F6 | VXO },
	/* Another VNI or outer source port is another flow with the same
	 * inner ports: the order between the two runs is the hash table's. */
	{ "vni_change", case_vx_vni_change, F4 | VXO, CMP_ANY_ORDER,
	  "two VNIs are two flows; the order between flows is the table's" },
	{ "outer_sport_change", case_vx_sport_change, F4 | VXO, CMP_ANY_ORDER,
	  "two outer source ports are two flows; the order between flows is the table's" },
	{ "outer_udp_csum", case_vx_udp_csum, F4 | F6 | VXO },
	{ "outer_udp_csum_mixed", case_vx_udp_csum_mixed, F4 | VXO },
	{ "ten_flows", case_ten_flows, F4, CMP_REPORT,
	  "eviction from a full kernel hash bucket depends on the kernel's hash" },
};
const size_t gd_n_cases = sizeof(gd_cases) / sizeof(gd_cases[0]);
