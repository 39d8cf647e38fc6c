/* The Prometheus exposition of a snapshot (metrics_text.h). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "report/metrics_text.h"
#include "offload/gro.h"
#include "packet/drop_reason.h"
#include "port/port.h"

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_text_label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void port_labels(FILE *out, const struct metrics_port *mp)
{
	fputs("port=\"", out);
	metrics_text_label_value(out, mp->name);
	fprintf(out, "\",vni=\"%" PRIu32 "\",type=\"", mp->vni);
	metrics_text_label_value(out, mp->type);
	fputc('"', out);
}

/* The per-port counters of struct port_stats, one family each. */
enum port_field { PF_RX_FRAMES, PF_RX_BYTES, PF_TX_FRAMES, PF_TX_BYTES };

static uint64_t port_field(const struct port_stats *st, enum port_field f)
{
	switch (f) {
	case PF_RX_FRAMES:
		return st->rx_frames;
	case PF_RX_BYTES:
		return st->rx_bytes;
	case PF_TX_FRAMES:
		return st->tx_frames;
	case PF_TX_BYTES:
		return st->tx_bytes;
	}
	return 0;
}

static void port_counter(FILE *out, const struct metrics_input *in, const char *name, enum port_field f,
			 const char *help)
{
	family(out, name, "counter", help);
	for (size_t i = 0; i < in->n_ports; i++) {
		fprintf(out, "%s{", name);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %" PRIu64 "\n", port_field(&in->ports[i].snap->stats, f));
	}
}

static void port_up(FILE *out, const struct metrics_input *in)
{
	family(out, "vxswitch_port_up", "gauge", "1 while the port's device is there, 0 while a tap's device is gone.");
	for (size_t i = 0; i < in->n_ports; i++) {
		fputs("vxswitch_port_up{", out);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %d\n", in->ports[i].snap->lost_ns ? 0 : 1);
	}
}

static void port_drops(FILE *out, const struct metrics_input *in)
{
	family(out, "vxswitch_port_drops_total", "counter",
	       "Frames dropped, by the port blamed and the reason (docs/STATS.md lists the reasons).");
	for (size_t i = 0; i < in->n_ports; i++) {
		for (unsigned r = 1; r < DROP_REASON_COUNT; r++) {
			fputs("vxswitch_port_drops_total{", out);
			port_labels(out, &in->ports[i]);
			fprintf(out, ",reason=\"%s\"} %" PRIu64 "\n", drop_reason_name(r),
				in->ports[i].snap->stats.drops[r]);
		}
	}
	family(out, "vxswitch_drops_total", "counter", "Frames dropped that no port can be blamed for, by reason.");
	for (unsigned r = 1; r < DROP_REASON_COUNT; r++)
		fprintf(out, "vxswitch_drops_total{reason=\"%s\"} %" PRIu64 "\n", drop_reason_name(r),
			in->snap->drops[r]);
}

/* One uint64_t counter of the underlay socket stats, per vxlan port. */
static void sock_counter(FILE *out, const struct metrics_input *in, const char *name, const char *help,
			 size_t offset)
{
	family(out, name, "counter", help);
	for (size_t i = 0; i < in->n_ports; i++) {
		if (!in->ports[i].vxlan)
			continue;
		uint64_t v;
		memcpy(&v, (const char *)&in->ports[i].snap->sock + offset, sizeof(v));
		fprintf(out, "%s{", name);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %" PRIu64 "\n", v);
	}
}

/* Drops outside the daemon, where they happen for each kind of port: a
 * tap's queue (the VM sent faster than we read), a vxlan port's socket
 * receive buffer (the underlay sent faster than we read). */
