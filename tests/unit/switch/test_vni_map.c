/* Unit tests for src/switch/vni_map.c: every built VNI found with its port
 * id and nothing else found (neighbours, the 24-bit edges, the empty-slot
 * marker), errors with *out NULL, a full 4096-VNI map against a linear scan,
 * and concurrent readers of one published map. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "switch/vni_map.h"

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_empty_map(void **state)
{
	(void)state;
	struct vni_map *m;
	assert_int_equal(vni_map_build(NULL, NULL, 0, &m), 0);
	assert_non_null(m);
	assert_int_equal(vni_map_count(m), 0);
	assert_int_equal(vni_map_lookup(m, 0), -1);
	assert_int_equal(vni_map_lookup(m, 99), -1);
	assert_int_equal(vni_map_lookup(m, UINT32_MAX), -1);
	vni_map_destroy(m);
	vni_map_destroy(NULL);
}

/* 64 consecutive VNIs, as one socket's worth of a typical setup, plus the
 * edges of the 24-bit range. */
static void test_consecutive_and_edges(void **state)
{
	(void)state;
	uint32_t vnis[66];
	uint16_t ports[66];
	for (unsigned i = 0; i < 64; i++) {
		vnis[i] = 1000 + i;
		ports[i] = (uint16_t)(i * 3 + 1);
	}
	vnis[64] = 0;
	ports[64] = 65535;
	vnis[65] = VNI_MAP_VNI_MAX;
	ports[65] = 0;
	struct vni_map *m;
	assert_int_equal(vni_map_build(vnis, ports, 66, &m), 0);
	assert_int_equal(vni_map_count(m), 66);
	for (unsigned i = 0; i < 66; i++)
		assert_int_equal(vni_map_lookup(m, vnis[i]), ports[i]);
	assert_int_equal(vni_map_lookup(m, 999), -1);
	assert_int_equal(vni_map_lookup(m, 1064), -1);
	assert_int_equal(vni_map_lookup(m, 1), -1);
	assert_int_equal(vni_map_lookup(m, VNI_MAP_VNI_MAX - 1), -1);
	assert_int_equal(vni_map_lookup(m, VNI_MAP_VNI_MAX + 1), -1);
	assert_int_equal(vni_map_lookup(m, UINT32_MAX), -1); /* the empty marker */
	vni_map_destroy(m);
}

static void test_build_errors(void **state)
{
	(void)state;
	struct vni_map *m = (struct vni_map *)&m;
	const uint32_t dup[] = { 5, 6, 5 };
	const uint16_t ports[] = { 1, 2, 3 };
	assert_int_equal(vni_map_build(dup, ports, 3, &m), -EEXIST);
	assert_null(m);
	const uint32_t big[] = { 5, VNI_MAP_VNI_MAX + 1 };
	m = (struct vni_map *)&m;
	assert_int_equal(vni_map_build(big, ports, 2, &m), -EINVAL);
	assert_null(m);
	m = (struct vni_map *)&m;
	assert_int_equal(vni_map_build(dup, ports, VNI_MAP_MAX + 1, &m), -EINVAL);
	assert_null(m);
}

/* A full map of random VNIs agrees with a linear scan on hits and misses. */
static void test_full_random_against_scan(void **state)
{
	(void)state;
	static uint32_t vnis[VNI_MAP_MAX];
	static uint16_t ports[VNI_MAP_MAX];
	uint32_t seed = 0x1234567;
	for (unsigned i = 0; i < VNI_MAP_MAX; i++) {
		uint32_t v;
		bool seen;
		do { /* distinct */
			v = xorshift(&seed) & VNI_MAP_VNI_MAX;
			seen = false;
			for (unsigned j = 0; j < i && !seen; j++)
				seen = vnis[j] == v;
		} while (seen);
		vnis[i] = v;
		ports[i] = (uint16_t)xorshift(&seed);
	}
	struct vni_map *m;
	assert_int_equal(vni_map_build(vnis, ports, VNI_MAP_MAX, &m), 0);
	for (unsigned i = 0; i < VNI_MAP_MAX; i++)
		assert_int_equal(vni_map_lookup(m, vnis[i]), ports[i]);
	for (unsigned k = 0; k < 20000; k++) {
		uint32_t v = xorshift(&seed) & VNI_MAP_VNI_MAX;
		int want = -1;
		for (unsigned i = 0; i < VNI_MAP_MAX; i++)
			if (vnis[i] == v)
				want = ports[i];
		assert_int_equal(vni_map_lookup(m, v), want);
	}
	vni_map_destroy(m);
}

enum { READERS = 4, READS = 200000 };

static void *reader(void *arg)
{
	const struct vni_map *m = arg;
	uintptr_t bad = 0;
	for (unsigned i = 0; i < READS; i++) {
		uint32_t v = i % 128;
		int want = v < 64 ? (int)v + 100 : -1;
		bad += vni_map_lookup(m, v) != want;
	}
	return (void *)bad;
}

/* Readers need no lock on a built map (run under TSan to check). */
static void test_concurrent_readers(void **state)
{
	(void)state;
	uint32_t vnis[64];
	uint16_t ports[64];
	for (unsigned i = 0; i < 64; i++) {
		vnis[i] = i;
		ports[i] = (uint16_t)(i + 100);
	}
	struct vni_map *m;
	assert_int_equal(vni_map_build(vnis, ports, 64, &m), 0);
	pthread_t t[READERS];
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, m), 0);
	for (int i = 0; i < READERS; i++) {
		void *bad;
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
	vni_map_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_map),
		cmocka_unit_test(test_consecutive_and_edges),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_full_random_against_scan),
		cmocka_unit_test(test_concurrent_readers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
