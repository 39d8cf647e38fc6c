/* Unit tests for the command language (src/ctl/ctl_cmd.c and the grammar
 * files behind it: ctl_parser.c, ctl_cmd_port.c, ctl_cmd_fdb.c,
 * ctl_knob.c): every verb parses into the right fields, every kind of
 * error names the word and what was expected, and parse -> format -> parse
 * gives back the same struct. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl_parse_words.h"

/* Parse, and fail the test with the refusal. */
static void parse_ok(const char *line, struct ctl_cmd *cmd)
{
	struct ctl_err err;
	int ret = parse_line(line, cmd, &err);
	if (ret)
		fail_msg("\"%s\" refused: %s", line, err.msg);
}

static void test_port_add_tap(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("port add tap0 type tap vni 0", &c);
	assert_int_equal(c.verb, CTL_PORT_ADD);
	assert_string_equal(c.port_add.name, "tap0");
	assert_int_equal(c.port_add.type, CTL_PORT_TAP);
	assert_int_equal(c.port_add.given, CTL_PK_VNI);
	assert_int_equal(c.port_add.mtu, 0);
	assert_int_equal(c.port_add.vni, 0);

	parse_ok("port add vnet1 type tap mtu 1450 netns vm1 vni 99", &c);
	assert_int_equal(c.port_add.given, CTL_PK_VNI | CTL_PK_NETNS | CTL_PK_MTU);
	assert_int_equal(c.port_add.vni, 99);
	assert_int_equal(c.port_add.mtu, 1450);
	assert_string_equal(c.port_add.netns, "vm1");

	parse_ok("port add vnet2 type tap vni 7 mac 02:AB:cd:00:00:01", &c);
	assert_int_equal(c.port_add.given, CTL_PK_VNI | CTL_PK_TAP_MAC);
	const uint8_t want[6] = { 0x02, 0xab, 0xcd, 0x00, 0x00, 0x01 };
	assert_memory_equal(c.port_add.mac, want, 6);
}

static void test_port_add_vxlan(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("port add vx0 type vxlan vni 16777215 local 192.0.2.1 remote 192.0.2.2", &c);
	struct ctl_port_add *pa = &c.port_add;
	assert_int_equal(pa->type, CTL_PORT_VXLAN);
	assert_int_equal(pa->vni, 16777215);
	assert_int_equal(pa->local.family, AF_INET);
	assert_int_equal(pa->local.v4.s_addr, inet_addr("192.0.2.1"));
	assert_int_equal(pa->n_remotes, 1);
	assert_int_equal(pa->remotes[0].v4.s_addr, inet_addr("192.0.2.2"));
	assert_int_equal(pa->dstport, 4789);     /* defaults filled in */
	assert_true(pa->udpcsum);
	assert_int_equal(pa->srcport_min, 0);

	parse_ok("port add vx6 type vxlan remote 2001:db8::2 remote 2001:db8::3 local 2001:db8::1 "
		 "vni 0 dstport 8472 srcport 49152-49215 udpcsum off mtu 9000", &c);
	assert_int_equal(pa->local.family, AF_INET6);
	assert_int_equal(pa->n_remotes, 2);
	assert_int_equal(pa->remotes[1].v6.s6_addr[15], 3);
	assert_int_equal(pa->dstport, 8472);
	assert_int_equal(pa->srcport_min, 49152);
	assert_int_equal(pa->srcport_max, 49215);
	assert_false(pa->udpcsum);
	assert_int_equal(pa->mtu, 9000);
	assert_true(pa->given & CTL_PK_REMOTE);
}

/* The vxlan outer-header keys: df's three values (default set), the
 * srcport cap, udpcsum off over IPv6 (supported), and the refusals, each
 * naming its word. */
