/* ctl_flower_print: what the two files of tc's `filter show` layout share
 * (internal to src/ctl; the entry points are in ctl_flower.h).
 *
 *   ctl_flower_print.c      the filter line and the flower keys
 *                           (iproute2's tc_filter.c, f_flower.c);
 *   ctl_flower_print_act.c  the actions and their counters (m_action.c,
 *                           m_mirred.c, m_gact.c, m_vlan.c,
 *                           m_tunnel_key.c, tc_util.c). */
#ifndef VX_CTL_CTL_FLOWER_PRINT_H
#define VX_CTL_CTL_FLOWER_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_print;
struct flower_spec;
struct ctl_flower_stats;

/* iproute2's ll_proto_n2a(): a name, or "[N]" in buf. */
const char *fl_tc_proto_name(uint16_t eth, char *buf, size_t size);

/* The "actions" array: each action as tc prints a filter's action (bound,
 * ref 1 bind 1), with st its counters (tc -s); terse: the kind alone, as
 * the kernel's terse dump sends no options. */
void fl_tc_print_actions(struct ctl_print *p, const struct flower_spec *f,
			 const uint32_t *act_index, const struct ctl_flower_stats *st, bool terse);

#endif /* VX_CTL_CTL_FLOWER_PRINT_H */
