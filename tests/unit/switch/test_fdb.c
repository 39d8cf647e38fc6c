/* Unit tests for src/switch/fdb.c: learning, invalid source MACs, moves,
 * ageing with a warped clock, the learned-entry cap under a MAC flood,
 * the per-VNI cap, VNI isolation, static entries, del/flush and dump. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "switch/fdb.h"
#include "util/failpoint.h"

#define SEC 1000000000ull

static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
static const uint8_t mac_c[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t vtep1_ip[4] = { 192, 0, 2, 1 };
static const uint8_t vtep2_ip[4] = { 192, 0, 2, 2 };

/* A distinct locally administered unicast MAC per index. */
static void mac_from_index(uint32_t i, uint8_t mac[6])
{
	mac[0] = 0x06;
	mac[1] = 0x01;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

static struct fdb *fdb_small(uint32_t max_learned, uint32_t max_static)
{
	struct fdb_config config = {
		.max_learned = max_learned,
		.max_static = max_static,
		.hash_seed = 0x1234,
	};
	struct fdb *fdb;
	assert_int_equal(fdb_create(&config, &fdb), 0);
	assert_non_null(fdb);
	return fdb;
}

static void assert_dst_is_port(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
			       uint64_t now, uint16_t port)
{
	struct fdb_dst dst;
	assert_true(fdb_lookup(fdb, vni, mac, now, &dst));
	assert_int_equal(dst.type, FDB_DST_PORT);
	assert_int_equal(dst.port, port);
}

static void test_learn_then_lookup(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), dst;
	struct fdb_stats st;

	assert_false(fdb_lookup(fdb, 10, mac_a, 0, &dst));
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, 1 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, 2 * SEC, 1);
	/* Refreshing the same MAC is not a second learning. */
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, 3 * SEC), 0);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.learned, 1);
	assert_int_equal(st.moved, 0);
	assert_int_equal(st.n_learned, 1);
	assert_int_equal(fdb_count_vni(fdb, 10), 1);
	assert_int_equal(fdb_count_vni(fdb, 11), 0);
	fdb_destroy(fdb);
	fdb_destroy(NULL);
}

static void test_invalid_source_macs_are_never_learnt(void **state)
{
	(void)state;
	static const uint8_t bad[][6] = {
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, /* broadcast */
		{ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }, /* IPv4 multicast */
		{ 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 }, /* IPv6 multicast */
		{ 0x01, 0x80, 0xc2, 0x00, 0x00, 0x00 }, /* STP */
		{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* zero */
	};
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), dst;
	struct fdb_stats st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(fdb_mac_is_learnable(bad[i]));
		assert_int_equal(fdb_learn(fdb, 10, bad[i], &p1, SEC), -EINVAL);
		assert_false(fdb_lookup(fdb, 10, bad[i], SEC, &dst));
		assert_int_equal(fdb_add_static(fdb, 10, bad[i], &p1, SEC), -EINVAL);
	}
	assert_true(fdb_mac_is_learnable(mac_a));
	/* Only the I/G bit of the first byte makes a group address. */
	const uint8_t almost_zero[6] = { 0, 0, 0, 0, 0, 1 };
	assert_true(fdb_mac_is_learnable(almost_zero));
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.invalid_src, 5);
	assert_int_equal(st.n_learned, 0);
	assert_int_equal(st.learned, 0);
	fdb_destroy(fdb);
}

static void test_bad_vni_or_dst_is_refused(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), none;
	memset(&none, 0, sizeof(none));
	uint8_t junk[16] = { 1, 2, 3, 4 };

	assert_int_equal(fdb_learn(fdb, FDB_VNI_MAX + 1, mac_a, &p1, 0), -EINVAL);
	assert_int_equal(fdb_learn(fdb, 1, mac_a, &none, 0), -EINVAL);
	struct fdb_dst bad_family = fdb_dst_vtep(7, 5, junk);
	assert_int_equal(bad_family.type, FDB_DST_NONE);
	assert_int_equal(fdb_learn(fdb, 1, mac_a, &bad_family, 0), -EINVAL);
	assert_int_equal(fdb_learn(fdb, FDB_VNI_MAX, mac_a, &p1, 0), 0);
	fdb_destroy(fdb);
}

