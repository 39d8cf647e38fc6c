#include "dp/user/txq.h"

#include <stddef.h>

void txq_set_init(struct txq_set *set, txq_flush_fn *flush, void *aux)
{
	for (unsigned i = 0; i < TXQ_PORTS; i++) {
		set->q[i].n = 0;
		set->q[i].listed = false;
	}
	set->n_dirty = 0;
	set->flush = flush;
	set->aux = aux;
}

static void txq_flush_one(struct txq_set *set, uint16_t id)
{
	struct txq *q = &set->q[id];
	unsigned n = q->n;
	q->n = 0;
	if (n)
		set->flush(set->aux, id, q->pkts, n);
}

void txq_enqueue(struct txq_set *set, uint16_t id, struct pkt *pkt)
{
	struct txq *q = &set->q[id];
	if (q->n == TXQ_LEN)
		txq_flush_one(set, id); /* stays listed */
	if (!q->listed) {
		q->listed = true;
		set->dirty[set->n_dirty++] = id;
	}
	q->pkts[q->n++] = pkt;
}

void txq_flush_all(struct txq_set *set)
{
	/* A flush may queue more (a tap write never does; kept general):
	 * walk by index so such additions are flushed too. */
	for (unsigned i = 0; i < set->n_dirty; i++) {
		uint16_t id = set->dirty[i];
		set->q[id].listed = false;
		txq_flush_one(set, id);
	}
	set->n_dirty = 0;
}
