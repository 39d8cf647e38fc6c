/* Unit tests of the kernel datapath's programs (dp/kernel/bpf/vxdp.bpf.c)
 * and their loader (dp/kernel/kdp.c), against the running kernel: the
 * programs are loaded (the verifier passes them), the maps filled through
 * kdp.h, and crafted frames fed with BPF_PROG_TEST_RUN.  Each test checks
 * the verdict, the redirect target (the programs record their decision in
 * map `decision` when the loader sets their rodata `vxdp_record`, since
 * test_run performs no redirect) and the counters.
 *
 * Root only (else skipped).  The whole file runs in a network namespace
 * of its own, so its veths, dummy device and vxlan device vanish with the
 * process, whatever happens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_diag.h"
#include "dp/kernel/kdp_link.h"
#include "kdp_netns.h"

enum { VNI = 99, VNI2 = 100 };

static const uint8_t MAC1[6] = { 0x02, 0, 0, 0, 0, 0x01 };  /* on p1 (veth) */
static const uint8_t MAC2[6] = { 0x02, 0, 0, 0, 0, 0x02 };  /* on p2 (veth) */
static const uint8_t MAC3[6] = { 0x02, 0, 0, 0, 0, 0x03 };  /* on d3 (a veth without VXDP_PORT_VETH: a tap's stand-in) */
static const uint8_t MACR[6] = { 0x02, 0, 0, 0, 0, 0x0a };  /* behind 198.51.100.2 */
static const uint8_t MACR6[6] = { 0x02, 0, 0, 0, 0, 0x0b }; /* behind 2001:db8::2 */
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

struct fx {
	struct kdp *k;
	uint32_t p1, p2, d3, p4, tun;  /* p4: a port in VNI2 */
	unsigned upcalls;
	struct vxdp_upcall last;
};

static bool in_netns;

static int setup(void **state)
{
	if (!in_netns)
		return 0;
	struct fx *fx = calloc(1, sizeof(*fx));
	char why[256] = "";
	assert_int_equal(kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "vxdpt0" }, &fx->k, why, sizeof(why)), 0);
	fx->tun = kdp_tun_ifindex(fx->k);
	assert_true(fx->tun > 0);
	fx->p1 = if_nametoindex("p1");
	fx->p2 = if_nametoindex("p2");
	fx->d3 = if_nametoindex("d3");
	fx->p4 = if_nametoindex("p4");
	assert_true(fx->p1 && fx->p2 && fx->d3 && fx->p4);
	struct kdp_port_opts veth = { .vni = VNI, .flags = VXDP_PORT_VETH, .attach = true };
	assert_int_equal(kdp_port_add(fx->k, fx->p1, &veth), 0);
	assert_int_equal(kdp_port_add(fx->k, fx->p2, &veth), 0);
	assert_int_equal(kdp_port_add(fx->k, fx->d3, &(struct kdp_port_opts){ .vni = VNI, .attach = true }), 0);
	assert_int_equal(kdp_port_add(fx->k, fx->p4, &(struct kdp_port_opts){ .vni = VNI2, .flags = VXDP_PORT_VETH }), 0);
	struct vxdp_flood_ent fl[4] = {
		{ .ifindex = fx->p1, .flags = VXDP_FDB_VETH },
		{ .ifindex = fx->p2, .flags = VXDP_FDB_VETH },
		{ .ifindex = fx->d3 },
		{ .flags = VXDP_FDB_REMOTE },
	};
	inet_pton(AF_INET, "198.51.100.2", fl[3].remote);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 4), 0);
	struct vxdp_flood_ent fl2 = { .ifindex = fx->p4, .flags = VXDP_FDB_VETH };
	assert_int_equal(kdp_vni_set(fx->k, VNI2, NULL, &fl2, 1), 0);
	struct vxdp_fdb_val v2 = { .ifindex = fx->p2, .flags = VXDP_FDB_VETH };
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC2, &v2), 0);
	struct vxdp_fdb_val v3 = { .ifindex = fx->d3 };
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC3, &v3), 0);
	struct vxdp_fdb_val vr = { .flags = VXDP_FDB_REMOTE };
	inet_pton(AF_INET, "198.51.100.2", vr.remote);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MACR, &vr), 0);
	struct vxdp_fdb_val vr6 = { .flags = VXDP_FDB_REMOTE | VXDP_FDB_V6 };
	inet_pton(AF_INET6, "2001:db8::2", vr6.remote);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MACR6, &vr6), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	if (fx) {
		kdp_close(fx->k);
		free(fx);
	}
	return 0;
}