static void kernel_drops(FILE *out, const struct metrics_input *in)
{
	family(out, "vxswitch_port_tap_queue_drops_total", "counter",
	       "Frames a VM sent that were not read in time: the tap's queue was full (the device's tx_dropped).");
	for (size_t i = 0; i < in->n_ports; i++) {
		if (!in->ports[i].has_kernel)
			continue;
		fputs("vxswitch_port_tap_queue_drops_total{", out);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %" PRIu64 "\n", in->ports[i].kernel_tx_dropped);
	}
	sock_counter(out, in, "vxswitch_port_socket_rx_queue_drops_total",
		     "Datagrams the kernel dropped because the underlay socket's receive buffer was full.",
		     offsetof(struct vxlan_sock_stats, rx_queue_drops));
}

/* What the kernel did with the underlay datagrams before we read them:
 * how many, how many came coalesced (UDP GRO), how many had a zero UDP
 * checksum (which UDP GRO never coalesces). */
static void sock_rx(FILE *out, const struct metrics_input *in)
{
	sock_counter(out, in, "vxswitch_port_socket_rx_datagrams_total",
		     "Datagrams the underlay socket received (the socket's: shared by its vxlan ports).",
		     offsetof(struct vxlan_sock_stats, rx_datagrams));
	sock_counter(out, in, "vxswitch_port_socket_rx_gro_buffers_total",
		     "Receives that carried more than one datagram: the kernel's UDP GRO coalesced them.",
		     offsetof(struct vxlan_sock_stats, rx_gro_buffers));
	sock_counter(out, in, "vxswitch_port_socket_rx_zero_csum_total",
		     "Datagrams with a zero outer UDP checksum, which UDP GRO never coalesces (IPv4; 0 when not counted).",
		     offsetof(struct vxlan_sock_stats, rx_zero_csum));
}

/* Cumulative buckets: the stats histogram's bucket b holds [bound[b-1],
 * bound[b]), so le = bound[b] - 1 counts buckets 0..b exactly. */
