/* rec_ring: single-producer single-consumer ring of records (rec_ring.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/rec_ring.h"

#define REC_RING_WRAP UINT32_MAX /* header of the padding up to the end */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int rec_ring_init(struct rec_ring *r, size_t size)
{
	size_t s = 4096;
	while (s < size)
		s <<= 1;
	memset(r, 0, sizeof(*r));
	r->buf = aligned_alloc(8, s);
	if (!r->buf)
		return -ENOMEM;
	r->size = s;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

void rec_ring_fini(struct rec_ring *r)
{
	free(r->buf);
	r->buf = NULL;
}

size_t rec_ring_max_record(const struct rec_ring *r)
{
	return r->size / 4 - REC_RING_HDR;
}

void *rec_ring_reserve(struct rec_ring *r, size_t len)
{
	if (len > rec_ring_max_record(r))
		return NULL;
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	size_t need = REC_RING_HDR + pad8(len);
	size_t pos = head & (r->size - 1);
	size_t skip = r->size - pos < need ? r->size - pos : 0;
	if (r->size - (head - tail) < skip + need)
		return NULL;
	r->res_skip = skip;
	return r->buf + (skip ? 0 : pos) + REC_RING_HDR;
}

void rec_ring_commit(struct rec_ring *r, size_t len)
{
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	size_t pos = head & (r->size - 1);
	if (r->res_skip) {
		/* Positions are 8-aligned, so a header always fits here. */
		uint32_t wrap = REC_RING_WRAP;
		memcpy(r->buf + pos, &wrap, sizeof(wrap));
		pos = 0;
	}
	uint32_t n = (uint32_t)len;
	memcpy(r->buf + pos, &n, sizeof(n));
	atomic_store_explicit(&r->head, head + r->res_skip + REC_RING_HDR + pad8(len),
			      memory_order_release);
	r->res_skip = 0;
}

const void *rec_ring_peek(struct rec_ring *r, size_t *len)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	if (tail == head)
		return NULL;
	size_t pos = tail & (r->size - 1);
	size_t skip = 0;
	uint32_t n;
	memcpy(&n, r->buf + pos, sizeof(n));
	if (n == REC_RING_WRAP) {
		skip = r->size - pos;
		pos = 0;
		memcpy(&n, r->buf, sizeof(n));
	}
	r->peek_bytes = skip + REC_RING_HDR + pad8(n);
	*len = n;
	return r->buf + pos + REC_RING_HDR;
}

void rec_ring_release(struct rec_ring *r)
{
	if (!r->peek_bytes)
		return;
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	atomic_store_explicit(&r->tail, tail + r->peek_bytes, memory_order_release);
	r->peek_bytes = 0;
}

size_t rec_ring_used(struct rec_ring *r)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	return head - tail;
}
