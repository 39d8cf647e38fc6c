/* ctl_cmd_port: the port grammar (see ctl_parser.h for how the language
 * is split, ctl_cmd.h for the grammar itself).
 *
 *   port add NAME type { tap | vxlan | afpacket | veth } KEY VALUE ...
 *   port del NAME
 *   stats [ port NAME ], diagnose [ port NAME ]
 *
 * One key table serves both port types; each key says which types it
 * applies to, so "netns" on a vxlan port is refused as "not valid for type
 * vxlan" rather than "unknown keyword".  What only the whole command can
 * tell (the required keys, local and remote in one family) is checked after
 * the keys, in ctl_parse_port_add().  `vni` is required for a tap too: a
 * tap without one used to land in VNI 0, where nothing else is, and lose
 * every frame without a word. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ctl/ctl_cmd_internal.h"

#define TAP (1u << CTL_PORT_TAP)
#define VXLAN (1u << CTL_PORT_VXLAN)
#define AFP (1u << CTL_PORT_AFPACKET)
#define VETH (1u << CTL_PORT_VETH)

static int key_port_vni(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_parse_vni(ps, &cmd->port_add.vni);
}

static int key_netns(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_parse_name(ps, "netns", CTL_NETNS_SIZE, true, cmd->port_add.netns);
}

/* Port security: at most N MACs learned behind the tap (1..16777216, the
 * FDB's own bound). */
static int key_max_macs(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, "max-macs", "a MAC count (1..16777216)", &v);
	return ret ? ret : ctl_parse_u32(ps, "max-macs", 1, 1u << 24, &cmd->port_add.max_macs);
}

static int key_mtu(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, "mtu", "MTU (68..65535)", &v);
	return ret ? ret : ctl_parse_u32(ps, "mtu", CTL_MTU_MIN, CTL_MTU_MAX, &cmd->port_add.mtu);
}

/* The tap device's MAC: set on a tap the switch creates; an existing tap
 * must already have it (the daemon refuses to change it). */
static int key_tap_mac(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_parse_mac(ps, "mac", cmd->port_add.mac);
}

/* The existing link an afpacket port opens (a name like a port's). */
static int key_dev(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_parse_name(ps, "dev", CTL_NAME_SIZE, false, cmd->port_add.dev);
}

static int key_local(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	int ret = ctl_parse_ip(ps, "local", &cmd->port_add.local);
	if (ret)
		return ret;
	if (ctl_ip_is_multicast(&cmd->port_add.local))
		return ctl_fail(ps, ps->pos - 1, "multicast address for \"local\", expected unicast");
	return 0;
}

static int key_remote(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_port_add *pa = &cmd->port_add;
	struct ctl_ip ip;
	int ret = ctl_parse_ip(ps, "remote", &ip);
	if (ret)
		return ret;
	if (pa->n_remotes == CTL_MAX_REMOTES)
		return ctl_fail(ps, ps->pos - 1, "too many remotes, at most %d", CTL_MAX_REMOTES);
	for (unsigned int i = 0; i < pa->n_remotes; i++)
		if (!memcmp(&pa->remotes[i], &ip, sizeof(ip)))
			return ctl_fail(ps, ps->pos - 1, "duplicate \"remote\"");
	if (pa->n_remotes && pa->remotes[0].family != ip.family)
		return ctl_fail(ps, ps->pos - 1, "remotes mix IPv4 and IPv6");
	if (!pa->n_remotes)
		ps->first_remote = ps->pos - 1;
	pa->remotes[pa->n_remotes++] = ip;
	return 0;
}

static int key_dstport(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	uint32_t port;
	int ret = ctl_take_value(ps, "dstport", "PORT (1..65535)", &v);
	if (!ret)
		ret = ctl_parse_u32(ps, "dstport", 1, 65535, &port);
	if (!ret)
		cmd->port_add.dstport = (uint16_t)port;
	return ret;
}

static int key_srcport(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_port_add *pa = &cmd->port_add;
	int ret = ctl_parse_port_range(ps, &pa->srcport_min, &pa->srcport_max);
	if (ret)
		return ret;
	unsigned n = (unsigned)(pa->srcport_max - pa->srcport_min) + 1;
	if (n > CTL_SRCPORT_MAX_PORTS)
		return ctl_fail(ps, ps->pos - 1, "\"srcport\" range of %u ports, at most %d (one send socket per port)",
				n, CTL_SRCPORT_MAX_PORTS);
	return 0;
}

static const char *const df_names[] = { [CTL_DF_SET] = "set", [CTL_DF_UNSET] = "unset",
					[CTL_DF_INHERIT] = "inherit" };