static size_t frame(uint8_t *buf, size_t len, const uint8_t *dst, const uint8_t *src)
{
	memset(buf, 0, len);
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = 0x08;  /* IPv4: the programs switch on MACs only */
	buf[13] = 0x00;
	for (size_t i = 14; i < len; i++)
		buf[i] = (uint8_t)i;
	return len;
}

/* Runs `prog` on `data` as if it arrived on `ifindex`; returns the
 * verdict and fills *d with the recorded decision. */
static int run(struct fx *fx, int prog, uint32_t ifindex, const void *data, size_t len,
	       struct vxdp_decision *d)
{
	int dfd = kdp_map_fd(fx->k, "decision");
	uint32_t zero = 0;
	struct vxdp_decision none = { 0 };
	assert_int_equal(bpf_map_update_elem(dfd, &zero, &none, BPF_ANY), 0);
	struct __sk_buff ctx = { .ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	int err = bpf_prog_test_run_opts(prog, &o);
	assert_int_equal(err, 0);
	assert_int_equal(bpf_map_lookup_elem(dfd, &zero, d), 0);
	return (int)o.retval;
}

static int run_port(struct fx *fx, uint32_t ifindex, const void *data, size_t len, struct vxdp_decision *d)
{
	return run(fx, kdp_port_prog_fd(fx->k), ifindex, data, len, d);
}

static int run_tun(struct fx *fx, uint32_t vni, const char *remote, const void *data, size_t len,
		   struct vxdp_decision *d)
{
	struct vxdp_test_tunkey tk = { .vni = vni };
	inet_pton(AF_INET, remote, tk.remote);
	uint32_t zero = 0;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &zero, &tk, BPF_ANY), 0);
	return run(fx, kdp_tun_prog_fd(fx->k), fx->tun, data, len, d);
}

static struct vxdp_counters ctr(struct fx *fx, uint32_t ifindex)
{
	struct vxdp_counters c;
	assert_int_equal(kdp_counters_read(fx->k, ifindex, &c), 0);
	return c;
}

static void on_upcall(void *aux, const struct vxdp_upcall *u)
{
	struct fx *fx = aux;
	fx->upcalls++;
	fx->last = *u;
}

static unsigned drain(struct fx *fx)
{
	fx->upcalls = 0;
	kdp_upcall_poll(fx->k, 0, on_upcall, fx);
	return fx->upcalls;
}

/* ---- counters slots ------------------------------------------------------ */

static uint32_t slot_of(struct fx *fx, uint32_t ifindex)
{
	struct vxdp_port p;
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "ports"), &ifindex, &p), 0);
	return p.slot;
}

/* Every port and the vxlan device count in a slot of their own (cfg
 * names the device's); a port deleted and added again starts from zero
 * without touching another's counters. */
static void test_counter_slots_are_each_ports_own(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint32_t dev[5] = { fx->p1, fx->p2, fx->d3, fx->p4, fx->tun }, slot[5];
	for (int i = 0; i < 5; i++) {
		slot[i] = slot_of(fx, dev[i]);
		assert_true(slot[i] != VXDP_COUNTERS_NOPORT && slot[i] < VXDP_COUNTER_SLOTS);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(slot[i], slot[j]);
	}
	struct vxdp_cfg c;
	uint32_t zero = 0;
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "cfg"), &zero, &c), 0);
	assert_int_equal(c.tun_slot, slot[4]);

	uint8_t f[100];
	struct vxdp_decision d;
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MAC2, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(ctr(fx, fx->p1).rx_packets, 1);
	assert_int_equal(ctr(fx, fx->p2).tx_packets, 1);
	assert_int_equal(kdp_port_del(fx->k, fx->p1), 0);
	struct vxdp_counters gone;
	assert_true(kdp_counters_read(fx->k, fx->p1, &gone) < 0);
	assert_int_equal(kdp_port_add(fx->k, fx->p1, &(struct kdp_port_opts){ .vni = VNI, .flags = VXDP_PORT_VETH }), 0);
	/* the slot just freed is taken last */
	assert_int_not_equal(slot_of(fx, fx->p1), slot[0]);
	struct vxdp_counters c1 = ctr(fx, fx->p1);
	assert_int_equal(c1.rx_packets, 0);
	assert_int_equal(c1.upcalls, 0);
	assert_int_equal(ctr(fx, fx->p2).tx_packets, 1);
	assert_int_equal(run_port(fx, fx->p1, f, 100, &d), TC_ACT_REDIRECT);
	assert_int_equal(ctr(fx, fx->p1).rx_packets, 1);
	assert_int_equal(ctr(fx, fx->p2).tx_packets, 2);
}