static void port_size_hist(FILE *out, const struct metrics_input *in)
{
	const char *name = "vxswitch_port_tx_frame_size_bytes";
	family(out, name, "histogram", "Sizes of the frames a port sent (a GSO frame counts once, whole).");
	for (size_t i = 0; i < in->n_ports; i++) {
		const struct port_stats *st = &in->ports[i].snap->stats;
		uint64_t cum = 0, sum = 0;
		for (unsigned b = 0; b < PORT_HIST_BUCKETS; b++) {
			cum += st->tx_hist_frames[b];
			sum += st->tx_hist_bytes[b];
			fprintf(out, "%s_bucket{", name);
			port_labels(out, &in->ports[i]);
			if (b + 1 < PORT_HIST_BUCKETS)
				fprintf(out, ",le=\"%" PRIu32 "\"} %" PRIu64 "\n", port_hist_bounds[b] - 1, cum);
			else
				fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\n", cum);
		}
		fprintf(out, "%s_sum{", name);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %" PRIu64 "\n%s_count{", sum, name);
		port_labels(out, &in->ports[i]);
		fprintf(out, "} %" PRIu64 "\n", cum);
	}
}

static void gro_metrics(FILE *out, const struct gro_stats *g)
{
	const char *name = "vxswitch_gro_segments_per_frame";
	family(out, name, "histogram", "Segments carried by each frame GRO emitted (1: not merged).");
	uint64_t cum = 0;
	for (unsigned b = 0; b < GRO_SIZE_BUCKETS; b++) {
		cum += g->segs_per_frame[b];
		if (b + 1 < GRO_SIZE_BUCKETS)
			fprintf(out, "%s_bucket{le=\"%u\"} %" PRIu64 "\n", name, (2u << b) - 1, cum);
		else
			fprintf(out, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, cum);
	}
	/* Frames of one segment add one each; merged frames their segments. */
	fprintf(out, "%s_sum %" PRIu64 "\n%s_count %" PRIu64 "\n", name,
		g->merged_segments + g->frames_out - g->merged_frames, name, cum);
	family(out, "vxswitch_gro_segments_total", "counter", "Segments given to GRO.");
	fprintf(out, "vxswitch_gro_segments_total %" PRIu64 "\n", g->segments_in);
	family(out, "vxswitch_gro_flushes_total", "counter", "GRO runs completed, by the reason they ended.");
	for (unsigned i = 0; i < GRO_FLUSH_REASON_COUNT; i++)
		fprintf(out, "vxswitch_gro_flushes_total{reason=\"%s\"} %" PRIu64 "\n", gro_flush_reason_name(i),
			g->flushes[i]);
	family(out, "vxswitch_gro_passthrough_total", "counter", "Frames GRO passed on unmerged, by reason.");
	for (unsigned i = 0; i < GRO_PASS_REASON_COUNT; i++)
		fprintf(out, "vxswitch_gro_passthrough_total{reason=\"%s\"} %" PRIu64 "\n", gro_pass_reason_name(i),
			g->passthrough[i]);
}

static void cpu_metrics(FILE *out, const struct metrics_input *in)
{
	family(out, "vxswitch_cpu_seconds_total", "counter", "CPU time of each vxswitchd thread, by mode.");
	for (size_t i = 0; i < in->n_cpu; i++) {
		const struct metrics_thread_cpu *c = &in->cpu[i];
		fputs("vxswitch_cpu_seconds_total{thread=\"", out);
		metrics_text_label_value(out, c->thread);
		fprintf(out, "\",mode=\"user\"} %" PRIu64 ".%06" PRIu64 "\n", c->user_us / 1000000, c->user_us % 1000000);
		fputs("vxswitch_cpu_seconds_total{thread=\"", out);
		metrics_text_label_value(out, c->thread);
		fprintf(out, "\",mode=\"system\"} %" PRIu64 ".%06" PRIu64 "\n", c->sys_us / 1000000, c->sys_us % 1000000);
	}
}

static void switch_metrics(FILE *out, const struct vxd_snapshot *s)
{
	family(out, "vxswitch_fdb_entries", "gauge", "MAC entries in the FDB (learned, static and EVPN).");
	fprintf(out, "vxswitch_fdb_entries %" PRIu64 "\n", (uint64_t)s->fdb.n_learned + s->fdb.n_static + s->fdb.n_evpn);
	family(out, "vxswitch_fdb_learned_total", "counter", "MACs learned.");
	fprintf(out, "vxswitch_fdb_learned_total %" PRIu64 "\n", s->fdb.learned);
	family(out, "vxswitch_pool_buffers_in_use", "gauge", "Packet buffers in use.");
	fprintf(out, "vxswitch_pool_buffers_in_use %" PRIu64 "\n", (uint64_t)s->pool.in_use);
	family(out, "vxswitch_pool_alloc_failures_total", "counter", "Packet buffer allocations that failed.");
	fprintf(out, "vxswitch_pool_alloc_failures_total %" PRIu64 "\n", (uint64_t)s->pool.alloc_failures);
}

int metrics_text_write(FILE *out, const struct metrics_input *in)
{
	port_counter(out, in, "vxswitch_port_rx_packets_total", PF_RX_FRAMES, "Frames a port received.");
	port_counter(out, in, "vxswitch_port_rx_bytes_total", PF_RX_BYTES, "Bytes of the frames a port received.");
	port_counter(out, in, "vxswitch_port_tx_packets_total", PF_TX_FRAMES, "Frames a port sent.");
	port_counter(out, in, "vxswitch_port_tx_bytes_total", PF_TX_BYTES, "Bytes of the frames a port sent.");
	port_up(out, in);
	port_drops(out, in);
	kernel_drops(out, in);
	sock_rx(out, in);
	port_size_hist(out, in);
	gro_metrics(out, &in->snap->gro);
	cpu_metrics(out, in);
	switch_metrics(out, in->snap);
	return ferror(out) ? -EIO : 0;
}
