/* One pkt pool per test file, as a cmocka group fixture:
 *
 *   PKT_POOL_FIXTURE(16)      // defines `pool`, setup() and teardown()
 *   ...
 *   return cmocka_run_group_tests(tests, setup, teardown);
 *
 * teardown() fails the group when any pkt is still in use: every test must
 * free what it took.  Test code only. */
#ifndef VX_TESTS_POOL_FIXTURE_H
#define VX_TESTS_POOL_FIXTURE_H

#include "packet/pkt.h"

#define PKT_POOL_FIXTURE(n_pkts)                               \
	static struct pkt_pool *pool;                          \
	static int setup(void **state)                         \
	{                                                      \
		(void)state;                                   \
		return pkt_pool_create(n_pkts, &pool) == 0 ? 0 : -1; \
	}                                                      \
	static int teardown(void **state)                      \
	{                                                      \
		(void)state;                                   \
		struct pkt_pool_stats st;                      \
		pkt_pool_get_stats(pool, &st);                 \
		pkt_pool_destroy(pool);                        \
		return st.in_use == 0 ? 0 : -1;                \
	}

#endif
