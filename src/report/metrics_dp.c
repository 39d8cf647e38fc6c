/* `--metrics` of the ports a datapath serves itself (dp/dpif.h,
 * "Counters"): they join the userspace datapath's port families (rx/tx
 * frames and bytes, port_up, the size histogram of what the VM receives)
 * through snapshots made from their dpif counters, and their own
 * families follow:
 *   vxswitch_kdp_port_drops_total{port,vni,type,reason}   the datapath's drop reasons
 *   vxswitch_kdp_port_upcalls_total{...}, vxswitch_kdp_port_upcall_drops_total{...}
 *   vxswitch_kdp_program_attached{port,vni,type}           gauge (1/0)
 *   vxswitch_kdp_vtep_tx_frames_total{port,vni,remote}, ..._rx_frames_total,
 *   vxswitch_kdp_vtep_last_rx_seconds{port,vni,remote}     gauge: age of the last frame from it (-1: never)
 * The names say "kdp" because the kernel datapath was the first such
 * datapath and they are an interface (metrics_text.h: add, never
 * rename).  Names: docs/STATS.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "report/metrics_text.h"

/* A port's counters, the snapshot made of them for metrics_text, and a
 * vxlan port's remote VTEPs: each read once per scrape, so that the
 * three VTEP families of one remote come from one read. */
struct md_port {
	uint16_t id;
	struct dpif_port_stats st;
	struct vxd_port_snap snap;
	struct dpif_vtep_stats *vteps;
	int n_vteps;
};

struct vxd_devport_metrics {
	struct dpif *dp;
	size_t n;
	struct md_port ports[];
};

static void md_snap(const struct dpif_port_stats *st, struct vxd_port_snap *s)
{
	s->present = true;
	s->stats.rx_frames = st->rx_frames;
	s->stats.rx_bytes = st->rx_bytes;
	s->stats.tx_frames = st->tx_frames;
	s->stats.tx_bytes = st->tx_bytes;
	for (unsigned b = 0; b < DPIF_HIST_BUCKETS; b++) {
		s->stats.tx_hist_frames[b] = st->tx_hist_frames[b];
		s->stats.tx_hist_bytes[b] = st->tx_hist_bytes[b];
	}
	s->lost_ns = st->attached == -ENODEV; /* port_up 0: its device is gone */
}

struct vxd_devport_metrics *vxd_devport_metrics_read(struct dpif *dp, struct metrics_port *ports, size_t room,
						     size_t *n_ports)
{
	*n_ports = 0;
	size_t max = 0;
	uint16_t id;
	for (unsigned cur = 0; dp->class->port_dump(dp, &cur, &id) == 0;)
		max++;
	struct vxd_devport_metrics *m = calloc(1, sizeof(*m) + max * sizeof(m->ports[0]));
	if (!m)
		return NULL;
	m->dp = dp;
	for (unsigned cur = 0; m->n < max && dp->class->port_dump(dp, &cur, &id) == 0;) {
		struct md_port *p = &m->ports[m->n];
		if (dp->class->port_stats(dp, id, &p->st) < 0)
			continue;
		p->id = id;
		m->n++;
		if (p->st.vxlan) { /* its remotes, not a port series */
			p->vteps = calloc(DPIF_MAX_VTEPS, sizeof(*p->vteps));
			int nv = p->vteps ? dp->class->port_vteps(dp, id, p->vteps, DPIF_MAX_VTEPS) : 0;
			p->n_vteps = nv > 0 ? nv : 0;
			continue;
		}
		if (*n_ports == room)
			continue;
		md_snap(&p->st, &p->snap);
		ports[(*n_ports)++] = (struct metrics_port){ .name = p->st.name, .type = p->st.type,
							     .vni = p->st.vni, .snap = &p->snap };
	}
	return m;
}