static void test_vxlan_outer_header_keys(void **state)
{
	(void)state;
	struct ctl_cmd c;
	const char *base = "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2";
	char line[256];
	parse_ok(base, &c);
	assert_int_equal(c.port_add.df, CTL_DF_SET);
	assert_false(c.port_add.given & CTL_PK_DF);
	static const struct { const char *word; enum ctl_df df; } dfs[] = {
		{ "set", CTL_DF_SET }, { "unset", CTL_DF_UNSET }, { "inherit", CTL_DF_INHERIT },
	};
	for (size_t i = 0; i < sizeof(dfs) / sizeof(dfs[0]); i++) {
		snprintf(line, sizeof(line), "%s df %s", base, dfs[i].word);
		parse_ok(line, &c);
		assert_int_equal(c.port_add.df, dfs[i].df);
		assert_true(c.port_add.given & CTL_PK_DF);
	}
	snprintf(line, sizeof(line), "%s srcport 40000-40063 udpcsum off", base);
	parse_ok(line, &c); /* 64 ports: the cap */
	assert_int_equal(c.port_add.srcport_max, 40063);
	parse_ok("port add vx6 type vxlan vni 1 local 2001:db8::1 remote 2001:db8::2 udpcsum off", &c);
	assert_false(c.port_add.udpcsum);

	static const struct { const char *tail; int word; const char *says; } refused[] = {
		{ "srcport 40000-40064", 13, "\"40000-40064\": \"srcport\" range of 65 ports, at most 64" },
		{ "srcport 1-65535", 13, "range of 65535 ports" },
		{ "df maybe", 13, "\"maybe\": bad value for \"df\", expected set, unset or inherit" },
		{ "df", 13, "missing value after \"df\", expected set, unset or inherit" },
		{ "df set df unset", 14, "duplicate \"df\"" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct ctl_err err;
		snprintf(line, sizeof(line), "%s %s", base, refused[i].tail);
		assert_int_equal(parse_line(line, &c, &err), -EINVAL);
		if (err.word != refused[i].word || !strstr(err.msg, refused[i].says))
			fail_msg("\"%s\": got word %d \"%s\"", line, err.word, err.msg);
	}
	/* df over IPv6, wherever it stands: the keyword is named. */
	const char *v6[] = {
		"port add vx6 type vxlan vni 1 local 2001:db8::1 remote 2001:db8::2 df set",
		"port add vx6 type vxlan df unset vni 1 local 2001:db8::1 remote 2001:db8::2",
	};
	const int v6_word[] = { 12, 6 }; /* 1-based */
	for (size_t i = 0; i < 2; i++) {
		struct ctl_err err;
		assert_int_equal(parse_line(v6[i], &c, &err), -EINVAL);
		assert_int_equal(err.word, v6_word[i]);
		assert_non_null(strstr(err.msg, "\"df\": \"df\" is for an IPv4 underlay only: IPv6 has no DF bit"));
	}
	/* tap ports do not take it */
	struct ctl_err err;
	assert_int_equal(parse_line("port add tap0 type tap df set", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "\"df\": not valid for type tap"));
}

static void test_port_add_afpacket(void **state)
{
	(void)state;
	struct ctl_cmd c;
	struct ctl_err e;
	parse_ok("port add c0 type afpacket dev veth-c0 vni 42 netns h1", &c);
	assert_int_equal(c.port_add.type, CTL_PORT_AFPACKET);
	assert_string_equal(c.port_add.name, "c0");
	assert_string_equal(c.port_add.dev, "veth-c0");
	assert_string_equal(c.port_add.netns, "h1");
	assert_int_equal(c.port_add.vni, 42);
	assert_int_equal(c.port_add.given, CTL_PK_VNI | CTL_PK_DEV | CTL_PK_NETNS);
	/* dev is required, and only for afpacket */
	assert_int_equal(parse_line("port add c0 type afpacket vni 42", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "missing \"dev DEV\", required for type afpacket"));
	assert_int_equal(parse_line("port add c0 type afpacket dev veth0", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "missing \"vni VNI\", required for type afpacket"));
	assert_int_equal(parse_line("port add tap0 type tap vni 1 dev veth0", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "\"dev\": not valid for type tap"));
	/* the link's MTU and MAC are its own: not keys of the port */
	assert_int_equal(parse_line("port add c0 type afpacket dev veth0 vni 1 mtu 1400", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "\"mtu\": not valid for type afpacket"));
	assert_int_equal(parse_line("port add c0 type afpacket dev veth0 vni 1 mac 02:00:00:00:00:01", &c, &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "\"mac\": not valid for type afpacket"));
	assert_int_equal(parse_line("port add c0 type afpacket dev 0123456789abcdefg vni 1", &c, &e), -EINVAL);
	assert_int_equal(parse_line("port add c0 type afpacket dev veth0 dev veth1 vni 1", &c, &e), -EINVAL);
}

static void test_port_add_veth(void **state)
{
	(void)state;
	struct ctl_cmd c;
	struct ctl_err e;
	parse_ok("port add vm1 type veth vni 99 netns vm1 mtu 1450", &c);
	assert_int_equal(c.port_add.type, CTL_PORT_VETH);
	assert_string_equal(c.port_add.netns, "vm1");
	assert_int_equal(c.port_add.mtu, 1450);
	assert_int_equal(c.port_add.given, CTL_PK_VNI | CTL_PK_NETNS | CTL_PK_MTU);
	assert_int_equal(parse_line("port add vm1 type veth vni 99", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "missing \"netns NS\", required for type veth"));
	assert_int_equal(parse_line("port add vm1 type veth vni 99 netns vm1 dev x", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "\"dev\": not valid for type veth"));
}

static void test_max_macs(void **state)
{
	(void)state;
	struct ctl_cmd c;
	struct ctl_err e;
	parse_ok("port add vnet0 type tap vni 5 max-macs 100", &c);
	assert_true(c.port_add.given & CTL_PK_MAX_MACS);
	assert_int_equal(c.port_add.max_macs, 100);
	char line[256];
	assert_true(ctl_cmd_format(&c, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " max-macs 100"));
	assert_int_not_equal(parse_line("port add vnet0 type tap vni 5 max-macs 0", &c, &e), 0);
	assert_non_null(strstr(e.msg, "max-macs"));
	assert_int_not_equal(parse_line("port add vx0 type vxlan vni 5 local 192.0.2.1 remote 192.0.2.2 max-macs 9", &c, &e), 0);
	assert_non_null(strstr(e.msg, "max-macs"));
}

static void test_other_verbs(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("port del vx0", &c);
	assert_int_equal(c.verb, CTL_PORT_DEL);
	assert_string_equal(c.port.name, "vx0");
	parse_ok("port show", &c);
	assert_int_equal(c.verb, CTL_PORT_SHOW);
	parse_ok("reload", &c);
	assert_int_equal(c.verb, CTL_RELOAD);
	parse_ok("show config", &c);
	assert_int_equal(c.verb, CTL_SHOW_CONFIG);
	parse_ok("show knobs", &c); /* still found: verbs of one first word stay together */
	assert_int_equal(c.verb, CTL_SHOW_KNOBS);
	struct ctl_err e;
	assert_int_not_equal(parse_line("reload now", &c, &e), 0);
	parse_ok("save", &c);
	assert_int_equal(c.verb, CTL_SAVE);
	assert_false(c.save.has_path);
	parse_ok("save /etc/vxswitch/vxswitchd.conf", &c);
	assert_string_equal(c.save.path, "/etc/vxswitch/vxswitchd.conf");
	assert_int_not_equal(parse_line("save relative.conf", &c, &e), 0);
	assert_int_not_equal(parse_line("save /etc/../root/x", &c, &e), 0);
	assert_int_not_equal(parse_line("save /a /b", &c, &e), 0);

	parse_ok("workers 4 cpus 0-3,6", &c);
	assert_int_equal(c.verb, CTL_WORKERS);
	assert_int_equal(c.workers.n, 4);
	assert_true(c.workers.has_cpus);
	assert_string_equal(c.workers.cpus, "0-3,6");
	static const char *const bad_workers[] = { "workers", "workers 0", "workers 17", "workers 2 cpus",
						   "workers 2 cpus 1,", "workers 2 cpus a", "workers 2 cpu 1",
						   "workers 2 cpus 1 2" };
	for (size_t i = 0; i < sizeof(bad_workers) / sizeof(bad_workers[0]); i++)
		assert_int_not_equal(parse_line(bad_workers[i], &c, &e), 0);

	parse_ok("fdb show", &c);
	assert_int_equal(c.verb, CTL_FDB_SHOW);
	assert_false(c.fdb.has_vni);
	parse_ok("fdb show vni 7", &c);
	assert_true(c.fdb.has_vni);
	assert_int_equal(c.fdb.vni, 7);
	parse_ok("fdb flush vni 8", &c);
	assert_int_equal(c.verb, CTL_FDB_FLUSH);
	assert_int_equal(c.fdb.vni, 8);

	parse_ok("fdb add 02:AA:bb:cc:dd:0f vni 99 port tap0", &c);
	assert_int_equal(c.verb, CTL_FDB_ADD);
	const uint8_t mac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x0f };
	assert_memory_equal(c.fdb.mac, mac, 6);
	assert_int_equal(c.fdb.dst, CTL_FDB_DST_PORT);
	assert_string_equal(c.fdb.port, "tap0");
	parse_ok("fdb add 02:00:00:00:00:01 remote 198.51.100.7 vni 3", &c);
	assert_int_equal(c.fdb.dst, CTL_FDB_DST_REMOTE);
	assert_int_equal(c.fdb.remote.v4.s_addr, inet_addr("198.51.100.7"));
	parse_ok("fdb del 02:00:00:00:00:01 vni 3", &c);
	assert_int_equal(c.verb, CTL_FDB_DEL);
	assert_int_equal(c.fdb.vni, 3);

	parse_ok("stats", &c);
	assert_int_equal(c.verb, CTL_STATS);
	assert_false(c.port.has_port);
	parse_ok("stats port tap0", &c);
	assert_true(c.port.has_port);
	assert_string_equal(c.port.name, "tap0");
	parse_ok("diagnose port vx0", &c);
	assert_int_equal(c.verb, CTL_DIAGNOSE);
	parse_ok("show knobs", &c);
	assert_int_equal(c.verb, CTL_SHOW_KNOBS);
	parse_ok("version", &c);
	assert_int_equal(c.verb, CTL_VERSION);
}

