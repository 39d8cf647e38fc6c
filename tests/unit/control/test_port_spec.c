/* Unit tests for src/control/port_spec.c: `port add` lines, parsed as
 * vxctl and config files parse them, in a datapath's terms (struct
 * dpif_port_spec).  Each option a line gives reaches the spec with its
 * value; one it does not give is 0 there (so a datapath refuses exactly
 * the lines that ask for what it cannot do); two specs of one line
 * compare equal whole (the kernel datapath's same-port check). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "control/port_spec.h"
#include "ctl_parse_words.h"

static void spec_of(const char *line, struct dpif_port_spec *s)
{
	struct ctl_cmd c;
	struct ctl_err err;
	if (parse_line(line, &c, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
	assert_int_equal(c.verb, CTL_PORT_ADD);
	memset(s, 0xa5, sizeof(*s)); /* whatever was there goes */
	vxd_port_spec(&c.port_add, s);
}

static void assert_v4(const struct dpif_ip *ip, const char *text)
{
	uint8_t want[4];
	assert_int_equal(inet_pton(AF_INET, text, want), 1);
	assert_int_equal(ip->family, AF_INET);
	assert_memory_equal(ip->bytes, want, 4);
}

static void test_veth(void **state)
{
	(void)state;
	struct dpif_port_spec s;
	spec_of("port add vnet1 type veth vni 99 netns vm1 mtu 1450", &s);
	assert_string_equal(s.name, "vnet1");
	assert_int_equal(s.type, DPIF_PORT_VETH);
	assert_int_equal(s.vni, 99);
	assert_string_equal(s.netns, "vm1");
	assert_int_equal(s.mtu, 1450);
	spec_of("port add vnet1 type veth vni 99 netns vm1", &s);
	assert_int_equal(s.mtu, 0); /* not asked */
	assert_int_equal(s.max_macs, 0);
}

static void test_afpacket(void **state)
{
	(void)state;
	struct dpif_port_spec s;
	spec_of("port add p1 type afpacket vni 5 dev eth1", &s);
	assert_int_equal(s.type, DPIF_PORT_NETDEV);
	assert_string_equal(s.dev, "eth1");
	assert_string_equal(s.netns, "");
	spec_of("port add p1 type afpacket vni 5 dev eth1 netns ns1", &s);
	assert_string_equal(s.netns, "ns1"); /* given: the kernel datapath refuses it, saying why */
	assert_int_equal(s.max_macs, 0);
	spec_of("port add p1 type afpacket vni 5 dev eth1 max-macs 300", &s);
	assert_int_equal(s.max_macs, 300);
}

static void test_vxlan_defaults(void **state)
{
	(void)state;
	struct dpif_port_spec s;
	spec_of("port add vx0 type vxlan vni 7 local 198.51.100.1 remote 198.51.100.2", &s);
	assert_int_equal(s.type, DPIF_PORT_VXLAN);
	assert_int_equal(s.vni, 7);
	assert_v4(&s.local, "198.51.100.1");
	assert_int_equal(s.n_remotes, 1);
	assert_v4(&s.remotes[0], "198.51.100.2");
	assert_int_equal(s.dstport, 4789);
	assert_int_equal(s.srcport_min, 0);
	assert_int_equal(s.srcport_max, 0);
	assert_true(s.udpcsum);
	assert_int_equal(s.df, DPIF_DF_SET);
	assert_false(s.evpn);
	assert_int_equal(s.mtu, 0);
}

static void test_vxlan_every_option(void **state)
{
	(void)state;
	struct dpif_port_spec s;
	spec_of("port add vx0 type vxlan vni 7 local 198.51.100.1 remote 198.51.100.2 remote 198.51.100.3 "
		"dstport 4790 srcport 40000-40063 udpcsum off df unset mtu 1400", &s);
	assert_int_equal(s.n_remotes, 2);
	assert_v4(&s.remotes[1], "198.51.100.3");
	assert_int_equal(s.dstport, 4790);
	assert_int_equal(s.srcport_min, 40000);
	assert_int_equal(s.srcport_max, 40063);
	assert_false(s.udpcsum);
	assert_int_equal(s.df, DPIF_DF_UNSET);
	assert_int_equal(s.mtu, 1400);
	spec_of("port add vx0 type vxlan vni 7 local 198.51.100.1 remote 198.51.100.2 df inherit", &s);
	assert_int_equal(s.df, DPIF_DF_INHERIT);
	spec_of("port add vx0 type vxlan vni 7 local 198.51.100.1 evpn", &s);
	assert_true(s.evpn);
	assert_int_equal(s.n_remotes, 0);
}

static void test_vxlan_ipv6(void **state)
{
	(void)state;
	struct dpif_port_spec s;
	spec_of("port add vx6 type vxlan vni 1 local 2001:db8::1 remote 2001:db8::2", &s);
	uint8_t want[16];
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::2", want), 1);
	assert_int_equal(s.local.family, AF_INET6);
	assert_int_equal(s.remotes[0].family, AF_INET6);
	assert_memory_equal(s.remotes[0].bytes, want, 16);
}

/* The kernel datapath takes the same spec again as "nothing to do" by
 * comparing it whole: two conversions of one line must be equal byte for
 * byte, whatever the memory held before; another line must not. */
static void test_same_line_same_bytes(void **state)
{
	(void)state;
	const char *line = "port add vx0 type vxlan vni 7 local 198.51.100.1 remote 198.51.100.2 srcport 40000-40063";
	struct dpif_port_spec a, b;
	spec_of(line, &a);
	memset(&b, 0x5a, sizeof(b));
	spec_of(line, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	spec_of("port add vx0 type vxlan vni 7 local 198.51.100.1 remote 198.51.100.3 srcport 40000-40063", &b);
	assert_memory_not_equal(&a, &b, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_veth),
		cmocka_unit_test(test_afpacket),
		cmocka_unit_test(test_vxlan_defaults),
		cmocka_unit_test(test_vxlan_every_option),
		cmocka_unit_test(test_vxlan_ipv6),
		cmocka_unit_test(test_same_line_same_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