static void labels(FILE *out, const struct dpif_port_stats *st)
{
	fputs("port=\"", out);
	metrics_text_label_value(out, st->name);
	fprintf(out, "\",vni=\"%" PRIu32 "\",type=\"%s\"", st->vni, st->type);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void port_families(FILE *out, const struct vxd_devport_metrics *m)
{
	family(out, "vxswitch_kdp_port_drops_total", "counter",
	       "Frames the kernel datapath's program dropped, by the port they came from and the reason.");
	for (size_t i = 0; i < m->n; i++) {
		const struct dpif_port_stats *st = &m->ports[i].st;
		for (unsigned r = 0; !st->vxlan && r < st->n_drop_reasons; r++) {
			fputs("vxswitch_kdp_port_drops_total{", out);
			labels(out, st);
			fprintf(out, ",reason=\"%s\"} %" PRIu64 "\n", st->drop_names[r], st->drops[r]);
		}
	}
	/* DPIF_UPCALL_COUNTERS' families, then the gauge (off: 0). */
#define MD_FAMILY(f, text, help) { "vxswitch_kdp_port_" #f "_total", "counter", help, offsetof(struct dpif_port_stats, f) },
	static const struct { const char *name, *type, *help; size_t off; } fams[] = {
		DPIF_UPCALL_COUNTERS(MD_FAMILY)
		{ "vxswitch_kdp_program_attached", "gauge", "1 while the program is on the port's ingress.", 0 },
	};
#undef MD_FAMILY
	const unsigned n_fams = sizeof(fams) / sizeof(fams[0]), gauge = n_fams - 1;
	for (unsigned f = 0; f < n_fams; f++) {
		family(out, fams[f].name, fams[f].type, fams[f].help);
		for (size_t i = 0; i < m->n; i++) {
			const struct dpif_port_stats *st = &m->ports[i].st;
			if (st->vxlan)
				continue;
			uint64_t v = st->attached == 1;
			if (f != gauge)
				memcpy(&v, (const char *)st + fams[f].off, sizeof(v));
			fprintf(out, "%s{", fams[f].name);
			labels(out, st);
			fprintf(out, "} %" PRIu64 "\n", v);
		}
	}
}

static void vtep_families(FILE *out, const struct vxd_devport_metrics *m)
{
	static const char *const names[3] = { "vxswitch_kdp_vtep_tx_frames_total", "vxswitch_kdp_vtep_rx_frames_total",
					      "vxswitch_kdp_vtep_last_rx_seconds" };
	static const char *const helps[3] = { "Frames sent to the remote VTEP (inner, flood copies included).",
					      "Frames accepted from the remote VTEP.",
					      "Seconds since the last frame from the remote VTEP (-1: none yet)." };
	for (unsigned f = 0; f < 3; f++) {
		family(out, names[f], f == 2 ? "gauge" : "counter", helps[f]);
		for (size_t i = 0; i < m->n; i++) {
			const struct md_port *p = &m->ports[i];
			const struct dpif_vtep_stats *s = p->vteps;
			for (int r = 0; r < p->n_vteps; r++) {
				char a[INET6_ADDRSTRLEN] = "?";
				inet_ntop(s[r].remote.family, s[r].remote.bytes, a, sizeof(a));
				fprintf(out, "%s{", names[f]);
				labels(out, &p->st);
				fprintf(out, ",remote=\"%s\"} ", a);
				if (f == 0)
					fprintf(out, "%" PRIu64 "\n", s[r].tx_frames);
				else if (f == 1)
					fprintf(out, "%" PRIu64 "\n", s[r].rx_frames);
				else if (s[r].rx_age_ns == UINT64_MAX)
					fputs("-1\n", out);
				else
					fprintf(out, "%.3f\n", (double)s[r].rx_age_ns / 1e9);
			}
		}
	}
}

void vxd_devport_metrics_write(const struct vxd_devport_metrics *m, FILE *out)
{
	port_families(out, m);
	vtep_families(out, m);
}

void vxd_devport_metrics_free(struct vxd_devport_metrics *m)
{
	for (size_t i = 0; m && i < m->n; i++)
		free(m->ports[i].vteps);
	free(m);
}