static int key_df(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, "df", "set, unset or inherit", &v);
	if (ret)
		return ret;
	for (unsigned i = 0; i < sizeof(df_names) / sizeof(df_names[0]); i++) {
		if (!strcmp(v, df_names[i])) {
			cmd->port_add.df = (uint8_t)i;
			return 0;
		}
	}
	return ctl_fail(ps, ps->pos - 1, "bad value for \"df\", expected set, unset or inherit");
}

/* The word index of key `word` in the command (keys come once), for a
 * refusal only the whole command can tell. */
static int key_word(const struct ctl_parser *ps, const char *word)
{
	for (int i = 0; i < ps->argc; i++)
		if (!strcmp(ps->argv[i], word))
			return i;
	return ps->argc;
}

static int key_udpcsum(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_parse_onoff(ps, "udpcsum", &cmd->port_add.udpcsum);
}

/* A flag without a value: the port's VTEPs come from EVPN too. */
static int key_evpn(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	(void)ps;
	(void)cmd;
	return 0;
}

static const struct ctl_key_def port_add_keys[] = {
	{ "vni", CTL_PK_VNI, key_port_vni, TAP | VXLAN | AFP | VETH },
	{ "dev", CTL_PK_DEV, key_dev, AFP },
	{ "netns", CTL_PK_NETNS, key_netns, TAP | AFP | VETH },
	{ "local", CTL_PK_LOCAL, key_local, VXLAN },
	{ "remote", 0, key_remote, VXLAN },
	{ "dstport", CTL_PK_DSTPORT, key_dstport, VXLAN },
	{ "srcport", CTL_PK_SRCPORT, key_srcport, VXLAN },
	{ "udpcsum", CTL_PK_UDPCSUM, key_udpcsum, VXLAN },
	{ "df", CTL_PK_DF, key_df, VXLAN },
	{ "evpn", CTL_PK_EVPN, key_evpn, VXLAN },
	{ "mtu", CTL_PK_MTU, key_mtu, TAP | VXLAN | VETH },
	{ "mac", CTL_PK_TAP_MAC, key_tap_mac, TAP },
	{ "max-macs", CTL_PK_MAX_MACS, key_max_macs, TAP | AFP },
	{ NULL, 0, NULL, 0 },
};

static int key_ref_port(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	cmd->port.has_port = true;
	return ctl_parse_name(ps, "port", CTL_NAME_SIZE, false, cmd->port.name);
}

/* stats and diagnose take only port. */
static const struct ctl_key_def port_ref_keys[] = {
	{ "port", 1, key_ref_port, 1 },
	{ NULL, 0, NULL, 0 },
};

/* ---- verbs ------------------------------------------------------------- */

const char *ctl_port_type_name(enum ctl_port_type type)
{
	switch (type) {
	case CTL_PORT_TAP:
		return "type tap";
	case CTL_PORT_VXLAN:
		return "type vxlan";
	case CTL_PORT_AFPACKET:
		return "type afpacket";
	case CTL_PORT_VETH:
		return "type veth";
	}
	return "type ?";
}

