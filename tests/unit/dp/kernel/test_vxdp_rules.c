/* Unit tests of flower rules as cached decisions in the kernel program
 * (dp/kernel/bpf/vxdp_rules.h) and their plumbing (dp/kernel/kdp_rules.c),
 * against the running kernel with BPF_PROG_TEST_RUN: a miss goes up whole
 * on the perf buffer with the key flow_extract would make, a hit runs the
 * cached actions and counts the entry, an entry of an older generation is
 * a miss, each action kind does what it says (the programs record what
 * they ran in map `rtrace` when the loader sets vxdp_record), a frame the
 * key parser does not understand always goes up, and a re-injected frame
 * runs the decision of its slot only when the sequence matches; the same
 * on the vxlan device's program (a vxlan port's ingress): the key's tunnel
 * section from the tunnel key, the remote a part of the key, a VNI not in
 * rvnis not on the rules path, a re-injected frame switched in its slot's
 * VNI.
 *
 * Root only (else skipped); runs in a network namespace of its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_link.h"
#include "dp/kernel/kdp_rules.h"
#include "kdp_netns.h"

enum { VNI = 99 };

static const uint8_t MAC1[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t MAC2[6] = { 0x02, 0, 0, 0, 0, 0x02 };

/* rtrace as the program writes it (vxdp_rules.h). */
struct rtrace {
	uint32_t n;
	uint32_t kind[VXDP_RACT_MAX + 1];
	uint32_t ifindex[VXDP_RACT_MAX + 1];
	uint32_t path;
};

struct fx {
	struct kdp *k;
	struct kdp_rules *r;
	uint32_t p1, p2, tun;
	unsigned n_up;
	struct vxdp_rupcall up;
	uint8_t bytes[256];
};

static bool in_netns;

static int setup(void **state)
{
	if (!in_netns)
		return 0;
	struct fx *fx = calloc(1, sizeof(*fx));
	char why[256] = "";
	assert_int_equal(kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "vxdpt1" }, &fx->k, why, sizeof(why)), 0);
	assert_int_equal(kdp_rules_open(fx->k, &fx->r, why, sizeof(why)), 0);
	fx->tun = kdp_tun_ifindex(fx->k);
	fx->p1 = if_nametoindex("p1");
	fx->p2 = if_nametoindex("p2");
	struct kdp_port_opts veth = { .vni = VNI, .flags = VXDP_PORT_VETH };
	assert_int_equal(kdp_port_add(fx->k, fx->p1, &veth), 0);
	assert_int_equal(kdp_port_add(fx->k, fx->p2, &veth), 0);
	struct vxdp_flood_ent fl[2] = { { .ifindex = fx->p1, .flags = VXDP_FDB_VETH },
					{ .ifindex = fx->p2, .flags = VXDP_FDB_VETH } };
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 2), 0);
	struct vxdp_fdb_val v1 = { .ifindex = fx->p1, .flags = VXDP_FDB_VETH };
	struct vxdp_fdb_val v2 = { .ifindex = fx->p2, .flags = VXDP_FDB_VETH };
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC1, &v1), 0);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC2, &v2), 0);
	assert_int_equal(kdp_port_flags(fx->k, fx->p1, VXDP_PORT_RULES, true), 0);
	assert_int_equal(kdp_rules_gen_set(fx->r, 5), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	if (fx) {
		kdp_rules_close(fx->r);
		kdp_close(fx->k);
		free(fx);
	}
	return 0;
}

/* MAC1 -> MAC2, IPv4 192.0.2.1 -> 192.0.2.2 TTL 64 TOS 0x10, UDP
 * sport -> dport, 18 bytes of payload: 60 bytes. */
/* MAC1 -> MAC2, EtherType `type`. */
static void eth_header(uint8_t *f, uint16_t type)
{
	memcpy(f, MAC2, 6);
	memcpy(f + 6, MAC1, 6);
	f[12] = (uint8_t)(type >> 8), f[13] = (uint8_t)type;
}