static void test_set_knobs(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("set gro off", &c);
	assert_int_equal(c.verb, CTL_SET);
	assert_int_equal(c.set.knob, CTL_KNOB_GRO);
	assert_int_equal(c.set.value, 0);
	parse_ok("set udp-segment on", &c);
	assert_int_equal(c.set.knob, CTL_KNOB_UDP_SEGMENT);
	assert_int_equal(c.set.value, 1);
	parse_ok("set gro-hold-us 0", &c);
	assert_int_equal(c.set.knob, CTL_KNOB_GRO_HOLD_US);
	parse_ok("set gro-max-size 65535", &c);
	assert_int_equal(c.set.value, 65535);
	parse_ok("set fdb-ageing 300", &c);
	assert_int_equal(c.set.knob, CTL_KNOB_FDB_AGEING);
	parse_ok("set fdb-max 16777216", &c);
	assert_int_equal(c.set.value, 16777216);
	for (int k = 0; k < CTL_KNOB_COUNT; k++) {
		const struct ctl_knob_info *info = ctl_knob_info((enum ctl_knob)k);
		assert_non_null(info);
		assert_true(info->min <= info->max);
	}
	assert_null(ctl_knob_info(CTL_KNOB_COUNT));
}

/* Numbered error cases, like WireGuard's counter.c table: the line, the
 * 1-based word the message must point at, and words it must contain. */
