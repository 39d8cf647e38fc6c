/* `stats` and `port show` of the ports a datapath serves itself (the
 * kernel datapath's: dp/dpif.h, "Two kinds of port"), from its dpif
 * counters (port_dump, port_stats, port_vteps, fdb_vni_macs) and what it
 * alone says (show).  Taps beside it are the userspace datapath's and
 * print as there (stats_print.c).  The same keys as the userspace
 * datapath's ports where they mean the same (rx_/tx_frames/bytes,
 * tx_avg_frame, drops{} by the datapath's reasons, tx_size_hist[] of what
 * the VM receives, fdb{}); a vxlan port's remote VTEPs (remotes[]); per
 * VNI sums (vnis[]).  Keys: docs/STATS.md, "The kernel datapath". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/evpn.h"
#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"
#include "dp/dpif.h"
#include "port/port.h"

enum { SD_MAX_PORTS = 1024 }; /* more than any datapath serves (the kernel's: 256) */

static void sd_ip(struct ctl_print *p, const char *key, const char *fmt, const struct dpif_ip *ip)
{
	struct ctl_ip c = { .family = ip->family };
	memcpy(c.bytes, ip->bytes, sizeof(c.bytes));
	ctl_print_ip(p, CTL_PRINT_ANY, key, fmt, &c);
}

/* A vxlan port: its remote VTEPs' counters (rx/tx their sums). */
static void sd_vxlan_port(struct ctl_print *p, struct dpif *dp, uint16_t id)
{
	struct dpif_vtep_stats s[DPIF_MAX_VTEPS];
	int n = dp->class->port_vteps(dp, id, s, DPIF_MAX_VTEPS);
	uint64_t rxf = 0, rxb = 0, txf = 0, txb = 0;
	for (int r = 0; r < n; r++) {
		rxf += s[r].rx_frames, rxb += s[r].rx_bytes;
		txf += s[r].tx_frames, txb += s[r].tx_bytes;
	}
	vxd_print_rxtx(p, rxf, rxb, txf, txb, 0);
	ctl_print_nl(p);
	/* Its frames' drops are counted on the datapath's device (show). */
	ctl_print_open_object(p, "drops");
	ctl_print_close_object(p);
	ctl_print_open_array(p, "remotes");
	for (int r = 0; r < n; r++) {
		ctl_print_open_object(p, NULL);
		sd_ip(p, "remote", "    remote %s", &s[r].remote);
		ctl_print_bool(p, CTL_PRINT_JSON, "evpn", NULL, s[r].evpn);
		if (s[r].evpn)
			ctl_print_text(p, "%s", " (evpn)");
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", ": tx %" PRIu64, s[r].tx_frames);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_bytes", " (%" PRIu64 " B)", s[r].tx_bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", " rx %" PRIu64, s[r].rx_frames);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " (%" PRIu64 " B)", s[r].rx_bytes);
		bool heard = s[r].rx_age_ns != UINT64_MAX;
		ctl_print_bool(p, CTL_PRINT_JSON, "heard", NULL, heard);
		ctl_print_uint(p, heard ? CTL_PRINT_ANY : CTL_PRINT_JSON, "last_rx_ms", " last rx %" PRIu64 " ms ago",
			       heard ? s[r].rx_age_ns / 1000000 : 0);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
}

/* Every port of dp with its counters, read once for the ports and the
 * VNIs' sums. */
struct sd_ports {
	unsigned n;
	uint16_t id[SD_MAX_PORTS];
	struct dpif_port_stats st[SD_MAX_PORTS];
};

static void sd_read(struct dpif *dp, struct sd_ports *ps)
{
	ps->n = 0;
	uint16_t id;
	for (unsigned cur = 0; ps->n < SD_MAX_PORTS && dp->class->port_dump(dp, &cur, &id) == 0;)
		if (dp->class->port_stats(dp, id, &ps->st[ps->n]) == 0)
			ps->id[ps->n++] = id;
}

static void sd_port(struct ctl_print *p, struct dpif *dp, uint16_t id, const struct dpif_port_stats *st)
{
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "port %s", st->name);
	ctl_print_string(p, CTL_PRINT_ANY, "type", " (%s", st->type);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, st->vni);
	ctl_print_string(p, CTL_PRINT_ANY, "datapath", " datapath %s)", dp->class->name);
	ctl_print_nl(p);
	if (st->vxlan) {
		sd_vxlan_port(p, dp, id);
	} else {
		vxd_print_rxtx(p, st->rx_frames, st->rx_bytes, st->tx_frames, st->tx_bytes, 0);
		ctl_print_nl(p);
		ctl_print_named_counts(p, "drops", "    ", st->drop_names, st->drops, 0, st->n_drop_reasons);
		ctl_print_size_hist(p, "tx_size_hist", "    tx sizes:", port_hist_names, st->tx_hist_frames,
				    st->tx_hist_bytes, DPIF_HIST_BUCKETS);
		ctl_print_open_object(p, "fdb");
		ctl_print_uint(p, CTL_PRINT_ANY, "macs", "    fdb: macs learned %" PRIu64, st->n_macs);
		ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", " max-macs %" PRIu64 " (0: none)", st->max_macs);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	if (dp->class->show)
		dp->class->show(dp, DPIF_SHOW_STATS_PORT, id, st, p);
	ctl_print_close_object(p);
}