static size_t udp_frame(uint8_t *f, uint16_t sport, uint16_t dport)
{
	memset(f, 0, 60);
	eth_header(f, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[1] = 0x10;
	ip[3] = 46;     /* total length */
	ip[8] = 64;
	ip[9] = 17;
	inet_pton(AF_INET, "192.0.2.1", ip + 12);
	inet_pton(AF_INET, "192.0.2.2", ip + 16);
	uint8_t *u = ip + 20;
	u[0] = (uint8_t)(sport >> 8), u[1] = (uint8_t)sport;
	u[2] = (uint8_t)(dport >> 8), u[3] = (uint8_t)dport;
	u[5] = 26;      /* UDP length */
	return 60;
}

/* prog run on a frame that came in by in_ifindex (skb->ingress_ifindex). */
static struct rtrace run_from(struct fx *fx, const char *prog, uint32_t ifindex, uint32_t in_ifindex, uint32_t mark,
			      const void *data, size_t len, int *verdict)
{
	int tfd = kdp_map_fd(fx->k, "rtrace");
	uint32_t zero = 0;
	struct rtrace t = { 0 };
	assert_int_equal(bpf_map_update_elem(tfd, &zero, &t, BPF_ANY), 0);
	struct __sk_buff ctx = { .ifindex = ifindex, .ingress_ifindex = in_ifindex, .mark = mark };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	assert_int_equal(bpf_prog_test_run_opts(kdp_prog_fd(fx->k, prog), &o), 0);
	assert_int_equal(bpf_map_lookup_elem(tfd, &zero, &t), 0);
	*verdict = (int)o.retval;
	return t;
}

static struct rtrace run(struct fx *fx, const char *prog, uint32_t ifindex, uint32_t mark, const void *data,
			 size_t len, int *verdict)
{
	return run_from(fx, prog, ifindex, 0, mark, data, len, verdict);
}

static struct rtrace run_port(struct fx *fx, const void *data, size_t len, int *verdict)
{
	return run(fx, "vxdp_port_ingress", fx->p1, 0, data, len, verdict);
}

static void on_up(void *aux, const struct vxdp_rupcall *u, const uint8_t *bytes)
{
	struct fx *fx = aux;
	fx->n_up++;
	fx->up = *u;
	memcpy(fx->bytes, bytes, u->cap_len < sizeof(fx->bytes) ? u->cap_len : sizeof(fx->bytes));
}

static struct vxdp_rstats stats(struct fx *fx)
{
	struct vxdp_rstats s;
	assert_int_equal(kdp_rules_stats_read(fx->r, fx->p1, &s), 0);
	return s;
}

static void test_miss_goes_up_whole_with_the_key(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	int v;
	size_t len = udp_frame(f, 1234, 5001);
	struct rtrace t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 2);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->n_up, 1);
	assert_int_equal(fx->up.ifindex, fx->p1);
	assert_int_equal(fx->up.len, 60);
	assert_int_equal(fx->up.cap_len, 60);
	assert_memory_equal(fx->bytes, f, 60);
	assert_int_equal(fx->up.cacheable, 1);
	assert_int_equal(fx->up.gen, 5);
	const struct vxdp_rkey *k = &fx->up.key;
	assert_int_equal(k->ifindex, fx->p1);
	assert_memory_equal(k->dl_src, MAC1, 6);
	assert_int_equal(k->dl_type, 0x0800);
	assert_int_equal(k->nw_family, 4);
	assert_int_equal(k->nw_proto, 17);
	assert_int_equal(k->nw_tos, 0x10);
	assert_int_equal(k->nw_ttl, 64);
	assert_int_equal(k->tp_src, 1234);
	assert_int_equal(k->tp_dst, 5001);
	struct vxdp_rstats s = stats(fx);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.upcalls, 1);
	assert_int_equal(s.hits, 0);
}

/* The program's own key of f, taken from its upcall. */
static struct vxdp_rkey upcalled_key(struct fx *fx, const uint8_t *f, size_t len)
{
	int v;
	run_port(fx, f, len, &v);
	fx->n_up = 0;
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	return fx->up.key;
}

/* Installs the program's own key of f (taken from an upcall) -> act. */
static struct vxdp_rkey install(struct fx *fx, const uint8_t *f, size_t len, uint64_t gen, uint32_t slot,
				const struct vxdp_ract *act, uint32_t n)
{
	upcalled_key(fx, f, len);
	struct vxdp_rval val = { .gen = gen, .slot = slot, .n = n };
	if (n)
		memcpy(val.act, act, n * sizeof(*act));
	assert_int_equal(kdp_rules_count_zero(fx->r, slot), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, &fx->up.key, &val, NULL, NULL), 0);
	return fx->up.key;
}

