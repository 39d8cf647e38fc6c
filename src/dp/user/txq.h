/* Output queues of one worker: frames are queued per output port during a
 * batch and sent by the port's tx_batch at the end of it (or when a queue
 * fills), so a port sends many frames per system call.
 *
 * A set only holds frames; it sends nothing and calls nobody.  Its owner
 * (the output stage, dp_output.c) sends what it takes out: a full
 * queue's frames before one more is queued (txq_room(), txq_take()), and
 * at the end of a batch every queue's (txq_take_next() until it says 0).
 *
 * Bounds: a queue holds TXQ_LEN frames.  The list of queues holding frames
 * names each port at most once, however often its queue filled and was
 * taken within one batch, so it never outgrows TXQ_PORTS.
 *
 * Thread-safety: a set belongs to one worker. */
#ifndef VX_DP_USER_TXQ_H
#define VX_DP_USER_TXQ_H

#include <stdbool.h>
#include <stdint.h>

struct pkt;

enum txq_limits {
	TXQ_PORTS = 256, /* one queue per port id (worker_internal.h asserts = VXD_MAX_PORTS) */
	TXQ_LEN = 512,
};

struct txq {
	unsigned n;
	bool listed;     /* in the set's dirty[] */
	struct pkt *pkts[TXQ_LEN];
};

struct txq_set {
	struct txq q[TXQ_PORTS];
	uint16_t dirty[TXQ_PORTS];
	unsigned n_dirty;
	unsigned next;   /* txq_take_next()'s place in dirty[] */
};

void txq_set_init(struct txq_set *set);

/* Whether port id's queue (id < TXQ_PORTS) takes one more frame. */
static inline bool txq_room(const struct txq_set *set, uint16_t id)
{
	return set->q[id].n < TXQ_LEN;
}

/* Queues pkt for port id; the queue has room (txq_room()). */
void txq_enqueue(struct txq_set *set, uint16_t id, struct pkt *pkt);

/* Takes port id's frames out of its queue: *pkts points at them, in the
 * order they were queued, until the next txq_enqueue() to id; their count
 * is returned.  The port stays listed. */
unsigned txq_take(struct txq_set *set, uint16_t id, struct pkt ***pkts);

/* Takes the frames of the next listed port out, in the order the ports
 * were first queued to in this batch: *id the port, *pkts and the count as
 * txq_take().  0 when every queue is empty; the walk then starts again.
 * Nothing is queued between the first call of a walk and the 0 that ends
 * it (a port it took could be listed twice). */
unsigned txq_take_next(struct txq_set *set, uint16_t *id, struct pkt ***pkts);

#endif
