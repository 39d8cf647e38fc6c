/* `--metrics` of the kernel datapath: its ports join the userspace
 * datapath's port families (rx/tx frames and bytes, port_up, the size
 * histogram of what the VM receives) through snapshots made from the
 * programs' counters, and the kernel's own families follow:
 *   vxswitch_kdp_port_drops_total{port,vni,type,reason}   the programs' drop reasons
 *   vxswitch_kdp_port_upcalls_total{...}, vxswitch_kdp_port_upcall_drops_total{...}
 *   vxswitch_kdp_program_attached{port,vni,type}           gauge (1/0)
 *   vxswitch_kdp_vtep_tx_frames_total{port,vni,remote}, ..._rx_frames_total,
 *   vxswitch_kdp_vtep_last_rx_seconds{port,vni,remote}     gauge: age of the last frame from it (-1: never)
 * Names: docs/STATS.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/kdp_ports.h"
#include "control/vxd_internal.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_diag.h"
#include "report/metrics_text.h"

size_t vxd_kdp_metrics_ports(struct vxd *vxd, struct metrics_port *ports, size_t room,
			     struct vxd_port_snap **snaps_out)
{
	*snaps_out = NULL;
	struct vxd_port_snap *snaps = calloc(kdp_ctl_port_slots(), sizeof(*snaps));
	if (!snaps)
		return 0;
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	struct kdp_ctl_port_info pi;
	size_t n = 0;
	for (unsigned i = 0; i < kdp_ctl_port_slots() && n < room; i++) {
		if (!kdp_ctl_port_at(vxd->kdp, i, &pi) || !pi.ifindex)
			continue; /* vxlan ports: their remotes, below */
		struct vxd_port_snap *s = &snaps[n];
		struct vxdp_counters c;
		if (kdp_counters_read(k, pi.ifindex, &c) < 0)
			memset(&c, 0, sizeof(c));
		s->present = true;
		s->stats.rx_frames = c.rx_packets;
		s->stats.rx_bytes = c.rx_bytes;
		s->stats.tx_frames = c.tx_packets;
		s->stats.tx_bytes = c.tx_bytes;
		for (unsigned b = 0; b < VXDP_HIST_BUCKETS && b < PORT_HIST_BUCKETS; b++) {
			s->stats.tx_hist_frames[b] = c.hist_frames[b];
			s->stats.tx_hist_bytes[b] = c.hist_bytes[b];
		}
		s->lost_ns = kdp_prog_attached(k, pi.ifindex, kdp_port_prog_fd(k)) == -ENODEV;
		ports[n] = (struct metrics_port){ .name = pi.spec->name,
						  .type = kdp_ctl_port_type(&pi),
						  .vni = pi.spec->vni, .snap = s };
		n++;
	}
	*snaps_out = snaps;
	return n;
}