static const struct {
	const char *line;
	int word;
	const char *says;
} bad[] = {
	/* 1 */ { "", 1, "missing command, expected one of: port, fdb, stats" },
	/* 2 */ { "prot show", 1, "\"prot\": unknown command" },
	/* 3 */ { "port", 2, "missing word after \"port\", expected one of: add, del, show" },
	/* 4 */ { "port ad", 2, "\"ad\": unknown \"port\" command" },
	/* 5 */ { "port add", 3, "end of command): missing value after \"port add\", expected NAME" },
	/* 6 */ { "port add tap0", 4, "missing \"type\"" },
	/* 7 */ { "port add tap0 typ tap", 4, "\"typ\": unknown keyword, expected \"type\"" },
	/* 8 */ { "port add tap0 type tun", 5, "\"tun\": unknown port type, expected tap, vxlan, afpacket or veth" },
	/* 9 */ { "port add tap0 type tap vnii 3", 6, "\"vnii\": unknown keyword, expected one of: vni, netns, mtu, mac" },
	/* 10 */ { "port add tap0 type tap vni", 7, "(end of command): missing value after \"vni\", expected VNI (0..16777215)" },
	/* 11 */ { "port add tap0 type tap vni 16777216", 7, "\"16777216\": \"vni\" out of range, expected 0..16777215" },
	/* 12 */ { "port add tap0 type tap vni 12x", 7, "\"12x\": bad number for \"vni\"" },
	/* 13 */ { "port add tap0 type tap vni -1", 7, "bad number" },
	/* 14 */ { "port add tap0 type tap vni 99999999999999999999", 7, "out of range" },
	/* 15 */ { "port add tap0 type tap vni 1 vni 2", 8, "\"vni\": duplicate \"vni\"" },
	/* 16 */ { "port add tap0 type tap mtu 67", 7, "\"mtu\" out of range, expected 68..65535" },
	/* 17 */ { "port add tap0 type tap local 192.0.2.1", 6, "\"local\": not valid for type tap, expected one of: vni, netns, mtu, mac" },
	/* 18 */ { "port add vx0 type vxlan netns x", 6, "not valid for type vxlan" },
	/* 19 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1", 10, "missing \"remote IP\", required for type vxlan" },
	/* 20 */ { "port add vx0 type vxlan vni 1 remote 192.0.2.1", 10, "missing \"local IP\"" },
	/* 21 */ { "port add vx0 type vxlan local 192.0.2.1 remote 192.0.2.2", 10, "missing \"vni VNI\"" },
	/* 22 */ { "port add vx0 type vxlan vni 1 local 192.0.2.300 remote 192.0.2.2", 9, "\"192.0.2.300\": bad IP address for \"local\"" },
	/* 23 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 2001:db8::g", 11, "bad IPv6 address for \"remote\"" },
	/* 24 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 2001:db8::1", 11, "\"remote\" is IPv6 but \"local\" is IPv4" },
	/* 25 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 remote 192.0.2.2", 13, "duplicate \"remote\"" },
	/* 26 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 remote 2001:db8::2", 13, "remotes mix IPv4 and IPv6" },
	/* 27 */ { "port add vx0 type vxlan vni 1 local 0.0.0.0 remote 192.0.2.2", 9, "unspecified address" },
	/* 28 */ { "port add vx0 type vxlan vni 1 local 239.1.1.1 remote 192.0.2.2", 9, "multicast address for \"local\"" },
	/* 29 */ { "port add vx0 type vxlan vni 1 local ::ffff:192.0.2.1 remote 192.0.2.2", 9, "IPv4-mapped" },
	/* 30 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 dstport 0", 13, "\"dstport\" out of range, expected 1..65535" },
	/* 31 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 srcport 9-8", 13, "MIN > MAX" },
	/* 32 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 srcport 80", 13, "expected MIN-MAX" },
	/* 33 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 srcport 1-65536", 13, "bad port range" },
	/* 34 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 udpcsum yes", 13, "\"yes\": bad value for \"udpcsum\", expected on or off" },
	/* 35 */ { "port add tap0123456789abcdef type tap", 3, "bad name for \"port add\", expected 1..15 characters" },
	/* 36 */ { "port add a/b type tap", 3, "bad name" },
	/* 37 */ { "port add .. type tap", 3, "reserved" },
	/* 38 */ { "port del", 3, "missing value after \"port del\"" },
	/* 38b */ { "port add vx6 type vxlan vni 1 local 2001:db8::1 evpn", 10, "\"evpn\" needs an IPv4 \"local\"" },
	/* 38c */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 evpn dstport 47890", 11, "dstport 47890 is the EVPN shadow devices' own port" },
	/* 38d */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 evpn evpn", 11, "duplicate \"evpn\"" },
	/* 38e */ { "port add tap0 type tap vni 1 evpn", 8, "not valid for type tap" },
	/* 39 */ { "port del tap0 now", 4, "\"now\": unexpected word, \"port del\" takes no more arguments" },
	/* 40 */ { "port show all", 3, "unexpected word, \"port show\" takes no more arguments" },
	/* 41 */ { "fdb add 02:00:00:00:00:01 vni 1", 6, "missing \"port NAME\" or \"remote IP\"" },
	/* 42 */ { "fdb add 02:00:00:00:00:01 port tap0", 6, "missing \"vni VNI\"" },
	/* 43 */ { "fdb add 02:00:00:00:00:01 vni 1 port tap0 remote 192.0.2.1", 8, "\"remote\": give either \"port NAME\" or \"remote IP\", not both" },
	/* 44 */ { "fdb add 02:00:00:00:00:1 vni 1 port tap0", 3, "bad MAC, expected aa:bb:cc:dd:ee:ff" },
	/* 45 */ { "fdb add 02-00-00-00-00-01 vni 1 port tap0", 3, "bad MAC" },
	/* 46 */ { "fdb add 01:00:5e:00:00:01 vni 1 port tap0", 3, "multicast MAC" },
	/* 47 */ { "fdb add 00:00:00:00:00:00 vni 1 port tap0", 3, "zero MAC" },
	/* 48 */ { "fdb add", 3, "missing value after \"fdb add\", expected MAC" },
	/* 49 */ { "fdb del 02:00:00:00:00:01", 4, "missing \"vni VNI\", required for fdb del" },
	/* 50 */ { "fdb del 02:00:00:00:00:01 vni 1 port tap0", 6, "\"port\": unknown keyword, expected one of: vni" },
	/* 51 */ { "fdb show vni 1 vni 1", 5, "duplicate \"vni\"" },
	/* 52 */ { "fdb flush vni", 4, "missing value after \"vni\"" },
	/* 53 */ { "stats port", 3, "missing value after \"port\", expected NAME" },
	/* 54 */ { "stats tap0", 2, "\"tap0\": unknown keyword, expected one of: port" },
	/* 55 */ { "set", 2, "missing value after \"set\", expected KNOB" },
	/* 56 */ { "set groo on", 2, "\"groo\": unknown knob, expected one of: gro, gso, tap-tso" },
	/* 57 */ { "set gro", 3, "missing value after \"gro\", expected on or off" },
	/* 58 */ { "set gro 1", 3, "bad value for \"gro\", expected on or off" },
	/* 59 */ { "set gro-max-size 1499", 3, "\"gro-max-size\" out of range, expected 1500..65535" },
	/* 60 */ { "set fdb-max 0", 3, "out of range, expected 1..16777216" },
	/* 61 */ { "set gro on off", 4, "\"off\": unexpected word, \"set\" takes no more arguments" },
	/* 62 */ { "show", 2, "missing word after \"show\", expected one of: knobs" },
	/* 63 */ { "version 2", 2, "unexpected word" },
	/* 64 */ { "diagnose port", 3, "missing value" },
	/* 65 */ { "port add tap0 type tap netns a/b", 7, "bad name for \"netns\"" },
	/* 66 */ { "fdb add 02:00:00:00:00:01 vni 1 remote ::", 7, "unspecified address" },
	/* 67 */ { "port add tap0 type tap netns vm1 mtu 1450", 10, "(end of command): missing \"vni VNI\", required for type tap" },
	/* 68 */ { "port add tap0 type tap", 6, "missing \"vni VNI\", required for type tap" },
	/* 69 */ { "port add tap0 type tap vni 1 mac 01:00:5e:00:00:01", 9, "\"01:00:5e:00:00:01\": multicast MAC" },
	/* 70 */ { "port add tap0 type tap vni 1 mac", 9, "missing value after \"mac\", expected MAC" },
	/* 71 */ { "port add vx0 type vxlan vni 1 local 192.0.2.1 remote 192.0.2.2 mac 02:00:00:00:00:01", 12, "\"mac\": not valid for type vxlan" },
};

