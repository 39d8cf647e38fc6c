/* Unit tests for src/switch/fdb.c: EVPN entries have their own count and
 * cap (max_evpn), apart from the operator's static entries (max_static):
 * a fabric's thousands of remote MACs neither hit the static cap nor eat
 * its places; refusals are counted; moves between kinds keep the counts
 * right (an operator's static over an EVPN entry, a local takeover, a
 * delete). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "switch/fdb.h"

#define SEC 1000000000ull

static const uint8_t vtep_ip[4] = { 192, 0, 2, 1 };

static void mac_of(uint32_t i, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x5e;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

static struct fdb *fdb_caps(uint32_t max_static, uint32_t max_evpn)
{
	struct fdb_config config = { .max_learned = 64, .max_static = max_static, .max_evpn = max_evpn, .hash_seed = 7 };
	struct fdb *fdb;
	assert_int_equal(fdb_create(&config, &fdb), 0);
	return fdb;
}

/* Far more EVPN entries than the static cap: all in, counted apart; the
 * static cap still holds for the operator's entries, and the EVPN cap
 * refuses (counted) one more. */
static void test_evpn_not_limited_by_static_cap(void **state)
{
	(void)state;
	enum { N_EVPN = 10000, N_STATIC = 16 };
	struct fdb *fdb = fdb_caps(N_STATIC, N_EVPN);
	struct fdb_dst v = fdb_dst_vtep4(3, vtep_ip), d;
	uint8_t mac[6];
	for (uint32_t i = 0; i < N_EVPN; i++) {
		mac_of(i, mac);
		assert_int_equal(fdb_add_evpn(fdb, 99, mac, &v, 0), 0);
	}
	for (uint32_t i = 0; i < N_STATIC; i++) {
		mac_of(100000 + i, mac);
		assert_int_equal(fdb_add_static(fdb, 99, mac, &v, 0), 0);
	}
	mac_of(100000 + N_STATIC, mac);
	assert_int_equal(fdb_add_static(fdb, 99, mac, &v, 0), -ENOSPC);
	mac_of(N_EVPN, mac);
	assert_int_equal(fdb_add_evpn(fdb, 99, mac, &v, 0), -ENOSPC);
	/* Replacing an existing EVPN entry needs no new place. */
	mac_of(5, mac);
	assert_int_equal(fdb_add_evpn(fdb, 99, mac, &v, 0), 0);
	struct fdb_stats st;
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_evpn, N_EVPN);
	assert_int_equal(st.n_static, N_STATIC);
	assert_int_equal(st.evpn_refused, 1);
	mac_of(N_EVPN - 1, mac);
	assert_true(fdb_lookup(fdb, 99, mac, SEC, &d) && fdb_dst_equal(&d, &v));
	/* A delete gives its place back. */
	mac_of(0, mac);
	assert_int_equal(fdb_del_evpn(fdb, 99, mac), 0);
	mac_of(N_EVPN, mac);
	assert_int_equal(fdb_add_evpn(fdb, 99, mac, &v, 0), 0);
	fdb_destroy(fdb);
}

/* Kind changes move the count: the operator's static over an EVPN entry
 * (needs a static place), a local takeover (a learned entry), fdb_del. */
static void test_kind_changes_keep_counts(void **state)
{
	(void)state;
	struct fdb *fdb = fdb_caps(1, 4);
	struct fdb_dst v = fdb_dst_vtep4(3, vtep_ip), p = fdb_dst_port(1);
	uint8_t a[6], b[6], c[6];
	mac_of(1, a);
	mac_of(2, b);
	mac_of(3, c);
	assert_int_equal(fdb_add_evpn(fdb, 99, a, &v, 0), 0);
	assert_int_equal(fdb_add_evpn(fdb, 99, b, &v, 0), 0);
	assert_int_equal(fdb_add_evpn(fdb, 99, c, &v, 0), 0);
	/* The operator's static over EVPN a: a static place, one EVPN freed. */
	assert_int_equal(fdb_add_static(fdb, 99, a, &v, 0), 0);
	/* No static place left for b. */
	assert_int_equal(fdb_add_static(fdb, 99, b, &v, 0), -ENOSPC);
	struct fdb_stats st;
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_static, 1);
	assert_int_equal(st.n_evpn, 2);
	/* b moves here: learned, its EVPN place freed. */
	assert_int_equal(fdb_learn(fdb, 99, b, &p, SEC), 0);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_evpn, 1);
	assert_int_equal(st.n_learned, 1);
	/* fdb_del of c (any kind) frees its EVPN place. */
	assert_int_equal(fdb_del(fdb, 99, c), 0);
	fdb_get_stats(fdb, &st);
	assert_int_equal(st.n_evpn, 0);
	assert_int_equal(st.n_static, 1);
	fdb_destroy(fdb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evpn_not_limited_by_static_cap),
		cmocka_unit_test(test_kind_changes_keep_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