/* ---- vxdp_port_ingress ------------------------------------------------- */

static void test_local_veth_redirect_peer_and_learn_upcall(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100];
	struct vxdp_decision d;
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MAC2, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(d.kind, VXDP_V_LOCAL);
	assert_int_equal(d.ifindex, fx->p2);
	assert_int_equal(d.peer, 1);
	struct vxdp_counters c1 = ctr(fx, fx->p1), c2 = ctr(fx, fx->p2);
	assert_int_equal(c1.rx_packets, 1);
	assert_int_equal(c1.rx_bytes, 100);
	assert_int_equal(c1.upcalls, 1);
	assert_int_equal(c2.tx_packets, 1);
	assert_int_equal(c2.tx_bytes, 100);
	assert_int_equal(c2.hist_frames[0], 1);
	/* MAC1 was unknown: one learn event naming its port and VNI. */
	assert_int_equal(drain(fx), 1);
	assert_int_equal(fx->last.kind, VXDP_UPCALL_LEARN_LOCAL);
	assert_int_equal(fx->last.vni, VNI);
	assert_int_equal(fx->last.ifindex, fx->p1);
	assert_memory_equal(fx->last.mac, MAC1, 6);

	/* Installed: no upcall any more, and its last-used time is written. */
	struct vxdp_fdb_val v1 = { .ifindex = fx->p1, .flags = VXDP_FDB_VETH };
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC1, &v1), 0);
	assert_int_equal(run_port(fx, fx->p1, f, 100, &d), TC_ACT_REDIRECT);
	assert_int_equal(drain(fx), 0);
	assert_int_equal(ctr(fx, fx->p1).upcalls, 1);
	struct vxdp_fdb_val got;
	assert_int_equal(kdp_fdb_get(fx->k, VNI, MAC1, &got), 0);
	uint64_t now = kdp_now_ns();
	assert_true(got.last_used_ns > 0 && got.last_used_ns <= now && now - got.last_used_ns < 5000000000ull);

	/* Moved to another port: an upcall again. */
	assert_int_equal(run_port(fx, fx->d3, f, frame(f, 100, MAC2, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(drain(fx), 1);
	assert_int_equal(fx->last.ifindex, fx->d3);
}

static void test_local_plain_redirect_and_histogram(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	static uint8_t f[3000];
	struct vxdp_decision d;
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 3000, MAC3, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(d.kind, VXDP_V_LOCAL);
	assert_int_equal(d.ifindex, fx->d3);
	assert_int_equal(d.peer, 0);
	struct vxdp_counters c3 = ctr(fx, fx->d3);
	assert_int_equal(c3.hist_frames[1], 1);  /* 1.5K-8K */
	assert_int_equal(c3.hist_bytes[1], 3000);
	assert_int_equal(c3.hist_frames[0], 0);
}

static void test_remote_sets_tunnel_key(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100], want[16] = { 0 };
	struct vxdp_decision d;
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MACR, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(d.kind, VXDP_V_REMOTE);
	assert_int_equal(d.ifindex, fx->tun);
	assert_int_equal(d.tun_vni, VNI);
	assert_int_equal(d.tun_v6, 0);
	inet_pton(AF_INET, "198.51.100.2", want);
	assert_memory_equal(d.tun_remote, want, 16);
	assert_int_equal(ctr(fx, fx->tun).tx_packets, 1);

	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MACR6, MAC1), &d), TC_ACT_REDIRECT);
	assert_int_equal(d.kind, VXDP_V_REMOTE);
	assert_int_equal(d.tun_v6, 1);
	inet_pton(AF_INET6, "2001:db8::2", want);
	assert_memory_equal(d.tun_remote, want, 16);
	/* A VNI without srcport carries cfg's default range in its own entry
	 * (no cfg lookup per datagram); one with srcport, its own. */
	struct vxdp_cfg c;
	struct vxdp_vni v;
	uint32_t zero = 0, vni = VNI;
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "cfg"), &zero, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "vnis"), &vni, &v), 0);
	assert_true(c.sport_min > 0 && c.sport_max >= c.sport_min);
	assert_int_equal(v.sport_min, c.sport_min);
	assert_int_equal(v.sport_max, c.sport_max);
	struct kdp_vni_outer o = { .sport_min = 5000, .sport_max = 5009 };
	assert_int_equal(kdp_vni_set(fx->k, VNI, &o, v.flood, v.n_flood), 0);
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "vnis"), &vni, &v), 0);
	assert_int_equal(v.sport_min, 5000);
	assert_int_equal(v.sport_max, 5009);
}

