#include "dp/user/txq.h"

#include <stddef.h>

void txq_set_init(struct txq_set *set)
{
	for (unsigned i = 0; i < TXQ_PORTS; i++) {
		set->q[i].n = 0;
		set->q[i].listed = false;
	}
	set->n_dirty = 0;
	set->next = 0;
}

void txq_enqueue(struct txq_set *set, uint16_t id, struct pkt *pkt)
{
	struct txq *q = &set->q[id];
	if (!q->listed) {
		q->listed = true;
		set->dirty[set->n_dirty++] = id;
	}
	q->pkts[q->n++] = pkt;
}

unsigned txq_take(struct txq_set *set, uint16_t id, struct pkt ***pkts)
{
	struct txq *q = &set->q[id];
	unsigned n = q->n;
	q->n = 0;
	*pkts = q->pkts;
	return n;
}

unsigned txq_take_next(struct txq_set *set, uint16_t *id, struct pkt ***pkts)
{
	while (set->next < set->n_dirty) {
		uint16_t port = set->dirty[set->next++];
		set->q[port].listed = false;
		unsigned n = txq_take(set, port, pkts);
		if (n) {
			*id = port;
			return n;
		}
	}
	set->n_dirty = 0;
	set->next = 0;
	return 0;
}
