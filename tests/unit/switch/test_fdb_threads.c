/* The FDB shared by many workers (fdb.h, "Thread-safety"), with real
 * threads, also run under ThreadSanitizer (make unit-tsan):
 *   - two learner threads learn, refresh and move their own MACs while
 *   - a reader looks up static entries that exist for the whole test: it
 *     must find every one, every time, with its own destination, while
 *     the buckets around it change;
 *   - a control thread adds and deletes static entries, flushes and ages.
 * At the end the counts agree with what the threads did. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "switch/fdb.h"

enum { N_STATIC = 64, N_LEARN = 2000, ROUNDS = 20 };

struct shared {
	struct fdb *fdb;
	atomic_bool stop;
	atomic_ulong misses, wrong, lookups;
};

static void mac_of(uint8_t mac[6], unsigned kind, unsigned i)
{
	mac[0] = 0x02;
	mac[1] = (uint8_t)kind;
	mac[2] = (uint8_t)(i >> 16);
	mac[3] = (uint8_t)(i >> 8);
	mac[4] = (uint8_t)i;
	mac[5] = 0x01;
}

struct learner {
	struct shared *sh;
	unsigned kind;
};

static void *learn_main(void *arg)
{
	struct learner *l = arg;
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < N_LEARN; i++) {
			uint8_t mac[6];
			mac_of(mac, l->kind, i);
			/* A MAC moves between two ports every other round. */
			struct fdb_dst dst = fdb_dst_port((uint16_t)(l->kind * 10 + (r & 1)));
			fdb_learn(l->sh->fdb, 5, mac, &dst, 1000 + r);
		}
	}
	return NULL;
}

static void *read_main(void *arg)
{
	struct shared *sh = arg;
	while (!atomic_load(&sh->stop)) {
		for (unsigned i = 0; i < N_STATIC; i++) {
			uint8_t mac[6];
			mac_of(mac, 9, i);
			struct fdb_dst dst;
			atomic_fetch_add(&sh->lookups, 1);
			if (!fdb_lookup(sh->fdb, 5, mac, 1000, &dst))
				atomic_fetch_add(&sh->misses, 1);
			else if (dst.type != FDB_DST_PORT || dst.port != 100 + i)
				atomic_fetch_add(&sh->wrong, 1);
		}
	}
	return NULL;
}

static void *control_main(void *arg)
{
	struct shared *sh = arg;
	for (unsigned r = 0; r < ROUNDS * 5; r++) {
		for (unsigned i = 0; i < 32; i++) {
			uint8_t mac[6];
			mac_of(mac, 7, i);
			struct fdb_dst dst = fdb_dst_port(200);
			assert_int_equal(fdb_add_static(sh->fdb, 5, mac, &dst, 1000), 0);
		}
		for (unsigned i = 0; i < 32; i++) {
			uint8_t mac[6];
			mac_of(mac, 7, i);
			assert_int_equal(fdb_del(sh->fdb, 5, mac), 0);
		}
		struct fdb_flush_filter none = { .vni = 6, .kinds = FDB_FLUSH_LEARNED }; /* nothing in VNI 6 */
		assert_int_equal(fdb_flush(sh->fdb, &none), 0);
		fdb_age(sh->fdb, 1000); /* nothing is old */
	}
	return NULL;
}

static void test_shared_fdb(void **state)
{
	(void)state;
	struct fdb_config cfg = { .max_learned = 8192, .max_static = 256, .hash_seed = 42,
				  .ageing_ns = 1000000000ull };
	struct shared sh = { 0 };
	assert_int_equal(fdb_create(&cfg, &sh.fdb), 0);
	for (unsigned i = 0; i < N_STATIC; i++) {
		uint8_t mac[6];
		mac_of(mac, 9, i);
		struct fdb_dst dst = fdb_dst_port((uint16_t)(100 + i));
		assert_int_equal(fdb_add_static(sh.fdb, 5, mac, &dst, 0), 0);
	}
	pthread_t reader, control, learners[2];
	struct learner l[2] = { { &sh, 1 }, { &sh, 2 } };
	assert_int_equal(pthread_create(&reader, NULL, read_main, &sh), 0);
	assert_int_equal(pthread_create(&control, NULL, control_main, &sh), 0);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&learners[i], NULL, learn_main, &l[i]), 0);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(learners[i], NULL);
	pthread_join(control, NULL);
	atomic_store(&sh.stop, true);
	pthread_join(reader, NULL);

	assert_true(atomic_load(&sh.lookups) > 0);
	assert_int_equal(atomic_load(&sh.misses), 0);
	assert_int_equal(atomic_load(&sh.wrong), 0);
	struct fdb_stats st;
	fdb_get_stats(sh.fdb, &st);
	assert_int_equal(st.n_learned, 2 * N_LEARN);
	assert_int_equal(st.learned, 2 * N_LEARN);
	assert_int_equal(st.moved, 2 * N_LEARN * (ROUNDS - 1));
	assert_int_equal(st.n_static, N_STATIC);
	assert_int_equal(fdb_count_vni(sh.fdb, 5), 2 * N_LEARN);
	/* Every learner's MAC sits where its last round put it. */
	for (unsigned k = 1; k <= 2; k++) {
		for (unsigned i = 0; i < N_LEARN; i++) {
			uint8_t mac[6];
			mac_of(mac, k, i);
			struct fdb_dst dst;
			assert_true(fdb_lookup(sh.fdb, 5, mac, 1000 + ROUNDS, &dst));
			assert_int_equal(dst.port, k * 10 + ((ROUNDS - 1) & 1));
		}
	}
	fdb_destroy(sh.fdb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_fdb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
