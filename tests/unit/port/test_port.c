/* Unit tests for src/port/port.c: the size histogram of transmitted frames
 * (bucket edges) and the drop helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "port/port.h"

static void test_hist_bucket_edges(void **state)
{
	(void)state;
	assert_int_equal(port_hist_bucket(0), 0);
	assert_int_equal(port_hist_bucket(1535), 0);
	assert_int_equal(port_hist_bucket(1536), 1);
	assert_int_equal(port_hist_bucket(8191), 1);
	assert_int_equal(port_hist_bucket(8192), 2);
	assert_int_equal(port_hist_bucket(32767), 3);
	assert_int_equal(port_hist_bucket(32768), 4);
	assert_int_equal(port_hist_bucket(65535), 4);
	assert_int_equal(port_hist_bucket(65536), 5);
	assert_int_equal(port_hist_bucket(UINT32_MAX), PORT_HIST_BUCKETS - 1);
}

static void test_count_tx_fills_counters_and_histogram(void **state)
{
	(void)state;
	struct port port;
	memset(&port, 0, sizeof(port));
	port_count_tx(&port, 1400);
	port_count_tx(&port, 64000);
	port_count_tx(&port, 64000);
	assert_int_equal(port.stats.tx_frames, 3);
	assert_int_equal(port.stats.tx_bytes, 129400);
	assert_int_equal(port.stats.tx_hist_frames[0], 1);
	assert_int_equal(port.stats.tx_hist_bytes[0], 1400);
	assert_int_equal(port.stats.tx_hist_frames[4], 2);
	assert_int_equal(port.stats.tx_hist_bytes[4], 128000);
	assert_int_equal(port.stats.tx_hist_frames[5], 0);
}

static void test_drop_batch_frees_and_counts(void **state)
{
	(void)state;
	struct pkt_pool *pool = pkt_pool_create(4);
	struct port port;
	memset(&port, 0, sizeof(port));
	struct pkt *pkts[3] = { pkt_alloc(pool), pkt_alloc(pool), pkt_alloc(pool) };
	port_drop_batch(&port, pkts, 3, DROP_MTU_EXCEEDED);
	assert_int_equal(port.stats.drops[DROP_MTU_EXCEEDED], 3);
	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.in_use, 0);
	port_count_drop(&port, DROP_REASON_COUNT); /* out of range: ignored */
	port_destroy(NULL);
	pkt_pool_destroy(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_bucket_edges),
		cmocka_unit_test(test_count_tx_fills_counters_and_histogram),
		cmocka_unit_test(test_drop_batch_frees_and_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
