/* vlog: the one logging path of the program.
 *
 * Why one path: before it, the ports wrote to stderr with fprintf and so
 * ignored the daemon's -q, and nothing stopped a per-packet failure from
 * printing a line per packet.  Every line the program prints about itself
 * goes through vlog(), which applies one level filter, one sink and one
 * line format, and per-call-site rate limits.
 *
 * Line format (one line per call, always ending in exactly one '\n'):
 *
 *     vxswitchd: MODULE: MESSAGE                     (VLOG_INFO)
 *     vxswitchd: error: MODULE: MESSAGE              (VLOG_ERR)
 *     vxswitchd: warning: MODULE: MESSAGE            (VLOG_WARN)
 *     vxswitchd: debug: MODULE: MESSAGE              (VLOG_DBG)
 *
 * Information lines carry no level word so the daemon's normal output
 * reads as sentences; the others are marked the way compilers mark them,
 * so `grep -E '^vxswitchd: (error|warning):'` finds every problem.  A NULL
 * or empty MODULE is left out with its ": ".  One trailing '\n' in MESSAGE
 * is dropped (callers converted from fprintf may keep theirs).  A message
 * longer than VLOG_LINE_MAX is cut and ends in "...".
 *
 * Rate limiting (after Open vSwitch's VLOG_*_RL): a call site that may
 * fire per packet owns a token bucket,
 *
 *     static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
 *     VLOG_WARN_RL(&rl, "vxlan", "sendmmsg: %s", strerror(-ret));
 *
 * which lets BURST messages through at once and then refills at BURST per
 * INTERVAL_SECONDS (one every INTERVAL/BURST seconds), full again after
 * INTERVAL of quiet.  Messages beyond it are suppressed and counted; the
 * next one that passes ends in
 *     " (N messages like this suppressed in the last S seconds)"
 * where S counts from the first suppressed one (rounded up, at least 1).
 * Messages the level filter drops neither spend tokens nor count as
 * suppressed.  The bucket is per call site, not per message text: two
 * sites never starve each other.
 *
 * Threads: the control thread and the datapath worker both log.  Every
 * entry point is thread-safe; the level is an atomic (a filtered message
 * costs one relaxed load and no lock), and one mutex covers the sink, the
 * clock and every rate-limit bucket, so a bucket's check-and-spend is
 * atomic and lines never interleave.  vlog() keeps errno as it found it,
 * so `VLOG_ERR(...); return -errno;` is safe.
 *
 * Do not call vlog from a signal handler (it takes a mutex). */
#ifndef VX_UTIL_VLOG_H
#define VX_UTIL_VLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum vlog_level { VLOG_ERR, VLOG_WARN, VLOG_INFO, VLOG_DBG };

enum { VLOG_LINE_MAX = 1024 }; /* bytes of one message, before the prefix */

/* Messages above max are dropped.  Default VLOG_INFO; vxswitchd -q sets
 * VLOG_WARN.  An out-of-range max is clamped to VLOG_DBG. */
void vlog_set_level(enum vlog_level max);
enum vlog_level vlog_get_level(void);

/* Whether a message at level would be printed (skip building expensive
 * arguments when not). */
bool vlog_is_enabled(enum vlog_level level);

/* Where lines go.  Default (and NULL) stderr.  The caller keeps ownership
 * of f and must not close it while vlog may still write to it.  Each line
 * is flushed, so a file sink is complete even if the daemon dies. */
void vlog_set_sink(FILE *f);

/* The clock the rate limits use, in nanoseconds from any fixed origin.
 * Default (and NULL) CLOCK_MONOTONIC.  For tests: make time move without
 * sleeping.  A clock that goes backwards is treated as standing still. */
void vlog_set_clock(uint64_t (*now_ns)(void));

void vlog(enum vlog_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One per call site, static, initialised with VLOG_RATE_LIMIT_INIT.  The
 * fields are vlog's, only public so the initialiser can be a constant;
 * they are read and written under vlog's mutex. */
struct vlog_rate_limit {
	unsigned int burst;           /* messages let through at once */
	unsigned int interval_s;      /* seconds to refill all of them */
	bool started;                 /* last_ns is valid */
	uint64_t last_ns;             /* when debt was last paid down */
	uint64_t debt_ns;             /* tokens spent, in token*interval/burst
	                               * units: 0 = full bucket */
	uint64_t n_suppressed;        /* since the last message that passed */
	uint64_t first_suppressed_ns; /* of the current run of suppressed */
};

/* BURST 0 counts as 1; INTERVAL_SECONDS 0 means no limit. */
#define VLOG_RATE_LIMIT_INIT(BURST, INTERVAL_SECONDS) \
	{ .burst = (BURST), .interval_s = (INTERVAL_SECONDS) }

void vlog_rl(struct vlog_rate_limit *rl, enum vlog_level level, const char *module,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The enum constants and these macros share names on purpose (as in Open
 * vSwitch): VLOG_WARN alone is the level, VLOG_WARN(...) logs at it. */
#define VLOG_ERR(module, ...) vlog(VLOG_ERR, module, __VA_ARGS__)
#define VLOG_WARN(module, ...) vlog(VLOG_WARN, module, __VA_ARGS__)
#define VLOG_INFO(module, ...) vlog(VLOG_INFO, module, __VA_ARGS__)
#define VLOG_DBG(module, ...) vlog(VLOG_DBG, module, __VA_ARGS__)
#define VLOG_ERR_RL(rl, module, ...) vlog_rl(rl, VLOG_ERR, module, __VA_ARGS__)
#define VLOG_WARN_RL(rl, module, ...) vlog_rl(rl, VLOG_WARN, module, __VA_ARGS__)
#define VLOG_INFO_RL(rl, module, ...) vlog_rl(rl, VLOG_INFO, module, __VA_ARGS__)
#define VLOG_DBG_RL(rl, module, ...) vlog_rl(rl, VLOG_DBG, module, __VA_ARGS__)

#endif /* VX_UTIL_VLOG_H */