int ctl_parse_port_add(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_port_add *pa = &cmd->port_add;
	const char *v = NULL;
	int ret = ctl_parse_name(ps, "port add", CTL_NAME_SIZE, false, pa->name);
	if (ret)
		return ret;
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "missing \"type\", expected type tap, type vxlan, type afpacket or type veth");
	if (strcmp(ps->argv[ps->pos], "type"))
		return ctl_fail(ps, ps->pos, "unknown keyword, expected \"type\"");
	ps->pos++;
	ret = ctl_take_value(ps, "type", "tap, vxlan, afpacket or veth", &v);
	if (ret)
		return ret;
	if (!strcmp(v, "tap"))
		pa->type = CTL_PORT_TAP;
	else if (!strcmp(v, "vxlan"))
		pa->type = CTL_PORT_VXLAN;
	else if (!strcmp(v, "afpacket"))
		pa->type = CTL_PORT_AFPACKET;
	else if (!strcmp(v, "veth"))
		pa->type = CTL_PORT_VETH;
	else
		return ctl_fail(ps, ps->pos - 1, "unknown port type, expected tap, vxlan, afpacket or veth");

	pa->dstport = CTL_VXLAN_DEFAULT_DSTPORT;
	pa->udpcsum = true;
	uint32_t given = 0;
	const char *what = ctl_port_type_name(pa->type);
	ret = ctl_parse_keys(ps, port_add_keys, 1u << pa->type, what, cmd, &given);
	if (ret)
		return ret;
	if (pa->n_remotes)
		given |= CTL_PK_REMOTE;
	pa->given = given;
	if (!(given & CTL_PK_VNI))
		return ctl_fail(ps, ps->pos, "missing \"vni VNI\", required for %s", what);
	if (pa->type == CTL_PORT_TAP)
		return 0;
	if (pa->type == CTL_PORT_AFPACKET)
		return (given & CTL_PK_DEV) ? 0 : ctl_fail(ps, ps->pos, "missing \"dev DEV\", required for type afpacket");
	if (pa->type == CTL_PORT_VETH)
		return (given & CTL_PK_NETNS) ? 0 : ctl_fail(ps, ps->pos, "missing \"netns NS\", required for type veth");

	if (!(given & CTL_PK_LOCAL))
		return ctl_fail(ps, ps->pos, "missing \"local IP\", required for type vxlan");
	if (!(given & (CTL_PK_REMOTE | CTL_PK_EVPN)))
		return ctl_fail(ps, ps->pos, "missing \"remote IP\", required for type vxlan (or \"evpn\")");
	if (given & CTL_PK_EVPN) {
		int w = key_word(ps, "evpn");
		if (pa->local.family != AF_INET)
			return ctl_fail(ps, w, "\"evpn\" needs an IPv4 \"local\": FRR 8.4's EVPN has an IPv4 underlay only");
		if (pa->dstport == CTL_EVPN_SHADOW_PORT)
			return ctl_fail(ps, key_word(ps, "dstport"),
					"dstport %u is the EVPN shadow devices' own port, pick another", CTL_EVPN_SHADOW_PORT);
	}
	if ((given & CTL_PK_REMOTE) && pa->remotes[0].family != pa->local.family)
		return ctl_fail(ps, ps->first_remote, "\"remote\" is IPv%c but \"local\" is IPv%c",
			    pa->remotes[0].family == AF_INET ? '4' : '6',
			    pa->local.family == AF_INET ? '4' : '6');
	if ((given & CTL_PK_DF) && pa->local.family == AF_INET6)
		return ctl_fail(ps, key_word(ps, "df"),
				"\"df\" is for an IPv4 underlay only: IPv6 has no DF bit (routers never fragment it)");
	return 0;
}

int ctl_parse_port_del(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	int ret = ctl_parse_name(ps, "port del", CTL_NAME_SIZE, false, cmd->port.name);
	if (ret)
		return ret;
	cmd->port.has_port = true;
	return ctl_expect_end(ps, "port del");
}

int ctl_parse_port_ref(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	return ctl_parse_keys(ps, port_ref_keys, 1, ctl_verb_name(cmd->verb), cmd, &given);
}

/* ---- format ------------------------------------------------------------ */

/* Keywords in grammar order, only the keys that were given. */
int ctl_format_port_add(struct ctl_sbuf *sb, const struct ctl_port_add *pa)
{
	if (pa->type != CTL_PORT_TAP && pa->type != CTL_PORT_VXLAN && pa->type != CTL_PORT_AFPACKET &&
	    pa->type != CTL_PORT_VETH)
		return -EINVAL;
	ctl_sb_printf(sb, " %s %s", pa->name, ctl_port_type_name(pa->type));
	if (pa->given & CTL_PK_DEV)
		ctl_sb_printf(sb, " dev %s", pa->dev);
	if (pa->given & CTL_PK_VNI)
		ctl_sb_vni(sb, pa->vni);
	if (pa->given & CTL_PK_NETNS)
		ctl_sb_printf(sb, " netns %s", pa->netns);
	if (pa->given & CTL_PK_LOCAL)
		ctl_sb_ip(sb, "local", &pa->local);
	for (unsigned int i = 0; i < pa->n_remotes && i < CTL_MAX_REMOTES; i++)
		ctl_sb_ip(sb, "remote", &pa->remotes[i]);
	if (pa->given & CTL_PK_EVPN)
		ctl_sb_printf(sb, " evpn");
	if (pa->given & CTL_PK_DSTPORT)
		ctl_sb_printf(sb, " dstport %u", pa->dstport);
	if (pa->given & CTL_PK_SRCPORT)
		ctl_sb_printf(sb, " srcport %u-%u", pa->srcport_min, pa->srcport_max);
	if (pa->given & CTL_PK_UDPCSUM)
		ctl_sb_printf(sb, " udpcsum %s", pa->udpcsum ? "on" : "off");
	if ((pa->given & CTL_PK_DF) && pa->df < sizeof(df_names) / sizeof(df_names[0]))
		ctl_sb_printf(sb, " df %s", df_names[pa->df]);
	if (pa->given & CTL_PK_MTU)
		ctl_sb_printf(sb, " mtu %u", pa->mtu);
	if (pa->given & CTL_PK_TAP_MAC) {
		ctl_sb_printf(sb, " mac");
		ctl_sb_mac(sb, pa->mac);
	}
	if (pa->given & CTL_PK_MAX_MACS)
		ctl_sb_printf(sb, " max-macs %u", pa->max_macs);
	return 0;
}

