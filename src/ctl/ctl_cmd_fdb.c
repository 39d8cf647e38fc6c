/* ctl_cmd_fdb: the fdb grammar (see ctl_parser.h for how the language is
 * split, ctl_cmd.h for the grammar itself).
 *
 *   fdb show [ vni VNI ] | fdb flush [ vni VNI ]
 *   fdb add MAC vni VNI { port NAME | remote IP }
 *   fdb del MAC vni VNI
 *
 * The MAC is positional (it names the entry); everything else is a key, so
 * "vni" may come before or after the destination.  An entry points at one
 * place: giving both port and remote is refused at the second. */
#include <errno.h>
#include <string.h>

#include "ctl/ctl_cmd_internal.h"

enum { K_VNI = 1 << 0, K_PORT = 1 << 1, K_REMOTE = 1 << 2 };

static int key_fdb_vni(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	cmd->fdb.has_vni = true;
	return ctl_parse_vni(ps, &cmd->fdb.vni);
}

/* An entry points at one place: a local port or a remote VTEP. */
static int check_one_dst(struct ctl_parser *ps, const struct ctl_cmd *cmd)
{
	if (cmd->fdb.dst != CTL_FDB_DST_NONE)
		return ctl_fail(ps, ps->pos - 1,
			    "give either \"port NAME\" or \"remote IP\", not both");
	return 0;
}

static int key_fdb_port(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	int ret = check_one_dst(ps, cmd);
	if (ret)
		return ret;
	cmd->fdb.dst = CTL_FDB_DST_PORT;
	return ctl_parse_name(ps, "port", CTL_NAME_SIZE, false, cmd->fdb.port);
}

static int key_fdb_remote(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	int ret = check_one_dst(ps, cmd);
	if (ret)
		return ret;
	cmd->fdb.dst = CTL_FDB_DST_REMOTE;
	return ctl_parse_ip(ps, "remote", &cmd->fdb.remote);
}

static const struct ctl_key_def fdb_add_keys[] = {
	{ "vni", K_VNI, key_fdb_vni, 1 },
	{ "port", K_PORT, key_fdb_port, 1 },
	{ "remote", K_REMOTE, key_fdb_remote, 1 },
	{ NULL, 0, NULL, 0 },
};
/* fdb del/show/flush take only vni. */
static const struct ctl_key_def fdb_vni_keys[] = {
	{ "vni", K_VNI, key_fdb_vni, 1 },
	{ NULL, 0, NULL, 0 },
};

/* ---- verbs ------------------------------------------------------------- */

int ctl_parse_fdb_show_flush(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	return ctl_parse_keys(ps, fdb_vni_keys, 1, ctl_verb_name(cmd->verb), cmd, &given);
}

int ctl_parse_fdb_add(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	int ret = ctl_parse_mac(ps, ctl_verb_name(cmd->verb), cmd->fdb.mac);
	if (ret)
		return ret;
	ret = ctl_parse_keys(ps, fdb_add_keys, 1, "fdb add", cmd, &given);
	if (ret)
		return ret;
	if (!(given & K_VNI))
		return ctl_fail(ps, ps->pos, "missing \"vni VNI\", required for fdb add");
	if (!(given & (K_PORT | K_REMOTE)))
		return ctl_fail(ps, ps->pos, "missing \"port NAME\" or \"remote IP\", required for fdb add");
	return 0;
}

int ctl_parse_fdb_del(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	int ret = ctl_parse_mac(ps, ctl_verb_name(cmd->verb), cmd->fdb.mac);
	if (!ret)
		ret = ctl_parse_keys(ps, fdb_vni_keys, 1, "fdb del", cmd, &given);
	if (!ret && !(given & K_VNI))
		ret = ctl_fail(ps, ps->pos, "missing \"vni VNI\", required for fdb del");
	return ret;
}

/* ---- format ------------------------------------------------------------ */

int ctl_format_fdb(struct ctl_sbuf *sb, const struct ctl_cmd *cmd)
{
	if (cmd->verb == CTL_FDB_SHOW || cmd->verb == CTL_FDB_FLUSH) {
		if (cmd->fdb.has_vni)
			ctl_sb_vni(sb, cmd->fdb.vni);
		return 0;
	}
	ctl_sb_mac(sb, cmd->fdb.mac);
	ctl_sb_vni(sb, cmd->fdb.vni);
	if (cmd->verb == CTL_FDB_DEL)
		return 0;
	if (cmd->fdb.dst == CTL_FDB_DST_PORT)
		ctl_sb_printf(sb, " port %s", cmd->fdb.port);
	else if (cmd->fdb.dst == CTL_FDB_DST_REMOTE)
		ctl_sb_ip(sb, "remote", &cmd->fdb.remote);
	else
		return -EINVAL;
	return 0;
}
