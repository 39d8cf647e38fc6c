/* The control socket's counters in `vxctl stats` (ctl_server.h says what
 * each one counts), so an operator who got "too many control clients" can
 * see who held the slots: stalled clients evicted, timed out, slow readers
 * dropped.  Text and JSON from the same lines; every counter is printed,
 * zeros too, so scripts can rely on the keys. */
#include <inttypes.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "control/vxd_internal.h"

static void ctl_count(struct ctl_print *p, const char *key, const char *fmt, uint64_t v)
{
	ctl_print_uint(p, CTL_PRINT_ANY, key, fmt, v);
}

void vxd_print_ctl_stats(struct ctl_print *p, const struct vxd *vxd)
{
	if (!vxd->ctl)
		return; /* no control socket (config only) */
	struct ctl_server_stats st;
	ctl_server_get_stats(vxd->ctl, &st);
	ctl_print_open_object(p, "control");
	ctl_count(p, "clients", "control: clients %" PRIu64, st.clients);
	ctl_count(p, "max_clients", "/%" PRIu64, st.max_clients);
	ctl_count(p, "accepted", " accepted %" PRIu64, st.accepted);
	ctl_count(p, "disconnected", " disconnected %" PRIu64, st.disconnected);
	ctl_count(p, "requests", " requests %" PRIu64, st.requests);
	ctl_count(p, "bad_requests", " bad %" PRIu64, st.bad_requests);
	ctl_count(p, "refused", " refused %" PRIu64, st.refused);
	ctl_print_nl(p);
	ctl_count(p, "refused_full", "    turned away: too many clients %" PRIu64, st.refused_full);
	ctl_count(p, "evicted", " stalled evicted %" PRIu64, st.evicted);
	ctl_count(p, "timed_out", " request timed out %" PRIu64, st.timed_out);
	ctl_count(p, "idle_closed", " idle closed %" PRIu64, st.idle_closed);
	ctl_count(p, "dropped_slow", " slow readers dropped %" PRIu64, st.dropped_slow);
	ctl_print_nl(p);
	ctl_count(p, "refused_cred", "    refused (credentials) %" PRIu64, st.refused_cred);
	ctl_count(p, "dropped_garbage", " garbage %" PRIu64, st.dropped_garbage);
	ctl_count(p, "dropped_oversize", " oversize %" PRIu64, st.dropped_oversize);
	ctl_count(p, "hangups", " hangups %" PRIu64, st.hangups);
	ctl_count(p, "errors", " errors %" PRIu64, st.errors);
	ctl_print_int(p, CTL_PRINT_ANY, "last_errno", " (last errno %" PRId64 ")", st.last_errno);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}