/* One VNI's sums: its VM ports' counters and its vxlan ports' configured
 * remotes'. */
struct sd_vni {
	uint32_t vni;
	uint64_t ports, vxlan_ports, rxf, rxb, txf, txb, to_remotes, from_remotes;
};

static void sd_vni_add(struct dpif *dp, uint16_t id, const struct dpif_port_stats *st, struct sd_vni *v)
{
	if (!st->vxlan) {
		v->ports++;
		v->rxf += st->rx_frames, v->rxb += st->rx_bytes;
		v->txf += st->tx_frames, v->txb += st->tx_bytes;
		return;
	}
	v->vxlan_ports++;
	struct dpif_vtep_stats s[DPIF_MAX_VTEPS];
	int n = dp->class->port_vteps(dp, id, s, DPIF_MAX_VTEPS);
	for (int r = 0; r < n; r++)
		if (!s[r].evpn)
			v->to_remotes += s[r].tx_frames, v->from_remotes += s[r].rx_frames;
}

static void sd_vnis(struct ctl_print *p, struct dpif *dp, const struct sd_ports *ps)
{
	struct sd_vni *v = calloc(SD_MAX_PORTS, sizeof(*v)); /* at most one VNI a port */
	unsigned n = 0;
	for (unsigned k = 0; v && k < ps->n; k++) {
		unsigned i = 0;
		while (i < n && v[i].vni != ps->st[k].vni)
			i++;
		if (i == n)
			v[n++].vni = ps->st[k].vni;
		sd_vni_add(dp, ps->id[k], &ps->st[k], &v[i]);
	}
	ctl_print_open_array(p, "vnis");
	for (unsigned i = 0; i < n; i++) {
		uint32_t cap = 0, macs = dp->class->fdb_vni_macs ? dp->class->fdb_vni_macs(dp, v[i].vni, &cap) : 0;
		ctl_print_open_object(p, NULL);
		ctl_print_uint(p, CTL_PRINT_ANY, "vni", "vni %" PRIu64, v[i].vni);
		ctl_print_uint(p, CTL_PRINT_ANY, "ports", ": ports %" PRIu64, v[i].ports);
		ctl_print_uint(p, CTL_PRINT_ANY, "vxlan_ports", " vxlan ports %" PRIu64, v[i].vxlan_ports);
		ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", " rx %" PRIu64, v[i].rxf);
		ctl_print_uint(p, CTL_PRINT_JSON, "rx_bytes", NULL, v[i].rxb);
		ctl_print_uint(p, CTL_PRINT_ANY, "tx_frames", " tx %" PRIu64, v[i].txf);
		ctl_print_uint(p, CTL_PRINT_JSON, "tx_bytes", NULL, v[i].txb);
		ctl_print_uint(p, CTL_PRINT_ANY, "to_remotes", " to remotes %" PRIu64, v[i].to_remotes);
		ctl_print_uint(p, CTL_PRINT_ANY, "from_remotes", " from remotes %" PRIu64, v[i].from_remotes);
		ctl_print_uint(p, CTL_PRINT_ANY, "macs", " macs %" PRIu64, macs);
		ctl_print_uint(p, CTL_PRINT_ANY, "max_macs", "/%" PRIu64, cap);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	free(v);
}

int vxd_devport_stats(struct vxd *vxd, struct dpif *dp, const struct ctl_port_ref *ref, struct ctl_print *p,
		      struct ctl_err *err)
{
	/* Taps (and their slow-path links' user ends) are the userspace
	 * datapath's (kdp_slowpath.c). */
	bool user = ref->has_port && vxd_port_by_name(vxd, ref->name);
	struct vxd_dp_port dpp;
	if (ref->has_port && !user && !vxd_devport_find(vxd, ref->name, &dpp))
		return vxd_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	struct dpif_dp_stats ds = { 0 };
	if (dp->class->dp_stats(dp, &ds) < 0 || !ds.attach)
		ds.attach = "?";
	ctl_print_open_object(p, NULL);
	ctl_print_uint(p, CTL_PRINT_JSON, "time_ns", "%" PRIu64, ds.now_ns);
	ctl_print_string(p, CTL_PRINT_ANY, "datapath", "datapath %s", dp->class->name);
	ctl_print_string(p, CTL_PRINT_ANY, "attach", " (%s)\n", ds.attach);
	struct sd_ports *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return vxd_refuse(err, -ENOMEM, "stats: out of memory");
	ctl_print_open_array(p, "ports");
	if (user) {
		vxd_user_ports_stats(p, vxd, ref->name);
	} else if (ref->has_port) {
		if (dp->class->port_stats(dp, dpp.id, &ps->st[0]) == 0)
			sd_port(p, dp, dpp.id, &ps->st[0]);
	} else {
		sd_read(dp, ps);
		for (unsigned k = 0; k < ps->n; k++)
			sd_port(p, dp, ps->id[k], &ps->st[k]);
		vxd_user_ports_stats(p, vxd, NULL);
	}
	ctl_print_close_array(p);
	if (!ref->has_port) {
		sd_vnis(p, dp, ps);
		if (dp->class->show)
			dp->class->show(dp, DPIF_SHOW_STATS_TAIL, 0, NULL, p);
		vxd_print_ctl_stats(p, vxd);
	}
	ctl_print_close_object(p);
	free(ps);
	return 0;
}

void vxd_devport_show(struct vxd *vxd, struct dpif *dp, struct ctl_print *out)
{
	uint16_t id;
	struct dpif_port_stats st;
	for (unsigned cur = 0; dp->class->port_dump(dp, &cur, &id) == 0;) {
		if (dp->class->port_stats(dp, id, &st) < 0)
			continue;
		ctl_print_open_object(out, NULL);
		ctl_print_string(out, CTL_PRINT_ANY, "name", "%s", st.name);
		ctl_print_string(out, CTL_PRINT_ANY, "type", " type %s", st.type);
		ctl_print_uint(out, CTL_PRINT_ANY, "vni", " vni %" PRIu64, st.vni);
		ctl_print_string(out, CTL_PRINT_ANY, "datapath", " datapath %s", dp->class->name);
		if (dp->class->show)
			dp->class->show(dp, DPIF_SHOW_PORT_LINE, id, &st, out);
		if (st.vxlan)
			vxd_evpn_print_port(out, vxd, st.name);
		ctl_print_nl(out);
		ctl_print_close_object(out);
	}
}