static void test_flood_split_horizon(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100];
	const uint8_t unknown[6] = { 0x02, 0, 0, 0, 0, 0x77 };
	struct vxdp_decision d;
	/* Broadcast and unknown unicast: every other local port and the
	 * remote VTEP, never back to p1; the original is dropped. */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, i ? unknown : BCAST, MAC1), &d), TC_ACT_SHOT);
		assert_int_equal(d.kind, VXDP_V_FLOOD);
		assert_int_equal(d.n_clones, 3);
		assert_int_equal(d.clone_ifindex[0], fx->p2);
		assert_int_equal(d.clone_ifindex[1], fx->d3);
		assert_int_equal(d.clone_ifindex[2], fx->tun);
	}
	struct vxdp_counters c1 = ctr(fx, fx->p1);
	assert_int_equal(c1.flood_packets, 2);
	for (unsigned i = 0; i < VXDP_DROP_COUNT; i++)
		assert_int_equal(c1.drops[i], 0);
	assert_int_equal(ctr(fx, fx->p2).tx_packets, 2);
	assert_int_equal(ctr(fx, fx->tun).tx_packets, 2);
	/* From a port of VNI2: only VNI2's list (nothing: p4 is the only one). */
	assert_int_equal(run_port(fx, fx->p4, f, frame(f, 100, BCAST, MAC1), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_FLOOD);
	assert_int_equal(d.n_clones, 0);
	/* VNI2 does not see VNI's MAC2: unknown there, flooded in VNI2 only. */
	assert_int_equal(run_port(fx, fx->p4, f, frame(f, 100, MAC2, MAC1), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_FLOOD);
	assert_int_equal(d.n_clones, 0);
	assert_int_equal(ctr(fx, fx->p2).tx_packets, 2);
}

static void expect_drop(struct fx *fx, int prog, uint32_t ifindex, const void *f, size_t len,
			enum vxdp_drop why, uint32_t counted_on)
{
	struct vxdp_decision d;
	uint64_t before = ctr(fx, counted_on).drops[why];
	assert_int_equal(run(fx, prog, ifindex, f, len, &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_DROP);
	assert_int_equal(d.drop, why);
	assert_int_equal(ctr(fx, counted_on).drops[why], before + 1);
}

static void test_hostile_frames_dropped_by_reason(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	int prog = kdp_port_prog_fd(fx->k);
	uint8_t f[100];
	struct vxdp_decision d;
	/* The kernel's test_run refuses anything shorter than Ethernet. */
	struct __sk_buff ctx = { .ifindex = fx->p1 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = 13, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	assert_int_equal(bpf_prog_test_run_opts(prog, &o), -EINVAL);

	frame(f, 100, MAC2, MAC1);
	f[12] = 0x81, f[13] = 0x00;  /* a VLAN tag that is not there: a 14-byte runt */
	expect_drop(fx, prog, fx->p1, f, 14, VXDP_DROP_TRUNCATED_VLAN, fx->p1);
	expect_drop(fx, prog, fx->p1, f, 17, VXDP_DROP_TRUNCATED_VLAN, fx->p1);
	f[16] = 0x81, f[17] = 0x00;  /* VLAN in VLAN */
	expect_drop(fx, prog, fx->p1, f, 100, VXDP_DROP_VLAN_TOO_MANY_TAGS, fx->p1);
	f[12] = 0x88, f[13] = 0xa8;  /* QinQ, 802.1ad outer */
	expect_drop(fx, prog, fx->p1, f, 100, VXDP_DROP_VLAN_TOO_MANY_TAGS, fx->p1);
	assert_int_equal(drain(fx), 0);  /* nothing malformed is learned */
	/* One tag is fine, and its VLAN goes up with the learn event. */
	f[12] = 0x81, f[13] = 0x00, f[14] = 0x00, f[15] = 0x2a, f[16] = 0x08, f[17] = 0x00;
	assert_int_equal(run_port(fx, fx->p1, f, 100, &d), TC_ACT_REDIRECT);
	assert_int_equal(d.ifindex, fx->p2);
	assert_int_equal(drain(fx), 1);
	assert_int_equal(fx->last.vlan, 42);

	const uint8_t zero[6] = { 0 };
	expect_drop(fx, prog, fx->p1, f, frame(f, 100, MAC2, BCAST), VXDP_DROP_INVALID_SRC_MAC, fx->p1);
	expect_drop(fx, prog, fx->p1, f, frame(f, 100, MAC2, zero), VXDP_DROP_INVALID_SRC_MAC, fx->p1);
	const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	expect_drop(fx, prog, fx->p1, f, frame(f, 100, MAC2, mcast), VXDP_DROP_INVALID_SRC_MAC, fx->p1);
	assert_int_equal(drain(fx), 0);
	/* To itself: the destination lives behind the ingress port (the
	 * source is learned first, as a bridge does: MAC1 seen on p2). */
	expect_drop(fx, prog, fx->p2, f, frame(f, 100, MAC2, MAC1), VXDP_DROP_LOOP_TO_INGRESS, fx->p2);
	assert_int_equal(drain(fx), 1);
	/* A device with no port entry (lo), and a port whose VNI is gone. */
	expect_drop(fx, prog, 1, f, frame(f, 100, MAC2, MAC1), VXDP_DROP_PORT_NOT_IN_VNI, VXDP_COUNTERS_NOPORT);
	assert_int_equal(kdp_vni_del(fx->k, VNI2), 0);
	expect_drop(fx, prog, fx->p4, f, 100, VXDP_DROP_PORT_NOT_IN_VNI, fx->p4);
	assert_int_equal(drain(fx), 0);
}

static void test_upcalls_rate_limited_per_port(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	/* d3 again with a bucket of 3 and 1 per second: of 10 new MACs in a
	 * burst 3 go up, 7 are counted as dropped; other ports keep theirs.
	 * The bucket refills one token per whole second since the port was
	 * added, and a loaded machine (ASan, a busy CI host) can take longer
	 * than a second over the ten runs: each such second allows one more. */
	assert_int_equal(kdp_port_del(fx->k, fx->d3), 0);
	struct kdp_port_opts o = { .vni = VNI, .upcall_rate = 1, .upcall_burst = 3 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(kdp_port_add(fx->k, fx->d3, &o), 0);
	uint8_t f[100], src[6] = { 0x02, 0xaa, 0, 0, 0, 0 };
	struct vxdp_decision d;
	for (int i = 0; i < 10; i++) {
		src[5] = (uint8_t)i;
		assert_int_equal(run_port(fx, fx->d3, f, frame(f, 100, MAC2, src), &d), TC_ACT_REDIRECT);
	}
	struct vxdp_counters c = ctr(fx, fx->d3);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int64_t elapsed_ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
	uint64_t refills = (uint64_t)(elapsed_ns / 1000000000);
	assert_in_range(c.upcalls, 3, 3 + refills);
	assert_int_equal(c.upcalls + c.upcall_drops, 10);
	/* each drop under its reason: the bucket, not the (empty) ring */
	assert_int_equal(c.upcall_drops_rate, c.upcall_drops);
	assert_int_equal(c.upcall_drops_ring, 0);
	assert_int_equal(drain(fx), (int)c.upcalls);
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MAC2, src), &d), TC_ACT_REDIRECT);
	assert_int_equal(drain(fx), 1);
}

/* ---- vxdp_tun_ingress ---------------------------------------------------- */

static void test_tun_delivers_learns_isolates(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100], want[16] = { 0 };
	struct vxdp_decision d;
	const uint8_t newr[6] = { 0x02, 0, 0, 0, 0, 0x0c };
	/* A VTEP that is not one of the VNI's: its frames are dropped. */
	struct vxdp_test_tunkey tk3 = { .vni = VNI };
	inet_pton(AF_INET, "198.51.100.3", tk3.remote);
	uint32_t key0 = 0;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &key0, &tk3, BPF_ANY), 0);
	expect_drop(fx, kdp_tun_prog_fd(fx->k), fx->tun, f, frame(f, 100, MAC2, newr), VXDP_DROP_VXLAN_UNKNOWN_REMOTE,
		    fx->tun);
	/* VNI's remotes: .2 as set up, .3 and .9 added (the flood list's
	 * remotes are the VTEPs it takes frames from). */
	struct vxdp_flood_ent fl[6] = {
		{ .ifindex = fx->p1, .flags = VXDP_FDB_VETH }, { .ifindex = fx->p2, .flags = VXDP_FDB_VETH },
		{ .ifindex = fx->d3 }, { .flags = VXDP_FDB_REMOTE }, { .flags = VXDP_FDB_REMOTE }, { .flags = VXDP_FDB_REMOTE },
	};
	inet_pton(AF_INET, "198.51.100.2", fl[3].remote);
	inet_pton(AF_INET, "198.51.100.3", fl[4].remote);
	inet_pton(AF_INET, "198.51.100.9", fl[5].remote);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 6), 0);
	struct vxdp_flood_ent fl2[2] = { { .ifindex = fx->p4, .flags = VXDP_FDB_VETH }, fl[3] };
	assert_int_equal(kdp_vni_set(fx->k, VNI2, NULL, fl2, 2), 0);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.3", f, frame(f, 100, MAC2, newr), &d), TC_ACT_REDIRECT);
	assert_int_equal(d.kind, VXDP_V_LOCAL);
	assert_int_equal(d.ifindex, fx->p2);
	assert_int_equal(d.peer, 1);
	assert_int_equal(drain(fx), 1);
	assert_int_equal(fx->last.kind, VXDP_UPCALL_LEARN_REMOTE);
	assert_int_equal(fx->last.vni, VNI);
	inet_pton(AF_INET, "198.51.100.3", want);
	assert_memory_equal(fx->last.remote, want, 16);
	/* A known remote MAC from its own VTEP: no upcall; from another: moved. */
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_REDIRECT);
	assert_int_equal(drain(fx), 0);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.9", f, 100, &d), TC_ACT_REDIRECT);
	assert_int_equal(drain(fx), 1);

	/* An unconfigured VNI: dropped, counted on the vxlan device. */
	int prog = kdp_tun_prog_fd(fx->k);
	struct vxdp_test_tunkey tk = { .vni = 77 };
	uint32_t zero = 0;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &zero, &tk, BPF_ANY), 0);
	expect_drop(fx, prog, fx->tun, f, frame(f, 100, MAC2, MACR), VXDP_DROP_VXLAN_UNKNOWN_VNI, fx->tun);
	/* MAC2 is VNI's: in VNI2 it is unknown, flooded to VNI2's p4 only. */
	assert_int_equal(run_tun(fx, VNI2, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_FLOOD);
	assert_int_equal(d.n_clones, 1);
	assert_int_equal(d.clone_ifindex[0], fx->p4);
	/* Remote to remote: split horizon. */
	tk.vni = VNI;
	inet_pton(AF_INET, "198.51.100.2", tk.remote);
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &zero, &tk, BPF_ANY), 0);
	expect_drop(fx, prog, fx->tun, f, frame(f, 100, MACR6, MACR), VXDP_DROP_SPLIT_HORIZON, fx->tun);
	/* Broadcast from a remote: the three local ports, not the remote. */
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, BCAST, MACR), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_FLOOD);
	assert_int_equal(d.n_clones, 3);
	assert_int_equal(d.clone_ifindex[2], fx->d3);
	expect_drop(fx, prog, fx->tun, f, frame(f, 100, MAC2, BCAST), VXDP_DROP_INVALID_SRC_MAC, fx->tun);
}