static void test_vtep_dst_ignores_bytes_beyond_ipv4(void **state)
{
	(void)state;
	uint8_t with_junk[16], clean[16] = { 0 };
	memset(with_junk, 0xee, sizeof(with_junk));
	memcpy(with_junk, vtep1_ip, 4);
	memcpy(clean, vtep1_ip, 4);
	struct fdb_dst a = fdb_dst_vtep(7, 4, with_junk), b = fdb_dst_vtep4(7, vtep1_ip);
	struct fdb_dst c = fdb_dst_vtep(7, 4, clean), other_port = fdb_dst_vtep4(8, vtep1_ip);
	struct fdb_dst v6 = fdb_dst_vtep6(7, clean);

	assert_true(fdb_dst_equal(&a, &b));
	assert_true(fdb_dst_equal(&a, &c));
	assert_false(fdb_dst_equal(&a, &other_port));
	assert_false(fdb_dst_equal(&a, &v6));
}

static void test_move_to_other_port_and_vtep(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), p2 = fdb_dst_port(2);
	struct fdb_dst v1 = fdb_dst_vtep4(9, vtep1_ip), v2 = fdb_dst_vtep4(9, vtep2_ip), dst;
	struct fdb_stats st;

	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, SEC), 0);
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p2, 2 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, 2 * SEC, 2);
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &v1, 3 * SEC), 0);
	assert_true(fdb_lookup(fdb, 10, mac_a, 3 * SEC, &dst));
	assert_true(fdb_dst_equal(&dst, &v1));
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &v2, 4 * SEC), 0);
	assert_true(fdb_lookup(fdb, 10, mac_a, 4 * SEC, &dst));
	assert_true(fdb_dst_equal(&dst, &v2));

	fdb_get_stats(fdb, &st);
	assert_int_equal(st.learned, 1);
	assert_int_equal(st.moved, 3);
	assert_int_equal(st.n_learned, 1);
	fdb_destroy(fdb);
}

static void test_ageing_with_warped_time(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), dst;
	struct fdb_stats st;
	const uint64_t t0 = 1000 * SEC;

	assert_int_equal(fdb_get_ageing(fdb), 300 * SEC);
	fdb_learn(fdb, 10, mac_a, &p1, t0);
	fdb_learn(fdb, 10, mac_b, &p1, t0);
	/* One nanosecond before the deadline it still forwards... */
	assert_true(fdb_lookup(fdb, 10, mac_a, t0 + 300 * SEC - 1, &dst));
	assert_int_equal(fdb_age(fdb, t0 + 300 * SEC - 1), 0);
	/* ...a frame from b refreshes it... */
	fdb_learn(fdb, 10, mac_b, &p1, t0 + 200 * SEC);
	/* ...and at the deadline a is gone even before a sweep. */
	assert_false(fdb_lookup(fdb, 10, mac_a, t0 + 300 * SEC, &dst));
	assert_true(fdb_lookup(fdb, 10, mac_b, t0 + 300 * SEC, &dst));
	assert_int_equal(fdb_age(fdb, t0 + 300 * SEC), 1);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.aged, 1);
	assert_int_equal(st.n_learned, 1);
	assert_int_equal(fdb_count_vni(fdb, 10), 1);
	assert_int_equal(fdb_age(fdb, t0 + 500 * SEC), 1);
	assert_int_equal(fdb_count_vni(fdb, 10), 0);

	/* Configurable: 10 s. */
	fdb_set_ageing(fdb, 10 * SEC);
	assert_int_equal(fdb_get_ageing(fdb), 10 * SEC);
	fdb_learn(fdb, 10, mac_c, &p1, t0);
	assert_true(fdb_lookup(fdb, 10, mac_c, t0 + 9 * SEC, &dst));
	assert_false(fdb_lookup(fdb, 10, mac_c, t0 + 10 * SEC, &dst));
	/* Relearning an expired, unswept entry counts as aged + learned. */
	struct fdb_dst p2 = fdb_dst_port(2);
	assert_int_equal(fdb_learn(fdb, 10, mac_c, &p2, t0 + 20 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_c, t0 + 20 * SEC, 2);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.aged, 3);
	assert_int_equal(st.moved, 0);
	fdb_set_ageing(fdb, 0);
	assert_int_equal(fdb_get_ageing(fdb), FDB_DEFAULT_AGEING_NS);
	/* Ageing off: nothing expires, however late. */
	fdb_set_ageing(fdb, FDB_AGEING_NEVER);
	assert_true(fdb_lookup(fdb, 10, mac_c, UINT64_MAX, &dst));
	assert_int_equal(fdb_age(fdb, UINT64_MAX), 0);
	fdb_destroy(fdb);
}