static void labels(FILE *out, const struct kdp_ctl_port_info *pi)
{
	const struct dpif_port_spec *spec = pi->spec;
	fputs("port=\"", out);
	metrics_text_label_value(out, spec->name);
	fprintf(out, "\",vni=\"%" PRIu32 "\",type=\"%s\"", spec->vni,
		kdp_ctl_port_type(pi));
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void port_families(FILE *out, struct vxd *vxd, struct kdp *k)
{
	struct kdp_ctl_port_info pi;
	family(out, "vxswitch_kdp_port_drops_total", "counter",
	       "Frames the kernel datapath's program dropped, by the port they came from and the reason.");
	for (unsigned i = 0; i < kdp_ctl_port_slots(); i++) {
		struct vxdp_counters c;
		if (!kdp_ctl_port_at(vxd->kdp, i, &pi) || !pi.ifindex || kdp_counters_read(k, pi.ifindex, &c) < 0)
			continue;
		for (unsigned r = 0; r < VXDP_DROP_COUNT; r++) {
			fputs("vxswitch_kdp_port_drops_total{", out);
			labels(out, &pi);
			fprintf(out, ",reason=\"%s\"} %" PRIu64 "\n", vxd_kdp_drop_name(r), (uint64_t)c.drops[r]);
		}
	}
	/* VXDP_UPCALL_COUNTERS' families, then the gauge (off: 0). */
#define KM_FAMILY(f, text, help) { "vxswitch_kdp_port_" #f "_total", help, offsetof(struct vxdp_counters, f) },
	static const struct { const char *name, *help; size_t off; } fams[] = {
		VXDP_UPCALL_COUNTERS(KM_FAMILY)
		{ "vxswitch_kdp_program_attached", "1 while the program is on the port's ingress.", 0 },
	};
#undef KM_FAMILY
	const unsigned n_fams = sizeof(fams) / sizeof(fams[0]), gauge = n_fams - 1;
	for (unsigned f = 0; f < n_fams; f++) {
		family(out, fams[f].name, f == gauge ? "gauge" : "counter", fams[f].help);
		for (unsigned i = 0; i < kdp_ctl_port_slots(); i++) {
			struct vxdp_counters c;
			if (!kdp_ctl_port_at(vxd->kdp, i, &pi) || !pi.ifindex)
				continue;
			if (kdp_counters_read(k, pi.ifindex, &c) < 0)
				memset(&c, 0, sizeof(c));
			uint64_t v;
			if (f == gauge)
				v = kdp_prog_attached(k, pi.ifindex, kdp_port_prog_fd(k)) == 1;
			else
				memcpy(&v, (const char *)&c + fams[f].off, sizeof(v));
			fprintf(out, "%s{", fams[f].name);
			labels(out, &pi);
			fprintf(out, "} %" PRIu64 "\n", v);
		}
	}
}

static void vtep_families(FILE *out, struct vxd *vxd, struct kdp *k)
{
	static const char *const names[3] = { "vxswitch_kdp_vtep_tx_frames_total", "vxswitch_kdp_vtep_rx_frames_total",
					      "vxswitch_kdp_vtep_last_rx_seconds" };
	static const char *const helps[3] = { "Frames sent to the remote VTEP (inner, flood copies included).",
					      "Frames accepted from the remote VTEP.",
					      "Seconds since the last frame from the remote VTEP (-1: none yet)." };
	uint64_t now = kdp_now_ns();
	struct kdp_ctl_port_info pi;
	for (unsigned f = 0; f < 3; f++) {
		family(out, names[f], f == 2 ? "gauge" : "counter", helps[f]);
		for (unsigned i = 0; i < kdp_ctl_port_slots(); i++) {
			if (!kdp_ctl_port_at(vxd->kdp, i, &pi) || pi.ifindex)
				continue;
			for (unsigned r = 0; r < kdp_ctl_port_n_remotes(&pi); r++) {
				const struct dpif_ip *ip = kdp_ctl_port_remote(&pi, r);
				struct vxdp_vtep_stats s;
				if (kdp_vtep_stats_read(k, pi.spec->vni, ip->family == AF_INET6 ? VXDP_FDB_V6 : 0, ip->bytes, &s) < 0)
					memset(&s, 0, sizeof(s));
				char a[INET6_ADDRSTRLEN] = "?";
				inet_ntop(ip->family, ip->bytes, a, sizeof(a));
				fprintf(out, "%s{", names[f]);
				labels(out, &pi);
				fprintf(out, ",remote=\"%s\"} ", a);
				if (f == 0)
					fprintf(out, "%" PRIu64 "\n", (uint64_t)s.tx_packets);
				else if (f == 1)
					fprintf(out, "%" PRIu64 "\n", (uint64_t)s.rx_packets);
				else if (!s.last_rx_ns || now < s.last_rx_ns)
					fputs("-1\n", out);
				else
					fprintf(out, "%.3f\n", (double)(now - s.last_rx_ns) / 1e9);
			}
		}
	}
}

void vxd_kdp_metrics_write(struct vxd *vxd, FILE *out)
{
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	port_families(out, vxd, k);
	vtep_families(out, vxd, k);
}