static void test_hit_runs_the_cached_drop_and_counts_then_stale_generation_misses(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	size_t len = udp_frame(f, 1234, 5001);
	struct vxdp_ract drop = { .kind = VXDP_RA_DROP };
	install(fx, f, len, 5, 7, &drop, 1);
	int v;
	for (int i = 0; i < 3; i++) {
		struct rtrace t = run_port(fx, f, len, &v);
		assert_int_equal(v, TC_ACT_SHOT);
		assert_int_equal(t.path, 1);
		assert_int_equal(t.n, 1);
		assert_int_equal(t.kind[0], VXDP_RA_DROP);
	}
	struct vxdp_rcount c;
	assert_int_equal(kdp_rules_count_read(fx->r, 7, &c), 0);
	assert_int_equal(c.packets, 3);
	assert_int_equal(c.bytes, 180);
	assert_int_equal(stats(fx).hits, 3);
	assert_int_equal(stats(fx).rule_drops, 3);
	/* Another flow (source port) is not that entry. */
	uint8_t g[60];
	run_port(fx, g, udp_frame(g, 1235, 5001), &v);
	assert_int_equal(stats(fx).misses, 2);
	/* A rule change: generation 6, the entry is stale, the frame goes up. */
	assert_int_equal(kdp_rules_gen_set(fx->r, 6), 0);
	struct rtrace t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 2);
	assert_int_equal(stats(fx).stale, 1);
	assert_int_equal(kdp_rules_count_read(fx->r, 7, &c), 0);
	assert_int_equal(c.packets, 3);
}

/* Megaflows: with the port's mask of the current generation leaving
 * tp_src out, one entry under the masked key serves every source port;
 * with a mask of another generation the program looks the whole key up
 * (a miss for another source port, a hit for the very key). */
static void test_masked_key_serves_every_source_port(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	int v;
	struct vxdp_rkey key = upcalled_key(fx, f, udp_frame(f, 1234, 5001));
	struct vxdp_rmask m = { .gen = 5 };
	memset(&m.mask, 0xff, sizeof(m.mask));
	m.mask.tp_src = 0;
	struct vxdp_rmask_key mk = { .ifindex = fx->p1 };
	assert_int_equal(kdp_rules_mask_set(fx->r, &mk, &m), 0);
	key.tp_src = 0;
	struct vxdp_rval val = { .gen = 5, .slot = 9, .n = 1, .act = { { .kind = VXDP_RA_DROP } } };
	assert_int_equal(kdp_rules_count_zero(fx->r, 9), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, &key, &val, NULL, NULL), 0);
	for (uint16_t sport = 1000; sport < 1005; sport++) {
		struct rtrace t = run_port(fx, f, udp_frame(f, sport, 5001), &v);
		assert_int_equal(v, TC_ACT_SHOT);
		assert_int_equal(t.path, 1);
	}
	struct vxdp_rcount c;
	assert_int_equal(kdp_rules_count_read(fx->r, 9, &c), 0);
	assert_int_equal(c.packets, 5);
	/* another destination port: under the mask a key of its own */
	assert_int_equal(run_port(fx, f, udp_frame(f, 1000, 5002), &v).path, 2);
	/* a mask of an older generation is not used */
	m.gen = 4;
	assert_int_equal(kdp_rules_mask_set(fx->r, &mk, &m), 0);
	assert_int_equal(run_port(fx, f, udp_frame(f, 1001, 5001), &v).path, 2);
	assert_int_equal(run_port(fx, f, udp_frame(f, 0, 5001), &v).path, 1);
	assert_int_equal(kdp_rules_mask_del(fx->r, &mk), 0);
	assert_int_equal(stats(fx).hits, 6);
}

