/* flower_hook: hooks and indev (see flower_hook.h). */
#include "switch/flower_hook.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int flower_hook_resolve(const struct flower_spec *f, flower_port_resolver *resolve, void *aux,
			uint16_t *hook)
{
	uint16_t port;
	if (resolve(aux, f->dev, &port) || port >= FLOWER_HOOK_EGRESS)
		return -ENOENT;
	*hook = (f->given & FLOWER_SF_EGRESS) ? (uint16_t)(port | FLOWER_HOOK_EGRESS) : port;
	return 0;
}

int flower_indev_compile(const struct flower_match *cm, flower_port_resolver *resolve, void *aux,
			 struct cls_match *out, char *err, size_t err_size)
{
	if (!(cm->given & FLOWER_FM_INDEV))
		return 0;
	uint16_t port;
	if (resolve(aux, cm->indev, &port) || port >= FLOWER_HOOK_EGRESS) {
		snprintf(err, err_size, "indev \"%s\": no such port (indev names a port of this switch)",
			 cm->indev);
		return -ENOENT;
	}
	out->key.in_port = port;
	out->mask.in_port = 0xffff;
	return 0;
}
