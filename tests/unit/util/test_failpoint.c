/* Unit tests for src/util/failpoint.c: skip then count, self-disarm and the
 * quiet flag, re-arming, the list syntax and its errors, VX_FAILPOINTS read
 * once (set in main() before any call), and exact counts under threads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/failpoint.h"

static bool flag(void)
{
	return atomic_load(&failpoint_maybe_armed_);
}

/* Runs first: main() set VX_FAILPOINTS before any failpoint call. */
static void test_env_is_read_once(void **state)
{
	(void)state;
	assert_false(failpoint_hit("env_point")); /* skip 1 */
	assert_true(failpoint_hit("env_point"));
	assert_true(failpoint_hit("env_point"));
	assert_false(failpoint_hit("env_point")); /* count 2 spent */
	assert_false(failpoint_hit("bad_entry"));  /* malformed: ignored */
	assert_true(failpoint_hit("env_other"));   /* after the bad one */
	assert_false(flag());

	setenv("VX_FAILPOINTS", "late:0:1", 1);
	failpoint_disarm_all();
	assert_false(failpoint_hit("late"));
	unsetenv("VX_FAILPOINTS");
}

static void test_unarmed_is_quiet(void **state)
{
	(void)state;
	failpoint_disarm_all();
	assert_false(flag());
	assert_false(failpoint_hit("anything"));
	failpoint_arm("never_hit", 0, 0); /* count 0: nothing armed */
	assert_false(flag());
}

static void test_skip_then_count_then_pass(void **state)
{
	(void)state;
	failpoint_arm("a", 2, 3);
	failpoint_arm("b", 0, 1);
	assert_true(flag());
	const bool want[] = { false, false, true, true, true, false, false };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(failpoint_hit("a"), want[i]);
	assert_false(failpoint_hit("ab")); /* names match whole */
	assert_false(failpoint_hit(""));
	assert_true(flag()); /* "b" still armed */
	assert_true(failpoint_hit("b"));
	assert_false(flag()); /* the last armed point fired: quiet again */
	assert_false(failpoint_hit("b"));
}

static void test_rearm_replaces_and_zero_disarms(void **state)
{
	(void)state;
	failpoint_arm("r", 5, 1);
	failpoint_arm("r", 0, 2);
	assert_true(failpoint_hit("r"));
	failpoint_arm("r", 0, 0);
	assert_false(failpoint_hit("r"));
	assert_false(flag());

	failpoint_arm("x", 0, 1);
	failpoint_arm("y", 0, 1);
	failpoint_disarm_all();
	assert_false(flag());
	assert_false(failpoint_hit("x"));
	assert_false(failpoint_hit("y"));
}

static void test_list_syntax(void **state)
{
	(void)state;
	assert_int_equal(failpoint_arm_list(""), 0);
	assert_false(flag());
	assert_int_equal(failpoint_arm_list("l1:0:1,,l2:1:1,"), 0);
	assert_true(failpoint_hit("l1"));
	assert_false(failpoint_hit("l2"));
	assert_true(failpoint_hit("l2"));

	const char *bad[] = {
		"nocolon", "n:1", "n:a:1", "n:1:", ":0:1", "n:1:2:3", "n:-1:1",
		"n:99999999999:1", "a_name_much_longer_than_forty_seven_bytes_is_refused:0:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(failpoint_arm_list(bad[i]), -EINVAL);
		assert_false(flag());
	}
	/* The good entries of a list with a bad one are armed. */
	assert_int_equal(failpoint_arm_list("g1:0:1,bad,g2:0:1"), -EINVAL);
	assert_true(failpoint_hit("g1"));
	assert_true(failpoint_hit("g2"));
	assert_false(flag());
}

static void test_table_full(void **state)
{
	(void)state;
	char name[16];
	for (int i = 0; i < FAILPOINT_MAX; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		failpoint_arm(name, 0, 1);
	}
	assert_int_equal(failpoint_arm_list("one_more:0:1"), -EINVAL);
	assert_false(failpoint_hit("one_more"));
	/* Re-arming one already there still works. */
	assert_int_equal(failpoint_arm_list("p3:1:1"), 0);
	failpoint_disarm_all();
}

enum { MT_THREADS = 4, MT_CALLS = 20000, MT_SKIP = 1000, MT_COUNT = 30000 };

static void *mt_worker(void *arg)
{
	unsigned *hits = arg;
	for (int i = 0; i < MT_CALLS; i++)
		if (failpoint_hit("mt"))
			(*hits)++;
	return NULL;
}

/* Every armed failure is spent exactly once, whatever the interleaving. */
static void test_threads_spend_exact_count(void **state)
{
	(void)state;
	failpoint_arm("mt", MT_SKIP, MT_COUNT);
	pthread_t t[MT_THREADS];
	unsigned hits[MT_THREADS] = { 0 };
	for (int i = 0; i < MT_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, mt_worker, &hits[i]), 0);
	unsigned total = 0;
	for (int i = 0; i < MT_THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		total += hits[i];
	}
	assert_int_equal(total, MT_COUNT);
	assert_false(flag());
}

int main(void)
{
	/* Before any failpoint call: the library reads it on the first one. */
	setenv("VX_FAILPOINTS", "env_point:1:2,bad_entry,env_other:0:1", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_is_read_once),
		cmocka_unit_test(test_unarmed_is_quiet),
		cmocka_unit_test(test_skip_then_count_then_pass),
		cmocka_unit_test(test_rearm_replaces_and_zero_disarms),
		cmocka_unit_test(test_list_syntax),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_threads_spend_exact_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
