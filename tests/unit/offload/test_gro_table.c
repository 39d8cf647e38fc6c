/* Unit tests for the GRO table (src/offload/gro_table.c, gro.h "Bounds"
 * and "Flushing"): the 64 KB and configured size caps, PKT_MAX_FRAGS, a
 * full bucket completing its oldest run; the hold timer measured from a
 * run's first segment and never reset (seeds/001), hold_ns 0, expiry on
 * arrival, gro_next_expiry_ns(); gro_create() refusing a bad config,
 * gro_destroy() freeing held runs; reason names.  Fixture: gro_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gro_test_util.h"

static void test_64k_cap(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	s.f.tcp_opts = NULL;
	s.f.tcp_opts_len = 0;
	/* L3 = 40 + n * 1448 < 65536 holds up to n = 45. */
	for (int i = 0; i < 46; i++)
		feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_SIZE_CAP], 1);
	struct pkt *big = t->sink.out[0];
	check_frame(&s, big, s.isn, 45 * MSS, 45, MSS);
	assert_true(pkt_len(big) - ETH_HDR_LEN <= 65535);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[1], s.isn + 45 * MSS, MSS, 1, MSS);
	gro_test_free(t);
}

static void test_configured_size_cap(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 10000, 0);
	struct stream s;
	stream_init(&s, 6, MODE_VXLAN_FRAME, 4);
	for (int i = 0; i < 20; i++)
		feed(t, &s, 1000, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	for (unsigned i = 0; i < t->sink.n; i++)
		assert_true(pkt_len(t->sink.out[i]) - t->sink.out[i]->l3_ofs < 10000);
	/* 40 + 32 + 9 * 1000 < 10000: nine segments a frame. */
	assert_int_equal(out_payload_len(t->sink.out[0]), 9000);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_SIZE_CAP], 2);
	gro_test_free(t);
}

static void test_frags_full_ends_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	for (int i = 0; i < PKT_MAX_FRAGS + 2; i++)
		feed(t, &s, 100, 0);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, (PKT_MAX_FRAGS + 1) * 100, PKT_MAX_FRAGS + 1, 100);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FRAGS_FULL], 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	gro_test_free(t);
}

/* A full bucket completes its oldest run (the kernel's 8 per bucket); with
 * 8 flows there is one bucket, so "oldest of the table". */
static void test_table_full_flushes_oldest(void **state)
{
	(void)state;
	struct gro_test *t = test_new(8, 0, 0);
	struct stream s[9];
	for (int i = 0; i < 9; i++) {
		stream_init(&s[i], 4, MODE_PLAIN, 0);
		s[i].f.src_port = (uint16_t)(3000 + i);
		feed(t, &s[i], MSS, 0);
		feed(t, &s[i], MSS, 0);
	}
	assert_int_equal(t->sink.n, 1);
	struct pkt *out = t->sink.out[0];
	uint16_t sport;
	assert_int_equal(pkt_copy_out(out, out->l4_ofs, 2, &sport), 0);
	assert_int_equal(__builtin_bswap16(sport), 3000);
	check_frame(&s[0], out, s[0].isn, 2 * MSS, 2, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TABLE_FULL], 1);
	assert_int_equal(stats(t).flows_held, 8);
	/* Flow 1 is now the oldest. */
	stream_init(&s[0], 4, MODE_PLAIN, 0);
	s[0].f.src_port = 4000;
	feed(t, &s[0], MSS, 0);
	assert_int_equal(t->sink.n, 2);
	out = t->sink.out[1];
	assert_int_equal(pkt_copy_out(out, out->l4_ofs, 2, &sport), 0);
	assert_int_equal(__builtin_bswap16(sport), 3001);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 10);
	gro_test_free(t);
}

static void test_timer_runs_from_first_segment_never_reset(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	feed(t, &s, MSS, 5000);
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	feed(t, &s, MSS, 5600);
	feed(t, &s, MSS, 5900);
	/* Later arrivals did not push the deadline back. */
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 5999);
	assert_int_equal(t->sink.n, 0);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 6000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 3 * MSS, 3, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* seeds/001: the deadline is fixed at the first arrival.  The run stays
 * held across every expired-flush before it (as a daemon waking on its poll
 * timeout would call), segments arriving in between (and at the deadline
 * itself) join it without moving it, and the flush at the deadline
 * completes it as a timeout. */
