/* The running configuration: what a config file says, and what `reload`
 * (or SIGHUP) and `show config` do with it.
 *
 * A config file is declarative: its first line may choose the datapath
 * (`datapath kernel|user`, read by vxswitchd_main.c before anything
 * starts; a reload that changes it is refused whole), then it lists the ports (`port add`), the static
 * FDB entries (`fdb add`), the flower rules (`filter add`) and the knobs
 * that differ from their defaults (`set`).  Any other verb is refused with FILE:LINE, because "do this now"
 * (port del, fdb flush, stats...) has no meaning as a state to reach.
 *
 * Reload reads the whole file first; a file that does not parse, or states
 * something twice, is refused whole and nothing changes.  Then it applies
 * the difference against the running state, in this order:
 *   1. ports that are gone from the file, or whose line changed, are removed;
 *   2. knobs are set to the file's value, or back to the default when the
 *      file no longer sets them;
 *   3. ports new to the file (or changed) are added, in file order;
 *   4. static FDB entries the file no longer has are deleted, and every
 *      entry of the file is (re)installed (installing is idempotent);
 *   5. the flower rules become the file's, as one batch (filters.c): the
 *      datapath goes from the old rules to the new ones at once.
 * Rules name ports, so when the file's rules differ from the running ones,
 * or step 1 removes a port a rule names, the rules are emptied before
 * step 1 (frames see no rules, i.e. L2 switching, until step 5); rules
 * the file leaves as they are on ports it leaves alone are not touched.
 * A port whose line did not change is not touched: it keeps forwarding.
 *
 * A reload is one change: when a step fails (a tap that cannot be opened,
 * a namespace that is not there), the error names its line and the steps
 * already taken are undone by applying, the same way, the running state
 * as it was before (show config, taken before the first step).  Ports that
 * the failed reload did not touch are not touched by the undo either.
 * The undo can itself fail (the device the old line named went away
 * meanwhile): the error then says so, and `show config` tells what runs.
 *
 * `show config` prints the running state in the same syntax, so that
 * feeding it back to `reload` changes nothing.  Ports and static entries
 * added with vxctl at run time are part of the running state too. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/ctl_config.h"
#include "ctl/ctl_print.h"
#include "control/vxd_internal.h"
#include "util/vlog.h"

struct vxd_wanted {
	const struct ctl_config *cfg;
	const struct ctl_port_add *ports[VXD_MAX_PORTS];
	unsigned port_line[VXD_MAX_PORTS];
	unsigned n_ports;
	uint32_t knobs[CTL_KNOB_COUNT];
	struct ctl_flower *filters;   /* the file's filter add lines, in order */
	size_t n_filters;
	bool filters_cleared;         /* step 0 emptied the rules: step 5 applies them */
};

static bool vxd_port_cfg_equal(const struct ctl_port_add *a, const struct ctl_port_add *b)
{
	char fa[512], fb[512];
	struct ctl_cmd ca = { .verb = CTL_PORT_ADD, .port_add = *a };
	struct ctl_cmd cb = { .verb = CTL_PORT_ADD, .port_add = *b };
	/* The formatted line is the config's own notion of "the same port". */
	return ctl_cmd_format(&ca, fa, sizeof(fa)) >= 0 && ctl_cmd_format(&cb, fb, sizeof(fb)) >= 0 &&
	       strcmp(fa, fb) == 0;
}

/* The datapath asked for at start-up (command line or the file's line),
 * so that show config, fed back to reload or saved and started from, asks
 * the same; false: the default (vxd.h), which says no line. */
static bool vxd_datapath_asked(const struct vxd *vxd, bool *kernel)
{
	*kernel = vxd->opts.datapath && !strcmp(vxd->opts.datapath, "kernel");
	return vxd->opts.datapath != NULL;
}

/* The file's datapath (its first line, ctl_config.h) against the one the
 * switch runs.  The datapath is chosen before any port exists, so a file
 * that changes it is refused whole, as a changed `workers` line is:
 * nothing of it is applied and the ports keep forwarding.  A file without
 * the line asks for the default (kernel where it loads, vxd.h), which
 * whatever runs satisfies unless a `datapath user` line chose it.
 * --datapath on the command line wins over the file's line, at start as
 * here. */
