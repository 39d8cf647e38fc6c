/* Snapshots for stats, diagnose and metrics: the datapath's counters
 * (dpif snapshot: summed over its threads, its FDB's counts with them). */
#include <string.h>

#include "control/vxd_internal.h"

int vxd_snapshot_all(struct vxd *vxd, struct vxd_snapshot *out, struct flower_counters *fcounters)
{
	return vxd->dp->class->snapshot(vxd->dp, out, fcounters);
}

const struct vxd_snapshot *vxd_snapshot(struct vxd *vxd)
{
	vxd_snapshot_all(vxd, vxd->snap, NULL);
	return vxd->snap;
}