static void test_each_action(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	int v;
	struct rtrace t;
	/* redirect to p2 (a veth: redirect_peer) */
	size_t len = udp_frame(f, 1, 5001);
	install(fx, f, len, 5, 1, &(struct vxdp_ract){ .kind = VXDP_RA_OUT_PORT, .ifindex = fx->p2, .flags = VXDP_RAF_VETH }, 1);
	t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.kind[0], VXDP_RA_OUT_PORT);
	assert_int_equal(t.ifindex[0], fx->p2);
	/* mirror to p2, then on to L2 switching (MAC2 on p2: a redirect) */
	len = udp_frame(f, 2, 5001);
	install(fx, f, len, 5, 2, &(struct vxdp_ract){ .kind = VXDP_RA_CLONE_PORT, .ifindex = fx->p2 }, 1);
	t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.kind[0], VXDP_RA_CLONE_PORT);
	assert_int_equal(t.kind[1], 0);  /* the list ended: L2 */
	assert_int_equal(stats(fx).tx_errors, 0);
	/* tunnel key + redirect to the vxlan device */
	len = udp_frame(f, 3, 5001);
	struct vxdp_ract tun = { .kind = VXDP_RA_OUT_TUN, .vni = 77 };
	inet_pton(AF_INET, "198.51.100.2", tun.remote);
	install(fx, f, len, 5, 3, &tun, 1);
	t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.kind[0], VXDP_RA_OUT_TUN);
	assert_int_equal(stats(fx).tx_errors, 0);
	/* vlan push, modify, pop, then L2 */
	len = udp_frame(f, 4, 5001);
	struct vxdp_ract vl[3] = { { .kind = VXDP_RA_VLAN_PUSH, .tpid = 0x8100, .tci = 42 },
				   { .kind = VXDP_RA_VLAN_MODIFY, .tci = 43 },
				   { .kind = VXDP_RA_VLAN_POP } };
	install(fx, f, len, 5, 4, vl, 3);
	t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.kind[0], VXDP_RA_VLAN_PUSH);
	assert_int_equal(t.kind[1], VXDP_RA_VLAN_MODIFY);
	assert_int_equal(t.kind[2], VXDP_RA_VLAN_POP);
	assert_int_equal(stats(fx).tx_errors, 0);
	/* an empty list: straight to L2 */
	len = udp_frame(f, 5, 5001);
	install(fx, f, len, 5, 5, NULL, 0);
	t = run_port(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.kind[0], 0);
}

static void test_uncacheable_always_goes_up(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	/* IPv6 with a hop-by-hop header: the program's parser does not walk
	 * extension headers. */
	uint8_t f[80] = { 0 };
	eth_header(f, 0x86dd);
	f[14] = 0x60;
	f[19] = 16;     /* payload length: 8 hop-by-hop + 8 UDP */
	f[20] = 0;      /* next header: hop-by-hop */
	f[21] = 64;
	f[54] = 17;     /* hop-by-hop: next UDP, length 0 */
	f[56] = 1, f[57] = 4; /* PadN */
	f[62 + 3] = 80, f[62 + 5] = 8;
	int v;
	for (int i = 0; i < 2; i++) {
		struct rtrace t = run_port(fx, f, 70, &v);
		assert_int_equal(v, TC_ACT_SHOT);
		assert_int_equal(t.path, 2);
	}
	assert_int_equal(stats(fx).uncacheable, 2);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 2);
	assert_int_equal(fx->up.cacheable, 0);
}

static void test_reinjected_frame_runs_its_slot(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	size_t len = udp_frame(f, 9, 5001);
	struct vxdp_rslot sl = { .seq = 41, .ifindex = fx->p1, .n = 1,
				 .act = { { .kind = VXDP_RA_CLONE_PORT, .ifindex = fx->p2 } } };
	uint32_t idx = 3;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rslots"), &idx, &sl, BPF_ANY), 0);
	int v;
	struct rtrace t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 41u << 8 | 3, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);  /* the clone, then L2 to MAC2 */
	assert_int_equal(t.path, 3);
	assert_int_equal(t.kind[0], VXDP_RA_CLONE_PORT);
	assert_int_equal(stats(fx).reinjected, 1);
	assert_int_equal(stats(fx).misses, 0); /* not looked up again */
	/* A slot reused since (another sequence): dropped, counted. */
	t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 40u << 8 | 3, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(stats(fx).reinject_stale, 1);
}

/* An MPLS frame's label stack is in the key, as flow_extract() reads it
 * (parse/flow.h), so rules on mpls_* keys are cached per stack. */
