/* Unit tests for src/util/schedstat.c: the calling thread's time on a CPU
 * grows by about what it spun, and its wait does not go back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "util/schedstat.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_run_time_follows_the_thread(void **state)
{
	(void)state;
	uint64_t run0, wait0, run1, wait1;
	if (schedstat_self(&run0, &wait0) < 0)
		skip(); /* a kernel without schedstat */
	uint64_t c0 = thread_cpu_ns();
	while (thread_cpu_ns() - c0 < 50000000ull) /* spin 50 ms of CPU */
		;
	assert_int_equal(schedstat_self(&run1, &wait1), 0);
	uint64_t spun = thread_cpu_ns() - c0;
	assert_true(run1 - run0 >= spun * 9 / 10);
	assert_true(run1 - run0 <= spun * 11 / 10 + 5000000ull);
	assert_true(wait1 >= wait0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_time_follows_the_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