static void test_mac_flood_is_capped_and_counted(void **state)
{
	(void)state;
	enum { CAP = 1000, FLOOD = 100000 };
	struct fdb *fdb = fdb_small(CAP, 8);
	struct fdb_dst p1 = fdb_dst_port(1), p2 = fdb_dst_port(2), p3 = fdb_dst_port(3);
	struct fdb_stats st;
	uint8_t mac[6];

	assert_int_equal(fdb_add_static(fdb, 10, mac_a, &p1, 0), 0);
	assert_int_equal(fdb_learn(fdb, 10, mac_b, &p1, 0), 0);
	for (uint32_t i = 0; i < FLOOD; i++) {
		mac_from_index(i, mac);
		int err = fdb_learn(fdb, 10, mac, &p2, SEC);
		assert_true(err == 0 || err == -ENOSPC);
	}
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_learned, CAP);
	assert_int_equal(st.learned, CAP);
	assert_int_equal(st.refused_full, FLOOD - (CAP - 1));
	assert_int_equal(st.n_static, 1);
	/* What was there before the flood still forwards. */
	assert_dst_is_port(fdb, 10, mac_a, 2 * SEC, 1);
	assert_dst_is_port(fdb, 10, mac_b, 2 * SEC, 1);
	/* Static entries are exempt from the learned cap. */
	assert_int_equal(fdb_add_static(fdb, 10, mac_c, &p3, 2 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_c, 2 * SEC, 3);
	/* Known MACs still move while the table is full. */
	assert_int_equal(fdb_learn(fdb, 10, mac_b, &p3, 3 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_b, 3 * SEC, 3);

	/* Once the flood ages out (learnt at 1 s), its slots are reusable;
	 * mac_b, refreshed at 3 s, is still there and keeps its slot. */
	assert_int_equal(fdb_age(fdb, 302 * SEC), CAP - 1);
	assert_dst_is_port(fdb, 10, mac_b, 302 * SEC, 3);
	for (uint32_t i = 0; i < CAP - 1; i++) {
		mac_from_index(FLOOD + i, mac);
		assert_int_equal(fdb_learn(fdb, 10, mac, &p2, 302 * SEC), 0);
	}
	mac_from_index(FLOOD + CAP, mac);
	assert_int_equal(fdb_learn(fdb, 10, mac, &p2, 302 * SEC), -ENOSPC);
	assert_dst_is_port(fdb, 10, mac_a, 302 * SEC, 1);
	fdb_destroy(fdb);
}

/* max-macs: one port's learned MACs are capped; the others learn on, a
 * MAC cannot move into a full port, static entries and flushes keep the
 * count right, and a forgotten port starts clean. */
static void test_per_port_cap(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(1000, 8);
	struct fdb_dst p5 = fdb_dst_port(5), p6 = fdb_dst_port(6);
	struct fdb_port_stats ps;
	uint8_t mac[6];
	assert_int_equal(fdb_set_port_max(fdb, 5, 3), 0);
	assert_int_equal(fdb_set_port_max(fdb, FDB_PORT_LIMIT, 3), -ERANGE);
	for (uint32_t i = 0; i < 10; i++) {
		mac_from_index(i, mac);
		assert_int_equal(fdb_learn(fdb, 10, mac, &p5, SEC), i < 3 ? 0 : -ENOSPC);
	}
	fdb_get_port_stats(fdb, 5, &ps);
	assert_int_equal(ps.learned, 3);
	assert_int_equal(ps.max, 3);
	assert_int_equal(ps.refused, 7);
	for (uint32_t i = 100; i < 150; i++) { /* the other port is not capped */
		mac_from_index(i, mac);
		assert_int_equal(fdb_learn(fdb, 10, mac, &p6, SEC), 0);
	}
	mac_from_index(100, mac); /* moving into the full port: refused, stays */
	assert_int_equal(fdb_learn(fdb, 10, mac, &p5, SEC), -ENOSPC);
	assert_dst_is_port(fdb, 10, mac, SEC, 6);
	assert_int_equal(fdb_add_static(fdb, 10, mac_a, &p5, SEC), 0); /* statics do not count */
	mac_from_index(0, mac); /* moving out frees a place */
	assert_int_equal(fdb_learn(fdb, 10, mac, &p6, SEC), 0);
	mac_from_index(100, mac);
	assert_int_equal(fdb_learn(fdb, 10, mac, &p5, SEC), 0);
	fdb_get_port_stats(fdb, 5, &ps);
	assert_int_equal(ps.learned, 3);
	fdb_get_port_stats(fdb, 6, &ps);
	assert_int_equal(ps.learned, 50);
	struct fdb_flush_filter f = { .vni = FDB_VNI_ANY, .dst = &p5, .kinds = FDB_FLUSH_LEARNED };
	fdb_flush(fdb, &f);
	fdb_get_port_stats(fdb, 5, &ps);
	assert_int_equal(ps.learned, 0);
	fdb_port_forget(fdb, 5);
	fdb_get_port_stats(fdb, 5, &ps);
	assert_int_equal(ps.max, 0);
	assert_int_equal(ps.refused, 0);
	fdb_destroy(fdb);
}

static void test_per_vni_cap(void **state)
{
	(void)state;
	struct fdb_config config = { .max_learned = 100, .max_learned_per_vni = 10, .hash_seed = 7 };
	struct fdb *fdb;
	assert_int_equal(fdb_create(&config, &fdb), 0);
	struct fdb_dst p1 = fdb_dst_port(1);
	struct fdb_stats st;
	uint8_t mac[6];

	for (uint32_t i = 0; i < 10; i++) {
		mac_from_index(i, mac);
		assert_int_equal(fdb_learn(fdb, 1, mac, &p1, 0), 0);
	}
	mac_from_index(10, mac);
	assert_int_equal(fdb_learn(fdb, 1, mac, &p1, 0), -ENOSPC);
	/* A flood in VNI 1 does not starve VNI 2. */
	assert_int_equal(fdb_learn(fdb, 2, mac, &p1, 0), 0);
	assert_int_equal(fdb_count_vni(fdb, 1), 10);
	assert_int_equal(fdb_count_vni(fdb, 2), 1);
	/* Deleting one frees a place in its VNI only. */
	mac_from_index(3, mac);
	assert_int_equal(fdb_del(fdb, 1, mac), 0);
	mac_from_index(11, mac);
	assert_int_equal(fdb_learn(fdb, 1, mac, &p1, 0), 0);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.refused_full, 1);
	assert_int_equal(st.n_learned, 11);
	fdb_destroy(fdb);
}

