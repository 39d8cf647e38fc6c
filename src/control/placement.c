/* placement: see placement.h for the rules. */
#include "control/placement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *placement_root(const char *root)
{
	if (root)
		return root;
	const char *env = getenv("VXSWITCH_SYSFS");
	return env && *env ? env : "/sys";
}

/* The first line of a file, trailing newline cut; -errno. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *got = fgets(buf, (int)size, f);
	fclose(f);
	if (!got)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int vxd_cpulist_parse(const char *s, cpu_set_t *out)
{
	CPU_ZERO(out);
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10);
		if (end == p || a < 0 || a >= CPU_SETSIZE)
			return -EINVAL;
		long b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= CPU_SETSIZE)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, out);
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

char *vxd_cpulist_format(const cpu_set_t *set, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && n < size; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		int w = e > c ? snprintf(buf + n, size - n, "%s%d-%d", n ? "," : "", c, e)
			      : snprintf(buf + n, size - n, "%s%d", n ? "," : "", c);
		n += w > 0 ? (size_t)w : 0;
		c = e;
	}
	return buf;
}

int vxd_cpu_node(const char *sysfs_root, int cpu)
{
	const char *root = placement_root(sysfs_root);
	for (int node = 0; node < 64; node++) {
		char path[512], line[1024];
		snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", root, node);
		if (read_line(path, line, sizeof(line)) < 0)
			continue;
		cpu_set_t set;
		if (vxd_cpulist_parse(line, &set) == 0 && CPU_ISSET(cpu, &set))
			return node;
	}
	return -1;
}

static int dev_node(const char *root, const char *dev)
{
	char path[512], line[64];
	snprintf(path, sizeof(path), "%s/class/net/%s/device/numa_node", root, dev);
	if (read_line(path, line, sizeof(line)) < 0)
		return -1;
	return atoi(line) >= 0 ? atoi(line) : -1;
}

static int node_cpus(const char *root, int node, cpu_set_t *out)
{
	char path[512], line[1024];
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", root, node);
	int err = read_line(path, line, sizeof(line));
	return err < 0 ? err : vxd_cpulist_parse(line, out);
}

/* Pins worker i to the i-th CPU of set (round robin). */
static void pin_round_robin(struct vxd_placement *out, const cpu_set_t *set, const char *root)
{
	int cpus[CPU_SETSIZE];
	unsigned n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			cpus[n++] = c;
	for (unsigned i = 0; i < out->n_workers; i++) {
		out->cpu[i] = cpus[i % n];
		out->node[i] = vxd_cpu_node(root, out->cpu[i]);
	}
}

static unsigned clamp_workers(unsigned want, unsigned fallback)
{
	unsigned n = want ? want : fallback;
	if (n == 0)
		n = 1;
	return n > VXD_PLACEMENT_MAX ? VXD_PLACEMENT_MAX : n;
}

static int place_cpus(const struct vxd_placement_request *req, const cpu_set_t *allowed, const char *root,
		      struct vxd_placement *out, char *err, size_t err_size)
{
	cpu_set_t want, bad;
	if (vxd_cpulist_parse(req->cpus, &want) < 0) {
		snprintf(err, err_size, "--cpus %s: not a CPU list (e.g. 0-3,6)", req->cpus);
		return -EINVAL;
	}
	CPU_XOR(&bad, &want, allowed);
	CPU_AND(&bad, &bad, &want);
	if (CPU_COUNT(&bad)) {
		char b[128], a[128];
		snprintf(err, err_size, "--cpus %s: CPU %s not allowed to vxswitchd (allowed: %s)", req->cpus,
			 vxd_cpulist_format(&bad, b, sizeof(b)), vxd_cpulist_format(allowed, a, sizeof(a)));
		return -EINVAL;
	}
	out->n_workers = clamp_workers(req->workers, (unsigned)CPU_COUNT(&want));
	pin_round_robin(out, &want, root);
	snprintf(out->how, sizeof(out->how), "cpus %s (given)", req->cpus);
	return 0;
}

int vxd_place(const struct vxd_placement_request *req, struct vxd_placement *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < VXD_PLACEMENT_MAX; i++)
		out->cpu[i] = out->node[i] = -1;
	out->dev_node = -1;
	const char *root = placement_root(req->sysfs_root);
	cpu_set_t allowed;
	if (req->allowed)
		allowed = *req->allowed;
	else if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -errno;
	if (req->dev) {
		snprintf(out->dev, sizeof(out->dev), "%s", req->dev);
		out->dev_node = dev_node(root, req->dev);
	}
	if (req->cpus)
		return place_cpus(req, &allowed, root, out, err, err_size);
	char list[128];
	cpu_set_t near;
	if (out->dev_node >= 0 && node_cpus(root, out->dev_node, &near) == 0) {
		CPU_AND(&near, &near, &allowed);
		if (CPU_COUNT(&near)) {
			out->n_workers = clamp_workers(req->workers, (unsigned)CPU_COUNT(&near));
			pin_round_robin(out, &near, root);
			snprintf(out->how, sizeof(out->how), "node %d of underlay %s: cpus %s", out->dev_node, out->dev,
				 vxd_cpulist_format(&near, list, sizeof(list)));
			return 0;
		}
		out->n_workers = clamp_workers(req->workers, (unsigned)CPU_COUNT(&allowed));
		snprintf(out->how, sizeof(out->how), "underlay %s is on node %d, which has no CPU allowed to us: "
			 "not pinned (cpus %s)", out->dev, out->dev_node, vxd_cpulist_format(&allowed, list, sizeof(list)));
		return 0;
	}
	out->n_workers = clamp_workers(req->workers, (unsigned)CPU_COUNT(&allowed));
	if (req->dev)
		snprintf(out->how, sizeof(out->how), "no NUMA node for underlay %s: not pinned (allowed cpus %s)",
			 out->dev, vxd_cpulist_format(&allowed, list, sizeof(list)));
	else
		snprintf(out->how, sizeof(out->how), "no underlay device known: not pinned (allowed cpus %s)",
			 vxd_cpulist_format(&allowed, list, sizeof(list)));
	return 0;
}