static void test_timer_held_across_expired_flushes_until_deadline(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_UDP, 0);
	/* Time order: arrival 5000, flushes 5000 5100 5500, arrival 5600,
	 * flush 5800, arrival 5900, flush 5999, arrival 6000, flush 6000. */
	static const struct {
		uint64_t now;
		bool arrival;
	} events[] = { { 5000, true }, { 5000, false }, { 5100, false }, { 5500, false }, { 5600, true },
		       { 5800, false }, { 5900, true }, { 5999, false } };
	for (unsigned i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (events[i].arrival)
			feed(t, &s, MSS, events[i].now);
		else
			gro_flush(t->gro, GRO_FLUSH_EXPIRED, events[i].now);
		assert_int_equal(t->sink.n, 0);
		assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	}
	feed(t, &s, MSS, 6000); /* at the deadline: still joins */
	assert_int_equal(t->sink.n, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 6000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	assert_int_equal(stats(t).flows_held, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* hold_ns 0 is taken literally: a run merges the segments of the poll that
 * started it (one now_ns) and the first expired-flush completes it.  (It
 * used to mean 50 us, and this flush emitted nothing.) */
static void test_timer_hold_zero_ends_with_the_poll(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 6, MODE_PLAIN, 0);
	for (int i = 0; i < 3; i++)
		feed(t, &s, MSS, 7000);
	assert_int_equal(t->sink.n, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), 7000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 7000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 3 * MSS, 3, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	/* The next poll's segment starts a new run, due at its own arrival. */
	feed(t, &s, MSS, 7001);
	assert_int_equal(gro_next_expiry_ns(t->gro), 7001);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 7001);
	assert_int_equal(t->sink.n, 2);
	gro_test_free(t);
}

/* The earliest deadline of all held runs, whichever flow started first. */
static void test_next_expiry_is_the_earliest_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream a, b;
	stream_init(&a, 4, MODE_PLAIN, 0);
	stream_init(&b, 4, MODE_PLAIN, 0);
	b.f.src_port = 4001;
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	feed(t, &b, MSS, 300);
	feed(t, &a, MSS, 100); /* the caller's clock may hand older stamps */
	feed(t, &b, MSS, 900);
	assert_int_equal(gro_next_expiry_ns(t->gro), 1100);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 1100);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(gro_next_expiry_ns(t->gro), 1300);
	gro_flush(t->gro, GRO_FLUSH_ALL, 1200);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* A steady stream inside one long batch still leaves every hold_ns: the
 * segment that arrives after the deadline completes the run first. */
static void test_timer_expires_on_arrival(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 6, MODE_PLAIN, 0);
	uint64_t now = 0;
	for (int i = 0; i < 10; i++, now += 300)
		feed(t, &s, MSS, now);
	/* Arrivals at 0..2700: runs start at 0, 1200, 2400. */
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	check_frame(&s, t->sink.out[1], s.isn + 4 * MSS, 4 * MSS, 4, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 2);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, now);
	assert_int_equal(t->sink.n, 2);
	gro_flush(t->gro, GRO_FLUSH_ALL, now);
	assert_int_equal(t->sink.n, 3);
	gro_test_free(t);
}

static void test_create_rejects_bad_config_and_destroy_frees_held(void **state)
{
	(void)state;
	struct sink sink = { .n = 0 };
	const struct gro_config bad[] = {
		{ .emit = NULL },                                                   /* no emit */
		{ .max_size = 65537, .emit = collect, .emit_aux = &sink },          /* > 64 KB */
		{ .max_flows = GRO_MAX_FLOWS + 1, .emit = collect, .emit_aux = &sink },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* *out is cleared on failure, whatever it held before. */
		struct gro_table *out = (struct gro_table *)&sink;
		assert_int_equal(gro_create(&bad[i], &out), -EINVAL);
		assert_null(out);
	}
	/* The limits themselves are accepted. */
	struct gro_config at_limits = {
		.max_flows = GRO_MAX_FLOWS, .max_size = GRO_DEFAULT_MAX_SIZE, .emit = collect, .emit_aux = &sink,
	};
	struct gro_table *ok = NULL;
	assert_int_equal(gro_create(&at_limits, &ok), 0);
	assert_non_null(ok);
	gro_destroy(ok);
	gro_destroy(NULL);

	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	assert_int_equal(stats(t).flows_held, 1);
	gro_test_free(t); /* checks the held pkts went back to the pool */
}

static void test_reason_names(void **state)
{
	(void)state;
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_BATCH_END), "batch_end");
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_SEQ_GAP), "not_mergeable_seq_gap");
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_REASON_COUNT), "invalid");
	assert_string_equal(gro_pass_reason_name(GRO_PASS_CSUM_BAD), "csum_bad");
	assert_string_equal(gro_pass_reason_name(GRO_PASS_REASON_COUNT), "invalid");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_64k_cap),
		cmocka_unit_test(test_configured_size_cap),
		cmocka_unit_test(test_frags_full_ends_run),
		cmocka_unit_test(test_table_full_flushes_oldest),
		cmocka_unit_test(test_timer_runs_from_first_segment_never_reset),
		cmocka_unit_test(test_timer_expires_on_arrival),
		cmocka_unit_test(test_timer_held_across_expired_flushes_until_deadline),
		cmocka_unit_test(test_timer_hold_zero_ends_with_the_poll),
		cmocka_unit_test(test_next_expiry_is_the_earliest_run),
		cmocka_unit_test(test_create_rejects_bad_config_and_destroy_frees_held),
		cmocka_unit_test(test_reason_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
