/* failpoint: named fault injection, for tests.
 *
 * Why: error paths (an allocation that fails while the control thread
 * clones the VNI table, say) are the code tests reach least.  A failpoint
 * is a name at such a site,
 *
 *     if (failpoint_hit("vni_table_clone"))
 *             return -ENOMEM;
 *
 * that a test arms to make the site fail on purpose: the unit test calls
 * failpoint_arm(); a netns test starts the daemon with, e.g.,
 *
 *     VX_FAILPOINTS="vni_table_clone:0:1,fdb_create:2:1" vxswitchd ...
 *
 * Each entry is NAME:SKIP:COUNT: let SKIP calls pass, then fail COUNT
 * times, then pass again (the point disarms itself).
 *
 * Always compiled in, so the binary a test exercises is the binary that
 * ships.  That is affordable because an unarmed failpoint costs one relaxed
 * atomic load of one global "anything armed?" flag and a predictable branch
 * (failpoint_hit() is inline for that).  Only when some point is armed does
 * a call take the slow path: a mutex and a name compare against the armed
 * points (at most FAILPOINT_MAX).  Put failpoints on control paths and
 * allocation sites, not in per-packet loops; even there the cost is the
 * one load.
 *
 * The environment is read once, on the first call of any function here
 * (failpoint_hit() included: the flag starts "maybe armed" so the first call
 * goes the slow way).  A malformed VX_FAILPOINTS entry is reported on stderr
 * and ignored; the others still apply.
 *
 * Threads: every function is thread-safe (the flag is atomic, the armed
 * points are under one mutex).  A point armed in one thread is seen by
 * another's next call after the mutex or, at the latest, once the relaxed
 * flag store propagates: a test that arms and then triggers in the same
 * thread always sees it.
 *
 * The one global state in the program outside the daemon, on purpose: a
 * failpoint site is deep inside pure code that should not grow a parameter
 * for tests. */
#ifndef VX_UTIL_FAILPOINT_H
#define VX_UTIL_FAILPOINT_H

#include <stdatomic.h>
#include <stdbool.h>

enum failpoint_limits {
	FAILPOINT_MAX = 32,      /* points armed at once */
	FAILPOINT_NAME_MAX = 47, /* bytes of a name, without the NUL */
};

/* True while some point is armed, and before the environment has been
 * read.  Read by failpoint_hit(); not for direct use. */
extern atomic_bool failpoint_maybe_armed_;

bool failpoint_hit_slow_(const char *name);

/* True when `name` is armed and due: its SKIP passes are used up and it has
 * failures left (one is spent).  False otherwise, cheaply when nothing is
 * armed. */
static inline bool failpoint_hit(const char *name)
{
	if (__builtin_expect(!atomic_load_explicit(&failpoint_maybe_armed_, memory_order_relaxed), 1))
		return false;
	return failpoint_hit_slow_(name);
}

/* Arms `name`: the next `skip` hits pass, the `count` after them fail.
 * Re-arming a name replaces its counters; count 0 disarms it.  A name
 * longer than FAILPOINT_NAME_MAX, or more than FAILPOINT_MAX points armed
 * at once, is a bug in the test: reported on stderr and abort(). */
void failpoint_arm(const char *name, unsigned skip, unsigned count);

/* Parses a VX_FAILPOINTS-style list "name:skip:count[,name:skip:count...]"
 * and arms each entry.  Returns 0, or -EINVAL if some entry was malformed
 * (the well-formed ones are armed all the same).  The environment variable
 * goes through this once. */
int failpoint_arm_list(const char *list);

/* Disarms every point (environment ones included). */
void failpoint_disarm_all(void);

#endif
