/* Unit tests for src/ctl/ctl_watch.c: the --watch words, the parse of a
 * `-j stats` answer, and the rate arithmetic on numbers chosen so every
 * rate is known exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_watch.h"

static int args(const char *line, struct ctl_watch_opts *o, const char **rest, int *n_rest, struct ctl_err *err)
{
	static char buf[256];
	char *words[CTL_MAX_WORDS];
	snprintf(buf, sizeof(buf), "%s", line);
	int n = ctl_split_words(buf, words, CTL_MAX_WORDS);
	memset(err, 0, sizeof(*err));
	return ctl_watch_args(n, (const char *const *)words, o, rest, n_rest, err);
}

static void test_args(void **state)
{
	(void)state;
	struct ctl_watch_opts o;
	const char *rest[CTL_MAX_WORDS];
	int n;
	struct ctl_err err;
	assert_int_equal(args("stats", &o, rest, &n, &err), 0);
	assert_false(o.watch);
	assert_int_equal(n, 1);
	assert_int_equal(args("stats --watch", &o, rest, &n, &err), 0);
	assert_true(o.watch);
	assert_true(o.interval_s == 1.0);
	assert_int_equal(o.count, 0);
	assert_int_equal(args("stats port vnet0 --watch 2.5 -c 3", &o, rest, &n, &err), 0);
	assert_true(o.interval_s == 2.5);
	assert_int_equal(o.count, 3);
	assert_int_equal(n, 3);
	assert_string_equal(rest[0], "stats");
	assert_string_equal(rest[1], "port");
	assert_string_equal(rest[2], "vnet0");
	assert_int_equal(args("stats --count 7 --watch", &o, rest, &n, &err), 0);
	assert_int_equal(o.count, 7);
	assert_true(o.interval_s == 1.0);
	/* A port may be called like a number: only a word after --watch is SECONDS. */
	assert_int_equal(args("stats --watch port 1", &o, rest, &n, &err), 0);
	assert_int_equal(n, 3);

	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "stats -c 3", "goes with --watch" },
		{ "stats --watch 0.05", "0.1..3600" },
		{ "stats --watch 3601", "0.1..3600" },
		{ "stats --watch 1x", "0.1..3600" },
		{ "stats --watch --watch", "twice" },
		{ "stats --watch -c", "expected a count" },
		{ "stats --watch -c 0", "expected a count" },
		{ "stats --watch -c 1.5", "expected a count" },
		{ "stats --watch -c 2 --count 3", "twice" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (args(bad[i].line, &o, rest, &n, &err) != -EINVAL)
			fail_msg("%s: accepted", bad[i].line);
		if (!strstr(err.msg, bad[i].why))
			fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].line, err.msg, bad[i].why);
	}
}

static const char *answer(uint64_t t, uint64_t frames, uint64_t bytes, uint64_t mtu_drops, uint64_t csum_drops,
			  uint64_t segs, uint64_t gro_frames, uint64_t cpu_us, uint64_t rx_bytes)
{
	static char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"time_ns\":%llu,\"ports\":[{\"name\":\"vnet1\",\"vni\":99,\"rx_frames\":%llu,\"rx_bytes\":%llu,"
		 "\"tx_frames\":%llu,\"tx_bytes\":%llu,\"drops\":{\"mtu_exceeded\":%llu,\"bad_l4_csum\":%llu,"
		 "\"truncated_eth\":0}},{\"name\":\"vx99\",\"vni\":99,\"rx_frames\":0,\"rx_bytes\":0,\"tx_frames\":0,"
		 "\"tx_bytes\":0,\"drops\":{}}],\"gro\":{\"segments_in\":%llu,\"frames_out\":%llu},"
		 "\"cpu\":{\"user_us\":%llu,\"sys_us\":0,\"worker_user_us\":%llu,\"worker_sys_us\":1,\"rx_bytes\":%llu}}",
		 (unsigned long long)t, (unsigned long long)frames, (unsigned long long)bytes,
		 (unsigned long long)frames * 2, (unsigned long long)bytes * 2, (unsigned long long)mtu_drops,
		 (unsigned long long)csum_drops, (unsigned long long)segs, (unsigned long long)gro_frames,
		 (unsigned long long)cpu_us, (unsigned long long)cpu_us / 2, (unsigned long long)rx_bytes);
	return buf;
}