static void test_errors_name_word_and_expectation(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctl_cmd c;
		struct ctl_err err;
		memset(&c, 0xa5, sizeof(c));
		int ret = parse_line(bad[i].line, &c, &err);
		if (ret != -EINVAL)
			fail_msg("case %zu \"%s\": accepted", i + 1, bad[i].line);
		if (err.word != bad[i].word || !strstr(err.msg, bad[i].says))
			fail_msg("case %zu \"%s\": got word %d \"%s\", want word %d containing \"%s\"",
				 i + 1, bad[i].line, err.word, err.msg, bad[i].word, bad[i].says);
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "word %d ", bad[i].word);
		assert_true(strncmp(err.msg, prefix, strlen(prefix)) == 0);
		assert_null(strchr(err.msg, '\n'));
		/* a refused command leaves nothing half-filled */
		assert_int_equal(c.verb, CTL_VERB_NONE);
	}
}

static void test_error_quotes_unprintable_words_safely(void **state)
{
	(void)state;
	const char *argv[] = { "port", "add", "t\nap" };
	struct ctl_cmd c;
	struct ctl_err err;
	assert_int_equal(ctl_cmd_parse(3, argv, &c, &err), -EINVAL);
	assert_null(strchr(err.msg, '\n'));
	assert_non_null(strstr(err.msg, "\"t?ap\""));
	/* NULL err is allowed */
	assert_int_equal(ctl_cmd_parse(3, argv, &c, NULL), -EINVAL);

	const char *many[CTL_MAX_WORDS + 1];
	many[0] = "stats";
	for (int i = 1; i <= CTL_MAX_WORDS; i++)
		many[i] = "port";
	assert_int_equal(ctl_cmd_parse(CTL_MAX_WORDS + 1, many, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "too many words"));
}

