/* The bits of a key a hook's rules read (flower_table.h, megaflows). */
#include "switch/flower_table.h"
#include "switch/classifier.h"

void flower_table_hook_mask(const struct flower_table *t, uint16_t hook, struct flow_key *mask)
{
	const struct flower_rule *r;
	for (size_t i = 0; (r = flower_table_rule(t, i)) != NULL; i++)
		if (r->port == hook)
			cls_match_widen(&r->match, mask);
}