/* A VNI's remote VTEPs are map `vteps`'s entries, each with its counters:
 * a VTEP kept across a flood list change keeps its entry and its counts;
 * one that leaves is refused and its entry gone; the VNI's deletion takes
 * the rest. */
static void test_vtep_entries_follow_the_flood_list(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100], r2[16] = { 0 }, r3[16] = { 0 };
	struct vxdp_decision d;
	struct vxdp_vtep_stats vs;
	inet_pton(AF_INET, "198.51.100.2", r2);
	inet_pton(AF_INET, "198.51.100.3", r3);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_REDIRECT);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r2, &vs), 0);
	assert_int_equal(vs.rx_packets, 1);
	assert_int_equal(vs.rx_bytes, 100);

	struct vxdp_flood_ent fl[3] = { { .ifindex = fx->p2, .flags = VXDP_FDB_VETH },
					{ .flags = VXDP_FDB_REMOTE }, { .flags = VXDP_FDB_REMOTE } };
	memcpy(fl[1].remote, r2, 16);
	memcpy(fl[2].remote, r3, 16);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 3), 0);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r2, &vs), 0);
	assert_int_equal(vs.rx_packets, 1); /* kept, not re-made */
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r3, &vs), 0);
	assert_int_equal(vs.rx_packets + vs.tx_packets, 0);

	/* .2 leaves: refused, its entry gone; .3 counts. */
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, (struct vxdp_flood_ent[]){ fl[0], fl[2] }, 2), 0);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r2, &vs), -ENOENT);
	struct vxdp_test_tunkey tk = { .vni = VNI };
	memcpy(tk.remote, r2, 16);
	uint32_t zero = 0;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "test_tunkey"), &zero, &tk, BPF_ANY), 0);
	expect_drop(fx, kdp_tun_prog_fd(fx->k), fx->tun, f, frame(f, 100, MAC2, MACR), VXDP_DROP_VXLAN_UNKNOWN_REMOTE,
		    fx->tun);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.3", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_REDIRECT);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r3, &vs), 0);
	assert_int_equal(vs.rx_packets, 1);

	assert_int_equal(kdp_vni_del(fx->k, VNI), 0);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, r3, &vs), -ENOENT);
}