static int vxd_datapath_check(const struct vxd *vxd, const char *path, const struct ctl_config *cfg,
			      struct ctl_err *err)
{
	bool has = cfg->n_cmds && cfg->cmds[0].verb == CTL_DATAPATH;
	bool file_kernel = has && cfg->cmds[0].datapath_kernel;
	bool run_kernel = vxd_datapath_kernel(vxd);
	const char *run = run_kernel ? "kernel" : "user";
	if (vxd->opts.datapath_cmdline) {
		if (has && file_kernel != !strcmp(vxd->opts.datapath, "kernel"))
			VLOG_INFO("config", "%s:%u: datapath %s: --datapath %s on the command line wins", path,
				  cfg->lines[0], file_kernel ? "kernel" : "user", vxd->opts.datapath);
		return 0;
	}
	if (has && file_kernel == run_kernel)
		return 0;
	if (!has && (run_kernel || !vxd->opts.datapath))
		return 0; /* the default, as at start */
	if (has)
		return vxd_refuse(err, -EBUSY, "%s:%u: datapath %s: vxswitchd runs datapath %s, chosen at start-up "
				  "before any port%s%s%s: restart vxswitchd to change it (nothing of this reload applied)",
				  path, cfg->lines[0], file_kernel ? "kernel" : "user", run,
				  vxd->kdp_why[0] ? " (the kernel datapath: " : "", vxd->kdp_why,
				  vxd->kdp_why[0] ? ")" : "");
	return vxd_refuse(err, -EBUSY, "%s: no \"datapath user\" line any more (the default is kernel, where it "
			  "loads): vxswitchd runs datapath user, chosen at start-up before any port: restart "
			  "vxswitchd to change it (nothing of this reload applied)", path);
}

static int vxd_wanted_build(const struct vxd *vxd, const char *path, const struct ctl_config *cfg,
			    struct vxd_wanted *w, struct ctl_err *err)
{
	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	w->filters = calloc(cfg->n_cmds ? cfg->n_cmds : 1, sizeof(*w->filters));
	if (!w->filters)
		return vxd_refuse(err, -ENOMEM, "reload: out of memory");
	memcpy(w->knobs, vxd->knob_defaults, sizeof(w->knobs));
	int ret = vxd_datapath_check(vxd, path, cfg, err);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < cfg->n_cmds; i++) {
		const struct ctl_cmd *c = &cfg->cmds[i];
		unsigned line = cfg->lines[i];
		if (c->verb == CTL_SET) {
			w->knobs[c->set.knob] = c->set.value;
		} else if (c->verb == CTL_PORT_ADD) {
			for (unsigned j = 0; j < w->n_ports; j++)
				if (strcmp(w->ports[j]->name, c->port_add.name) == 0)
					return vxd_refuse(err, -EINVAL, "%s:%u: port %s: already added on line %u", path,
							  line, c->port_add.name, w->port_line[j]);
			if (w->n_ports == VXD_MAX_PORTS - 1)
				return vxd_refuse(err, -ENOSPC, "%s:%u: too many ports", path, line);
			w->port_line[w->n_ports] = line;
			w->ports[w->n_ports++] = &c->port_add;
		} else if (c->verb == CTL_FILTER && c->filter.verb == CTL_FILTER_ADD) {
			w->filters[w->n_filters++] = c->filter;
		} else if (c->verb == CTL_WORKERS) {
			struct ctl_err e = { 0 };
			if (vxd_workers_check(vxd, &c->workers, &e) < 0)
				return vxd_refuse(err, -EBUSY, "%s:%u: %s", path, line, e.msg);
		} else if (c->verb != CTL_FDB_ADD && c->verb != CTL_DATAPATH) {
			return vxd_refuse(err, -EINVAL, "%s:%u: \"%s\" does not belong in a config file "
					  "(it states what to have: port add, fdb add, filter add, set)", path, line,
					  ctl_verb_name(c->verb));
		}
	}
	return 0;
}

static const struct ctl_port_add *vxd_wanted_port(const struct vxd_wanted *w, const char *name, unsigned *line)
{
	for (unsigned j = 0; j < w->n_ports; j++)
		if (strcmp(w->ports[j]->name, name) == 0) {
			if (line)
				*line = w->port_line[j];
			return w->ports[j];
		}
	return NULL;
}

