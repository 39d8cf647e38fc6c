/* Fuzz the `-j stats` reader of `vxctl stats --watch`: any bytes ->
 * ctl_watch_parse, which must refuse or fill a sample without crashing; an
 * accepted sample is rated against itself a second later (every delta 0,
 * every rate 0) and printed both ways. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ctl_watch_sample *s = calloc(2, sizeof(*s));
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	if (!text || !s || !r)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	struct ctl_err err = { 0 };
	int ret = ctl_watch_parse(text, &s[0], &err);
	if (ret != 0 && !err.msg[0])
		abort(); /* a refusal says why */
	if (ret == 0 && s[0].time_ns < UINT64_MAX - 1000000000ull) {
		s[1] = s[0];
		s[1].time_ns += 1000000000ull;
		if (ctl_watch_rates(&s[0], &s[1], r) != 0 || r->n_ports != s[0].n_ports)
			abort();
		for (unsigned i = 0; i < r->n_ports; i++)
			if (r->ports[i].rx_pps != 0 || r->ports[i].tx_drops_ps != 0)
				abort();
		for (int json = 0; json < 2; json++) {
			struct ctl_print p;
			ctl_print_init(&p, json, 0);
			ctl_watch_print(&p, r);
			if (ctl_print_finish(&p) != 0)
				abort();
			ctl_print_release(&p);
		}
	}
	free(text);
	free(s);
	free(r);
	return 0;
}
