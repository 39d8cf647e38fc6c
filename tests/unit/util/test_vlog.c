/* Unit tests for src/util/vlog.c: the line format, the level filter, errno
 * kept, and the rate limits over an injected clock (burst, suppression
 * count and span, refill, filtered messages spending nothing), plus two
 * threads sharing one bucket (exact counts: the check is not racy; whole
 * lines: writes do not interleave). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/vlog.h"

#define S 1000000000ull

static atomic_ullong fake_now;

static uint64_t fake_clock(void)
{
	return atomic_load(&fake_now);
}

struct sink {
	FILE *f;
	char *buf;
	size_t size;
	size_t taken; /* bytes already returned by take() */
};

static int setup(void **state)
{
	struct sink *s = calloc(1, sizeof(*s));
	s->f = open_memstream(&s->buf, &s->size);
	assert_non_null(s->f);
	vlog_set_sink(s->f);
	vlog_set_level(VLOG_INFO);
	atomic_store(&fake_now, 1000 * S);
	vlog_set_clock(fake_clock);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct sink *s = *state;
	vlog_set_sink(NULL);
	vlog_set_clock(NULL);
	vlog_set_level(VLOG_INFO);
	fclose(s->f);
	free(s->buf);
	free(s);
	return 0;
}

/* What was written since the last take(); valid until the next log. */
static const char *take(struct sink *s)
{
	fflush(s->f);
	const char *text = s->buf + s->taken;
	s->taken = s->size;
	return text;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void test_line_format(void **state)
{
	struct sink *s = *state;
	VLOG_INFO("datapath", "ready, %d ports", 2);
	assert_string_equal(take(s), "vxswitchd: datapath: ready, 2 ports\n");
	VLOG_ERR("tap", "open: %s", "no such device");
	assert_string_equal(take(s), "vxswitchd: error: tap: open: no such device\n");
	VLOG_WARN("vxlan", "UDP_GRO refused\n"); /* one trailing newline dropped */
	assert_string_equal(take(s), "vxswitchd: warning: vxlan: UDP_GRO refused\n");
	vlog(VLOG_INFO, NULL, "no module");
	assert_string_equal(take(s), "vxswitchd: no module\n");
	vlog(VLOG_INFO, "", "empty module");
	assert_string_equal(take(s), "vxswitchd: empty module\n");
	vlog_set_level(VLOG_DBG);
	VLOG_DBG("gro", "held %u", 3u);
	assert_string_equal(take(s), "vxswitchd: debug: gro: held 3\n");
}

static void test_long_message_is_cut(void **state)
{
	struct sink *s = *state;
	char big[3 * VLOG_LINE_MAX];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	VLOG_INFO("m", "%s", big);
	const char *text = take(s);
	size_t len = strlen(text);
	assert_int_equal(count_lines(text), 1);
	assert_int_equal(len, strlen("vxswitchd: m: ") + VLOG_LINE_MAX - 1 + 1);
	assert_memory_equal(text + len - 4, "...\n", 4);
}

static void test_level_filter(void **state)
{
	struct sink *s = *state;
	assert_int_equal(vlog_get_level(), VLOG_INFO);
	VLOG_DBG("m", "debug is off by default");
	assert_string_equal(take(s), "");
	assert_false(vlog_is_enabled(VLOG_DBG));
	assert_true(vlog_is_enabled(VLOG_INFO));

	vlog_set_level(VLOG_WARN); /* vxswitchd -q */
	VLOG_INFO("m", "quiet");
	assert_string_equal(take(s), "");
	VLOG_WARN("m", "still said");
	VLOG_ERR("m", "and this");
	assert_string_equal(take(s), "vxswitchd: warning: m: still said\n"
				     "vxswitchd: error: m: and this\n");
	vlog_set_level((enum vlog_level)42); /* clamped */
	assert_int_equal(vlog_get_level(), VLOG_DBG);
}

/* A sink that refuses writes makes stdio set errno; the caller's survives. */
static void test_errno_is_kept(void **state)
{
	(void)state;
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 10);
	FILE *ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	vlog_set_sink(ro);
	errno = EMSGSIZE;
	VLOG_ERR("m", "x");
	assert_int_equal(errno, EMSGSIZE);
	VLOG_ERR_RL(&rl, "m", "x");
	assert_int_equal(errno, EMSGSIZE);
	VLOG_ERR_RL(&rl, "m", "x"); /* suppressed */
	assert_int_equal(errno, EMSGSIZE);
	vlog_set_sink(NULL);
	fclose(ro);
}

