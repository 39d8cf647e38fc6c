/* Unit tests of capture on the kernel datapath (bpf/vxdp_capture.h,
 * dp/kernel/kdp_capture.h): crafted frames fed with BPF_PROG_TEST_RUN to
 * the loaded programs, copies read back from the perf ring.  Flag off: no
 * copy; a port's direction on: one copy of that direction, whole, with
 * its port; a vxlan port's copy names its VNI and remote; off again: the
 * programs' flag is back to 0.
 *
 * Root only (else skipped); runs in a network namespace of its own. */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_diag.h"
#include "dp/kernel/kdp_link.h"
#include "kdp_netns.h"

enum { VNI = 99, MAX_COPIES = 8 };

static const uint8_t MAC1[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t MAC2[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t MACR[6] = { 0x02, 0, 0, 0, 0, 0x0a };

struct copy {
	struct vxdp_cap_meta m;
	uint8_t bytes[256];
};

struct fx {
	struct kdp *k;
	struct kdp_cap_reader *r;
	uint32_t p1, p2, tun;
	unsigned n;
	struct copy c[MAX_COPIES];
};

static bool in_netns;

static void on_copy(void *aux, const struct vxdp_cap_meta *m, const uint8_t *frame)
{
	struct fx *fx = aux;
	if (fx->n == MAX_COPIES)
		return;
	struct copy *c = &fx->c[fx->n++];
	c->m = *m;
	memcpy(c->bytes, frame, m->caplen < sizeof(c->bytes) ? m->caplen : sizeof(c->bytes));
}

static int setup(void **state)
{
	if (!in_netns)
		return 0;
	struct fx *fx = calloc(1, sizeof(*fx));
	assert_int_equal(kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "kcpt0" }, &fx->k, NULL, 0), 0);
	fx->tun = kdp_tun_ifindex(fx->k);
	fx->p1 = if_nametoindex("kcp1");
	fx->p2 = if_nametoindex("kcp2");
	assert_true(fx->p1 && fx->p2 && fx->tun);
	struct kdp_port_opts veth = { .vni = VNI, .flags = VXDP_PORT_VETH };
	assert_int_equal(kdp_port_add(fx->k, fx->p1, &veth), 0);
	assert_int_equal(kdp_port_add(fx->k, fx->p2, &veth), 0);
	struct vxdp_flood_ent fl[3] = {
		{ .ifindex = fx->p1, .flags = VXDP_FDB_VETH },
		{ .ifindex = fx->p2, .flags = VXDP_FDB_VETH },
		{ .flags = VXDP_FDB_REMOTE },
	};
	inet_pton(AF_INET, "198.51.100.2", fl[2].remote);
	assert_int_equal(kdp_vni_set(fx->k, VNI, NULL, fl, 3), 0);
	struct vxdp_fdb_val v1 = { .ifindex = fx->p1, .flags = VXDP_FDB_VETH };
	struct vxdp_fdb_val v2 = { .ifindex = fx->p2, .flags = VXDP_FDB_VETH };
	struct vxdp_fdb_val vr = { .flags = VXDP_FDB_REMOTE };
	inet_pton(AF_INET, "198.51.100.2", vr.remote);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC1, &v1), 0);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MAC2, &v2), 0);
	assert_int_equal(kdp_fdb_add(fx->k, VNI, MACR, &vr), 0);
	assert_int_equal(kdp_cap_reader_open(fx->k, 8, on_copy, fx, &fx->r), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	if (fx) {
		kdp_cap_reader_close(fx->r);
		kdp_close(fx->k);
		free(fx);
	}
	return 0;
}

static size_t frame(uint8_t *buf, size_t len, const uint8_t *dst, const uint8_t *src, uint8_t mark)
{
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = 0x08;
	buf[13] = 0x00;
	for (size_t i = 14; i < len; i++)
		buf[i] = (uint8_t)(i + mark);
	return len;
}

