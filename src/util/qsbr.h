/* qsbr: quiescent-state-based reclamation, the grace-period scheme by which
 * the control thread frees what a datapath worker may still be reading.
 *
 * The contract (the one of Open vSwitch's ovs-rcu.h, with its words):
 *
 *   - A writer (the control thread) builds a new immutable version of a
 *     table, publishes it with one atomic store (qsbr_publish), and may free
 *     the old version only after a grace period: qsbr_synchronize() returns
 *     once every registered reader has passed a quiescent point since the
 *     call began, or is offline.
 *
 *   - A reader (a worker) loads a published pointer with qsbr_load() and may
 *     use what it points at until its next quiescent point.  It must not keep
 *     such a pointer across one: after qsbr_quiesce() or while offline it
 *     loads again.
 *
 *   - A worker announces a quiescent point once per loop turn, at a batch
 *     boundary (qsbr_quiesce), and goes offline around anything that may
 *     block for long (epoll_wait): qsbr_offline() before, qsbr_online()
 *     after.  An offline reader holds no pointer, so a grace period does not
 *     wait for it; that is what lets an idle worker sleep while the control
 *     thread publishes.
 *
 * Cost on the reader: one relaxed load of the global counter and one store
 * with a full fence per loop turn, nothing per packet.  The writer spins
 * (sched_yield) in qsbr_synchronize: grace periods are rare (a command) and
 * short (one batch).
 *
 * Thread-safety: qsbr_register/unregister and qsbr_synchronize are for the
 * writer side (one thread, or callers serialise them); qsbr_quiesce,
 * qsbr_offline, qsbr_online only for the reader's own thread. */
#ifndef VX_UTIL_QSBR_H
#define VX_UTIL_QSBR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { QSBR_MAX_READERS = 64 };

struct qsbr_reader {
	/* The grace-period counter this reader last saw; 0 when offline. */
	_Atomic uint64_t seen;
	bool registered;
};

struct qsbr {
	_Atomic uint64_t counter; /* starts at 1; advanced by each synchronize */
	struct qsbr_reader readers[QSBR_MAX_READERS];
};

void qsbr_init(struct qsbr *q);

/* A reader slot, online from now on.  0 or -ENOSPC. */
int qsbr_register(struct qsbr *q, struct qsbr_reader **out);
void qsbr_unregister(struct qsbr *q, struct qsbr_reader *r);

/* Reader side. */
void qsbr_quiesce(struct qsbr *q, struct qsbr_reader *r);
void qsbr_offline(struct qsbr_reader *r);
void qsbr_online(struct qsbr *q, struct qsbr_reader *r);

/* Writer side: waits until every registered reader has quiesced (or been
 * offline) since the call began. */
void qsbr_synchronize(struct qsbr *q);

/* Publication of a pointer: release on store, acquire on load, so a reader
 * sees the whole of a version built before it was published. */
#define qsbr_publish(slot, ptr) atomic_store_explicit((slot), (ptr), memory_order_release)
#define qsbr_load(slot) atomic_load_explicit((slot), memory_order_acquire)

#endif