/* Whether step 1 keeps port id as it is. */
static bool vxd_reload_keeps_port(const struct vxd *vxd, const struct vxd_wanted *w, uint16_t id)
{
	const struct port *p = vxd->ports[id];
	if (vxd_port_internal(vxd, id))
		return true; /* a slow-path link: goes with its taps (kdp_slowpath.c) */
	const struct ctl_port_add *want = p ? vxd_wanted_port(w, p->name, NULL) : NULL;
	return want && vxd_port_cfg_equal(want, &vxd->port_cfg[id]);
}

/* Whether step 1 keeps a datapath's own port (devports.c) as it is. */
static bool vxd_reload_keeps_devport(const struct vxd_wanted *w, const struct vxd_devport *d)
{
	const struct ctl_port_add *want = vxd_wanted_port(w, d->cfg.name, NULL);
	return want && vxd_port_cfg_equal(want, &d->cfg);
}

/* Step 0: the rules go when they change or name a port step 1 removes. */
static int vxd_reload_filters_prepare(struct vxd *vxd, struct vxd_wanted *w, struct ctl_err *err)
{
	size_t n = vxd_filters_n(vxd);
	bool same = n == w->n_filters;
	for (size_t i = 0; i < n && same; i++) {
		char a[1024], b[1024];
		const struct ctl_flower have = { .verb = CTL_FILTER_ADD, .rule = *vxd_filter_spec(vxd, i) };
		same = ctl_flower_format(&have, a, sizeof(a)) >= 0 &&
		       ctl_flower_format(&w->filters[i], b, sizeof(b)) >= 0 && !strcmp(a, b);
	}
	for (size_t i = 0; i < n && same; i++) {
		const struct flower_rule *r = flower_table_rule(vxd->flower, i);
		for (uint16_t id = 1; id < VXD_MAX_PORTS && same; id++)
			if (vxd->ports[id] && vxd_filter_names_port(r, id) && !vxd_reload_keeps_port(vxd, w, id))
				same = false;
		for (unsigned d = 0; d < VXD_MAX_DEVPORTS && same; d++) /* a datapath's own ports (devports.c) */
			if (vxd->devports[d].used && vxd_filter_names_port(r, vxd->devports[d].id) &&
			    !vxd_reload_keeps_devport(w, &vxd->devports[d]))
				same = false;
	}
	if (same)
		return 0;
	w->filters_cleared = true;
	return vxd_filters_clear(vxd, err);
}

/* Step 1: ports gone or changed. */
static int vxd_reload_remove_ports(struct vxd *vxd, const struct vxd_wanted *w, struct ctl_err *err)
{
	/* Taps and afpacket ports first: a vxlan port's removal must not leave a tap's default
	 * MTU dangling; order does not matter for correctness otherwise. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
			struct port *p = vxd->ports[i];
			if (!p || (pass == 0) != (vxd->port_cfg[i].type != CTL_PORT_VXLAN))
				continue;
			if (vxd_reload_keeps_port(vxd, w, (uint16_t)i))
				continue;
			int ret = vxd_port_remove(vxd, (uint16_t)i, err);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Step 1 for the ports a datapath serves itself (devports.c). */
static int vxd_reload_remove_devports(struct vxd *vxd, const struct vxd_wanted *w, struct ctl_err *err)
{
	for (unsigned d = 0; d < VXD_MAX_DEVPORTS; d++) { /* a removal moves no other slot */
		if (!vxd->devports[d].used || vxd_reload_keeps_devport(w, &vxd->devports[d]))
			continue;
		struct ctl_cmd del = { .verb = CTL_PORT_DEL };
		memcpy(del.port.name, vxd->devports[d].cfg.name, CTL_NAME_SIZE);
		struct ctl_print out;
		ctl_print_init(&out, false, 0);
		int ret = vxd_execute(vxd, &del, &out, err);
		ctl_print_finish(&out);
		ctl_print_release(&out);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Step 2: knobs. */
static int vxd_reload_knobs(struct vxd *vxd, const struct vxd_wanted *w, const char *path, struct ctl_err *err)
{
	for (unsigned k = 0; k < CTL_KNOB_COUNT; k++) {
		if (vxd->knobs[k] == w->knobs[k])
			continue;
		struct ctl_cmd c = { .verb = CTL_SET, .set = { .knob = (enum ctl_knob)k, .value = w->knobs[k] } };
		struct ctl_print out;
		ctl_print_init(&out, false, 0);
		int ret = vxd_execute(vxd, &c, &out, err);
		ctl_print_finish(&out);
		ctl_print_release(&out);
		if (ret < 0) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			return vxd_refuse(err, ret, "%s: set %s %u: %s", path, ctl_knob_info(k)->name, w->knobs[k], msg);
		}
	}
	return 0;
}

/* Steps 3 and 4: ports and static entries, in file order. */
static int vxd_reload_add(struct vxd *vxd, const struct vxd_wanted *w, const char *path, struct ctl_print *out,
			  struct ctl_err *err)
{
	const struct ctl_config *cfg = w->cfg;
	for (size_t i = 0; i < cfg->n_cmds; i++) {
		const struct ctl_cmd *c = &cfg->cmds[i];
		if (c->verb == CTL_PORT_ADD && (vxd_port_by_name(vxd, c->port_add.name) ||
						 vxd_devport_by_name(vxd, c->port_add.name)))
			continue; /* unchanged: step 1 kept it */
		if (c->verb != CTL_PORT_ADD && c->verb != CTL_FDB_ADD)
			continue;
		int ret = vxd_execute(vxd, c, out, err);
		if (ret < 0) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "%s", err->msg[0] ? err->msg : strerror(-ret));
			return vxd_refuse(err, ret, "%s:%u: %s", path, cfg->lines[i], msg);
		}
	}
	return 0;
}