static void test_parse(void **state)
{
	(void)state;
	struct ctl_watch_sample *s = calloc(1, sizeof(*s));
	struct ctl_err err = { 0 };
	assert_int_equal(ctl_watch_parse(answer(5, 10, 1000, 2, 3, 40, 4, 77, 1000), s, &err), 0);
	assert_int_equal(s->time_ns, 5);
	assert_int_equal(s->n_ports, 2);
	assert_string_equal(s->ports[0].name, "vnet1");
	assert_int_equal(s->ports[0].vni, 99);
	assert_int_equal(s->ports[0].rx_frames, 10);
	assert_int_equal(s->ports[0].tx_bytes, 2000);
	assert_int_equal(s->ports[0].tx_drops, 2); /* mtu_exceeded: on the way out */
	assert_int_equal(s->ports[0].rx_drops, 3); /* bad_l4_csum: on the way in */
	assert_int_equal(s->gro_segments_in, 40);
	assert_int_equal(s->cpu_us, 77);
	assert_int_equal(s->worker_cpu_us, 77 / 2 + 1);
	assert_int_equal(ctl_watch_parse("{\"ports\":[]}", s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "time_ns"));
	assert_int_equal(ctl_watch_parse("[1,2", s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not JSON"));
	assert_int_equal(ctl_watch_parse("{\"time_ns\":-1,\"ports\":[]}", s, &err), -EINVAL);
	free(s);
}

static void test_rates(void **state)
{
	(void)state;
	struct ctl_watch_sample *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	struct ctl_err err = { 0 };
	assert_int_equal(ctl_watch_parse(answer(1000000000ull, 100, 10000, 0, 0, 10, 10, 1000, 2048), a, &err), 0);
	/* half a second later: 500 frames of 250 000 000 bytes more... */
	assert_int_equal(ctl_watch_parse(answer(1500000000ull, 600, 125010000ull, 4, 1, 410, 20, 3000, 2048 + 1024 * 100),
					 b, &err),
			 0);
	assert_int_equal(ctl_watch_rates(a, b, r), 0);
	assert_true(r->interval_s == 0.5);
	assert_int_equal(r->n_ports, 2);
	const struct ctl_watch_port_rates *p = &r->ports[0];
	assert_int_equal(p->delta.rx_frames, 500);
	assert_int_equal(p->delta.tx_frames, 1000);
	assert_true(p->rx_pps == 1000.0);
	assert_true(p->tx_pps == 2000.0);
	assert_true(fabs(p->rx_gbps - 2.0) < 1e-9);  /* 125e6 bytes * 8 / 0.5 s */
	assert_true(fabs(p->tx_gbps - 4.0) < 1e-9);
	assert_true(p->tx_drops_ps == 8.0);
	assert_true(p->rx_drops_ps == 2.0);
	assert_true(r->gro_segments_per_frame == 40.0); /* 400 segments in 10 frames */
	assert_true(fabs(r->cpu_us_per_kb - 20.0) < 1e-9); /* 2000 us over 100 KB */
	assert_true(fabs(r->worker_cpu_us_per_kb - 10.0) < 1e-9);
	/* The clock must advance. */
	assert_int_equal(ctl_watch_rates(b, a, r), -EINVAL);
	assert_int_equal(ctl_watch_rates(a, a, r), -EINVAL);
	free(a);
	free(r);
}

/* A port whose counters went back (deleted and added) or that is new
 * counts from zero, not as a huge wrap. */
static void test_rates_port_readded(void **state)
{
	(void)state;
	struct ctl_watch_sample *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	struct ctl_err err = { 0 };
	assert_int_equal(ctl_watch_parse(answer(1000000000ull, 900, 90000, 0, 0, 0, 0, 0, 0), a, &err), 0);
	assert_int_equal(ctl_watch_parse(answer(2000000000ull, 30, 3000, 0, 0, 0, 0, 0, 0), b, &err), 0);
	snprintf(a->ports[1].name, sizeof(a->ports[1].name), "gone");
	b->ports[1].rx_frames = 5;
	assert_int_equal(ctl_watch_rates(a, b, r), 0);
	assert_int_equal(r->ports[0].delta.rx_frames, 30);
	assert_int_equal(r->ports[1].delta.rx_frames, 5);
	assert_true(r->gro_segments_per_frame == 0.0);
	assert_true(r->cpu_us_per_kb == 0.0);
	free(a);
	free(r);
}

static void test_print_json_one_line(void **state)
{
	(void)state;
	struct ctl_watch_sample *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	struct ctl_err err = { 0 };
	assert_int_equal(ctl_watch_parse(answer(1000000000ull, 0, 0, 0, 0, 0, 0, 0, 0), a, &err), 0);
	assert_int_equal(ctl_watch_parse(answer(2000000000ull, 7, 700, 0, 0, 0, 0, 0, 0), b, &err), 0);
	assert_int_equal(ctl_watch_rates(a, b, r), 0);
	struct ctl_print p;
	ctl_print_init(&p, true, 0);
	ctl_watch_print(&p, r);
	assert_int_equal(ctl_print_finish(&p), 0);
	const char *t = ctl_print_data(&p);
	assert_non_null(strstr(t, "\"time_ns\":2000000000"));
	assert_non_null(strstr(t, "\"name\":\"vnet1\""));
	assert_non_null(strstr(t, "\"rx_frames\":7"));
	assert_non_null(strstr(t, "\"rx_pps\":7"));
	assert_non_null(strstr(t, "\"tx_bytes\":1400"));
	assert_ptr_equal(strchr(t, '\n'), t + strlen(t) - 1);
	ctl_print_release(&p);
	ctl_print_init(&p, false, 0);
	ctl_watch_print(&p, r);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_non_null(strstr(ctl_print_data(&p), "rx pps"));
	assert_non_null(strstr(ctl_print_data(&p), "vnet1"));
	ctl_print_release(&p);
	free(a);
	free(r);
}

/* Two workers: one read 3000 frames of 12 000 000 bytes in the second
 * and used half a core, the other nothing. */
static void test_worker_rates(void **state)
{
	(void)state;
	static const char *fmt = "{\"time_ns\":%llu,\"ports\":[],\"gro\":{\"segments_in\":0,\"frames_out\":0},"
				 "\"cpu\":{\"user_us\":0,\"sys_us\":0,\"worker_user_us\":0,\"worker_sys_us\":0,\"rx_bytes\":0},"
				 "\"workers\":{\"n\":2,\"list\":[{\"index\":0,\"rx_frames\":%llu,\"rx_bytes\":%llu,"
				 "\"user_us\":%llu,\"sys_us\":%llu},{\"index\":1,\"rx_frames\":7,\"rx_bytes\":700,"
				 "\"user_us\":5,\"sys_us\":5}]}}";
	char ja[1024], jb[1024];
	snprintf(ja, sizeof(ja), fmt, 1000000000ull, 1000ull, 4000000ull, 100000ull, 100000ull);
	snprintf(jb, sizeof(jb), fmt, 2000000000ull, 4000ull, 16000000ull, 400000ull, 300000ull);
	struct ctl_watch_sample *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	struct ctl_err err = { 0 };
	assert_int_equal(ctl_watch_parse(ja, a, &err), 0);
	assert_int_equal(ctl_watch_parse(jb, b, &err), 0);
	assert_int_equal(b->n_workers, 2);
	assert_int_equal(ctl_watch_rates(a, b, r), 0);
	assert_int_equal(r->n_workers, 2);
	assert_int_equal(r->workers[0].rx_frames, 3000);
	assert_true(fabs(r->workers[0].rx_pps - 3000.0) < 1e-9);
	assert_true(fabs(r->workers[0].rx_gbps - 0.096) < 1e-9);
	assert_true(fabs(r->workers[0].busy - 0.5) < 1e-9);
	assert_true(fabs(r->workers[0].us_per_kb - 500000.0 * 1024 / 12000000.0) < 1e-9);
	assert_int_equal(r->workers[1].rx_frames, 0);
	assert_true(r->workers[1].busy == 0.0 && r->workers[1].us_per_kb == 0.0);
	free(a);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_rates_port_readded),
		cmocka_unit_test(test_print_json_one_line),
		cmocka_unit_test(test_worker_rates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
