/* ctl_cmd: the vxctl command language, parsed into a typed struct.
 *
 * One syntax serves the live CLI (`vxctl port add ...`), the control socket
 * and the daemon's config file (one command per line).  The daemon never
 * sees words: it gets a struct ctl_cmd whose every field is already checked
 * (ranges, address families, name lengths), so executing it can only fail
 * for reasons of state (port exists, table full), never of syntax.
 *
 * Grammar (also printed by ctl_cmd_grammar(), `vxctl --help`):
 *
 *   COMMAND := port add NAME type tap vni VNI [ netns NS ] [ mtu MTU ]
 *                  [ mac MAC ]
 *            | port add NAME type afpacket dev DEV vni VNI [ netns NS ]
 *                  [ max-macs N ]
 *            | port add NAME type vxlan vni VNI local IP { remote IP | evpn }
 *                  [ remote IP ... ] [ evpn ] [ dstport PORT ] [ srcport PORT-PORT ]
 *                  [ udpcsum { on | off } ] [ df { set | unset | inherit } ]
 *                  [ mtu MTU ]
 *              (evpn: remote VTEPs, remote MACs and the flood list also come
 *              from BGP EVPN through FRR's zebra (control/evpn.h); IPv4 only,
 *              and never with dstport 47890, the shadow devices')
 *            | port del NAME | port show
 *            | fdb show [ vni VNI ] | fdb flush [ vni VNI ]
 *            | fdb add MAC vni VNI { port NAME | remote IP }
 *            | fdb del MAC vni VNI
 *            | stats [ port NAME ]
 *            | set KNOB VALUE
 *            | show knobs | diagnose [ port NAME ] | version
 *            | capture NAME [ in | out | both ] [ inner | outer ]
 *                  [ -c COUNT ] [ -w FILE ] [ FILTER ... ]
 *            | filter ...   (tc's grammar, ctl_flower.h: the words go to
 *                  ctl_flower_parse() whole, and a refusal is its own)
 *
 * Rules:
 * - Keywords are matched in full (strcmp); no prefix matching.
 * - Optional keys may come in any order after the fixed words, each at most
 *   once (`remote` may repeat, but not with the same address).
 * - A refused command fills struct ctl_err with ONE line naming the word
 *   (1-based position and text) and what was expected, and the struct
 *   ctl_cmd must then be ignored.
 *
 *
 * The vxlan outer-header keys (what each does on the wire: port/vxlan.h):
 * - udpcsum on|off: the outer UDP checksum, computed (default) or zero;
 *   IPv4 and IPv6 (over IPv6, off is the RFC 6935/6936 opt-in of this
 *   end: zero checksums are then sent and accepted on this tunnel).
 * - srcport MIN-MAX: the outer UDP source port, a hash of the inner flow
 *   within the range; at most CTL_SRCPORT_MAX_PORTS ports (one send
 *   socket each), a larger range is refused here.  Without it every
 *   datagram carries the socket's own port (dstport).
 * - df set|unset|inherit: the outer IPv4 DF bit (default set; inherit
 *   copies the inner packet's).  IPv4 only: refused over IPv6, which has
 *   no DF bit (routers never fragment IPv6).
 *
 * Pure functions over argv and buffers: no I/O, no globals. */
#ifndef VX_CTL_CTL_CMD_H
#define VX_CTL_CTL_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "dp/capture_rec.h"
#include "ctl/ctl_types.h"
#include "ctl/ctl_flower.h"


enum ctl_verb {
	CTL_VERB_NONE = 0,
	CTL_PORT_ADD,
	CTL_PORT_DEL,
	CTL_PORT_SHOW,
	CTL_FDB_SHOW,
	CTL_FDB_ADD,
	CTL_FDB_DEL,
	CTL_FDB_FLUSH,
	CTL_STATS,
	CTL_SET,
	CTL_SHOW_KNOBS,
	CTL_DIAGNOSE,
	CTL_VERSION,
	CTL_RELOAD,      /* re-read the config file, apply the difference */
	CTL_SHOW_CONFIG, /* the running state in config-file syntax */
	CTL_SAVE,        /* write it to a file (default: the config file) */
	CTL_CAPTURE,     /* copies of a port's frames, streamed (ctl_capture.h) */
	CTL_FILTER,      /* filter add|del|show: flower rules (ctl_flower.h) */
	CTL_WORKERS,     /* workers N [cpus LIST]: the workers, set at start-up */
	CTL_BATCH,       /* vxctl -batch FILE: filter add|del lines as one change;
	                  * never from ctl_cmd_parse() (ctl_config_parse_batch()) */
	CTL_DATAPATH,    /* datapath kernel|user: a config file's first line only
	                  * (ctl_config.h); vxctl and the daemon refuse it at run
	                  * time, the datapath is chosen at start-up */
};