/* `set fdb-max` at run time: lowering keeps what is there and refuses new
 * MACs; raising lets the VNI learn again; never above the table; static
 * entries are not counted against it. */
static void test_per_vni_cap_changes_at_run_time(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(64, 8);
	struct fdb_dst p1 = fdb_dst_port(1);
	uint8_t mac[6];

	assert_int_equal(fdb_get_max_learned_per_vni(fdb), 0);
	assert_int_equal(fdb_get_max_learned(fdb), 64);
	for (uint32_t i = 0; i < 20; i++) {
		mac_from_index(i, mac);
		assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 0), 0);
	}
	assert_int_equal(fdb_set_max_learned_per_vni(fdb, 65), -ERANGE);
	assert_int_equal(fdb_get_max_learned_per_vni(fdb), 0);
	assert_int_equal(fdb_set_max_learned_per_vni(fdb, 10), 0);
	assert_int_equal(fdb_get_max_learned_per_vni(fdb), 10);
	/* Nothing is evicted; every old entry is still found and refreshed. */
	assert_int_equal(fdb_count_vni(fdb, 5), 20);
	for (uint32_t i = 0; i < 20; i++) {
		mac_from_index(i, mac);
		assert_dst_is_port(fdb, 5, mac, 1, 1);
		assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 1), 0);
	}
	mac_from_index(100, mac);
	assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 1), -ENOSPC);
	/* Static entries still go in. */
	mac_from_index(200, mac);
	assert_int_equal(fdb_add_static(fdb, 5, mac, &p1, 1), 0);
	/* Another VNI has its own 10. */
	for (uint32_t i = 0; i < 10; i++) {
		mac_from_index(300 + i, mac);
		assert_int_equal(fdb_learn(fdb, 6, mac, &p1, 1), 0);
	}
	mac_from_index(310, mac);
	assert_int_equal(fdb_learn(fdb, 6, mac, &p1, 1), -ENOSPC);
	/* Raised: VNI 5 learns again up to the new cap. */
	assert_int_equal(fdb_set_max_learned_per_vni(fdb, 22), 0);
	mac_from_index(100, mac);
	assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 2), 0);
	mac_from_index(101, mac);
	assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 2), 0);
	mac_from_index(102, mac);
	assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 2), -ENOSPC);
	/* 0 lifts it; the table's own 64 still holds. */
	assert_int_equal(fdb_set_max_learned_per_vni(fdb, 0), 0);
	assert_int_equal(fdb_learn(fdb, 5, mac, &p1, 2), 0);
	fdb_destroy(fdb);
}

/* Per-VNI bookkeeping must be recycled when a VNI's last learned entry
 * goes, or churn across many VNIs would exhaust it. */
