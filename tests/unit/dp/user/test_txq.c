/* Unit tests for src/dp/user/txq.c: the output queues of a worker.  Frames
 * are opaque here (txq never looks inside), so they are tagged pointers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dp/user/txq.h"

struct flushed {
	uint64_t frames[TXQ_PORTS];
	uint64_t next_seq[TXQ_PORTS];
	uint64_t calls;
	int out_of_order;
};

static struct pkt *tag(uint16_t id, uint32_t seq)
{
	return (struct pkt *)(uintptr_t)(((uint64_t)id << 32 | seq) + 1);
}

static void on_flush(void *aux, uint16_t id, struct pkt **pkts, unsigned n)
{
	struct flushed *f = aux;
	f->calls++;
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = (uint64_t)(uintptr_t)pkts[i] - 1;
		if (v >> 32 != id || (uint32_t)v != f->next_seq[id])
			f->out_of_order++;
		f->next_seq[id]++;
		f->frames[id]++;
	}
}

/* A flood to every port, rounds of more frames than a queue holds: each
 * queue fills and is flushed in place several times within one batch.  The
 * dirty list must name each port once (it used to re-add a port after every
 * in-place flush and run past its TXQ_PORTS slots). */
static void test_dirty_list_names_each_port_once(void **state)
{
	(void)state;
	static struct txq_set set;
	static struct flushed f;
	memset(&f, 0, sizeof(f));
	txq_set_init(&set, on_flush, &f);
	const unsigned per_port = 3 * TXQ_LEN + 7;
	for (unsigned seq = 0; seq < per_port; seq++) {
		for (unsigned id = 0; id < TXQ_PORTS; id++) {
			txq_enqueue(&set, (uint16_t)id, tag((uint16_t)id, seq));
			assert_true(set.n_dirty <= TXQ_PORTS);
		}
	}
	assert_int_equal(set.n_dirty, TXQ_PORTS);
	txq_flush_all(&set);
	assert_int_equal(set.n_dirty, 0);
	for (unsigned id = 0; id < TXQ_PORTS; id++)
		assert_int_equal(f.frames[id], per_port);
	assert_int_equal(f.out_of_order, 0);
}

static void test_flush_all_empties_and_relists(void **state)
{
	(void)state;
	static struct txq_set set;
	static struct flushed f;
	memset(&f, 0, sizeof(f));
	txq_set_init(&set, on_flush, &f);
	txq_enqueue(&set, 5, tag(5, 0));
	txq_enqueue(&set, 5, tag(5, 1));
	txq_enqueue(&set, 9, tag(9, 0));
	assert_int_equal(set.n_dirty, 2);
	txq_flush_all(&set);
	assert_int_equal(f.calls, 2);
	txq_flush_all(&set); /* nothing queued: no call */
	assert_int_equal(f.calls, 2);
	txq_enqueue(&set, 5, tag(5, 2));
	assert_int_equal(set.n_dirty, 1);
	txq_flush_all(&set);
	assert_int_equal(f.frames[5], 3);
	assert_int_equal(f.out_of_order, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirty_list_names_each_port_once),
		cmocka_unit_test(test_flush_all_empties_and_relists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