/* Feeds `data` to `prog` as if from `ifindex`, then reads the ring. */
static int run(struct fx *fx, int prog, uint32_t ifindex, const void *data, size_t len)
{
	struct __sk_buff ctx = { .ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	assert_int_equal(bpf_prog_test_run_opts(prog, &o), 0);
	fx->n = 0;
	assert_true(kdp_cap_reader_poll(fx->r, 0) >= 0);
	return (int)o.retval;
}

static void test_off_no_copy_on_copies_with_direction(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	uint8_t f[120];
	frame(f, sizeof(f), MAC2, MAC1, 1);
	uint32_t on = 7;
	assert_int_equal(kdp_cap_on(fx->k, &on), 0);
	assert_int_equal(on, 0);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 0);

	/* p1 in: the frame as it came, tagged in and p1. */
	struct vxdp_cap_key k1 = { .ifindex = fx->p1 }, k2 = { .ifindex = fx->p2 };
	assert_int_equal(kdp_cap_set(fx->k, &k1, VXDP_CAP_IN, NULL, 0), 0);
	assert_int_equal(kdp_cap_on(fx->k, &on), 0);
	assert_int_equal(on, 1);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 1);
	assert_int_equal(fx->c[0].m.dir, VXDP_CAP_IN);
	assert_int_equal(fx->c[0].m.ifindex, fx->p1);
	assert_int_equal(fx->c[0].m.len, sizeof(f));
	assert_int_equal(fx->c[0].m.caplen, sizeof(f));
	assert_memory_equal(fx->c[0].bytes, f, sizeof(f));

	/* p1 out only: a frame from p1 is not copied; one to p1 (from p2) is. */
	assert_int_equal(kdp_cap_set(fx->k, &k1, VXDP_CAP_OUT, NULL, 0), 0);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 0);
	uint8_t g[80];
	frame(g, sizeof(g), MAC1, MAC2, 2);
	assert_int_equal(run(fx, kdp_port_prog_fd(fx->k), fx->p2, g, sizeof(g)), TC_ACT_REDIRECT);
	assert_int_equal(fx->n, 1);
	assert_int_equal(fx->c[0].m.dir, VXDP_CAP_OUT);
	assert_int_equal(fx->c[0].m.ifindex, fx->p1);
	assert_memory_equal(fx->c[0].bytes, g, sizeof(g));

	/* both on two ports: one frame p2 -> p1 makes in(p2) then out(p1). */
	assert_int_equal(kdp_cap_set(fx->k, &k2, VXDP_CAP_IN | VXDP_CAP_OUT, NULL, 0), 0);
	assert_int_equal(kdp_cap_on(fx->k, &on), 0);
	assert_int_equal(on, 2);
	run(fx, kdp_port_prog_fd(fx->k), fx->p2, g, sizeof(g));
	assert_int_equal(fx->n, 2);
	assert_int_equal(fx->c[0].m.dir, VXDP_CAP_IN);
	assert_int_equal(fx->c[0].m.ifindex, fx->p2);
	assert_int_equal(fx->c[1].m.dir, VXDP_CAP_OUT);
	assert_int_equal(fx->c[1].m.ifindex, fx->p1);
	struct vxdp_cap_state st;
	assert_int_equal(kdp_cap_state(fx->k, &k1, &st), 0);
	assert_int_equal(st.captured, 3); /* in once, then out twice: a change of dirs keeps the counts */
	assert_int_equal(st.dropped, 0);

	/* all off (one by one, then what is left by clear): the flag is 0
	 * again and nothing is copied. */
	assert_int_equal(kdp_cap_set(fx->k, &k1, 0, NULL, 0), 0);
	assert_int_equal(kdp_cap_on(fx->k, &on), 0);
	assert_int_equal(on, 1);
	assert_int_equal(kdp_cap_clear(fx->k), 0);
	assert_int_equal(kdp_cap_state(fx->k, &k2, &st), -ENOENT);
	assert_int_equal(kdp_cap_on(fx->k, &on), 0);
	assert_int_equal(on, 0);
	run(fx, kdp_port_prog_fd(fx->k), fx->p2, g, sizeof(g));
	assert_int_equal(fx->n, 0);
	assert_int_equal(kdp_cap_state(fx->k, &k1, &st), -ENOENT);
}

/* A vxlan port's key is (the vxlan device, VNI): out = frames sent to a
 * remote of that VNI (tunnel key and remote in the copy), in = frames
 * decapsulated in it; a flood copies once per target that captures. */
