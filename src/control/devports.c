/* Ports a datapath serves itself (dp/dpif.h, "Two kinds of port"): the
 * kernel datapath's veth pairs, links and vxlan ports.  The control
 * thread hands each `port add` to the datapath as a struct
 * dpif_port_spec, the datapath's own terms, and keeps the line as given
 * (show config, save, reload compare lines) with the port id the
 * datapath gave it (rules, FDB entries and captures name ports by id).
 *
 * Which datapath: the first that runs with port_add (vxd_dpifs order);
 * none (the userspace datapath alone) and such lines go to ports.c,
 * which opens the port's I/O itself (afpacket), or control.c refuses
 * them (veth).
 *
 * The same name again: the same line is 0 and changes nothing; another
 * line is refused (-EEXIST), as the kernel datapath's own check was. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "control/vxd_internal.h"
#include "control/port_spec.h"
#include "dp/dpif.h"
#include "util/vlog.h"

struct dpif *vxd_devport_dpif(struct vxd *vxd)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->class->port_add)
			return dps[i];
	return NULL;
}

const struct vxd_devport *vxd_devport_by_name(const struct vxd *vxd, const char *name)
{
	for (unsigned i = 0; i < VXD_MAX_DEVPORTS; i++)
		if (vxd->devports[i].used && !strcmp(vxd->devports[i].cfg.name, name))
			return &vxd->devports[i];
	return NULL;
}

bool vxd_devport_find(struct vxd *vxd, const char *name, struct vxd_dp_port *out)
{
	struct dpif *dp = vxd_devport_dpif(vxd);
	const struct vxd_devport *dev = dp ? vxd_devport_by_name(vxd, name) : NULL;
	if (dev) {
		*out = (struct vxd_dp_port){ .dp = dp, .id = dev->id, .vni = dev->cfg.vni,
					     .vxlan = dev->cfg.type == CTL_PORT_VXLAN };
		return true;
	}
	uint16_t kid;
	uint32_t vni;
	if (dp && vxd_slowpath_kernel_end_named(vxd, name, &kid, &vni)) {
		*out = (struct vxd_dp_port){ .dp = dp, .id = kid, .vni = vni };
		return true;
	}
	return false;
}

const char *vxd_port_name(const struct vxd *vxd, const struct dpif *dp, uint16_t id, char buf[CTL_NAME_SIZE])
{
	if (dp == vxd->dp)
		return id < VXD_MAX_PORTS && vxd->ports[id] ? vxd->ports[id]->name : "?";
	for (unsigned i = 0; i < VXD_MAX_DEVPORTS; i++)
		if (vxd->devports[i].used && vxd->devports[i].id == id)
			return vxd->devports[i].cfg.name;
	char k[16];
	if (vxd_slowpath_kernel_end(vxd, id, k)) {
		snprintf(buf, CTL_NAME_SIZE, "%s", k);
		return buf;
	}
	return "?";
}

unsigned vxd_devports(const struct vxd *vxd, const struct ctl_port_add **cfgs, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < VXD_MAX_DEVPORTS && n < max; i++)
		if (vxd->devports[i].used)
			cfgs[n++] = &vxd->devports[i].cfg;
	return n;
}

int vxd_devport_add(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_err *err)
{
	struct dpif *dp = vxd_devport_dpif(vxd);
	const struct vxd_devport *have = vxd_devport_by_name(vxd, pa->name);
	if (have) /* the same line changes nothing; another is refused */
		return memcmp(&have->cfg, pa, sizeof(*pa)) ? vxd_refuse(err, -EEXIST, "port %s: exists", pa->name) : 0;
	struct vxd_devport *slot = NULL;
	for (unsigned i = 0; i < VXD_MAX_DEVPORTS && !slot; i++)
		if (!vxd->devports[i].used)
			slot = &vxd->devports[i];
	if (!slot)
		return vxd_refuse(err, -ENOSPC, "port %s: %d ports of the %s datapath already", pa->name,
				  VXD_MAX_DEVPORTS, dp->class->name);
	struct dpif_port_spec spec;
	vxd_port_spec(pa, &spec);
	uint16_t id;
	char why[sizeof(err->msg)] = "";
	int ret = dp->class->port_add(dp, &spec, &id, why, sizeof(why));
	if (ret < 0)
		return vxd_refuse(err, ret, "%s", why);
	*slot = (struct vxd_devport){ .used = true, .id = id };
	memcpy(&slot->cfg, pa, sizeof(*pa)); /* whole: the same-line check compares it so */
	return 0;
}

int vxd_devport_del(struct vxd *vxd, const char *name, struct ctl_err *err)
{
	struct vxd_devport *p = (struct vxd_devport *)vxd_devport_by_name(vxd, name);
	if (!p)
		return vxd_refuse(err, -ENOENT, "port %s: no such port", name);
	if (vxd_filters_port_in_use(vxd, p->id, name, err) < 0)
		return -EBUSY;
	struct dpif *dp = vxd_devport_dpif(vxd);
	vxd_capture_port_removed(vxd, dp, p->id);
	int ret = dp->class->port_del(dp, p->id);
	if (ret < 0 && ret != -ENOENT)
		return vxd_refuse(err, ret, "port %s: %s", name, strerror(-ret));
	memset(p, 0, sizeof(*p));
	return 0;
}
