/* The kernel datapath's ports as vxswitchd's control thread keeps them:
 * the state kdp_ports.c (ports, learning, ageing, what the operator sees)
 * and kdp_ports_rules.c (flower rules on those ports) share.  Control
 * thread only; nothing outside those two files includes it. */
#ifndef VX_CONTROL_KDP_PORTS_INTERNAL_H
#define VX_CONTROL_KDP_PORTS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "control/kdp_ports.h"
#include "ctl/ctl_cmd.h"

struct kdp;
struct kdp_rules_ctl;
struct flower_table;

enum {
	KC_MAX_PORTS = 256,
	KC_MAX_VNIS = 256,
	KC_FDB_MAX_DEFAULT = 8192, /* = FDB_DEFAULT_MAX_LEARNED, the userspace datapath's */
};

struct kc_port {
	bool used;
	bool made_veth;          /* type veth: we made the pair, port del removes it */
	struct ctl_port_add cfg; /* the `port add` as given */
	uint32_t ifindex;        /* 0: a vxlan port (no device of its own) */
	uint32_t flags;          /* VXDP_PORT_VETH */
	uint32_t n_macs;         /* learned behind it */
};

struct kc_vni {
	bool used;
	uint32_t vni;
	uint32_t n_macs;         /* learned entries of the VNI */
};

struct kdp_ctl {
	struct kdp *k;
	uint16_t dstport;
	struct kc_port ports[KC_MAX_PORTS];
	struct kc_vni vnis[KC_MAX_VNIS];
	uint64_t last_age_ns;
	uint32_t fdb_max;
	uint64_t learned, learn_refused, aged;
	struct kdp_rules_ctl *kr;    /* NULL: no rules path (kr_why says why) */
	char kr_why[160];
	const struct flower_table *t; /* the published rules */
	int epfd;                    /* the upcall ring and the rules' buffers */
};

int kc_refuse(struct ctl_err *err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct kc_port *kc_by_name(struct kdp_ctl *kc, const char *name);
struct kc_port *kc_by_ifindex(struct kdp_ctl *kc, uint32_t ifindex);

#endif
