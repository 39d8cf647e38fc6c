#include "dp/kernel/kdp_diag.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_percpu.h"

/* = kdp.c's: not in Debian 12's uapi headers. */
enum { KDP_DIAG_TCX_INGRESS = 46, KDP_DIAG_TC_HANDLE = 0x7678, KDP_DIAG_TC_PRIO = 1 };

int kdp_vtep_stats_read(struct kdp *k, uint32_t vni, uint32_t flags, const uint8_t *addr,
			struct vxdp_vtep_stats *sum)
{
	int fd = kdp_map_fd(k, "vteps");
	if (fd < 0)
		return fd;
	struct vxdp_vtep_key key;
	memset(&key, 0, sizeof(key));
	key.vni = vni;
	key.flags = flags & VXDP_FDB_V6;
	memcpy(key.addr, addr, (flags & VXDP_FDB_V6) ? 16 : 4);
	struct vxdp_vtep_stats *per;
	int ncpu;
	int err = kdp_percpu_read(fd, &key, sizeof(*per), (void **)&per, &ncpu);
	if (err < 0)
		return err;
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpu; c++) {
		sum->rx_packets += per[c].rx_packets;
		sum->rx_bytes += per[c].rx_bytes;
		sum->tx_packets += per[c].tx_packets;
		sum->tx_bytes += per[c].tx_bytes;
		if (per[c].last_rx_ns > sum->last_rx_ns)
			sum->last_rx_ns = per[c].last_rx_ns;
		if (per[c].last_tx_ns > sum->last_tx_ns)
			sum->last_tx_ns = per[c].last_tx_ns;
	}
	free(per);
	return 0;
}

static int prog_id(int prog_fd, uint32_t *id)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) < 0)
		return -errno;
	*id = info.id;
	return 0;
}

/* The programs on ifindex's tcx ingress (BPF_PROG_QUERY: target_fd is
 * the ifindex for tcx). */
static int tcx_has(uint32_t ifindex, uint32_t id)
{
	uint32_t ids[64];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.query.target_fd = ifindex;
	a.query.attach_type = KDP_DIAG_TCX_INGRESS;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = 64;
	if (syscall(__NR_bpf, BPF_PROG_QUERY, &a, sizeof(a)) < 0)
		return -errno;
	for (uint32_t i = 0; i < a.query.prog_cnt && i < 64; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

static int cls_has(uint32_t ifindex, uint32_t id)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = KDP_DIAG_TC_HANDLE, .priority = KDP_DIAG_TC_PRIO);
	int err = bpf_tc_query(&hook, &o);
	if (err == -ENOENT || err == -EINVAL)
		return 0;
	if (err < 0)
		return err;
	return o.prog_id == id;
}

int kdp_prog_attached(struct kdp *k, uint32_t ifindex, int prog_fd)
{
	char name[IF_NAMESIZE];
	if (!if_indextoname(ifindex, name))
		return -ENODEV;
	uint32_t id = 0;
	int err = prog_id(prog_fd, &id);
	if (err < 0)
		return err;
	return kdp_attach_kind(k) == KDP_ATTACH_CLS_BPF ? cls_has(ifindex, id) : tcx_has(ifindex, id);
}