/* A VNI's frames from the vxlan device read map rvnis only while its
 * entry says a vxlan port of it has ingress rules (VXDP_VNI_RULES_IN),
 * whichever of the two maps was written first. */
static uint16_t vni_flags(struct fx *fx, uint32_t vni)
{
	struct vxdp_vni v;
	assert_int_equal(bpf_map_lookup_elem(kdp_map_fd(fx->k, "vnis"), &vni, &v), 0);
	return v.flags;
}

static void test_vni_entry_flags_its_ingress_rules(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[100];
	struct vxdp_decision d;
	assert_false(vni_flags(fx, VNI) & VXDP_VNI_RULES_IN);
	/* rvnis first (no kdp_rules here: by hand), then the VNI written. */
	uint32_t vni = VNI;
	uint8_t hooks = VXDP_RVNI_INGRESS;
	assert_int_equal(bpf_map_update_elem(kdp_map_fd(fx->k, "rvnis"), &vni, &hooks, BPF_ANY), 0);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_REDIRECT);
	struct vxdp_flood_ent fl[2] = { { .ifindex = fx->p2, .flags = VXDP_FDB_VETH }, { .flags = VXDP_FDB_REMOTE } };
	inet_pton(AF_INET, "198.51.100.2", fl[1].remote);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 2), 0);
	assert_true(vni_flags(fx, VNI) & VXDP_VNI_RULES_IN);
	/* Now the rules path: no decision cached, the frame goes up. */
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, 0);
	/* Cleared (kdp_rules_vni_set does, before rvnis loses the VNI). */
	assert_int_equal(kdp_vni_rules_in(fx->k, VNI, false), 0);
	assert_false(vni_flags(fx, VNI) & VXDP_VNI_RULES_IN);
	assert_int_equal(run_tun(fx, VNI, "198.51.100.2", f, frame(f, 100, MAC2, MACR), &d), TC_ACT_REDIRECT);
	assert_int_equal(kdp_vni_rules_in(fx->k, VNI, true), 0);
	assert_true(vni_flags(fx, VNI) & VXDP_VNI_RULES_IN);
	/* A VNI with no entry: nothing to do. */
	assert_int_equal(kdp_vni_rules_in(fx->k, 4242, true), 0);
}

