/* ctl_watch: `vxctl stats --watch [SECONDS] [-c N]`, live rates computed in
 * vxctl from two successive `-j stats` answers, like ovs-appctl
 * dpif-netdev/pmd-stats-show.
 *
 * Each answer carries time_ns, the worker's clock when it copied the
 * counters, so an interval is exactly the time between two snapshots, not
 * between two sleeps of vxctl.  Per port, over the interval: frames/s,
 * Gbit/s (frame bytes, L2, as the port counts them) and drops/s in each
 * direction, and the frame and byte counts themselves, so a script can
 * check that the intervals add up to the counters; for the switch: GRO
 * segments per emitted frame, CPU us per KB received (the process, as
 * `stats` prints it, and the worker thread alone).
 *
 * Drops have no direction in the counters; a reason's direction is what it
 * means (ctl_watch.c: the reasons met on the way out, the rest on the way
 * in).  Per worker: frames/s and Gbit/s it read, its busy share of a
 * core and CPU us per KB it read.
 *
 * Everything here is pure: words in, JSON text in, numbers out, printing
 * through ctl_print.  The loop (sleep, call, clear the screen) is vxctl's. */
#ifndef VX_CTL_CTL_WATCH_H
#define VX_CTL_CTL_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"

struct ctl_print;

enum {
	CTL_WATCH_MAX_PORTS = 256,
	CTL_WATCH_MAX_SECONDS = 3600,
	CTL_WATCH_MAX_COUNT = 1000000,
	CTL_WATCH_MAX_WORKERS = 16,
};

struct ctl_watch_opts {
	bool watch;
	double interval_s;     /* default 1 */
	uint32_t count;        /* intervals to print; 0: until interrupted */
};

/* Takes `--watch [SECONDS]` and `-c N` / `--count N` out of a `stats`
 * command's words.  words[0..n) is the command (words[0] "stats"); the
 * other words go to rest (n_rest of them, pointers into words).  Returns 0,
 * or -EINVAL with err saying which word is wrong (a count without --watch,
 * SECONDS outside 0.1..3600, an option twice). */
int ctl_watch_args(int n, const char *const *words, struct ctl_watch_opts *o, const char **rest, int *n_rest,
		   struct ctl_err *err);

struct ctl_watch_port {
	char name[CTL_NAME_SIZE];
	uint32_t vni;
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_drops, tx_drops;
};

/* The counters of one `-j stats` answer that the rates need. */
/* One worker's counters in a `stats` answer (workers.list[]). */
struct ctl_watch_worker {
	uint64_t index;
	uint64_t rx_frames, rx_bytes, cpu_us;
};

struct ctl_watch_sample {
	uint64_t time_ns;
	unsigned n_workers;
	struct ctl_watch_worker workers[CTL_WATCH_MAX_WORKERS];
	unsigned n_ports;
	struct ctl_watch_port ports[CTL_WATCH_MAX_PORTS];
	uint64_t gro_segments_in, gro_frames_out;
	uint64_t cpu_us, worker_cpu_us, rx_bytes;  /* cpu: user + sys */
};

/* Parses `vxctl -j stats` output.  0, or -EINVAL with err saying which
 * key is missing or of the wrong type. */
int ctl_watch_parse(const char *json, struct ctl_watch_sample *s, struct ctl_err *err);

struct ctl_watch_port_rates {
	char name[CTL_NAME_SIZE];
	uint32_t vni;
	struct ctl_watch_port delta;     /* counts over the interval */
	double rx_pps, rx_gbps, rx_drops_ps;
	double tx_pps, tx_gbps, tx_drops_ps;
};

/* How a worker did over the interval: the frames it read (how flows
 * spread over the workers), its share of a core, its service demand. */
struct ctl_watch_worker_rates {
	uint64_t index, rx_frames;
	double rx_pps, rx_gbps, busy, us_per_kb;
};

struct ctl_watch_rates {
	uint64_t time_ns;                /* the later snapshot's */
	double interval_s;
	unsigned n_workers;
	struct ctl_watch_worker_rates workers[CTL_WATCH_MAX_WORKERS];
	unsigned n_ports;
	struct ctl_watch_port_rates ports[CTL_WATCH_MAX_PORTS];
	double gro_segments_per_frame;   /* 0 when no frame came out of GRO */
	double cpu_us_per_kb, worker_cpu_us_per_kb; /* 0 when nothing was received */
};

/* The rates from a to b (b later).  A port is rated when it is in b; one
 * that was not in a (just added) or whose counters went back (deleted and
 * added again) counts from zero.  Returns 0, or -EINVAL when b is not
 * later than a. */
int ctl_watch_rates(const struct ctl_watch_sample *a, const struct ctl_watch_sample *b, struct ctl_watch_rates *r);

/* One interval: a table in text, one JSON object (a single line) in JSON. */
void ctl_watch_print(struct ctl_print *p, const struct ctl_watch_rates *r);

#endif