static void test_mpls_stack_in_the_key(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60] = { 0 };
	eth_header(f, 0x8847);
	const uint32_t lse[3] = { 100u << 12 | 2u << 9 | 64, 200u << 12 | 1u << 8 | 63, 300u << 12 | 1u << 8 | 1 };
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 4; b++)
			f[14 + 4 * i + b] = (uint8_t)(lse[i] >> (24 - 8 * b));
	int v;
	fx->n_up = 0;
	run_port(fx, f, sizeof(f), &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	const struct vxdp_rkey *k = &fx->up.key;
	assert_int_equal(fx->up.cacheable, 1);
	assert_int_equal(k->dl_type, 0x8847);
	assert_int_equal(k->mpls_used, 3); /* to the bottom of stack, not past it */
	assert_int_equal(k->mpls_lse[0], lse[0]);
	assert_int_equal(k->mpls_lse[1], lse[1]);
	assert_int_equal(k->mpls_lse[2], 0);
	/* A stack the frame cuts short: the entries read. */
	fx->n_up = 0;
	run_port(fx, f, 18, &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.key.mpls_used, 1);
	assert_int_equal(fx->up.key.mpls_lse[0], lse[0]);
}

/* ---- a VM port's egress: vxdp_port_egress ---------------------------------- */

static struct vxdp_decision decision(struct fx *fx)
{
	struct vxdp_decision d;
	uint32_t zero = 0;
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "decision"), &zero, &d), 0);
	return d;
}

static void test_egress_hook(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[60];
	size_t len = udp_frame(f, 1234, 5001);
	int v;
	/* No egress rules: out, nothing looked up; p1 -> MAC2 by redirect_peer. */
	struct rtrace t = run(fx, "vxdp_port_egress", fx->p2, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_OK);
	assert_int_equal(t.path, 0);
	assert_int_equal(kdp_port_flags(fx->k, fx->p1, VXDP_PORT_RULES, false), 0);
	run(fx, "vxdp_port_ingress", fx->p1, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(decision(fx).peer, 1);
	/* With them: delivered by redirect (the egress hook runs), where a
	 * miss goes up with the egress key. */
	assert_int_equal(kdp_port_flags(fx->k, fx->p2, VXDP_PORT_ERULES, true), 0);
	run(fx, "vxdp_port_ingress", fx->p1, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(decision(fx).peer, 0);
	assert_int_equal(decision(fx).ifindex, fx->p2);
	fx->n_up = 0;
	t = run(fx, "vxdp_port_egress", fx->p2, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 2);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.ifindex, fx->p2 | VXDP_RKEY_EGRESS);
	assert_int_equal(fx->up.key.ifindex, fx->p2 | VXDP_RKEY_EGRESS);
	assert_int_equal(fx->up.key.tp_dst, 5001);
	/* A cached drop, then a cached pass of another flow. */
	struct vxdp_rval val = { .gen = 5, .slot = 9, .n = 1, .act = { { .kind = VXDP_RA_DROP } } };
	assert_int_equal(kdp_rules_count_zero(fx->r, 9), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, &fx->up.key, &val, NULL, NULL), 0);
	t = run(fx, "vxdp_port_egress", fx->p2, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 1);
	assert_int_equal(t.kind[0], VXDP_RA_DROP);
	struct vxdp_rstats s;
	assert_int_equal(kdp_rules_stats_read(fx->r, fx->p2, &s), 0);
	assert_int_equal(s.rule_drops, 1);
	assert_int_equal(s.hits, 1);
	struct vxdp_rkey k = fx->up.key;
	k.tp_dst = 5002;
	val = (struct vxdp_rval){ .gen = 5, .slot = 10, .n = 0 };
	assert_int_equal(kdp_rules_count_zero(fx->r, 10), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, &k, &val, NULL, NULL), 0);
	uint8_t g[60];
	t = run(fx, "vxdp_port_egress", fx->p2, 0, g, udp_frame(g, 1234, 5002), &v);
	assert_int_equal(v, TC_ACT_OK);
	assert_int_equal(t.path, 1);
	/* A frame whose egress decision vxswitchd made (re-injected): passes. */
	t = run(fx, "vxdp_port_egress", fx->p2, VXDP_MARK_EGRESS_DONE, f, len, &v);
	assert_int_equal(v, TC_ACT_OK);
	assert_int_equal(t.path, 0);
	/* Its re-injection: the slot's actions, then out by p2 (a veth:
	 * redirect_peer, past its egress hook). */
	struct vxdp_rslot sl = { .seq = 12, .ifindex = fx->p2 | VXDP_RKEY_EGRESS, .n = 0 };
	uint32_t idx = 5;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rslots"), &idx, &sl, BPF_ANY), 0);
	t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 12u << 8 | 5, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.path, 3);
	assert_int_equal(kdp_rules_stats_read(fx->r, fx->p2, &s), 0);
	assert_int_equal(s.reinjected, 1);
}