/* Static entries the running state has and the file does not. */
static void vxd_reload_drop_statics(struct vxd *vxd, const struct ctl_config *cfg)
{
	for (size_t i = 0; i < vxd->n_statics;) {
		const struct ctl_fdb *have = &vxd->statics[i];
		bool wanted = false;
		for (size_t j = 0; j < cfg->n_cmds && !wanted; j++) {
			const struct ctl_cmd *c = &cfg->cmds[j];
			wanted = c->verb == CTL_FDB_ADD && c->fdb.vni == have->vni && !memcmp(c->fdb.mac, have->mac, 6);
		}
		if (wanted) {
			i++;
			continue;
		}
		struct ctl_cmd del = { .verb = CTL_FDB_DEL, .fdb = *have };
		struct ctl_print out;
		struct ctl_err e = { 0 };
		ctl_print_init(&out, false, 0);
		vxd_execute(vxd, &del, &out, &e); /* ENOENT: gone with its port; fine */
		ctl_print_finish(&out);
		ctl_print_release(&out);
		vxd_statics_forget(vxd, del.fdb.vni, del.fdb.mac);
	}
}

/* Makes the running state what `cfg` says (steps 1-4 above). */
static int vxd_apply(struct vxd *vxd, const char *path, const struct ctl_config *cfg, struct ctl_print *out,
		     struct ctl_err *err)
{
	struct vxd_wanted *w = malloc(sizeof(*w));
	if (!w)
		return vxd_refuse(err, -ENOMEM, "reload: out of memory");
	int ret = vxd_wanted_build(vxd, path, cfg, w, err);
	if (ret == 0)
		ret = vxd_reload_filters_prepare(vxd, w, err);
	if (ret == 0)
		ret = vxd_reload_remove_ports(vxd, w, err);
	if (ret == 0)
		ret = vxd_reload_remove_devports(vxd, w, err);
	if (ret == 0)
		ret = vxd_reload_knobs(vxd, w, path, err);
	if (ret == 0) {
		vxd_reload_drop_statics(vxd, cfg);
		ret = vxd_reload_add(vxd, w, path, out, err);
	}
	if (ret == 0 && w->filters_cleared && w->n_filters) {
		ret = vxd_filters_apply(vxd, true, w->filters, w->n_filters, err);
		if (ret < 0) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			vxd_refuse(err, ret, "%s: filter %s", path, msg);
		}
	}
	if (ret == 0)
		VLOG_INFO("config", "%s: applied (%u ports)", path, w->n_ports);
	free(w->filters);
	free(w);
	return ret;
}