/* Canonical forms: formatting prints keys in grammar order and only those
 * given; parsing the output gives back the same struct. */
static const struct {
	const char *in, *canonical;
} round_trips[] = {
	{ "port add tap0 type tap vni 0", NULL },
	{ "port add tap0 type tap mac 02:AA:00:00:00:01 vni 5", "port add tap0 type tap vni 5 mac 02:aa:00:00:00:01" },
	{ "port add tap0 type tap mtu 1450 netns vm1 vni 99", "port add tap0 type tap vni 99 netns vm1 mtu 1450" },
	{ "port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2", NULL },
	{ "port add c0 type afpacket dev veth0 vni 5", NULL },
	{ "port add veth1 type afpacket max-macs 9 netns h1 vni 7 dev veth1",
	  "port add veth1 type afpacket dev veth1 vni 7 netns h1 max-macs 9" },
	{ "port add vx6 type vxlan udpcsum off srcport 1-2 dstport 4789 remote 2001:DB8:0:0::2 "
	  "remote 2001:db8::3 local 2001:db8::1 vni 0 mtu 9000",
	  "port add vx6 type vxlan vni 0 local 2001:db8::1 remote 2001:db8::2 remote 2001:db8::3 "
	  "dstport 4789 srcport 1-2 udpcsum off mtu 9000" },
	{ "port add vx0 type vxlan df inherit srcport 40000-40010 vni 99 local 192.0.2.1 remote 192.0.2.2",
	  "port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2 srcport 40000-40010 df inherit" },
	{ "port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2 df set", NULL },
	{ "port add vx0 type vxlan evpn vni 99 local 192.0.2.1", "port add vx0 type vxlan vni 99 local 192.0.2.1 evpn" },
	{ "port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2 evpn dstport 4790", NULL },
	{ "port del vx0", NULL },
	{ "port show", NULL },
	{ "fdb show", NULL },
	{ "fdb show vni 007", "fdb show vni 7" },
	{ "fdb add 02:AA:BB:CC:DD:EE remote 203.0.113.9 vni 5", "fdb add 02:aa:bb:cc:dd:ee vni 5 remote 203.0.113.9" },
	{ "fdb add 02:aa:bb:cc:dd:ee vni 5 port tap0", NULL },
	{ "fdb del 02:aa:bb:cc:dd:ee vni 16777215", NULL },
	{ "fdb flush", NULL },
	{ "fdb flush vni 0", NULL },
	{ "stats", NULL },
	{ "stats port vx0", NULL },
	{ "set gro on", NULL },
	{ "set tap-tso off", NULL },
	{ "set gro-hold-us 50", NULL },
	{ "show knobs", NULL },
	{ "diagnose", NULL },
	{ "diagnose port tap0", NULL },
	{ "version", NULL },
	{ "workers 2", NULL },
	{ "workers 16 cpus 0-7,9", NULL },
	/* filter: the verb hands its words to ctl_flower_parse() whole */
	{ "filter add dev vnet0 pref 2 ingress protocol ip flower action mirred egress redirect dev vx0",
	  "filter add dev vnet0 ingress pref 2 protocol ip flower action mirred egress redirect dev vx0" },
	{ "filter del dev vnet0 ingress pref 2 handle 1", NULL },
	{ "filter show -s dev vnet0 ingress", NULL },
};

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(round_trips) / sizeof(round_trips[0]); i++) {
		struct ctl_cmd a, b;
		char text[512];
		parse_ok(round_trips[i].in, &a);
		int len = ctl_cmd_format(&a, text, sizeof(text));
		assert_true(len > 0);
		assert_int_equal((size_t)len, strlen(text));
		const char *want = round_trips[i].canonical ? round_trips[i].canonical : round_trips[i].in;
		assert_string_equal(text, want);
		parse_ok(text, &b);
		assert_true(ctl_cmd_equal(&a, &b));
	}
}

