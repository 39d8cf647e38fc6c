/* Snapshots for stats, diagnose and metrics: the datapath's counters
 * (dpif snapshot: summed over its threads, its FDB's counts with them),
 * and the rules' counts summed over every datapath that runs. */
#include <string.h>

#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "switch/flower_table.h"

const struct vxd_snapshot *vxd_snapshot(struct vxd *vxd)
{
	vxd->dp->class->snapshot(vxd->dp, vxd->snap);
	return vxd->snap;
}

int vxd_rule_counters(struct vxd *vxd, struct flower_counters *fc)
{
	if (fc->n)
		memset(fc->slot, 0, fc->n * sizeof(*fc->slot));
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++) {
		int ret = dps[i]->class->rule_counters ? dps[i]->class->rule_counters(dps[i], fc) : 0;
		if (ret < 0)
			return ret;
	}
	return 0;
}