/* The running state as a config (what show config prints), to return to. */
static int vxd_running_config(const struct vxd *vxd, struct ctl_config *cfg)
{
	size_t n = 0, cap = 2 + 2 * VXD_MAX_PORTS + CTL_KNOB_COUNT + vxd->n_statics + vxd_filters_n(vxd);
	*cfg = (struct ctl_config){ .cmds = calloc(cap, sizeof(*cfg->cmds)), .lines = calloc(cap, sizeof(unsigned)) };
	if (!cfg->cmds || !cfg->lines) {
		ctl_config_release(cfg);
		return -ENOMEM;
	}
	bool kernel;
	if (vxd_datapath_asked(vxd, &kernel)) /* first, as the grammar wants it */
		cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_DATAPATH, .datapath_kernel = kernel };
	if (vxd->workers_asked.n)
		cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_WORKERS, .workers = vxd->workers_asked };
	const struct ctl_port_add *kports[VXD_MAX_PORTS];
	unsigned nk = vxd_devports(vxd, kports, VXD_MAX_PORTS);
	for (int pass = 0; pass < 2; pass++) { /* vxlan ports first, as show config */
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i] && !vxd_port_internal(vxd, (uint16_t)i) &&
			    (pass == 0) == (vxd->port_cfg[i].type == CTL_PORT_VXLAN))
				cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_PORT_ADD, .port_add = vxd->port_cfg[i] };
		for (unsigned i = 0; i < nk; i++)
			if ((pass == 0) == (kports[i]->type == CTL_PORT_VXLAN))
				cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_PORT_ADD, .port_add = *kports[i] };
	}
	for (unsigned k = 0; k < CTL_KNOB_COUNT; k++)
		if (vxd->knobs[k] != vxd->knob_defaults[k])
			cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_SET,
							   .set = { .knob = (enum ctl_knob)k, .value = vxd->knobs[k] } };
	for (size_t i = 0; i < vxd->n_statics; i++)
		cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_FDB_ADD, .fdb = vxd->statics[i] };
	for (size_t i = 0; i < vxd_filters_n(vxd); i++)
		cfg->cmds[n++] = (struct ctl_cmd){ .verb = CTL_FILTER,
						   .filter = { .verb = CTL_FILTER_ADD, .rule = *vxd_filter_spec(vxd, i) } };
	for (size_t i = 0; i < n; i++)
		cfg->lines[i] = (unsigned)i + 1;
	cfg->n_cmds = n;
	return 0;
}

int vxd_reload(struct vxd *vxd, const char *path, struct ctl_print *out, struct ctl_err *err)
{
	if (!path)
		return vxd_refuse(err, -ENOENT, "reload: vxswitchd was started without a config file (-c)");
	struct ctl_config cfg, before;
	char msg[CTL_CONFIG_ERR_SIZE];
	int ret = ctl_config_load(path, &cfg, msg, sizeof(msg));
	if (ret < 0)
		return vxd_refuse(err, ret, "%s", msg);
	ret = vxd_running_config(vxd, &before);
	if (ret < 0) {
		ctl_config_release(&cfg);
		return vxd_refuse(err, ret, "reload: out of memory");
	}
	ret = vxd_apply(vxd, path, &cfg, out, err);
	if (ret < 0) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg);
		struct ctl_print discard;
		struct ctl_err undo = { 0 };
		ctl_print_init(&discard, false, 0);
		int r2 = vxd_apply(vxd, "(the state before the reload)", &before, &discard, &undo);
		ctl_print_finish(&discard);
		ctl_print_release(&discard);
		if (r2 == 0)
			vxd_refuse(err, ret, "%s; reload undone: the running state is as before", why);
		else
			vxd_refuse(err, ret, "%s; undoing the reload failed too (%s): see show config", why, undo.msg);
		VLOG_WARN("config", "reload refused: %s", err->msg);
	}
	ctl_config_release(&before);
	ctl_config_release(&cfg);
	vxd_slowpath_prune(vxd); /* VNIs whose taps the reload removed */
	return ret;
}

/* ---- the running state as a config file ----------------------------------- */

static void vxd_print_cmd(struct ctl_print *out, const struct ctl_cmd *c)
{
	char line[1024];
	if (ctl_cmd_format(c, line, sizeof(line)) >= 0)
		ctl_print_string(out, CTL_PRINT_ANY, NULL, "%s\n", line);
}