static void test_vni_churn_recycles_counts(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(4, 1);
	struct fdb_dst p1 = fdb_dst_port(1);

	for (uint32_t vni = 1; vni <= 1000; vni++) {
		assert_int_equal(fdb_learn(fdb, vni, mac_a, &p1, vni * SEC), 0);
		assert_int_equal(fdb_count_vni(fdb, vni), 1);
		if (vni % 2)
			assert_int_equal(fdb_del(fdb, vni, mac_a), 0);
		else
			assert_int_equal(fdb_age(fdb, vni * SEC + 300 * SEC), 1);
		assert_int_equal(fdb_count_vni(fdb, vni), 0);
	}
	struct fdb_stats st;
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_learned, 0);
	assert_int_equal(st.refused_full, 0);
	fdb_destroy(fdb);
}

static void test_same_mac_in_two_vnis_is_two_entries(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), p2 = fdb_dst_port(2), dst;
	struct fdb_stats st;

	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, SEC), 0);
	assert_int_equal(fdb_learn(fdb, 20, mac_a, &p2, SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, SEC, 1);
	assert_dst_is_port(fdb, 20, mac_a, SEC, 2);
	assert_false(fdb_lookup(fdb, 30, mac_a, SEC, &dst));
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.moved, 0);
	assert_int_equal(st.learned, 2);

	assert_int_equal(fdb_del(fdb, 10, mac_a), 0);
	assert_false(fdb_lookup(fdb, 10, mac_a, SEC, &dst));
	assert_dst_is_port(fdb, 20, mac_a, SEC, 2);
	assert_int_equal(fdb_del(fdb, 10, mac_a), -ENOENT);
	fdb_destroy(fdb);
}

static void test_static_entries(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 2);
	struct fdb_dst p1 = fdb_dst_port(1), p2 = fdb_dst_port(2);
	struct fdb_dst v1 = fdb_dst_vtep4(9, vtep1_ip), dst;
	struct fdb_stats st;

	assert_int_equal(fdb_add_static(fdb, 10, mac_a, &p1, 0), 0);
	/* Learning never moves a static entry: a spoofed source from port 2
	 * does not hijack it. */
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p2, SEC), -EEXIST);
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, SEC, 1);
	/* Never ages. */
	assert_int_equal(fdb_age(fdb, 100000 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, 100000 * SEC, 1);
	/* Replace with a VTEP destination. */
	assert_int_equal(fdb_add_static(fdb, 10, mac_a, &v1, 0), 0);
	assert_true(fdb_lookup(fdb, 10, mac_a, SEC, &dst));
	assert_true(fdb_dst_equal(&dst, &v1));

	/* A learned entry converts to static and leaves the learned count. */
	assert_int_equal(fdb_learn(fdb, 10, mac_b, &p2, 0), 0);
	assert_int_equal(fdb_count_vni(fdb, 10), 1);
	assert_int_equal(fdb_add_static(fdb, 10, mac_b, &p1, 0), 0);
	assert_int_equal(fdb_count_vni(fdb, 10), 0);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_static, 2);
	assert_int_equal(st.n_learned, 0);
	assert_int_equal(st.static_conflicts, 1);
	/* max_static. */
	assert_int_equal(fdb_add_static(fdb, 10, mac_c, &p1, 0), -ENOSPC);
	assert_int_equal(fdb_del(fdb, 10, mac_b), 0);
	assert_int_equal(fdb_add_static(fdb, 10, mac_c, &p1, 0), 0);
	fdb_destroy(fdb);
}

struct evpn_seen {
	unsigned n, n_evpn;
	bool a_is_evpn;
};

static int evpn_collect(const struct fdb_entry_info *e, void *ctx)
{
	struct evpn_seen *s = ctx;
	s->n++;
	s->n_evpn += e->evpn;
	if (!memcmp(e->mac, mac_a, 6))
		s->a_is_evpn = e->evpn && e->is_static;
	return 0;
}

/* EVPN entries: static-like, but the operator's own static wins, only
 * fdb_del_evpn removes them, and a frame from a local port takes the MAC
 * over (it moved to this host). */