static void test_vxlan_key_and_flood(void **state)
{
	struct fx *fx = *state;
	if (!fx)
		skip();
	struct vxdp_cap_key kt = { .ifindex = fx->tun, .vni = VNI }, kother = { .ifindex = fx->tun, .vni = VNI + 1 };
	assert_int_equal(kdp_cap_set(fx->k, &kother, VXDP_CAP_IN | VXDP_CAP_OUT, NULL, 0), 0);
	uint8_t f[100];
	frame(f, sizeof(f), MACR, MAC1, 3);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 0); /* another VNI's key */
	assert_int_equal(kdp_cap_set(fx->k, &kt, VXDP_CAP_OUT, NULL, 0), 0);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 1);
	assert_int_equal(fx->c[0].m.dir, VXDP_CAP_OUT);
	assert_int_equal(fx->c[0].m.vni, VNI);
	assert_int_equal(fx->c[0].m.ifindex, fx->tun);
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, fx->c[0].m.remote, a, sizeof(a));
	assert_string_equal(a, "198.51.100.2");
	assert_memory_equal(fx->c[0].bytes, f, sizeof(f));

	/* Broadcast from p1: flooded to p2 and the remote; p2 out and the
	 * VNI out capture: two copies, p2's and the remote's. */
	struct vxdp_cap_key k2 = { .ifindex = fx->p2 };
	assert_int_equal(kdp_cap_set(fx->k, &k2, VXDP_CAP_OUT, NULL, 0), 0);
	static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	frame(f, sizeof(f), bc, MAC1, 4);
	run(fx, kdp_port_prog_fd(fx->k), fx->p1, f, sizeof(f));
	assert_int_equal(fx->n, 2);
	bool saw_p2 = false, saw_tun = false;
	for (unsigned i = 0; i < fx->n; i++) {
		saw_p2 |= fx->c[i].m.ifindex == fx->p2 && fx->c[i].m.dir == VXDP_CAP_OUT;
		saw_tun |= fx->c[i].m.ifindex == fx->tun && fx->c[i].m.vni == VNI;
	}
	assert_true(saw_p2 && saw_tun);

	/* In: a frame decapsulated in VNI from the remote. */
	assert_int_equal(kdp_cap_set(fx->k, &kt, VXDP_CAP_IN, NULL, 0), 0);
	int tfd = kdp_map_fd(fx->k, "test_tunkey");
	uint32_t zero = 0;
	struct vxdp_test_tunkey tk = { .vni = VNI };
	inet_pton(AF_INET, "198.51.100.2", tk.remote);
	assert_int_equal(bpf_map_update_elem(tfd, &zero, &tk, BPF_ANY), 0);
	frame(f, sizeof(f), MAC1, MACR, 5);
	run(fx, kdp_tun_prog_fd(fx->k), fx->tun, f, sizeof(f));
	assert_int_equal(fx->n, 1);
	assert_int_equal(fx->c[0].m.dir, VXDP_CAP_IN);
	assert_int_equal(fx->c[0].m.vni, VNI);
	assert_memory_equal(fx->c[0].bytes, f, sizeof(f));

	/* The per-VTEP counters (bpf/vxdp_diag.h) saw it all: 2 frames to
	 * 198.51.100.2 (unicast, flood copy), 1 from it. */
	struct vxdp_vtep_stats vs;
	uint8_t addr[16] = { 0 };
	inet_pton(AF_INET, "198.51.100.2", addr);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI, 0, addr, &vs), 0);
	assert_int_equal(vs.tx_packets, 3); /* the VNI-key test above sent one more */
	assert_int_equal(vs.rx_packets, 1);
	assert_int_equal(vs.rx_bytes, sizeof(f));
	assert_true(vs.last_rx_ns > 0 && vs.last_tx_ns > 0);
	assert_int_equal(kdp_vtep_stats_read(fx->k, VNI + 1, 0, addr, &vs), -ENOENT);
}

/* kdp_prog_attached (kdp_diag.h): tcx and cls_bpf, detached from
 * outside, device gone. */
static void test_attached_check(void **state)
{
	(void)state;
	if (!in_netns)
		skip();
	for (int cls = 0; cls < 2; cls++) {
		struct kdp *k;
		assert_int_equal(kdp_open(&(struct kdp_opts){ .no_tun = true, .force_cls_bpf = cls }, &k, NULL, 0), 0);
		assert_int_equal(system("ip link add kcp9 type veth peer name kcp9vm"), 0);
		uint32_t idx = if_nametoindex("kcp9");
		assert_int_equal(kdp_port_add(k, idx, &(struct kdp_port_opts){ .vni = 1, .attach = true }), 0);
		assert_int_equal(kdp_prog_attached(k, idx, kdp_port_prog_fd(k)), 1);
		assert_int_equal(kdp_prog_attached(k, idx, kdp_tun_prog_fd(k)), 0); /* another program */
		if (cls) {
			assert_int_equal(system("tc filter del dev kcp9 ingress"), 0);
			assert_int_equal(kdp_prog_attached(k, idx, kdp_port_prog_fd(k)), 0);
		}
		assert_int_equal(system("ip link del kcp9"), 0);
		assert_int_equal(kdp_prog_attached(k, idx, kdp_port_prog_fd(k)), -ENODEV);
		kdp_close(k);
	}
}

int main(void)
{
	if (kdp_test_netns("test_vxdp_capture", (const char *[]){ "kcp1", "kcp2", NULL }, &in_netns) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_off_no_copy_on_copies_with_direction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vxlan_key_and_flood, setup, teardown),
		cmocka_unit_test(test_attached_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
