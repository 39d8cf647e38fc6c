/* Unit tests for src/util/qsbr.c: a writer publishes and frees versions
 * while a reader thread reads them; the reader must never see a freed
 * (poisoned) version.  Run under TSan too (make unit-tsan). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/qsbr.h"

enum { LIVE = 0x5a5a5a5a, DEAD = 0xdeaddead, VERSIONS = 3000 };

struct version {
	_Atomic unsigned magic; /* atomic: the poison write races only if the scheme is broken */
	unsigned number;
};

struct shared {
	struct qsbr q;
	struct version *_Atomic current;
	atomic_bool stop;
	atomic_bool started;
	unsigned long reads, bad;
	bool go_offline;
};

static void *reader(void *arg)
{
	struct shared *s = arg;
	struct qsbr_reader *r;
	if (qsbr_register(&s->q, &r) < 0)
		return NULL;
	atomic_store(&s->started, true);
	unsigned long turn = 0;
	while (!atomic_load(&s->stop)) {
		if (s->go_offline && turn % 64 == 0) {
			qsbr_offline(r);
			qsbr_online(&s->q, r);
		}
		struct version *v = qsbr_load(&s->current);
		/* Hold the version a while (a batch's worth of work), yielding
		 * so the writer runs in the middle of it. */
		for (int i = 0; i < 64; i++) {
			if (atomic_load_explicit(&v->magic, memory_order_relaxed) != LIVE)
				s->bad++;
			if (i % 16 == 0)
				sched_yield();
		}
		s->reads++;
		qsbr_quiesce(&s->q, r);
		turn++;
	}
	qsbr_unregister(&s->q, r);
	return NULL;
}

static void run_writer(struct shared *s)
{
	for (unsigned i = 1; i <= VERSIONS; i++) {
		struct version *v = malloc(sizeof(*v));
		atomic_store(&v->magic, LIVE);
		v->number = i;
		struct version *old = atomic_exchange(&s->current, v);
		qsbr_synchronize(&s->q);
		atomic_store_explicit(&old->magic, DEAD, memory_order_relaxed);
		free(old);
	}
}

static void run(bool go_offline)
{
	static struct shared s;
	memset(&s, 0, sizeof(s));
	qsbr_init(&s.q);
	s.go_offline = go_offline;
	struct version *first = malloc(sizeof(*first));
	atomic_store(&first->magic, LIVE);
	atomic_store(&s.current, first);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, reader, &s), 0);
	while (!atomic_load(&s.started))
		;
	run_writer(&s);
	atomic_store(&s.stop, true);
	pthread_join(t, NULL);
	assert_int_equal(s.bad, 0);
	assert_true(s.reads > 0);
	free(atomic_load(&s.current));
}

static void test_reader_never_sees_a_freed_version(void **state)
{
	(void)state;
	run(false);
}

static void test_reader_going_offline_and_back(void **state)
{
	(void)state;
	run(true);
}

/* An offline reader does not hold up a grace period (a worker asleep in
 * epoll_wait must not block a command). */
static void test_offline_reader_does_not_block(void **state)
{
	(void)state;
	static struct qsbr q;
	qsbr_init(&q);
	struct qsbr_reader *r;
	assert_int_equal(qsbr_register(&q, &r), 0);
	qsbr_offline(r);
	qsbr_synchronize(&q); /* would spin forever if it waited */
	qsbr_online(&q, r);
	qsbr_unregister(&q, r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_never_sees_a_freed_version),
		cmocka_unit_test(test_reader_going_offline_and_back),
		cmocka_unit_test(test_offline_reader_does_not_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
