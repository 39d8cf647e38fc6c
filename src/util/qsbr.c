#include "util/qsbr.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

void qsbr_init(struct qsbr *q)
{
	memset(q, 0, sizeof(*q));
	atomic_store(&q->counter, 1);
}

int qsbr_register(struct qsbr *q, struct qsbr_reader **out)
{
	for (unsigned i = 0; i < QSBR_MAX_READERS; i++) {
		struct qsbr_reader *r = &q->readers[i];
		if (r->registered)
			continue;
		r->registered = true;
		atomic_store(&r->seen, atomic_load(&q->counter));
		*out = r;
		return 0;
	}
	return -ENOSPC;
}

void qsbr_unregister(struct qsbr *q, struct qsbr_reader *r)
{
	(void)q;
	atomic_store(&r->seen, 0);
	r->registered = false;
}

void qsbr_quiesce(struct qsbr *q, struct qsbr_reader *r)
{
	/* seq_cst: every read of a published version before this point is
	 * ordered before the writer can see the new counter value. */
	atomic_store(&r->seen, atomic_load_explicit(&q->counter, memory_order_relaxed));
}

void qsbr_offline(struct qsbr_reader *r)
{
	atomic_store(&r->seen, 0);
}

void qsbr_online(struct qsbr *q, struct qsbr_reader *r)
{
	/* The store and the fence that goes with it come before any load of a
	 * published pointer after going online. */
	atomic_store(&r->seen, atomic_load(&q->counter));
	atomic_thread_fence(memory_order_seq_cst);
}

void qsbr_synchronize(struct qsbr *q)
{
	uint64_t target = atomic_fetch_add(&q->counter, 1) + 1;
	for (unsigned i = 0; i < QSBR_MAX_READERS; i++) {
		struct qsbr_reader *r = &q->readers[i];
		if (!r->registered)
			continue;
		for (;;) {
			uint64_t seen = atomic_load(&r->seen);
			if (seen == 0 || seen >= target)
				break;
			sched_yield();
		}
	}
}