static void test_evpn_entries(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), v1 = fdb_dst_vtep4(9, vtep1_ip), v2 = fdb_dst_vtep4(9, vtep2_ip), dst;
	struct fdb_stats st;

	assert_int_equal(fdb_add_evpn(fdb, 10, mac_a, &v1, 0), 0);
	assert_int_equal(fdb_age(fdb, 100000 * SEC), 0);
	assert_true(fdb_lookup(fdb, 10, mac_a, 100000 * SEC, &dst));
	assert_true(fdb_dst_equal(&dst, &v1));
	/* A frame from another VTEP does not move it. */
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &v2, SEC), -EEXIST);
	/* A remote move is a replace. */
	assert_int_equal(fdb_add_evpn(fdb, 10, mac_a, &v2, 0), 0);
	assert_true(fdb_lookup(fdb, 10, mac_a, SEC, &dst) && fdb_dst_equal(&dst, &v2));
	/* fdb_del_evpn leaves other entries alone. */
	assert_int_equal(fdb_add_static(fdb, 10, mac_b, &v1, 0), 0);
	assert_int_equal(fdb_add_evpn(fdb, 10, mac_b, &v2, 0), -EEXIST);
	assert_int_equal(fdb_del_evpn(fdb, 10, mac_b), -ENOENT);
	assert_true(fdb_lookup(fdb, 10, mac_b, SEC, &dst) && fdb_dst_equal(&dst, &v1));
	/* The dump says which is which. */
	struct evpn_seen ctx = { 0 };
	assert_int_equal(fdb_dump(fdb, 10, SEC, evpn_collect, &ctx), 0);
	assert_int_equal(ctx.n, 2);
	assert_int_equal(ctx.n_evpn, 1);
	assert_true(ctx.a_is_evpn);
	/* Mobility: vm a now sends from local port 1: a learned entry there. */
	assert_int_equal(fdb_learn(fdb, 10, mac_a, &p1, 2 * SEC), 0);
	assert_dst_is_port(fdb, 10, mac_a, 2 * SEC, 1);
	assert_int_equal(fdb_del_evpn(fdb, 10, mac_a), -ENOENT);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_static, 1);
	assert_int_equal(st.n_learned, 1);
	assert_int_equal(st.moved, 1);
	/* ... and ages like any learned entry. */
	assert_int_equal(fdb_age(fdb, 1000 * SEC), 1);
	/* An EVPN entry goes with fdb_del_evpn. */
	assert_int_equal(fdb_add_evpn(fdb, 10, mac_c, &v1, 0), 0);
	assert_int_equal(fdb_del_evpn(fdb, 10, mac_c), 0);
	assert_false(fdb_lookup(fdb, 10, mac_c, SEC, &dst));
	fdb_destroy(fdb);
}

static void test_flush_filters(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(64, 8);
	struct fdb_dst p1 = fdb_dst_port(1), p2 = fdb_dst_port(2);
	struct fdb_dst v1 = fdb_dst_vtep4(9, vtep1_ip), v2 = fdb_dst_vtep4(9, vtep2_ip);
	struct fdb_stats st;
	uint8_t mac[6];

	for (uint32_t i = 0; i < 40; i++) {
		const struct fdb_dst *d = (i % 4 == 0) ? &p1 : (i % 4 == 1) ? &p2 : (i % 4 == 2) ? &v1 : &v2;
		mac_from_index(i, mac);
		assert_int_equal(fdb_learn(fdb, i < 20 ? 10 : 20, mac, d, 0), 0);
	}
	assert_int_equal(fdb_add_static(fdb, 10, mac_a, &p1, 0), 0);

	/* Port 1 goes away: its learned entries go, its static stays. */
	struct fdb_flush_filter by_port = { .vni = FDB_VNI_ANY, .dst = &p1 };
	assert_int_equal(fdb_flush(fdb, &by_port), 10);
	assert_dst_is_port(fdb, 10, mac_a, 0, 1);
	by_port.kinds = FDB_FLUSH_STATIC;
	assert_int_equal(fdb_flush(fdb, &by_port), 1);

	/* Every VTEP behind vxlan port 9, in VNI 10 only. */
	struct fdb_dst any_vtep = { .type = FDB_DST_VTEP, .port = 9 };
	struct fdb_flush_filter vteps_in_10 = { .vni = 10, .dst = &any_vtep };
	assert_int_equal(fdb_flush(fdb, &vteps_in_10), 10);
	/* One VTEP, all VNIs. */
	struct fdb_flush_filter one_vtep = { .vni = FDB_VNI_ANY, .dst = &v1 };
	assert_int_equal(fdb_flush(fdb, &one_vtep), 5);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_learned, 40 - 10 - 10 - 5);

	/* A whole VNI, learned and static. */
	assert_int_equal(fdb_add_static(fdb, 20, mac_b, &p2, 0), 0);
	struct fdb_flush_filter vni20 = { .vni = 20, .kinds = FDB_FLUSH_ALL };
	assert_int_equal(fdb_flush(fdb, &vni20), 5 + 5 + 1);
	assert_int_equal(fdb_count_vni(fdb, 20), 0);
	struct fdb_flush_filter all = { .vni = FDB_VNI_ANY, .kinds = FDB_FLUSH_ALL };
	assert_int_equal(fdb_flush(fdb, &all), 5);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_learned, 0);
	assert_int_equal(st.n_static, 0);
	assert_int_equal(st.aged, 0); /* flushing is not ageing */
	fdb_destroy(fdb);
}

