/* vlog: one logging path (see vlog.h).
 *
 * The level is an atomic read without the lock, so the datapath pays one
 * load for a debug line that is off.  Everything else (sink, clock, rate
 * buckets, the write itself) happens under one mutex: a bucket is only
 * ever touched with it held, which is what makes check-and-spend atomic
 * between the control thread and the worker. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "util/vlog.h"

static pthread_mutex_t vlog_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int vlog_max_level = VLOG_INFO;
static FILE *vlog_sink;                       /* NULL: stderr */
static uint64_t (*vlog_clock)(void);          /* NULL: monotonic */

/* Keeps burst * interval (the bucket's size in ns units) inside 64 bits. */
enum { VLOG_RL_MAX_BURST = 100000, VLOG_RL_MAX_INTERVAL_S = 86400 };

#define NS_PER_S 1000000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static enum vlog_level clamp_level(enum vlog_level level)
{
	return (unsigned int)level > VLOG_DBG ? VLOG_DBG : level;
}

void vlog_set_level(enum vlog_level max)
{
	atomic_store_explicit(&vlog_max_level, (int)clamp_level(max), memory_order_relaxed);
}

enum vlog_level vlog_get_level(void)
{
	return (enum vlog_level)atomic_load_explicit(&vlog_max_level, memory_order_relaxed);
}

bool vlog_is_enabled(enum vlog_level level)
{
	return (int)clamp_level(level) <= atomic_load_explicit(&vlog_max_level,
							       memory_order_relaxed);
}

void vlog_set_sink(FILE *f)
{
	pthread_mutex_lock(&vlog_mutex);
	vlog_sink = f;
	pthread_mutex_unlock(&vlog_mutex);
}

void vlog_set_clock(uint64_t (*now_ns)(void))
{
	pthread_mutex_lock(&vlog_mutex);
	vlog_clock = now_ns;
	pthread_mutex_unlock(&vlog_mutex);
}

static const char *level_word(enum vlog_level level)
{
	switch (level) {
	case VLOG_ERR: return "error: ";
	case VLOG_WARN: return "warning: ";
	case VLOG_INFO: return "";
	default: return "debug: ";
	}
}

/* Format and write one line; called with the mutex held. */
static void emit_locked(enum vlog_level level, const char *module, const char *suffix,
			const char *fmt, va_list ap)
{
	char msg[VLOG_LINE_MAX];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t len = n < 0 ? 0 : (size_t)n;
	if (n < 0)
		msg[0] = '\0';
	if (len >= sizeof(msg)) {
		len = sizeof(msg) - 1;
		memcpy(msg + len - 3, "...", 3);
	}
	if (len && msg[len - 1] == '\n')
		msg[--len] = '\0';

	FILE *out = vlog_sink ? vlog_sink : stderr;
	bool has_module = module && *module;
	fprintf(out, "vxswitchd: %s%s%s%s%s\n", level_word(level), has_module ? module : "",
		has_module ? ": " : "", msg, suffix);
	fflush(out);
}

void vlog(enum vlog_level level, const char *module, const char *fmt, ...)
{
	if (!vlog_is_enabled(level))
		return;
	int saved_errno = errno;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&vlog_mutex);
	emit_locked(clamp_level(level), module, "", fmt, ap);
	pthread_mutex_unlock(&vlog_mutex);
	va_end(ap);
	errno = saved_errno;
}

/* The token bucket, in units where one message costs `cost` (the interval
 * in ns) and the bucket refills `burst` units per ns: so it holds burst
 * messages and refills them all in one interval, in integer arithmetic.
 * debt_ns counts units spent.  Returns whether the message may pass; when
 * it does and some were suppressed before it, *n_suppressed and *secs say
 * how many and over how long.  Called with the mutex held. */
static bool rl_admit_locked(struct vlog_rate_limit *rl, uint64_t now,
			    uint64_t *n_suppressed, uint64_t *secs)
{
	*n_suppressed = 0;
	if (!rl->interval_s)
		return true;
	uint64_t burst = rl->burst ? rl->burst : 1;
	uint64_t interval = rl->interval_s;
	burst = burst > VLOG_RL_MAX_BURST ? VLOG_RL_MAX_BURST : burst;
	interval = interval > VLOG_RL_MAX_INTERVAL_S ? VLOG_RL_MAX_INTERVAL_S : interval;
	uint64_t cost = interval * NS_PER_S, size = burst * cost;

	if (!rl->started) {
		rl->started = true;
		rl->last_ns = now;
	}
	if (now < rl->last_ns)
		now = rl->last_ns; /* a clock going back stands still */
	if (now > rl->last_ns) {
		uint64_t elapsed = now - rl->last_ns;
		/* elapsed < cost here, so elapsed * burst < size: no overflow */
		uint64_t paid = elapsed >= cost ? size : elapsed * burst;
		rl->debt_ns = paid >= rl->debt_ns ? 0 : rl->debt_ns - paid;
		rl->last_ns = now;
	}
	if (rl->debt_ns + cost > size) {
		if (rl->n_suppressed++ == 0)
			rl->first_suppressed_ns = now;
		return false;
	}
	rl->debt_ns += cost;
	if (rl->n_suppressed) {
		uint64_t span = now > rl->first_suppressed_ns ? now - rl->first_suppressed_ns : 0;
		*secs = (span + NS_PER_S - 1) / NS_PER_S;
		if (*secs == 0)
			*secs = 1;
		*n_suppressed = rl->n_suppressed;
		rl->n_suppressed = 0;
	}
	return true;
}

void vlog_rl(struct vlog_rate_limit *rl, enum vlog_level level, const char *module,
	     const char *fmt, ...)
{
	if (!vlog_is_enabled(level))
		return;
	int saved_errno = errno;
	pthread_mutex_lock(&vlog_mutex);
	uint64_t now = vlog_clock ? vlog_clock() : monotonic_ns();
	uint64_t n_suppressed, secs = 0;
	if (rl_admit_locked(rl, now, &n_suppressed, &secs)) {
		char suffix[96] = "";
		if (n_suppressed)
			snprintf(suffix, sizeof(suffix),
				 " (%llu message%s like this suppressed in the last %llu second%s)",
				 (unsigned long long)n_suppressed, n_suppressed == 1 ? "" : "s",
				 (unsigned long long)secs, secs == 1 ? "" : "s");
		va_list ap;
		va_start(ap, fmt);
		emit_locked(clamp_level(level), module, suffix, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&vlog_mutex);
	errno = saved_errno;
}