enum ctl_port_type {
	CTL_PORT_TAP = 1,
	CTL_PORT_VXLAN,
	CTL_PORT_AFPACKET,
	/* A veth pair the switch makes: NAME in its namespace, NAME in
	 * `netns` (the VM's end); kernel datapath only. */
	CTL_PORT_VETH,
};

/* "type tap", "type vxlan", "type afpacket", "type veth": as the grammar spells it. */
const char *ctl_port_type_name(enum ctl_port_type type);

/* Which optional keys `port add` was given (ctl_port_add.given).  The value
 * fields always hold something usable: the given value or the default. */
enum ctl_port_key {
	CTL_PK_VNI = 1 << 0,
	CTL_PK_NETNS = 1 << 1,
	CTL_PK_MTU = 1 << 2,
	CTL_PK_LOCAL = 1 << 3,
	CTL_PK_REMOTE = 1 << 4,
	CTL_PK_DSTPORT = 1 << 5,
	CTL_PK_SRCPORT = 1 << 6,
	CTL_PK_UDPCSUM = 1 << 7,
	CTL_PK_DEV = 1 << 8,       /* afpacket only */
	CTL_PK_MAX_MACS = 1 << 14, /* tap only */
	CTL_PK_TAP_MAC = 1 << 15, /* tap only (high bit: clear of the vxlan keys) */
	/* vxlan outer-header keys from bit 16 on */
	CTL_PK_DF = 1 << 16,
	CTL_PK_EVPN = 1 << 17,     /* vxlan: remotes and MACs from BGP EVPN (zebra) */
};

/* df (ctl_port_add.df); zero is the default. */
enum ctl_df {
	CTL_DF_SET = 0,
	CTL_DF_UNSET,
	CTL_DF_INHERIT,
};

struct ctl_port_add {
	char name[CTL_NAME_SIZE];
	enum ctl_port_type type;
	uint32_t given;         /* CTL_PK_* */
	uint32_t vni;           /* required for both types */
	uint32_t mtu;           /* 0 = not given: the daemon's default */
	/* tap and afpacket */
	char netns[CTL_NETNS_SIZE]; /* "" = the daemon's own namespace */
	char dev[CTL_NAME_SIZE];    /* afpacket only, CTL_PK_DEV (required): the existing link */
	uint8_t mac[6];         /* tap only, CTL_PK_TAP_MAC: the device's MAC */
	uint32_t max_macs;      /* tap only, CTL_PK_MAX_MACS: cap on MACs learned behind it */
	/* vxlan only; local and every remote share one family */
	struct ctl_ip local;
	struct ctl_ip remotes[CTL_MAX_REMOTES];
	unsigned int n_remotes; /* >= 1 for vxlan, unless evpn */
	uint16_t dstport;       /* default CTL_VXLAN_DEFAULT_DSTPORT */
	uint16_t srcport_min;   /* 0-0 = not given: the daemon picks */
	uint16_t srcport_max;   /* min <= max when given */
	bool udpcsum;           /* default true */
	/* vxlan outer headers */
	uint8_t df;             /* enum ctl_df, IPv4 only; default CTL_DF_SET */
};

/* port del NAME, stats [port NAME], diagnose [port NAME] */
struct ctl_port_ref {
	bool has_port;
	char name[CTL_NAME_SIZE];
};

enum ctl_fdb_dst {
	CTL_FDB_DST_NONE = 0,
	CTL_FDB_DST_PORT,   /* a local port */
	CTL_FDB_DST_REMOTE, /* a remote VTEP */
};

/* fdb add/del/show/flush.  add and del always have a MAC and a VNI; show and
 * flush have has_vni set when limited to one VNI. */
