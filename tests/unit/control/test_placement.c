/* Unit tests for src/control/placement.c against fake sysfs trees: a
 * machine of two nodes (CPUs 0-3 on node 0, 4-7 on node 1), a NIC on node
 * 1, a veth without NUMA information, a NIC on a node whose CPUs the
 * process may not use; and the CPU lists. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/placement.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256], dir[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/vxplace.XXXXXX");
	assert_non_null(mkdtemp(root));
	put("devices/system/node/node0/cpulist", "0-3\n");
	put("devices/system/node/node1/cpulist", "4-7\n");
	put("class/net/nic1/device/numa_node", "1\n");
	put("class/net/nic0/device/numa_node", "0\n");
	put("class/net/nonuma/device/numa_node", "-1\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

static cpu_set_t cpus(const char *list)
{
	cpu_set_t s;
	assert_int_equal(vxd_cpulist_parse(list, &s), 0);
	return s;
}

static struct vxd_placement place(const char *dev, unsigned workers, const char *cpulist, const char *allowed, int want)
{
	cpu_set_t a = cpus(allowed);
	struct vxd_placement_request req = { .workers = workers, .cpus = cpulist, .dev = dev, .sysfs_root = root,
					     .allowed = &a };
	struct vxd_placement pl;
	char err[256] = "";
	assert_int_equal(vxd_place(&req, &pl, err, sizeof(err)), want);
	if (want < 0)
		assert_non_null(strstr(err, "--cpus"));
	return pl;
}

static void test_cpulists(void **state)
{
	(void)state;
	cpu_set_t s = cpus("0-3,6,8-9");
	assert_int_equal(CPU_COUNT(&s), 7);
	char buf[64];
	assert_string_equal(vxd_cpulist_format(&s, buf, sizeof(buf)), "0-3,6,8-9");
	static const char *const bad[] = { "", "x", "3-1", "1,", "1-", "-1", "1,,2", "99999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(vxd_cpulist_parse(bad[i], &s), -EINVAL);
	assert_int_equal(vxd_cpu_node(root, 5), 1);
	assert_int_equal(vxd_cpu_node(root, 2), 0);
	assert_int_equal(vxd_cpu_node(root, 12), -1);
}

static void test_workers_go_on_the_nics_node(void **state)
{
	(void)state;
	struct vxd_placement pl = place("nic1", 0, NULL, "0-7", 0);
	assert_int_equal(pl.dev_node, 1);
	assert_int_equal(pl.n_workers, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(pl.cpu[i], 4 + (int)i);
		assert_int_equal(pl.node[i], 1);
	}
	assert_non_null(strstr(pl.how, "node 1 of underlay nic1"));
	/* Only the allowed CPUs of the node. */
	pl = place("nic1", 0, NULL, "0-5", 0);
	assert_int_equal(pl.n_workers, 2);
	assert_int_equal(pl.cpu[0], 4);
	assert_int_equal(pl.cpu[1], 5);
	/* --workers: more than the node's CPUs share them, round robin. */
	pl = place("nic0", 6, NULL, "0-7", 0);
	assert_int_equal(pl.n_workers, 6);
	assert_int_equal(pl.cpu[4], 0);
	assert_int_equal(pl.cpu[5], 1);
}

static void test_fallbacks(void **state)
{
	(void)state;
	/* A veth: no device directory at all. */
	struct vxd_placement pl = place("veth9", 0, NULL, "0-7", 0);
	assert_int_equal(pl.dev_node, -1);
	assert_int_equal(pl.n_workers, 8);
	assert_int_equal(pl.cpu[0], -1);
	assert_non_null(strstr(pl.how, "not pinned"));
	/* numa_node -1 (one node). */
	pl = place("nonuma", 0, NULL, "0-1", 0);
	assert_int_equal(pl.n_workers, 2);
	assert_int_equal(pl.cpu[1], -1);
	/* No device known. */
	pl = place(NULL, 3, NULL, "0-1", 0);
	assert_int_equal(pl.n_workers, 3);
	assert_non_null(strstr(pl.how, "no underlay device known"));
	/* The NIC's node has no CPU we may use. */
	pl = place("nic1", 0, NULL, "0-1", 0);
	assert_int_equal(pl.n_workers, 2);
	assert_int_equal(pl.cpu[0], -1);
	assert_non_null(strstr(pl.how, "no CPU allowed"));
	/* Never more than the limit. */
	pl = place(NULL, 0, NULL, "0-63", 0);
	assert_int_equal(pl.n_workers, VXD_PLACEMENT_MAX);
}

static void test_given_cpus(void **state)
{
	(void)state;
	struct vxd_placement pl = place("nic1", 0, "0,2", "0-7", 0);
	assert_int_equal(pl.n_workers, 2);
	assert_int_equal(pl.cpu[0], 0);
	assert_int_equal(pl.cpu[1], 2);
	assert_int_equal(pl.node[1], 0);
	assert_int_equal(pl.dev_node, 1); /* diagnose names the mismatch */
	pl = place(NULL, 3, "1", "0-7", 0);
	assert_int_equal(pl.n_workers, 3);
	assert_int_equal(pl.cpu[2], 1);
	place(NULL, 0, "9", "0-7", -EINVAL);   /* not allowed */
	place(NULL, 0, "1-x", "0-7", -EINVAL); /* not a list */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulists),
		cmocka_unit_test(test_workers_go_on_the_nics_node),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_given_cpus),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