/* ---- a vxlan port's ingress: vxdp_tun_ingress ------------------------------ */

/* The VNI takes frames of remote 198.51.100.2 (and .3) and has a vxlan
 * port with rules (rvnis); the frames' tunnel key: test_tunkey. */
static void tun_setup(struct fx *fx, const char *remote)
{
	struct vxdp_flood_ent fl[4] = { { .ifindex = fx->p1, .flags = VXDP_FDB_VETH },
					{ .ifindex = fx->p2, .flags = VXDP_FDB_VETH },
					{ .flags = VXDP_FDB_REMOTE }, { .flags = VXDP_FDB_REMOTE } };
	inet_pton(AF_INET, "198.51.100.2", fl[2].remote);
	inet_pton(AF_INET, "198.51.100.3", fl[3].remote);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 4), 0);
	assert_int_equal(kdp_rules_vni_set(fx->r, VNI, VXDP_RVNI_INGRESS), 0);
	struct vxdp_test_tunkey tk = { .vni = VNI, .tos = 0x20, .ttl = 63 };
	inet_pton(AF_INET, remote, tk.remote);
	inet_pton(AF_INET, "198.51.100.1", tk.local);
	uint32_t zero = 0;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &zero, &tk, BPF_ANY), 0);
}

static struct rtrace run_tun(struct fx *fx, const void *data, size_t len, int *verdict)
{
	return run(fx, "vxdp_tun_ingress", fx->tun, 0, data, len, verdict);
}

static void test_tun_miss_goes_up_with_the_tunnel_key_then_hits(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	tun_setup(fx, "198.51.100.2");
	uint8_t f[60];
	int v;
	size_t len = udp_frame(f, 1234, 5001);
	struct rtrace t = run_tun(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 2);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.ifindex, fx->tun);
	assert_int_equal(fx->up.cacheable, 1);
	assert_memory_equal(fx->bytes, f, 60);
	const struct vxdp_rkey *k = &fx->up.key;
	uint8_t a[16] = { 0 };
	assert_int_equal(k->ifindex, fx->tun);
	assert_int_equal(k->tun_family, 4);
	assert_int_equal(k->tun_vni, VNI);
	inet_pton(AF_INET, "198.51.100.2", a);
	assert_memory_equal(k->tun_src, a, 16);
	inet_pton(AF_INET, "198.51.100.1", a);
	assert_memory_equal(k->tun_dst, a, 16);
	assert_int_equal(k->tun_tos, 0x20);
	assert_int_equal(k->tun_ttl, 63);
	assert_int_equal(k->tun_dst_port, 4789);
	assert_int_equal(k->tp_dst, 5001);
	assert_memory_equal(k->dl_src, MAC1, 6);
	struct vxdp_rstats s;
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.upcalls, 1);

	/* The decision installed: a redirect to p1 (a veth), counted. */
	struct vxdp_rval val = { .gen = 5, .slot = 9, .n = 1,
				 .act = { { .kind = VXDP_RA_OUT_PORT, .ifindex = fx->p1, .flags = VXDP_RAF_VETH } } };
	assert_int_equal(kdp_rules_count_zero(fx->r, 9), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, &fx->up.key, &val, NULL, NULL), 0);
	for (int i = 0; i < 2; i++) {
		t = run_tun(fx, f, len, &v);
		assert_int_equal(v, TC_ACT_REDIRECT);
		assert_int_equal(t.path, 1);
		assert_int_equal(t.kind[0], VXDP_RA_OUT_PORT);
		assert_int_equal(t.ifindex[0], fx->p1);
	}
	struct vxdp_rcount c;
	assert_int_equal(kdp_rules_count_read(fx->r, 9, &c), 0);
	assert_int_equal(c.packets, 2);
	/* The same inner flow from the other remote is another key: a miss. */
	tun_setup(fx, "198.51.100.3");
	t = run_tun(fx, f, len, &v);
	assert_int_equal(t.path, 2);
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.misses, 2);
	assert_int_equal(s.hits, 2);
	/* A VNI without rules (not in rvnis): straight to L2 (MAC2 on p2). */
	assert_int_equal(kdp_rules_vni_set(fx->r, VNI, false), 0);
	t = run_tun(fx, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.path, 0);
	assert_int_equal(t.n, 0);
}