static void test_format_limits(void **state)
{
	(void)state;
	struct ctl_cmd c;
	char small[10];
	parse_ok("port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2", &c);
	assert_int_equal(ctl_cmd_format(&c, small, sizeof(small)), -ENOSPC);
	assert_string_equal(small, "");
	assert_int_equal(ctl_cmd_format(&c, small, 0), -ENOSPC);
	struct ctl_cmd bogus;
	memset(&bogus, 0, sizeof(bogus));
	assert_int_equal(ctl_cmd_format(&bogus, small, sizeof(small)), -EINVAL);

	/* equal means equal: one differing field is seen */
	struct ctl_cmd d;
	parse_ok("port add vx0 type vxlan vni 98 local 192.0.2.1 remote 192.0.2.2", &d);
	assert_false(ctl_cmd_equal(&c, &d));

	/* 16 remotes fit, 17 do not */
	char line[1024] = "port add vx0 type vxlan vni 1 local 192.0.2.1";
	for (int i = 0; i < CTL_MAX_REMOTES; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " remote 192.0.2.%d", 10 + i);
	parse_ok(line, &c);
	assert_int_equal(c.port_add.n_remotes, CTL_MAX_REMOTES);
	char out[1024];
	assert_true(ctl_cmd_format(&c, out, sizeof(out)) > 0);
	assert_string_equal(out, line);
	strcat(line, " remote 192.0.2.99");
	struct ctl_err err;
	assert_int_equal(parse_line(line, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "too many remotes"));
}