static void test_rate_limit_burst_suppress_refill(void **state)
{
	struct sink *s = *state;
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);

	for (int i = 0; i < 10; i++)
		VLOG_WARN_RL(&rl, "vxlan", "send %d", i);
	assert_string_equal(take(s), "vxswitchd: warning: vxlan: send 0\n"
				     "vxswitchd: warning: vxlan: send 1\n"
				     "vxswitchd: warning: vxlan: send 2\n"
				     "vxswitchd: warning: vxlan: send 3\n"
				     "vxswitchd: warning: vxlan: send 4\n");

	/* 5 per 10 s: one token is back after 2 s, not before */
	atomic_fetch_add(&fake_now, 2 * S - 1);
	VLOG_WARN_RL(&rl, "vxlan", "too early");
	assert_string_equal(take(s), "");
	atomic_fetch_add(&fake_now, 1);
	VLOG_WARN_RL(&rl, "vxlan", "again");
	assert_string_equal(take(s), "vxswitchd: warning: vxlan: again "
				     "(6 messages like this suppressed in the last 2 seconds)\n");
	VLOG_WARN_RL(&rl, "vxlan", "spent");
	assert_string_equal(take(s), "");

	/* after a whole interval of quiet, the whole burst again (no more) */
	atomic_fetch_add(&fake_now, 100 * S);
	for (int i = 0; i < 6; i++)
		VLOG_WARN_RL(&rl, "vxlan", "b%d", i);
	const char *text = take(s);
	assert_int_equal(count_lines(text), 5);
	assert_non_null(strstr(text, "b0 (1 message like this suppressed in the last 100 seconds)\n"));
	assert_null(strstr(text, "b5"));
}

static void test_rate_limit_ignores_filtered_and_unlimited(void **state)
{
	struct sink *s = *state;
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(2, 60);
	static struct vlog_rate_limit none = VLOG_RATE_LIMIT_INIT(1, 0);

	vlog_set_level(VLOG_WARN);
	for (int i = 0; i < 50; i++)
		VLOG_INFO_RL(&rl, "m", "filtered");
	vlog_set_level(VLOG_INFO);
	VLOG_INFO_RL(&rl, "m", "a");
	VLOG_INFO_RL(&rl, "m", "b");
	/* the 50 filtered ones spent no token and are not "suppressed" */
	assert_string_equal(take(s), "vxswitchd: m: a\nvxswitchd: m: b\n");

	for (int i = 0; i < 100; i++)
		VLOG_ERR_RL(&none, "m", "n");
	assert_int_equal(count_lines(take(s)), 100);
}

static void test_clock_backwards_stands_still(void **state)
{
	struct sink *s = *state;
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 10);
	VLOG_WARN_RL(&rl, "m", "one");
	atomic_fetch_sub(&fake_now, 500 * S);
	VLOG_WARN_RL(&rl, "m", "two");
	atomic_fetch_add(&fake_now, 500 * S + 10 * S);
	VLOG_WARN_RL(&rl, "m", "three");
	assert_string_equal(take(s), "vxswitchd: warning: m: one\n"
				     "vxswitchd: warning: m: three "
				     "(1 message like this suppressed in the last 10 seconds)\n");
}

enum { PER_THREAD = 2000, RL_BURST = 5 };
static struct vlog_rate_limit shared_rl = VLOG_RATE_LIMIT_INIT(RL_BURST, 10);

static void *log_thread(void *arg)
{
	const char *name = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		VLOG_INFO(name, "plain %d of a line long enough to be written in pieces", i);
		VLOG_WARN_RL(&shared_rl, name, "limited %d", i);
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	struct sink *s = *state;
	pthread_t a, b;
	assert_int_equal(pthread_create(&a, NULL, log_thread, "ctl"), 0);
	assert_int_equal(pthread_create(&b, NULL, log_thread, "worker"), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	/* the clock stood still: exactly the burst passed, whoever won */
	atomic_fetch_add(&fake_now, 2 * S);
	VLOG_WARN_RL(&shared_rl, "main", "after");
	char *text = strdup(take(s));
	size_t plain = 0, limited = 0, last = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char mod[16];
		int i, end = 0;
		if (sscanf(line, "vxswitchd: %15[a-z]: plain %d of a line long enough to be "
				 "written in pieces%n", mod, &i, &end) == 2 && !line[end])
			plain++;
		else if (sscanf(line, "vxswitchd: warning: %15[a-z]: limited %d%n", mod, &i,
				&end) == 2 && !line[end])
			limited++;
		else if (!strcmp(line, "vxswitchd: warning: main: after (3995 messages like this "
				       "suppressed in the last 2 seconds)"))
			last++;
		else
			fail_msg("mangled line: %s", line);
	}
	free(text);
	assert_int_equal(plain, 2 * PER_THREAD);
	assert_int_equal(limited, RL_BURST);
	assert_int_equal(last, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_line_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_message_is_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errno_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit_burst_suppress_refill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit_ignores_filtered_and_unlimited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_backwards_stands_still, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
