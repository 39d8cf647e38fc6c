/* evpn_report: an EVPN port's block of `port show` and what diagnose
 * reads of it (contract: evpn.h; state: evpn_internal.h). */
#include "control/evpn_internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"

/* ---- show ------------------------------------------------------------------------ */

void vxd_evpn_print_port(struct ctl_print *p, const struct vxd *vxd, const char *name)
{
	const struct evpn_vni *v = evpn_of_port(vxd, name);
	if (!v)
		return;
	ctl_print_open_object(p, "evpn");
	ctl_print_string(p, CTL_PRINT_ANY, "shadow_vxlan", " evpn (zebra drives %s", v->sh.vx);
	ctl_print_uint(p, CTL_PRINT_ANY, "shadow_dstport", " dstport %" PRIu64 ")", EVPN_SHADOW_UDP_PORT);
	ctl_print_open_array(p, "vteps");
	for (unsigned i = 0; i < v->n_vteps; i++) {
		struct ctl_ip ip = { .family = AF_INET };
		memcpy(ip.bytes, v->vteps[i], 4);
		ctl_print_ip(p, CTL_PRINT_ANY, NULL, " remote %s (evpn)", &ip);
	}
	ctl_print_close_array(p);
	ctl_print_uint(p, CTL_PRINT_ANY, "local_macs", " advertised %" PRIu64, v->n_local);
	ctl_print_uint(p, CTL_PRINT_JSON, "remote_adds", "%" PRIu64, v->remote_adds);
	ctl_print_uint(p, CTL_PRINT_JSON, "remote_dels", "%" PRIu64, v->remote_dels);
	ctl_print_uint(p, CTL_PRINT_JSON, "flood_adds", "%" PRIu64, v->flood_adds);
	ctl_print_uint(p, CTL_PRINT_JSON, "flood_dels", "%" PRIu64, v->flood_dels);
	ctl_print_uint(p, CTL_PRINT_JSON, "static_conflicts", "%" PRIu64, v->conflicts);
	ctl_print_uint(p, CTL_PRINT_JSON, "remote_refused", "%" PRIu64, v->refused);
	ctl_print_uint(p, CTL_PRINT_JSON, "moves", "%" PRIu64, v->moves);
	ctl_print_uint(p, CTL_PRINT_JSON, "local_adds", "%" PRIu64, v->local_adds);
	ctl_print_uint(p, CTL_PRINT_JSON, "local_dels", "%" PRIu64, v->local_dels);
	ctl_print_uint(p, CTL_PRINT_JSON, "netlink_errors", "%" PRIu64, v->nl_errors);
	ctl_print_uint(p, CTL_PRINT_JSON, "flood_list_refused", "%" PRIu64, v->flood_errors);
	ctl_print_uint(p, CTL_PRINT_JSON, "resyncs", "%" PRIu64, vxd->evpn->resyncs);
	ctl_print_uint(p, CTL_PRINT_JSON, "taken_gets", "%" PRIu64, vxd->evpn->taken_gets);
	ctl_print_uint(p, CTL_PRINT_JSON, "enobufs", "%" PRIu64, vxd->evpn->enobufs);
	ctl_print_uint(p, CTL_PRINT_JSON, "resyncs_local_gone", "%" PRIu64, vxd->evpn->resyncs_local_gone);
	ctl_print_open_object(p, "ignored");
	for (unsigned i = 1; i < EVPN_IGN_COUNT; i++)
		ctl_print_uint(p, CTL_PRINT_JSON, evpn_ignore_name(i), "%" PRIu64, vxd->evpn->ignored[i]);
	ctl_print_close_object(p);
	ctl_print_close_object(p);
}

int vxd_evpn_n_vteps(const struct vxd *vxd, const char *name)
{
	const struct evpn_vni *v = evpn_of_port(vxd, name);
	return v ? (int)v->n_vteps : -1;
}

/* ---- diagnose --------------------------------------------------------------------- */

/* A zebra process whose network namespace is ours (/proc: comm, ns/net). */
static bool evpn_zebra_here(void)
{
	struct stat mine;
	if (stat("/proc/self/ns/net", &mine) < 0)
		return false;
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		char path[300], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		if (strcmp(comm, "zebra\n"))
			continue;
		struct stat ns;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		found = stat(path, &ns) == 0 && ns.st_ino == mine.st_ino && ns.st_dev == mine.st_dev;
	}
	closedir(d);
	return found;
}

struct evpn_diag_walk {
	const struct evpn_vni *v;
	struct vxd_evpn_diag *out;
};

static int evpn_diag_entry(const struct fdb_entry_info *e, void *ctx)
{
	struct evpn_diag_walk *w = ctx;
	if (!e->evpn || e->dst.type != FDB_DST_VTEP || e->dst.family != 4)
		return 0;
	if (vtep_find((uint8_t(*)[4])w->v->vteps, w->v->n_vteps, e->dst.addr) >= 0)
		return 0;
	if (!w->out->macs_no_flood++)
		inet_ntop(AF_INET, e->dst.addr, w->out->no_flood_vtep, sizeof(w->out->no_flood_vtep));
	return 0;
}

bool vxd_evpn_diag(const struct vxd *vxd, const char *name, struct vxd_evpn_diag *out)
{
	memset(out, 0, sizeof(*out));
	const struct evpn_vni *v = evpn_of_port(vxd, name);
	if (!v)
		return false;
	out->zebra = evpn_zebra_here();
	out->vteps = v->n_vteps;
	out->fault = evpn_shadow_check(&v->sh);
	snprintf(out->shadow_vx, sizeof(out->shadow_vx), "%s", v->sh.vx);
	snprintf(out->shadow_br, sizeof(out->shadow_br), "%s", v->sh.br);
	uint64_t now = vxd_clock(vxd);
	const struct evpn_flap *worst = NULL;
	for (unsigned i = 0; i < EVPN_FLAP_SLOTS; i++) {
		const struct evpn_flap *f = &v->flaps[i];
		if (!f->used || f->moves < EVPN_DAD_MOVES || now - f->first_ns > EVPN_DAD_WINDOW_NS)
			continue;
		out->macs_flapping++;
		if (!worst || f->moves > worst->moves)
			worst = f;
	}
	if (worst) {
		memcpy(out->flap_mac, worst->mac, 6);
		out->flap_moves = worst->moves;
		inet_ntop(AF_INET, worst->vtep, out->flap_vtep, sizeof(out->flap_vtep));
	}
	struct evpn_diag_walk w = { .v = v, .out = out };
	ev_walk(vxd, v->vni, evpn_diag_entry, &w);
	return true;
}