void vxd_show_config(const struct vxd *vxd, struct ctl_print *out)
{
	ctl_print_open_array(out, NULL);
	/* A kernel datapath that did not load is said by stats and diagnose. */
	bool kernel;
	if (vxd_datapath_asked(vxd, &kernel))
		vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_DATAPATH, .datapath_kernel = kernel });
	if (vxd->workers_asked.n)
		vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_WORKERS, .workers = vxd->workers_asked });
	const struct ctl_port_add *kports[VXD_MAX_PORTS];
	unsigned nk = vxd_devports(vxd, kports, VXD_MAX_PORTS);
	for (int pass = 0; pass < 2; pass++) { /* vxlan ports first: taps take their MTU from them */
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i] && !vxd_port_internal(vxd, (uint16_t)i) &&
			    (pass == 0) == (vxd->port_cfg[i].type == CTL_PORT_VXLAN))
				vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_PORT_ADD, .port_add = vxd->port_cfg[i] });
		for (unsigned i = 0; i < nk; i++) /* the kernel datapath's */
			if ((pass == 0) == (kports[i]->type == CTL_PORT_VXLAN))
				vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_PORT_ADD, .port_add = *kports[i] });
	}
	for (unsigned k = 0; k < CTL_KNOB_COUNT; k++)
		if (vxd->knobs[k] != vxd->knob_defaults[k])
			vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_SET,
							      .set = { .knob = (enum ctl_knob)k, .value = vxd->knobs[k] } });
	for (size_t i = 0; i < vxd->n_statics; i++)
		vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_FDB_ADD, .fdb = vxd->statics[i] });
	for (size_t i = 0; i < vxd_filters_n(vxd); i++)
		vxd_print_cmd(out, &(struct ctl_cmd){ .verb = CTL_FILTER,
						      .filter = { .verb = CTL_FILTER_ADD, .rule = *vxd_filter_spec(vxd, i) } });
	ctl_print_close_array(out);
}

/* save [FILE]: `show config` into FILE (default: the config file), written
 * whole to FILE.tmp and renamed, so a crash never leaves half a config. */
int vxd_save(struct vxd *vxd, const char *path, struct ctl_print *out, struct ctl_err *err)
{
	if (!path)
		return vxd_refuse(err, -ENOENT, "save: no FILE, and vxswitchd was started without a config file (-c)");
	struct ctl_print text;
	ctl_print_init(&text, false, 0);
	vxd_show_config(vxd, &text);
	int ret = ctl_print_finish(&text);
	char tmp[CTL_PATH_SIZE + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = ret < 0 ? NULL : fopen(tmp, "w");
	if (!f) {
		ret = ret < 0 ? ret : -errno;
		ctl_print_release(&text);
		return vxd_refuse(err, ret, "save %s: %s", tmp, strerror(-ret));
	}
	const char *data = ctl_print_data(&text);
	unsigned lines = 0;
	for (const char *c = data; *c; c++)
		lines += *c == '\n';
	fprintf(f, "# vxswitchd running configuration (vxctl save)\n%s", data);
	ret = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	ctl_print_release(&text);
	if (ret < 0) {
		unlink(tmp);
		return vxd_refuse(err, ret, "save %s: %s", path, strerror(-ret));
	}
	ctl_print_open_object(out, NULL);
	ctl_print_string(out, CTL_PRINT_ANY, "file", "saved to %s", path);
	ctl_print_uint(out, CTL_PRINT_ANY, "lines", " (%" PRIu64 " lines)\n", lines);
	ctl_print_close_object(out);
	return 0;
}

/* ---- static entries the control side installed ------------------------------ */

void vxd_statics_forget(struct vxd *vxd, uint32_t vni, const uint8_t mac[6])
{
	for (size_t i = 0; i < vxd->n_statics; i++) {
		if (vxd->statics[i].vni != vni || memcmp(vxd->statics[i].mac, mac, 6))
			continue;
		vxd->statics[i] = vxd->statics[--vxd->n_statics];
		return;
	}
}

int vxd_statics_remember(struct vxd *vxd, const struct ctl_fdb *f)
{
	vxd_statics_forget(vxd, f->vni, f->mac);
	if (vxd->n_statics == vxd->cap_statics) {
		size_t cap = vxd->cap_statics ? vxd->cap_statics * 2 : 16;
		struct ctl_fdb *n = realloc(vxd->statics, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		vxd->statics = n;
		vxd->cap_statics = cap;
	}
	vxd->statics[vxd->n_statics++] = *f;
	return 0;
}