struct ctl_fdb {
	uint8_t mac[6];
	bool has_vni;
	uint32_t vni;
	enum ctl_fdb_dst dst;     /* add only */
	char port[CTL_NAME_SIZE]; /* dst == CTL_FDB_DST_PORT */
	struct ctl_ip remote;     /* dst == CTL_FDB_DST_REMOTE */
};

/* Runtime knobs for `set`.  X(ENUM, "name", kind, min, max, "help")
 * Boolean knobs take on|off and hold 0 or 1. */
enum ctl_knob_kind { CTL_KNOB_BOOL, CTL_KNOB_UINT };

#define CTL_KNOBS(X)                                                          \
	X(GRO, "gro", CTL_KNOB_BOOL, 0, 1, "merge inner TCP on receive")      \
	X(GSO, "gso", CTL_KNOB_BOOL, 0, 1, "segment TSO frames in software")  \
	X(TAP_TSO, "tap-tso", CTL_KNOB_BOOL, 0, 1,                            \
	  "ask taps for TSO/CSUM offloads")                                   \
	X(UDP_GRO, "udp-gro", CTL_KNOB_BOOL, 0, 1,                            \
	  "UDP_GRO on underlay sockets")                                      \
	X(UDP_SEGMENT, "udp-segment", CTL_KNOB_BOOL, 0, 1,                    \
	  "UDP_SEGMENT on underlay sockets")                                  \
	X(RX_CSUM, "rx-csum", CTL_KNOB_BOOL, 0, 1,                            \
	  "check inner TCP/UDP checksums, finish unfinished ones (veth peers)") \
	X(GRO_HOLD_US, "gro-hold-us", CTL_KNOB_UINT, 0, 1000000,              \
	  "hold timer from the first held segment, microseconds")             \
	X(GRO_MAX_SIZE, "gro-max-size", CTL_KNOB_UINT, 1500, 65535,           \
	  "largest merged frame, bytes")                                      \
	X(FDB_AGEING, "fdb-ageing", CTL_KNOB_UINT, 0, 1000000,                \
	  "seconds before a learned entry expires, 0 = never")                \
	X(FDB_MAX, "fdb-max", CTL_KNOB_UINT, 1, 16777216,                     \
	  "learned entries per VNI")                                          \
	X(POLL_US, "poll-us", CTL_KNOB_UINT, 0, 1000000,                      \
	  "a worker that handled traffic polls this long before it sleeps, microseconds") \
	X(UPCALL_RATE, "upcall-rate", CTL_KNOB_UINT, 1, 100000,               \
	  "kernel datapath: upcalls (learning, rule misses) a port sends per second") \
	X(UPCALL_BURST, "upcall-burst", CTL_KNOB_UINT, 1, 100000,             \
	  "kernel datapath: upcalls a port may send at once after a quiet spell")

enum ctl_knob {
#define CTL_KNOB_ENUM(e, name, kind, min, max, help) CTL_KNOB_##e,
	CTL_KNOBS(CTL_KNOB_ENUM)
#undef CTL_KNOB_ENUM
	CTL_KNOB_COUNT
};

struct ctl_knob_info {
	const char *name;
	enum ctl_knob_kind kind;
	uint32_t min, max;
	const char *help;
};

/* set KNOB VALUE */
struct ctl_set {
	enum ctl_knob knob;
	uint32_t value; /* within the knob's [min, max]; bool: 0 or 1 */
};

/* save [FILE]: an absolute path of printable characters, or none. */
enum { CTL_PATH_SIZE = 256 };
struct ctl_save {
	bool has_path;
	char path[CTL_PATH_SIZE];
};

/* workers N [ cpus LIST ]: in a config file, how many datapath workers
 * and where (vxswitchd --workers / --cpus say the same and win); at run
 * time a check that they are what runs (they change only at start-up). */
enum { CTL_CPULIST_SIZE = 64, CTL_MAX_WORKERS = 16 };
struct ctl_workers {
	uint32_t n;
	bool has_cpus;
	char cpus[CTL_CPULIST_SIZE]; /* "0-3,6": digits, '-' and ',' only */
};

/* capture NAME [ in | out | both ] [ inner | outer ] [ -c COUNT ] [ -w FILE ]
 * [ FILTER ... ].  The keys come in any order, each once, before FILTER:
 * the first word that is none of them starts FILTER, a tcpdump expression
 * (the rest of the words joined by single spaces; the daemon compiles it
 * with pcap_compile and refuses it with pcap's message).  -w is the
 * client's: the file vxctl writes ("-": stdout); the daemon ignores it. */