static void test_tun_reinjected_frame_switches_in_its_vni(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	tun_setup(fx, "198.51.100.2");
	uint8_t f[60];
	size_t len = udp_frame(f, 9, 5001);
	/* An empty decision: L2 in the slot's VNI, to MAC2's p2. */
	struct vxdp_rslot sl = { .seq = 7, .ifindex = fx->tun, .vni = VNI, .n = 0 };
	uint32_t idx = 4;
	int sfd = kdp_map_fd(fx->k, "rslots");
	assert_int_equal(bpf_map_update_elem(sfd, &idx, &sl, BPF_ANY), 0);
	int v;
	struct rtrace t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 7u << 8 | 4, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.path, 3);
	struct vxdp_rstats s;
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.reinjected, 1);
	assert_int_equal(s.misses, 0);
	/* A VNI the program does not know: dropped, not switched. */
	sl.seq = 8;
	sl.vni = 4242;
	assert_int_equal(bpf_map_update_elem(sfd, &idx, &sl, BPF_ANY), 0);
	run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 8u << 8 | 4, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	/* A decision that drops, on a multicast frame: the rule wins. */
	uint8_t g[60];
	len = udp_frame(g, 9, 5001);
	memset(g, 0xff, 6);
	sl = (struct vxdp_rslot){ .seq = 9, .ifindex = fx->tun, .vni = VNI, .n = 1,
				  .act = { { .kind = VXDP_RA_DROP } } };
	assert_int_equal(bpf_map_update_elem(sfd, &idx, &sl, BPF_ANY), 0);
	t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 9u << 8 | 4, g, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.kind[0], VXDP_RA_DROP);
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.rule_drops, 1);
}

/* A vxlan port's egress: vxdp_tun_egress, the frame's tunnel key (under
 * test_run: test_tunkey) naming the port. */
static void test_tun_egress_hook(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	tun_setup(fx, "198.51.100.2");
	uint8_t f[60];
	size_t len = udp_frame(f, 9, 5001);
	int v;
	/* Ingress rules only: out, nothing looked up. */
	struct rtrace t = run(fx, "vxdp_tun_egress", fx->tun, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_OK);
	assert_int_equal(t.path, 0);
	assert_int_equal(kdp_rules_vni_set(fx->r, VNI, VXDP_RVNI_INGRESS | VXDP_RVNI_EGRESS), 0);
	fx->n_up = 0;
	t = run(fx, "vxdp_tun_egress", fx->tun, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 2);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	const struct vxdp_rkey *k = &fx->up.key;
	assert_int_equal(k->ifindex, fx->tun | VXDP_RKEY_EGRESS);
	assert_int_equal(k->tun_vni, VNI);
	assert_int_equal(k->tun_family, 4);
	uint8_t remote[16] = { 0 }, zero16[16] = { 0 };
	inet_pton(AF_INET, "198.51.100.2", remote);
	assert_memory_equal(k->tun_src, remote, 16); /* the remote the frame goes to */
	assert_memory_equal(k->tun_dst, zero16, 16);
	assert_int_equal(k->tp_dst, 5001);
	/* A cached drop, counted per VNI. */
	struct vxdp_rval val = { .gen = 5, .slot = 11, .n = 1, .act = { { .kind = VXDP_RA_DROP } } };
	assert_int_equal(kdp_rules_count_zero(fx->r, 11), 0);
	assert_int_equal(kdp_rules_flow_put(fx->r, k, &val, NULL, NULL), 0);
	t = run(fx, "vxdp_tun_egress", fx->tun, 0, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
	assert_int_equal(t.path, 1);
	struct vxdp_rstats s;
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.rule_drops, 1);
	/* Decided by vxswitchd: passes; its re-injection ends with the OUT_TUN
	 * that sends it to the remote. */
	t = run(fx, "vxdp_tun_egress", fx->tun, VXDP_MARK_EGRESS_DONE, f, len, &v);
	assert_int_equal(v, TC_ACT_OK);
	assert_int_equal(t.path, 0);
	struct vxdp_rslot sl = { .seq = 13, .ifindex = fx->tun | VXDP_RKEY_EGRESS, .vni = VNI, .n = 1,
				 .act = { { .kind = VXDP_RA_OUT_TUN, .vni = VNI, .flags = VXDP_RAF_EGRESS_DONE } } };
	memcpy(sl.act[0].remote, remote, 16);
	uint32_t idx = 6;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rslots"), &idx, &sl, BPF_ANY), 0);
	t = run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 13u << 8 | 6, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(t.kind[0], VXDP_RA_OUT_TUN);
	assert_int_equal(kdp_rules_stats_read(fx->r, VXDP_RSTATS_VNI | VNI, &s), 0);
	assert_int_equal(s.reinjected, 1);
	/* A slot of the device's egress that ends without sending: dropped. */
	sl = (struct vxdp_rslot){ .seq = 14, .ifindex = fx->tun | VXDP_RKEY_EGRESS, .vni = VNI, .n = 0 };
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rslots"), &idx, &sl, BPF_ANY), 0);
	run(fx, "vxdp_rules_reinject", if_nametoindex("lo"), 14u << 8 | 6, f, len, &v);
	assert_int_equal(v, TC_ACT_SHOT);
}