struct dump_seen {
	int n;
	int n_static;
	uint64_t age_of_a;
	uint32_t vnis_seen_mask; /* bit 0: vni 10, bit 1: vni 20 */
	int stop_after;
};

static int dump_collect(const struct fdb_entry_info *e, void *ctx)
{
	struct dump_seen *seen = ctx;
	seen->n++;
	seen->n_static += e->is_static;
	if (memcmp(e->mac, mac_a, 6) == 0 && e->vni == 10)
		seen->age_of_a = e->age_ns;
	seen->vnis_seen_mask |= e->vni == 10 ? 1 : e->vni == 20 ? 2 : 4;
	return seen->stop_after && seen->n == seen->stop_after ? 42 : 0;
}

static void test_dump(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_small(16, 4);
	struct fdb_dst p1 = fdb_dst_port(1), v1 = fdb_dst_vtep4(9, vtep1_ip);

	fdb_learn(fdb, 10, mac_a, &p1, 10 * SEC);
	fdb_learn(fdb, 10, mac_b, &v1, 10 * SEC);
	fdb_learn(fdb, 10, mac_c, &v1, 0);       /* expired at 305 s */
	fdb_add_static(fdb, 20, mac_a, &p1, 0);

	struct dump_seen all = { 0 };
	assert_int_equal(fdb_dump(fdb, FDB_VNI_ANY, 305 * SEC, dump_collect, &all), 0);
	assert_int_equal(all.n, 3);
	assert_int_equal(all.n_static, 1);
	assert_int_equal(all.age_of_a, 295 * SEC);
	assert_int_equal(all.vnis_seen_mask, 3);

	struct dump_seen only20 = { 0 };
	assert_int_equal(fdb_dump(fdb, 20, 305 * SEC, dump_collect, &only20), 0);
	assert_int_equal(only20.n, 1);
	assert_int_equal(only20.vnis_seen_mask, 2);

	struct dump_seen stop = { .stop_after = 1 };
	assert_int_equal(fdb_dump(fdb, FDB_VNI_ANY, 0, dump_collect, &stop), 42);
	assert_int_equal(stop.n, 1);
	fdb_destroy(fdb);
}

static void test_create_rejects_oversized_config(void **state)
{
	(void)state;
	struct fdb_config too_big = { .max_learned = FDB_MAX_ENTRIES, .max_static = 1 };
	struct fdb *fdb = (struct fdb *)&too_big; /* overwritten with NULL */
	assert_int_equal(fdb_create(&too_big, &fdb), -EINVAL);
	assert_null(fdb);
	struct fdb_config defaults = { 0 };
	assert_int_equal(fdb_create(&defaults, &fdb), 0);
	assert_non_null(fdb);
	assert_int_equal(fdb_get_ageing(fdb), FDB_DEFAULT_AGEING_NS);
	fdb_destroy(fdb);
}

/* The failpoint "fdb_create" fails the allocation: -ENOMEM, nothing
 * leaked (ASan), and the next create works. */
static void test_create_failpoint(void **state)
{
	(void)state;
	struct fdb_config config = { .max_learned = 16 };
	struct fdb *fdb;
	failpoint_arm("fdb_create", 1, 1);
	assert_int_equal(fdb_create(&config, &fdb), 0); /* skipped */
	fdb_destroy(fdb);
	assert_int_equal(fdb_create(&config, &fdb), -ENOMEM);
	assert_null(fdb);
	assert_int_equal(fdb_create(&config, &fdb), 0);
	assert_non_null(fdb);
	fdb_destroy(fdb);
	failpoint_disarm_all();
}

/* Random operations against a naive model (an array indexed by VNI and MAC
 * number): every lookup and the entry counts must agree at every step.
 * Catches chain-unlinking and free-list mistakes that the scenario tests
 * above might not reach. */
enum { MODEL_VNIS = 3, MODEL_MACS = 150, MODEL_CAP = 64, MODEL_STATIC = 8 };

struct model_entry {
	bool present, is_static;
	uint16_t port;
	uint64_t updated;
};

static uint32_t model_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static bool model_expired(const struct model_entry *m, uint64_t now)
{
	return m->present && !m->is_static && now - m->updated >= 300 * SEC;
}