enum ctl_capture_dir {
	CTL_CAPTURE_IN = DP_CAPTURE_IN,   /* the record's dir (dp/capture_rec.h) */
	CTL_CAPTURE_OUT = DP_CAPTURE_OUT,
	CTL_CAPTURE_BOTH = CTL_CAPTURE_IN | CTL_CAPTURE_OUT,
};
enum ctl_capture_key {
	CTL_CK_DIR = 1 << 0,
	CTL_CK_LAYER = 1 << 1,
	CTL_CK_COUNT = 1 << 2,
	CTL_CK_FILE = 1 << 3,
};
enum { CTL_CAPTURE_FILTER_SIZE = 1024 };
struct ctl_capture {
	char port[CTL_NAME_SIZE];
	uint32_t given;      /* CTL_CK_* */
	uint8_t dirs;        /* enum ctl_capture_dir; default both */
	bool outer;          /* vxlan port: outer datagrams; default inner */
	uint32_t count;      /* -c: stop after COUNT frames; 0 = until stopped */
	char file[CTL_PATH_SIZE]; /* -w */
	char filter[CTL_CAPTURE_FILTER_SIZE]; /* "" = every frame */
};

struct ctl_cmd;

/* CTL_BATCH: the lines of a -batch file, each a CTL_FILTER add or del
 * (ctl_config_parse_batch() checked), applied all or none.  Points into a
 * struct ctl_config the caller holds. */
struct ctl_batch {
	const char *name;            /* the file, for "FILE:LINE: ..." */
	const struct ctl_cmd *cmds;
	const unsigned int *lines;   /* 1-based line of each command */
	size_t n_cmds;
};

struct ctl_cmd {
	enum ctl_verb verb;
	union {
		struct ctl_port_add port_add; /* CTL_PORT_ADD */
		struct ctl_port_ref port;     /* PORT_DEL, STATS, DIAGNOSE */
		struct ctl_fdb fdb;           /* FDB_* */
		struct ctl_set set;           /* CTL_SET */
		struct ctl_save save;         /* CTL_SAVE */
		struct ctl_capture capture;   /* CTL_CAPTURE */
		struct ctl_flower filter;     /* CTL_FILTER */
		struct ctl_workers workers;   /* CTL_WORKERS */
		struct ctl_batch batch;       /* CTL_BATCH */
		bool datapath_kernel;         /* CTL_DATAPATH: kernel (else user) */
	};
};


/* Parse argv[0..argc-1] (argv[0] is the first word of the command, e.g.
 * "port").  Zeroes *cmd first (so two results compare with memcmp, see
 * ctl_cmd_equal()), then fills it.  Returns 0, or -EINVAL with *err filled
 * (err may be NULL). */
int ctl_cmd_parse(int argc, const char *const *argv, struct ctl_cmd *cmd,
		  struct ctl_err *err);

/* Print cmd back in canonical form (keywords in grammar order, only the
 * keys that were given, addresses as inet_ntop prints them) into buf, with a
 * NUL.  Returns the length written (without the NUL), -ENOSPC if size is too
 * small, -EINVAL if cmd is not something ctl_cmd_parse() can produce.
 * ctl_cmd_parse(split(format(c))) gives back c. */
int ctl_cmd_format(const struct ctl_cmd *cmd, char *buf, size_t size);

/* Whether two commands produced by ctl_cmd_parse() are the same. */
bool ctl_cmd_equal(const struct ctl_cmd *a, const struct ctl_cmd *b);

/* Split line in place at spaces and tabs (a trailing '\n' or '\r' counts as
 * space) into at most max_words words.  No quoting: no word of the language
 * contains a blank.  Returns the number of words, or -E2BIG when there are
 * more than max_words. */
int ctl_split_words(char *line, char **words, int max_words);

/* The grammar above, as vxctl --help prints it (static, ends in '\n'). */
const char *ctl_cmd_grammar(void);

/* The verb's name as typed, e.g. "port add"; "?" for an unknown value. */
const char *ctl_verb_name(enum ctl_verb verb);

/* Knob table; NULL for an out-of-range knob. */
const struct ctl_knob_info *ctl_knob_info(enum ctl_knob knob);

#endif /* VX_CTL_CTL_CMD_H */
