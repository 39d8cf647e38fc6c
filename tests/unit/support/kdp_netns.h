/* The kernel datapath's unit tests run in a network namespace of their own:
 *
 *   static bool in_netns;
 *   int main(void)
 *   {
 *           if (kdp_test_netns("test_vxdp_x", (const char *[]){ "p1", "p2", NULL }, &in_netns) < 0)
 *                   return 1;
 *           ...   // each test skips itself when !in_netns
 *
 * As root: unshare(CLONE_NEWNET) (the namespace and every link in it go
 * when the process ends, however it ends), lo up, IPv6 off, and the veth
 * pairs NAME / NAMEvm for each NAME.  Not root: the tests skip (a line on
 * stderr says so), *in_netns stays false and 0 is returned.  -1 when the
 * namespace or a veth could not be made (perror says which).  Test code
 * only. */
#ifndef VX_TESTS_KDP_NETNS_H
#define VX_TESTS_KDP_NETNS_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dp/kernel/kdp_link.h"

static inline int kdp_test_netns_make(const char *const *veths)
{
	if (unshare(CLONE_NEWNET) < 0)
		return -1;
	/* No IPv6 on the test's links: their autoconfiguration (router
	 * solicitations, MLD, DAD) would reach the programs as frames of
	 * their own and learn MACs the tests do not expect. */
	static const char *const knobs[] = { "/proc/sys/net/ipv6/conf/all/disable_ipv6",
					     "/proc/sys/net/ipv6/conf/default/disable_ipv6" };
	for (unsigned i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		FILE *fp = fopen(knobs[i], "w");
		if (fp) {
			fputs("1", fp);
			fclose(fp);
		}
	}
	if (system("ip link set lo up") != 0)
		return -1;
	for (; *veths; veths++) {
		char peer[32];
		snprintf(peer, sizeof(peer), "%svm", *veths);
		if (kdp_link_veth_create(*veths, peer, -1, 0) < 0)
			return -1;
	}
	return 0;
}

static inline int kdp_test_netns(const char *test, const char *const *veths, bool *in_netns)
{
	*in_netns = false;
	if (geteuid() != 0) {
		fprintf(stderr, "%s: not root: skipped\n", test);
		return 0;
	}
	if (kdp_test_netns_make(veths) < 0) {
		fprintf(stderr, "%s: ", test);
		perror("netns and veths");
		return -1;
	}
	*in_netns = true;
	return 0;
}

#endif /* VX_TESTS_KDP_NETNS_H */