static void test_split_words(void **state)
{
	(void)state;
	char line[] = "  port\tadd  tap0 \r\n";
	char *w[4];
	assert_int_equal(ctl_split_words(line, w, 4), 3);
	assert_string_equal(w[0], "port");
	assert_string_equal(w[1], "add");
	assert_string_equal(w[2], "tap0");
	char two[] = "a b c";
	assert_int_equal(ctl_split_words(two, w, 2), -E2BIG);
	char empty[] = " \t ";
	assert_int_equal(ctl_split_words(empty, w, 2), 0);
}

static void test_grammar_lists_every_verb_and_knob(void **state)
{
	(void)state;
	const char *g = ctl_cmd_grammar();
	for (int v = CTL_PORT_ADD; v <= CTL_VERSION; v++)
		assert_non_null(strstr(g, ctl_verb_name((enum ctl_verb)v)));
	assert_non_null(strstr(g, "| filter "));
	assert_string_equal(ctl_verb_name(CTL_FILTER), "filter");
	for (int k = 0; k < CTL_KNOB_COUNT; k++)
		assert_non_null(strstr(g, ctl_knob_info((enum ctl_knob)k)->name));
	assert_string_equal(ctl_verb_name((enum ctl_verb)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_add_tap),
		cmocka_unit_test(test_port_add_vxlan),
		cmocka_unit_test(test_vxlan_outer_header_keys),
		cmocka_unit_test(test_other_verbs),
		cmocka_unit_test(test_max_macs),
		cmocka_unit_test(test_port_add_afpacket),
		cmocka_unit_test(test_port_add_veth),
		cmocka_unit_test(test_set_knobs),
		cmocka_unit_test(test_errors_name_word_and_expectation),
		cmocka_unit_test(test_error_quotes_unprintable_words_safely),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format_limits),
		cmocka_unit_test(test_split_words),
		cmocka_unit_test(test_grammar_lists_every_verb_and_knob),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
