/* Snapshots for stats, diagnose and metrics: the datapath's counters
 * (dpif snapshot: summed over its threads), then what belongs to no
 * datapath, the shared FDB's counts, filled in from the table itself. */
#include <string.h>

#include "control/vxd_internal.h"

/* The shared FDB's counts: the table's, read now. */
static void vxd_snapshot_fdb(const struct vxd *vxd, struct vxd_snapshot *d)
{
	fdb_get_stats(vxd->fdb, &d->fdb);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		struct vxd_port_snap *ps = &d->ports[i];
		if (!ps->present || !vxd->ports[i])
			continue;
		fdb_get_port_stats(vxd->fdb, (uint16_t)i, &ps->fdb);
		ps->fdb_vni_learned = fdb_count_vni(vxd->fdb, vxd->ports[i]->vni);
	}
}

int vxd_snapshot_all(struct vxd *vxd, struct vxd_snapshot *out, struct flower_counters *fcounters)
{
	int ret = vxd->dp->class->snapshot(vxd->dp, out, fcounters);
	if (ret < 0)
		return ret;
	vxd_snapshot_fdb(vxd, out);
	return 0;
}

const struct vxd_snapshot *vxd_snapshot(struct vxd *vxd)
{
	vxd_snapshot_all(vxd, vxd->snap, NULL);
	return vxd->snap;
}
