/* metrics_text: the Prometheus text exposition format (version 0.0.4) of one
 * worker snapshot, for `vxswitchd --metrics` (metrics_http.h serves it).
 *
 * A pure function: a snapshot, the ports' names and VNIs and the threads'
 * CPU times in, text out through a FILE (open_memstream in the daemon and
 * the unit test).  No clock, no /proc, no socket: the caller collected all
 * of it on the control thread (metrics.c), so the text says exactly what
 * `vxctl -j stats` would have said of the same snapshot.
 *
 * Every family has its HELP and TYPE line and every series is printed,
 * zeros included (a drop reason that never happened is 0, not absent).
 * Names and labels are listed in docs/STATS.md; like the drop reasons they
 * are an interface: add, never rename.
 *
 *   vxswitch_port_{rx,tx}_{packets,bytes}_total{port,vni,type}   counter
 *   vxswitch_port_up{port,vni,type}                              gauge
 *   vxswitch_port_drops_total{port,vni,type,reason}              counter
 *   vxswitch_drops_total{reason}       drops no port is blamed for  counter
 *   vxswitch_port_tx_frame_size_bytes{port,vni,type}             histogram
 *       le: the stats buckets' exclusive upper bounds minus one (a frame of
 *       1536 bytes is in "1.5K-8K", so le="1535" does not count it)
 *   vxswitch_gro_segments_per_frame                              histogram
 *       le 1, 3, 7 ... 127, +Inf: the stats buckets 1, 2-3, 4-7 ... 128+
 *   vxswitch_gro_flushes_total{reason}, vxswitch_gro_passthrough_total{reason}
 *   vxswitch_cpu_seconds_total{thread,mode="user"|"system"}      counter
 *   vxswitch_port_tap_queue_drops_total{port,vni,type}  taps      counter
 *   vxswitch_port_socket_rx_queue_drops_total{...}      vxlan     counter
 *   vxswitch_fdb_entries, vxswitch_pool_buffers_in_use            gauge
 *   vxswitch_fdb_learned_total, vxswitch_pool_alloc_failures_total counter */
#ifndef VX_REPORT_METRICS_TEXT_H
#define VX_REPORT_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dp/user/worker.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics_port {
	const char *name;
	const char *type;                /* "tap", "vxlan" */
	uint32_t vni;
	const struct vxd_port_snap *snap;
	bool vxlan;                      /* snap->sock is its socket's */
	bool has_kernel;                 /* a tap whose kernel counter was read: */
	uint64_t kernel_tx_dropped;      /* the device's tx_dropped (tap.h) */
};

struct metrics_thread_cpu {
	const char *thread;              /* "worker0", "control" */
	uint64_t user_us, sys_us;
};

struct metrics_input {
	const struct vxd_snapshot *snap; /* the switch-wide counters */
	const struct metrics_port *ports;
	size_t n_ports;
	const struct metrics_thread_cpu *cpu;
	size_t n_cpu;
};

/* Writes the exposition of `in` to out.  0, or -EIO if a write failed. */
int metrics_text_write(FILE *out, const struct metrics_input *in);

/* Writes s as a label value: backslash, double quote and newline escaped
 * as the format wants. */
void metrics_text_label_value(FILE *out, const char *s);

#endif
