/* evpn_internal: what evpn.c (the mirror of zebra's entries and the sync
 * of our local MACs) and evpn_report.c (port show, diagnose) share: the
 * per-VNI state and the two lookups the report side reads it through. */
#ifndef VX_CONTROL_EVPN_INTERNAL_H
#define VX_CONTROL_EVPN_INTERNAL_H

#include "control/evpn.h"

#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_types.h"
#include "port/evpn_neigh.h"
#include "port/evpn_shadow.h"
#include "switch/fdb.h"
#include "switch/vni.h"

struct vxd;

enum { EVPN_MAX_VTEPS = VNI_MAX_VTEPS, EVPN_RX_BUF = 64 << 10 };

struct evpn_mac {
	uint8_t mac[6];
};

/* A MAC seen moving (diagnose's evpn_mac_flapping): between a remote VTEP
 * and a local port, or between two VTEPs.  FRR's duplicate-address
 * detection defaults: 5 moves within 180 s. */
enum { EVPN_FLAP_SLOTS = 32, EVPN_DAD_MOVES = 5 };
#define EVPN_DAD_WINDOW_NS (180ull * 1000000000ull)
struct evpn_flap {
	bool used, local;   /* local: it was here at its last move */
	uint8_t mac[6];
	uint8_t vtep[4];    /* the remote VTEP of its last move (or before, when local) */
	uint32_t moves;     /* within the window from first_ns */
	uint64_t first_ns, last_ns;
};

/* MACs zebra took off our shadow port in one read of its events, whose
 * VTEP the next dump names (evpn_local_taken). */
enum { EVPN_TAKEN_MAX = 256 };

struct evpn_vni {
	bool used;
	bool going;                       /* its port is being removed */
	uint16_t port_id;                 /* userspace: vxd->ports[]; kernel: its flower port id */
	char port[CTL_NAME_SIZE];
	uint32_t vni;
	struct evpn_shadow sh;
	uint8_t vteps[EVPN_MAX_VTEPS][4]; /* flood list from zebra */
	unsigned n_vteps;
	struct evpn_mac *local;           /* advertised on the shadow port, sorted */
	unsigned n_local;
	struct evpn_mac taken[EVPN_TAKEN_MAX]; /* of local, moved away by zebra: not yet installed */
	unsigned n_taken;
	bool taken_overflow;              /* more than EVPN_TAKEN_MAX: any MAC not in local counts */
	/* A resync's marks: what the dump had. */
	uint8_t seen_vteps[EVPN_MAX_VTEPS][4];
	unsigned n_seen_vteps;
	struct evpn_mac *seen_macs;
	unsigned n_seen_macs, cap_seen_macs;
	struct evpn_flap flaps[EVPN_FLAP_SLOTS];
	uint64_t moves;
	uint64_t remote_adds, remote_dels, flood_adds, flood_dels, conflicts, refused, local_adds, local_dels, nl_errors;
	uint64_t flood_errors;            /* kernel datapath: flood lists it could not take */
};

struct vxd_evpn {
	int fd;       /* RTNLGRP_NEIGH */
	int timer_fd; /* local MAC sync */
	/* What the neighbour messages being parsed are: live changes, or the
	 * FDB as it is (a dump: every entry, whose absence says "stale"; a get
	 * of one MAC's entry).  A dump's and a get's entries are read alike;
	 * only a dump's mark what it has seen. */
	enum evpn_reading { EVPN_READ_LIVE, EVPN_READ_DUMP, EVPN_READ_GET } reading;
	bool resync_due; /* more local MACs taken away than a VNI lists: dump to learn where to */
	bool taken_due;  /* local MACs taken away (evpn_vni.taken): get each one's entry */
	bool vnis_dirty; /* flood sets changed: publish */
	uint64_t enobufs, resyncs, taken_gets;
	uint64_t resyncs_local_gone;       /* of resyncs: a local MAC left the FDB (evpn_sync_local) */
	uint64_t ignored[EVPN_IGN_COUNT];
	struct evpn_vni vnis[VXD_EVPN_MAX_VNIS];
	uint8_t buf[EVPN_RX_BUF];
};

/* The EVPN VNI of port `name`, or NULL. */
struct evpn_vni *evpn_of_port(const struct vxd *vxd, const char *name);
/* Every FDB entry of `vni`, of whichever datapath runs. */
void ev_walk(const struct vxd *vxd, uint32_t vni, fdb_dump_cb *cb, void *ctx);
/* Index of `vtep` in list[0..n), or -1. */
int vtep_find(uint8_t (*list)[4], unsigned n, const uint8_t vtep[4]);

#endif
