/* flower_hook: where a flower rule sits (a port's ingress or egress) and
 * the port its frames came in on (`indev`), as the table and the datapath
 * see them.
 *
 * What?
 *   A rule list is keyed by a *hook*: the port id for the port's ingress,
 *   the port id | FLOWER_HOOK_EGRESS for its egress.  The table
 *   (flower_table.h) sorts, chains and classifies by hook exactly as it did
 *   by port, so an egress rule list is one more (hook, chain) classifier,
 *   with its own prefs, handles and automatic prefs, as tc keeps clsact's
 *   ingress and egress blocks apart.  Port ids stay below 0x8000
 *   (the daemon's are below 256), so the two never meet.
 *
 *   `indev NAME` matches struct flow_key.in_port, which is the port the
 *   frame came in on at both hooks (the datapath classifies an egress frame
 *   with its ingress key): an exact match of the port id.  On an ingress
 *   rule in_port is the rule's own port, so `indev` there matches when it
 *   names that port and never otherwise, as tc's skb_iif on ingress.
 *
 * Who calls?
 *   flower_table.c, to resolve a rule's hook and compile its indev at add,
 *   and the daemon's filter code (control/filters.c) to tell hooks apart.
 *   Pure functions, no I/O, no globals. */
#ifndef VX_SWITCH_FLOWER_HOOK_H
#define VX_SWITCH_FLOWER_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch/flower_rule.h"

enum { FLOWER_HOOK_EGRESS = 0x8000 };

static inline uint16_t flower_hook_port(uint16_t hook)
{
	return hook & (uint16_t)~FLOWER_HOOK_EGRESS;
}

static inline bool flower_hook_is_egress(uint16_t hook)
{
	return hook & FLOWER_HOOK_EGRESS;
}

/* The hook of f (its dev, resolved, and FLOWER_SF_EGRESS): 0 or
 * -ENOENT (no such port). */
int flower_hook_resolve(const struct flower_spec *f, flower_port_resolver *resolve, void *aux,
			uint16_t *hook);

/* f's indev, if any, into out's in_port (exact).  0, or -ENOENT with err
 * naming the missing port. */
int flower_indev_compile(const struct flower_match *cm, flower_port_resolver *resolve, void *aux,
			 struct cls_match *out, char *err, size_t err_size);

#endif /* VX_SWITCH_FLOWER_HOOK_H */
