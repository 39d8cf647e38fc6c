/* `diagnose` of the kernel datapath's ports: pure judgement (as diag.h)
 * over what control/kdp_diag.c reads from the programs' maps: each port's
 * counters (struct vxdp_counters: drops by reason, upcalls and their
 * drops, the size histogram of what the VM receives), each vxlan port's
 * remote VTEPs (struct vxdp_vtep_stats), whether each program is still
 * attached, MTUs.  Findings use diag.h's causes: those of the userspace
 * datapath where the cause is the same (remote_silent, vni_no_vxlan,
 * mtu_underlay, port_drops) and the kernel's own (program_not_attached,
 * upcalls_dropped, small_frames_kernel, rules_cache_thrashing: a port with
 * rules whose lookups in the kernel's decision cache mostly miss, so its
 * frames take the slow path through vxswitchd's classifier).  Judged on
 * totals since the port was added (the programs' counters have no window
 * yet).
 *
 * No port of the kernel datapath is ever forced onto the slow path: taps
 * (the only ports that would need it) are refused at `port add`, so there
 * is no such finding. */
#ifndef VX_REPORT_DIAG_KDP_H
#define VX_REPORT_DIAG_KDP_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/kernel/bpf/vxdp_abi.h"
#include "dp/kernel/bpf/vxdp_diag_abi.h"
#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "report/diag.h"

enum diag_kdp_limits {
	DIAG_KDP_MAX_PORTS = 256,
	DIAG_KDP_MAX_REMOTES = 16,
	DIAG_KDP_SMALL_MIN_BYTES = 16 << 20, /* bytes to a VM before its frame sizes are judged */
	DIAG_KDP_SMALL_BOUND = 8192,         /* "small": frames under this (the histogram's first two buckets) */
	DIAG_KDP_THRASH_MIN_MISSES = 2000,   /* rule-cache misses before a port's miss share is judged */
	DIAG_KDP_THRASH_PERMILLE = 500,      /* ... thrashing when this share of lookups misses or more */
};

struct diag_kdp_remote {
	char addr[48];
	struct vxdp_vtep_stats s;
};

struct diag_kdp_port {
	char name[IF_NAMESIZE];
	uint32_t vni;
	bool vxlan;
	bool internal;               /* a slow-path link's kernel end: its MTU is the link's, not a VM's */
	/* a VM-facing port */
	char dev[IF_NAMESIZE];
	int attached;                /* 1, 0 (detached), -ENODEV (device gone), other -errno: unknown */
	uint32_t mtu;                /* the device's (0: unknown) */
	struct vxdp_counters c;
	bool rules;                  /* on the rules path: rs is its counters */
	struct vxdp_rstats rs;
	/* a vxlan port */
	uint16_t dst_port;
	uint8_t family;              /* 4 or 6 */
	uint32_t underlay_mtu;       /* the device holding `local` (0: unknown) */
	unsigned n_remotes;
	struct diag_kdp_remote remotes[DIAG_KDP_MAX_REMOTES];
};

struct diag_kdp_input {
	uint64_t now_ns;             /* the programs' clock */
	char tun_name[IF_NAMESIZE];
	int tun_attached;            /* as diag_kdp_port.attached */
	struct vxdp_counters tun;
	/* the rule cache (control/kdp_rules.h) */
	uint64_t rules_entries, rules_max, rules_cache_full;
	unsigned n_ports;
	struct diag_kdp_port ports[DIAG_KDP_MAX_PORTS];
};

/* Appends the findings of `k` to r; in: only its `only` is read. */
void diag_judge_kdp(const struct diag_input *in, const struct diag_kdp_input *k, struct diag_report *r);

#endif