/* ---- loader -------------------------------------------------------------- */

static void on_entry(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	(void)v;
	unsigned *n = aux;
	if (key->vni == VNI)
		(*n)++;
}

static void test_fdb_dump_and_del(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	unsigned n = 0;
	assert_int_equal(kdp_fdb_dump(fx->k, on_entry, &n), 4);
	assert_int_equal(n, 4);
	assert_int_equal(kdp_fdb_del(fx->k, VNI, MAC2), 0);
	assert_int_equal(kdp_fdb_del(fx->k, VNI, MAC2), -ENOENT);
	n = 0;
	assert_int_equal(kdp_fdb_dump(fx->k, on_entry, &n), 3);
	uint8_t f[100];
	struct vxdp_decision d;
	assert_int_equal(run_port(fx, fx->p1, f, frame(f, 100, MAC2, MAC1), &d), TC_ACT_SHOT);
	assert_int_equal(d.kind, VXDP_V_FLOOD);
}

static bool tc_has_filter(const char *dev)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "tc filter show dev %s ingress 2>/dev/null | grep -q vxdp_port", dev);
	return system(cmd) == 0;
}

/* tcx is what this kernel gives; cls_bpf is the fallback, and close takes
 * our filters away (tcx links go with their fds). */
static void test_attach_tcx_and_cls_bpf_cleanup(void **state)
{
	(void)state;
	if (!in_netns)
		skip();
	struct kdp *k;
	assert_int_equal(kdp_open(&(struct kdp_opts){ .no_tun = true }, &k, NULL, 0), 0);
	assert_int_equal(kdp_port_add(k, if_nametoindex("p1"), &(struct kdp_port_opts){ .vni = 1, .attach = true }), 0);
	assert_int_equal(kdp_attach_kind(k), KDP_ATTACH_TCX);
	assert_false(tc_has_filter("p1"));
	kdp_close(k);
	assert_int_equal(kdp_open(&(struct kdp_opts){ .no_tun = true, .force_cls_bpf = true }, &k, NULL, 0), 0);
	assert_int_equal(kdp_port_add(k, if_nametoindex("p1"), &(struct kdp_port_opts){ .vni = 1, .attach = true }), 0);
	assert_int_equal(kdp_attach_kind(k), KDP_ATTACH_CLS_BPF);
	assert_true(tc_has_filter("p1"));
	assert_int_equal(kdp_port_del(k, if_nametoindex("p1")), 0);
	assert_false(tc_has_filter("p1"));
	assert_int_equal(kdp_port_add(k, if_nametoindex("p1"), &(struct kdp_port_opts){ .vni = 1, .attach = true }), 0);
	kdp_close(k);
	assert_false(tc_has_filter("p1"));
	/* The vxlan device: made by open, gone after close. */
	assert_int_equal(kdp_open(&(struct kdp_opts){ .tun_name = "vxdpt1", .dstport = 4790 }, &k, NULL, 0), 0);
	assert_true(if_nametoindex("vxdpt1") > 0);
	kdp_close(k);
	assert_int_equal(if_nametoindex("vxdpt1"), 0);
}

int main(void)
{
	if (kdp_test_netns("test_vxdp_prog", (const char *[]){ "p1", "p2", "d3", "p4", NULL }, &in_netns) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counter_slots_are_each_ports_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_veth_redirect_peer_and_learn_upcall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_plain_redirect_and_histogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_sets_tunnel_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_split_horizon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_frames_dropped_by_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upcalls_rate_limited_per_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tun_delivers_learns_isolates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vtep_entries_follow_the_flood_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vni_entry_flags_its_ingress_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fdb_dump_and_del, setup, teardown),
		cmocka_unit_test(test_attach_tcx_and_cls_bpf_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