/* An egress key says where the frame came in: its ingress_ifindex, with
 * the received tunnel key's section for the vxlan device's frame, and for
 * a re-injected one (in by the re-injection veth) its slot's origin. */
static void test_egress_key_says_where_the_frame_came_in(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	cpu_set_t one; /* rorigin is per CPU: every run on the same one */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(kdp_port_flags(fx->k, fx->p2, VXDP_PORT_ERULES, true), 0);
	uint8_t f[60];
	size_t len = udp_frame(f, 1234, 5001);
	int v;
	uint8_t r2[16] = { 0 }, r3[16] = { 0 }, none[16] = { 0 };
	inet_pton(AF_INET, "198.51.100.2", r2);
	inet_pton(AF_INET, "198.51.100.3", r3);
	fx->n_up = 0;
	run_from(fx, "vxdp_port_egress", fx->p2, fx->p1, 0, f, len, &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.key.in_ifindex, fx->p1);
	assert_int_equal(fx->up.key.tun_family, 0);
	/* From the vxlan device: the tunnel it came out of (test_tunkey). */
	tun_setup(fx, "198.51.100.3");
	run_from(fx, "vxdp_port_egress", fx->p2, fx->tun, 0, f, len, &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.key.in_ifindex, fx->tun);
	assert_int_equal(fx->up.key.tun_family, 4);
	assert_int_equal(fx->up.key.tun_vni, VNI);
	assert_memory_equal(fx->up.key.tun_src, r3, 16);
	/* Re-injected (an ingress decision of the device's frame from .2):
	 * switched to p2 by redirect; p2's egress key has the slot's origin. */
	struct vxdp_rslot sl = { .seq = 15, .ifindex = fx->p1, .n = 0,
				 .origin = { .in_ifindex = fx->tun, .tun_vni = VNI, .tun_family = 4, .tun_ttl = 7 } };
	memcpy(sl.origin.tun_src, r2, 16);
	uint32_t idx = 7, lo = if_nametoindex("lo");
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rslots"), &idx, &sl, BPF_ANY), 0);
	run(fx, "vxdp_rules_reinject", lo, 15u << 8 | 7, f, len, &v);
	assert_int_equal(v, TC_ACT_REDIRECT);
	assert_int_equal(decision(fx).ifindex, fx->p2);
	run_from(fx, "vxdp_port_egress", fx->p2, lo, 0, f, len, &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.key.in_ifindex, fx->tun);
	assert_int_equal(fx->up.key.tun_ttl, 7);
	assert_memory_equal(fx->up.key.tun_src, r2, 16);
	/* That origin is the re-injection veth's only: a frame in by p1 is p1's. */
	run_from(fx, "vxdp_port_egress", fx->p2, fx->p1, 0, f, len, &v);
	assert_int_equal(kdp_rules_poll(fx->r, on_up, fx), 1);
	assert_int_equal(fx->up.key.in_ifindex, fx->p1);
	assert_memory_equal(fx->up.key.tun_src, none, 16);
}

int main(void)
{
	if (kdp_test_netns("test_vxdp_rules", (const char *[]){ "p1", "p2", NULL }, &in_netns) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_miss_goes_up_whole_with_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hit_runs_the_cached_drop_and_counts_then_stale_generation_misses,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_action, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uncacheable_always_goes_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reinjected_frame_runs_its_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mpls_stack_in_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tun_miss_goes_up_with_the_tunnel_key_then_hits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tun_reinjected_frame_switches_in_its_vni, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tun_egress_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_key_serves_every_source_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_key_says_where_the_frame_came_in, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