static void test_random_ops_match_reference_model(void **state)
{
	(void)state;
	static struct model_entry model[MODEL_VNIS][MODEL_MACS];
	struct fdb *fdb = fdb_small(MODEL_CAP, MODEL_STATIC);
	uint32_t seed = 2463534242u;
	uint64_t now = 0;
	uint8_t mac[6];

	memset(model, 0, sizeof(model));
	for (int step = 0; step < 200000; step++) {
		uint32_t op = model_rand(&seed) % 100;
		uint32_t vni = model_rand(&seed) % MODEL_VNIS, m = model_rand(&seed) % MODEL_MACS;
		uint16_t port = (uint16_t)(model_rand(&seed) % 4);
		struct fdb_dst dst = fdb_dst_port(port), got;
		struct model_entry *e = &model[vni][m];
		uint32_t n_learned = 0, n_static = 0;
		for (uint32_t v = 0; v < MODEL_VNIS; v++)
			for (uint32_t i = 0; i < MODEL_MACS; i++) {
				n_learned += model[v][i].present && !model[v][i].is_static;
				n_static += model[v][i].present && model[v][i].is_static;
			}
		mac_from_index(m, mac);
		now += model_rand(&seed) % (2 * SEC);

		if (op < 60) {
			int expect;
			if (e->present && e->is_static) {
				expect = e->port == port ? 0 : -EEXIST;
			} else if (e->present) {
				expect = 0;
				e->port = port;
				e->updated = now;
			} else if (n_learned >= MODEL_CAP) {
				expect = -ENOSPC;
			} else {
				expect = 0;
				*e = (struct model_entry){ .present = true, .port = port, .updated = now };
			}
			assert_int_equal(fdb_learn(fdb, vni, mac, &dst, now), expect);
		} else if (op < 65) {
			int expect = 0;
			if (e->present && e->is_static)
				e->port = port;
			else if (n_static >= MODEL_STATIC)
				expect = -ENOSPC;
			else
				*e = (struct model_entry){ .present = true, .is_static = true, .port = port };
			assert_int_equal(fdb_add_static(fdb, vni, mac, &dst, now), expect);
		} else if (op < 75) {
			assert_int_equal(fdb_del(fdb, vni, mac), e->present ? 0 : -ENOENT);
			e->present = false;
		} else if (op < 77) {
			size_t expect = 0;
			for (uint32_t v = 0; v < MODEL_VNIS; v++)
				for (uint32_t i = 0; i < MODEL_MACS; i++)
					if (model[v][i].present && !model[v][i].is_static &&
					    model[v][i].port == port) {
						model[v][i].present = false;
						expect++;
					}
			struct fdb_flush_filter f = { .vni = FDB_VNI_ANY, .dst = &dst };
			assert_int_equal(fdb_flush(fdb, &f), expect);
		} else if (op < 80) {
			size_t expect = 0;
			for (uint32_t v = 0; v < MODEL_VNIS; v++)
				for (uint32_t i = 0; i < MODEL_MACS; i++)
					if (model_expired(&model[v][i], now)) {
						model[v][i].present = false;
						expect++;
					}
			assert_int_equal(fdb_age(fdb, now), expect);
		} else {
			bool expect = e->present && !model_expired(e, now);
			assert_int_equal(fdb_lookup(fdb, vni, mac, now, &got), expect);
			if (expect)
				assert_int_equal(got.port, e->port);
		}
	}
	struct fdb_stats st;
	fdb_get_stats(fdb, &st);
	assert_true(st.n_learned <= MODEL_CAP);
	assert_true(st.refused_full > 0); /* the cap was exercised */
	fdb_destroy(fdb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_then_lookup),
		cmocka_unit_test(test_invalid_source_macs_are_never_learnt),
		cmocka_unit_test(test_bad_vni_or_dst_is_refused),
		cmocka_unit_test(test_vtep_dst_ignores_bytes_beyond_ipv4),
		cmocka_unit_test(test_move_to_other_port_and_vtep),
		cmocka_unit_test(test_ageing_with_warped_time),
		cmocka_unit_test(test_mac_flood_is_capped_and_counted),
		cmocka_unit_test(test_per_vni_cap),
		cmocka_unit_test(test_per_port_cap),
		cmocka_unit_test(test_per_vni_cap_changes_at_run_time),
		cmocka_unit_test(test_vni_churn_recycles_counts),
		cmocka_unit_test(test_same_mac_in_two_vnis_is_two_entries),
		cmocka_unit_test(test_static_entries),
		cmocka_unit_test(test_evpn_entries),
		cmocka_unit_test(test_flush_filters),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_create_rejects_oversized_config),
		cmocka_unit_test(test_create_failpoint),
		cmocka_unit_test(test_random_ops_match_reference_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
