/* Unit tests for src/util/rec_ring.c: order, full ring refused (never
 * overwritten), wrap-around, reservations given up, and a producer thread
 * against a consumer thread checking every byte (run under TSan too: make
 * unit-tsan). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/rec_ring.h"

static void fill(uint8_t *p, size_t len, unsigned seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

static bool check(const uint8_t *p, size_t len, unsigned seq)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seq * 7 + i))
			return false;
	return true;
}

static void test_order_and_full(void **state)
{
	(void)state;
	struct rec_ring r;
	assert_int_equal(rec_ring_init(&r, 4096), 0);
	size_t len;
	assert_null(rec_ring_peek(&r, &len));
	/* 100-byte records take 8 + 104 bytes: 36 fit in 4096. */
	unsigned n = 0;
	for (;;) {
		uint8_t *p = rec_ring_reserve(&r, 100);
		if (!p)
			break;
		fill(p, 100, n);
		rec_ring_commit(&r, 100);
		n++;
	}
	assert_int_equal(n, 4096 / 112);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *p = rec_ring_peek(&r, &len);
		assert_non_null(p);
		assert_int_equal(len, 100);
		assert_true(check(p, len, i));
		/* peek again without release: the same record */
		assert_ptr_equal(rec_ring_peek(&r, &len), p);
		rec_ring_release(&r);
	}
	assert_null(rec_ring_peek(&r, &len));
	assert_int_equal(rec_ring_used(&r), 0);
	/* too big for the ring at all */
	assert_null(rec_ring_reserve(&r, rec_ring_max_record(&r) + 1));
	assert_non_null(rec_ring_reserve(&r, rec_ring_max_record(&r)));
	rec_ring_fini(&r);
}

static void test_wrap_and_give_up(void **state)
{
	(void)state;
	struct rec_ring r;
	assert_int_equal(rec_ring_init(&r, 4096), 0);
	size_t len;
	/* Sizes that do not divide the ring: records wrap at every offset. */
	unsigned produced = 0, consumed = 0;
	for (unsigned round = 0; round < 2000; round++) {
		size_t want = 1 + (round * 37) % 900;
		uint8_t *p = rec_ring_reserve(&r, want);
		if (p) {
			fill(p, want, produced);
			if (round % 5 == 0) {
				/* given up: not committed, not seen */
			} else {
				rec_ring_commit(&r, want > 2 ? want - round % 3 : want);
				produced++;
			}
		}
		if (round % 3 != 0) {
			const uint8_t *q = rec_ring_peek(&r, &len);
			if (q) {
				assert_true(check(q, len, consumed));
				rec_ring_release(&r);
				consumed++;
			}
		}
	}
	const uint8_t *q;
	while ((q = rec_ring_peek(&r, &len))) {
		assert_true(check(q, len, consumed));
		rec_ring_release(&r);
		consumed++;
	}
	assert_int_equal(consumed, produced);
	assert_true(produced > 1000);
	rec_ring_fini(&r);
}

enum { THREAD_RECORDS = 200000 };

struct threaded {
	struct rec_ring r;
	unsigned refused;
};

static void *producer(void *arg)
{
	struct threaded *t = arg;
	for (unsigned seq = 0; seq < THREAD_RECORDS;) {
		size_t len = 4 + (seq * 13) % 700;
		uint8_t *p = rec_ring_reserve(&t->r, len);
		if (!p) {
			t->refused++;
			sched_yield();
			continue;
		}
		memcpy(p, &seq, sizeof(seq));
		fill(p + 4, len - 4, seq);
		rec_ring_commit(&t->r, len);
		seq++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct threaded t = { .refused = 0 };
	assert_int_equal(rec_ring_init(&t.r, 16384), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, producer, &t), 0);
	unsigned next = 0, bad = 0;
	while (next < THREAD_RECORDS) {
		size_t len;
		const uint8_t *p = rec_ring_peek(&t.r, &len);
		if (!p) {
			sched_yield();
			continue;
		}
		unsigned seq;
		memcpy(&seq, p, sizeof(seq));
		if (seq != next || len != 4 + (seq * 13) % 700 || !check(p + 4, len - 4, seq))
			bad++;
		rec_ring_release(&t.r);
		next++;
	}
	pthread_join(th, NULL);
	assert_int_equal(bad, 0);
	size_t len;
	assert_null(rec_ring_peek(&t.r, &len));
	rec_ring_fini(&t.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_full),
		cmocka_unit_test(test_wrap_and_give_up),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
