/* `diagnose` of the ports a datapath serves itself: reads their dpif
 * counters (port_dump, port_stats, port_vteps, dp_stats) into a struct
 * diag_kdp_input and hands it to the pure judge (diag_kdp.h); diagnose.c
 * prints the findings with the others. */
#include <arpa/inet.h>
#include <stdlib.h>

#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "report/diag_kdp.h"

static void dd_port(struct dpif *dp, uint16_t id, struct diag_kdp_port *p)
{
	if (!p->st.vxlan)
		return;
	struct dpif_vtep_stats s[DPIF_MAX_VTEPS];
	int n = dp->class->port_vteps(dp, id, s, DPIF_MAX_VTEPS);
	for (int r = 0; r < n && p->n_remotes < DIAG_KDP_MAX_REMOTES; r++) {
		struct diag_kdp_remote *dr = &p->remotes[p->n_remotes++];
		inet_ntop(s[r].remote.family, s[r].remote.bytes, dr->addr, sizeof(dr->addr));
		dr->s = s[r];
	}
}

void vxd_devport_diag(struct dpif *dp, const struct diag_input *in, struct diag_report *r)
{
	struct diag_kdp_input *k = calloc(1, sizeof(*k));
	if (!k)
		return;
	dp->class->dp_stats(dp, &k->dp);
	uint16_t id;
	for (unsigned cur = 0; k->n_ports < DIAG_KDP_MAX_PORTS && dp->class->port_dump(dp, &cur, &id) == 0;) {
		struct diag_kdp_port *p = &k->ports[k->n_ports];
		if (dp->class->port_stats(dp, id, &p->st) < 0)
			continue;
		dd_port(dp, id, p);
		k->n_ports++;
	}
	diag_judge_kdp(in, k, r);
	free(k);
}
