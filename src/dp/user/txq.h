/* Output queues of one worker: frames are queued per output port during a
 * batch and handed to the port's tx_batch at the end of it (or when a
 * queue fills), so a port sends many frames per system call.
 *
 * Bounds: a queue holds TXQ_LEN frames; a full queue is flushed in place.
 * The list of queues holding frames names each port at most once, however
 * often its queue filled, so it never outgrows TXQ_PORTS.
 *
 * Thread-safety: a set belongs to one worker. */
#ifndef VX_DP_USER_TXQ_H
#define VX_DP_USER_TXQ_H

#include <stdbool.h>
#include <stdint.h>

struct pkt;

enum txq_limits {
	TXQ_PORTS = 256, /* = VXD_MAX_PORTS */
	TXQ_LEN = 512,
};

/* Sends (or frees) `n` frames queued for port `id`; takes them over. */
typedef void txq_flush_fn(void *aux, uint16_t id, struct pkt **pkts, unsigned n);

struct txq {
	unsigned n;
	bool listed;     /* in the set's dirty[] */
	struct pkt *pkts[TXQ_LEN];
};

struct txq_set {
	struct txq q[TXQ_PORTS];
	uint16_t dirty[TXQ_PORTS];
	unsigned n_dirty;
	txq_flush_fn *flush;
	void *aux;
};

void txq_set_init(struct txq_set *set, txq_flush_fn *flush, void *aux);
/* id < TXQ_PORTS. */
void txq_enqueue(struct txq_set *set, uint16_t id, struct pkt *pkt);
void txq_flush_all(struct txq_set *set);

#endif
