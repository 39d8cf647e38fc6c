/* rtnl_addr_ifindex on this host's loopback; rtnl_link_events_parse: link events out of netlink datagrams built here
 * as the kernel lays them out; and a real watch that sees a link made and
 * deleted in the test's own namespace (root, as the netns tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "port/rtnl.h"

struct seen {
	int n;
	struct rtnl_link_event ev[8];
};

static void collect(void *aux, const struct rtnl_link_event *ev)
{
	struct seen *s = aux;
	if (s->n < 8)
		s->ev[s->n] = *ev;
	s->n++;
}

/* Appends one link message (type, index, flags, name) at buf + *len. */
static void put_link(char *buf, size_t *len, uint16_t type, int index, unsigned flags, const char *name)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(buf + *len);
	memset(nh, 0, NLMSG_SPACE(sizeof(struct ifinfomsg)) + RTA_SPACE(IFNAMSIZ));
	nh->nlmsg_type = type;
	struct ifinfomsg *ifi = NLMSG_DATA(nh);
	ifi->ifi_index = index;
	ifi->ifi_flags = flags;
	struct rtattr *rta = (struct rtattr *)((char *)ifi + NLMSG_ALIGN(sizeof(*ifi)));
	rta->rta_type = IFLA_IFNAME;
	rta->rta_len = (unsigned short)RTA_LENGTH(strlen(name) + 1);
	memcpy(RTA_DATA(rta), name, strlen(name) + 1);
	nh->nlmsg_len = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*ifi)) + RTA_ALIGN(rta->rta_len));
	*len += NLMSG_ALIGN(nh->nlmsg_len);
}

static void test_new_and_del(void **state)
{
	(void)state;
	char buf[1024] __attribute__((aligned(4)));
	size_t len = 0;
	put_link(buf, &len, RTM_NEWLINK, 7, IFF_UP | 0x10000, "vnet1");
	put_link(buf, &len, RTM_NEWADDR, 7, 0, "ignored");
	put_link(buf, &len, RTM_DELLINK, 8, 0, "vnet2");
	struct seen s = { 0 };
	assert_int_equal(rtnl_link_events_parse(buf, len, collect, &s), 2);
	assert_int_equal(s.n, 2);
	assert_false(s.ev[0].deleted);
	assert_int_equal(s.ev[0].link.ifindex, 7);
	assert_string_equal(s.ev[0].link.name, "vnet1");
	assert_int_equal(s.ev[0].link.flags, IFF_UP | 0x10000);
	assert_true(s.ev[1].deleted);
	assert_string_equal(s.ev[1].link.name, "vnet2");
}

static void test_truncated_skipped(void **state)
{
	(void)state;
	char buf[1024] __attribute__((aligned(4)));
	size_t len = 0;
	put_link(buf, &len, RTM_NEWLINK, 7, IFF_UP, "vnet1");
	for (size_t cut = 0; cut < len; cut++) {
		struct seen s = { 0 };
		int n = rtnl_link_events_parse(buf, cut, collect, &s);
		/* Cut inside the header or the ifinfomsg: nothing; inside the
		 * name attribute: the link without a (whole) name. */
		assert_int_equal(n, s.n);
		if (cut < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
			assert_int_equal(n, 0);
	}
	/* A header claiming more than there is. */
	((struct nlmsghdr *)buf)->nlmsg_len = 4000;
	struct seen s = { 0 };
	assert_int_equal(rtnl_link_events_parse(buf, len, collect, &s), 0);
}

static void test_real_watch(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	int fd = rtnl_link_watch_open(-1);
	assert_true(fd >= 0);
	char name[IFNAMSIZ];
	snprintf(name, sizeof(name), "vxtw%d", (int)getpid() % 100000);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "ip tuntap add dev %s mode tap && ip link del %s", name, name);
	assert_int_equal(system(cmd), 0);
	struct seen s = { 0 };
	usleep(100000);
	assert_true(rtnl_link_watch_read(fd, collect, &s) >= 2);
	int created = 0, deleted = 0;
	for (int i = 0; i < s.n && i < 8; i++) {
		if (strcmp(s.ev[i].link.name, name) != 0)
			continue;
		if (s.ev[i].deleted)
			deleted++;
		else
			created++;
	}
	assert_true(created >= 1);
	assert_int_equal(deleted, 1);
	close(fd);
}

/* The dump of every address ends in one datagram or several: either way
 * the answer comes back (a dump read only up to the match hung the
 * control thread once). */
static void test_addr_ifindex(void **state)
{
	(void)state;
	const uint8_t lo4[4] = { 127, 0, 0, 1 };
	uint8_t lo6[16] = { 0 };
	lo6[15] = 1;
	const uint8_t none[4] = { 203, 0, 113, 254 };
	int lo = (int)if_nametoindex("lo");
	assert_int_equal(rtnl_addr_ifindex(4, lo4), lo);
	int r6 = rtnl_addr_ifindex(6, lo6);
	assert_true(r6 == lo || r6 == -ENOENT); /* IPv6 may be off on lo */
	assert_int_equal(rtnl_addr_ifindex(4, none), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_and_del),
		cmocka_unit_test(test_truncated_skipped),
		cmocka_unit_test(test_real_watch),
		cmocka_unit_test(test_addr_ifindex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
