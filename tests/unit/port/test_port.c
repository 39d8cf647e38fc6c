/* Unit tests for src/port/port.c: the size histogram of transmitted frames
 * (bucket edges), the drop helpers and the per-worker io life cycle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
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
	struct port_io io;
	memset(&io, 0, sizeof(io));
	port_count_tx(&io, 1400);
	port_count_tx(&io, 64000);
	port_count_tx(&io, 64000);
	assert_int_equal(io.stats.tx_frames, 3);
	assert_int_equal(io.stats.tx_bytes, 129400);
	assert_int_equal(io.stats.tx_hist_frames[0], 1);
	assert_int_equal(io.stats.tx_hist_bytes[0], 1400);
	assert_int_equal(io.stats.tx_hist_frames[4], 2);
	assert_int_equal(io.stats.tx_hist_bytes[4], 128000);
	assert_int_equal(io.stats.tx_hist_frames[5], 0);
}

static void test_drop_batch_frees_and_counts(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(4, &pool), 0);
	struct port_io io;
	memset(&io, 0, sizeof(io));
	struct pkt *pkts[3] = { pkt_alloc(pool), pkt_alloc(pool), pkt_alloc(pool) };
	port_drop_batch(&io, pkts, 3, DROP_MTU_EXCEEDED);
	assert_int_equal(io.stats.drops[DROP_MTU_EXCEEDED], 3);
	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.in_use, 0);
	port_count_drop(&io, DROP_REASON_COUNT); /* out of range: ignored */
	port_destroy(NULL);
	pkt_pool_destroy(pool);
}

/* A kind with io hooks: init allocates priv, fini frees it (counted). */
static unsigned fini_calls;
static int fake_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	io->priv = &fini_calls;
	return 0;
}
static void fake_io_fini(struct port *port, struct port_io *io)
{
	(void)port;
	assert_ptr_equal(io->priv, &fini_calls);
	fini_calls++;
}
static int failing_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	io->priv = &fini_calls; /* half-made: port_io_init must not keep it */
	return -ENOMEM;
}

/* port_io_init zeroes the counters whatever was in them and runs the
 * kind's hook; fini runs it once (a second fini is a no-op); a kind
 * without hooks gets priv NULL; a failed init leaves nothing to free. */
static void test_io_init_and_fini(void **state)
{
	(void)state;
	struct port_class cls = { .kind_name = "fake", .io_init = fake_io_init, .io_fini = fake_io_fini };
	struct port port = { .cls = &cls };
	struct port_io io;
	memset(&io, 0xab, sizeof(io));
	assert_int_equal(port_io_init(&port, &io, 0), 0);
	assert_int_equal(io.stats.tx_frames, 0);
	assert_int_equal(io.stats.drops[DROP_MTU_EXCEEDED], 0);
	assert_ptr_equal(io.priv, &fini_calls);
	fini_calls = 0;
	port_io_fini(&port, &io);
	port_io_fini(&port, &io);
	assert_int_equal(fini_calls, 1);
	assert_null(io.priv);

	struct port_class bare = { .kind_name = "bare" };
	port.cls = &bare;
	memset(&io, 0xab, sizeof(io));
	assert_int_equal(port_io_init(&port, &io, 0), 0);
	assert_null(io.priv);
	port_io_fini(&port, &io);

	cls.io_init = failing_io_init;
	port.cls = &cls;
	assert_int_equal(port_io_init(&port, &io, 0), -ENOMEM);
	assert_null(io.priv);
	port_io_fini(&port, &io);
	assert_int_equal(fini_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_bucket_edges),
		cmocka_unit_test(test_count_tx_fills_counters_and_histogram),
		cmocka_unit_test(test_drop_batch_frees_and_counts),
		cmocka_unit_test(test_io_init_and_fini),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
