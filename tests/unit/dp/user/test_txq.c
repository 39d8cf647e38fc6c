/* Unit tests for src/dp/user/txq.c: the output queues of a worker.  Frames
 * are opaque here (txq never looks inside), so they are tagged pointers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dp/user/txq.h"

struct sent {
	uint64_t frames[TXQ_PORTS];
	uint64_t next_seq[TXQ_PORTS];
	uint64_t sends;
	int out_of_order;
};

static struct pkt *tag(uint16_t id, uint32_t seq)
{
	return (struct pkt *)(uintptr_t)(((uint64_t)id << 32 | seq) + 1);
}

/* What the output stage does with frames it took out. */
static void send(struct sent *f, uint16_t id, struct pkt **pkts, unsigned n)
{
	f->sends++;
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = (uint64_t)(uintptr_t)pkts[i] - 1;
		if (v >> 32 != id || (uint32_t)v != f->next_seq[id])
			f->out_of_order++;
		f->next_seq[id]++;
		f->frames[id]++;
	}
}

/* The output stage's enqueue: a full queue is sent in place first. */
static void enqueue(struct txq_set *set, struct sent *f, uint16_t id, struct pkt *pkt)
{
	struct pkt **pkts;
	if (!txq_room(set, id)) {
		unsigned n = txq_take(set, id, &pkts);
		assert_int_equal(n, TXQ_LEN);
		send(f, id, pkts, n);
	}
	txq_enqueue(set, id, pkt);
}

static void send_all(struct txq_set *set, struct sent *f)
{
	uint16_t id;
	struct pkt **pkts;
	unsigned n;
	while ((n = txq_take_next(set, &id, &pkts)))
		send(f, id, pkts, n);
}

/* A flood to every port, rounds of more frames than a queue holds: each
 * queue fills and is sent in place several times within one batch.  The
 * dirty list must name each port once (it used to re-add a port after every
 * in-place flush and run past its TXQ_PORTS slots). */
static void test_dirty_list_names_each_port_once(void **state)
{
	(void)state;
	static struct txq_set set;
	static struct sent f;
	memset(&f, 0, sizeof(f));
	txq_set_init(&set);
	const unsigned per_port = 3 * TXQ_LEN + 7;
	for (unsigned seq = 0; seq < per_port; seq++) {
		for (unsigned id = 0; id < TXQ_PORTS; id++) {
			enqueue(&set, &f, (uint16_t)id, tag((uint16_t)id, seq));
			assert_true(set.n_dirty <= TXQ_PORTS);
		}
	}
	assert_int_equal(set.n_dirty, TXQ_PORTS);
	send_all(&set, &f);
	assert_int_equal(set.n_dirty, 0);
	for (unsigned id = 0; id < TXQ_PORTS; id++)
		assert_int_equal(f.frames[id], per_port);
	assert_int_equal(f.out_of_order, 0);
}

static void test_take_next_empties_and_relists(void **state)
{
	(void)state;
	static struct txq_set set;
	static struct sent f;
	memset(&f, 0, sizeof(f));
	txq_set_init(&set);
	enqueue(&set, &f, 5, tag(5, 0));
	enqueue(&set, &f, 5, tag(5, 1));
	enqueue(&set, &f, 9, tag(9, 0));
	assert_int_equal(set.n_dirty, 2);
	send_all(&set, &f);
	assert_int_equal(f.sends, 2);
	send_all(&set, &f); /* nothing queued: nothing sent */
	assert_int_equal(f.sends, 2);
	enqueue(&set, &f, 5, tag(5, 2));
	assert_int_equal(set.n_dirty, 1);
	send_all(&set, &f);
	assert_int_equal(f.frames[5], 3);
	assert_int_equal(f.out_of_order, 0);
}

/* Ports come out in the order they were first queued to in the batch; a
 * port whose queue was taken in place (full) and emptied comes out in its
 * first place, with only what was queued after. */
static void test_take_next_order_and_skips_empty(void **state)
{
	(void)state;
	static struct txq_set set;
	txq_set_init(&set);
	struct pkt **pkts;
	uint16_t id;
	txq_enqueue(&set, 7, tag(7, 0));
	txq_enqueue(&set, 3, tag(3, 0));
	txq_enqueue(&set, 11, tag(11, 0));
	txq_enqueue(&set, 11, tag(11, 1));
	assert_int_equal(txq_take(&set, 3, &pkts), 1); /* taken in place: stays listed, empty */
	assert_int_equal(txq_take_next(&set, &id, &pkts), 1);
	assert_int_equal(id, 7);
	assert_ptr_equal(pkts[0], tag(7, 0));
	assert_int_equal(txq_take_next(&set, &id, &pkts), 2);
	assert_int_equal(id, 11);
	assert_ptr_equal(pkts[1], tag(11, 1));
	assert_int_equal(txq_take_next(&set, &id, &pkts), 0);
	assert_int_equal(set.n_dirty, 0);
	/* The next batch starts a new walk. */
	txq_enqueue(&set, 3, tag(3, 1));
	assert_int_equal(txq_take_next(&set, &id, &pkts), 1);
	assert_int_equal(id, 3);
	assert_int_equal(txq_take_next(&set, &id, &pkts), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirty_list_names_each_port_once),
		cmocka_unit_test(test_take_next_empties_and_relists),
		cmocka_unit_test(test_take_next_order_and_skips_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
