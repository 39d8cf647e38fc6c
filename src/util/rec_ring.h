/* rec_ring: a bounded single-producer, single-consumer ring of
 * variable-size records, for handing bytes from the datapath worker to the
 * control thread without a lock and without ever making the worker wait.
 *
 * Why: a capture copies frames on the worker and writes them to a client
 * from the control thread.  The worker must never block on a slow reader,
 * so the buffer between them is bounded and a record that does not fit is
 * refused at once (the producer counts it as a drop); nothing is ever
 * overwritten.
 *
 * Layout: one power-of-two byte buffer.  Each record is an 8-byte header
 * (its length) and its bytes, padded to 8.  A record is contiguous: when it
 * does not fit before the end of the buffer, a wrap marker fills the rest
 * and the record starts at offset 0.  head and tail are free-running byte
 * counters (positions are counter & (size - 1)); the producer alone writes
 * head, the consumer alone writes tail.  head is stored with release after
 * the bytes are written, and loaded with acquire by the consumer, so a
 * record seen is a record complete; tail the same way the other direction,
 * so the producer never writes over bytes still being read.
 *
 * Use, producer side: p = rec_ring_reserve(r, len); fill p[0..len);
 * rec_ring_commit(r, used) with used <= len (a reservation may be given up
 * by not committing it).  Consumer side: p = rec_ring_peek(r, &len); read;
 * rec_ring_release(r).
 *
 * Thread-safety: one producer thread, one consumer thread, any two (they
 * may be the same).  create/destroy when neither runs. */
#ifndef VX_UTIL_REC_RING_H
#define VX_UTIL_REC_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct rec_ring {
	uint8_t *buf;
	size_t size;             /* power of two */
	_Atomic size_t head;     /* producer: bytes committed, ever */
	_Atomic size_t tail;     /* consumer: bytes released, ever */
	/* producer-only: the reservation in progress */
	size_t res_skip;         /* wrap padding before it (0: none) */
	/* consumer-only: the record peeked */
	size_t peek_bytes;       /* its footprint including padding, 0: none */
};

enum { REC_RING_HDR = 8 };

/* A ring of `size` bytes (rounded up to a power of two, at least 4096).
 * The largest record is a quarter of it (rec_ring_max_record).  0 or
 * -ENOMEM. */
int rec_ring_init(struct rec_ring *r, size_t size);
void rec_ring_fini(struct rec_ring *r);
size_t rec_ring_max_record(const struct rec_ring *r);

/* Producer: room for a record of `len` bytes, or NULL when the ring is too
 * full now (or len is over rec_ring_max_record). */
void *rec_ring_reserve(struct rec_ring *r, size_t len);
/* Producer: publishes the reserved record with its first `len` bytes
 * (<= the length reserved). */
void rec_ring_commit(struct rec_ring *r, size_t len);

/* Consumer: the oldest record and its length, or NULL when empty.  Until
 * rec_ring_release() the same record is returned. */
const void *rec_ring_peek(struct rec_ring *r, size_t *len);
void rec_ring_release(struct rec_ring *r);

/* Either side: bytes in use (a snapshot). */
size_t rec_ring_used(struct rec_ring *r);

#endif
