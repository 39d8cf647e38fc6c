/* What each grammar file of the command language gives ctl_cmd.c's verb
 * table (internal to src/ctl; the toolkit they share is ctl_parser.h,
 * the public API ctl_cmd.h).  Apart from ctl_parser.h so that the toolkit
 * needs only ctl_types.h: ctl_flower, which ctl_cmd.h includes, uses the
 * toolkit without going round through ctl_cmd. */
#ifndef VX_CTL_CTL_CMD_INTERNAL_H
#define VX_CTL_CTL_CMD_INTERNAL_H

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_parser.h"

/* ctl_cmd_port.c */
int ctl_parse_port_add(struct ctl_parser *ps, struct ctl_cmd *cmd);
int ctl_parse_port_del(struct ctl_parser *ps, struct ctl_cmd *cmd);
int ctl_parse_port_ref(struct ctl_parser *ps, struct ctl_cmd *cmd); /* stats, diagnose */
/* -EINVAL for a type ctl_parse_port_add() cannot produce */
int ctl_format_port_add(struct ctl_sbuf *sb, const struct ctl_port_add *pa);

/* ctl_cmd_fdb.c */
int ctl_parse_fdb_show_flush(struct ctl_parser *ps, struct ctl_cmd *cmd);
int ctl_parse_fdb_add(struct ctl_parser *ps, struct ctl_cmd *cmd);
int ctl_parse_fdb_del(struct ctl_parser *ps, struct ctl_cmd *cmd);
/* all four fdb verbs; -EINVAL for an add without a destination */
int ctl_format_fdb(struct ctl_sbuf *sb, const struct ctl_cmd *cmd);

/* ctl_knob.c */
int ctl_parse_set(struct ctl_parser *ps, struct ctl_cmd *cmd);
/* -EINVAL for an unknown knob */
int ctl_format_set(struct ctl_sbuf *sb, const struct ctl_set *set);

/* ctl_cmd_capture.c */
int ctl_parse_capture(struct ctl_parser *ps, struct ctl_cmd *cmd);
int ctl_format_capture(struct ctl_sbuf *sb, const struct ctl_capture *cap);

#endif /* VX_CTL_CTL_CMD_INTERNAL_H */
