/* The zero-checksum counter of udp_zero_csum.h: a six-instruction eBPF
 * socket filter over a mmap()ed one-slot array map, by raw bpf(2) calls
 * (the program is too small to want libbpf). */
#include "port/udp_zero_csum.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

static int udp_zero_csum_prog(int map_fd)
{
	/* r6 = ctx (LD_ABS wants it there); r0 = UDP check (offset 6, always
	 * within the 8-byte header the kernel validated); if zero: r1 =
	 * &map[0] (a direct value pointer), *r1 += 1 atomically.  Return
	 * 0xffffffff: keep the whole datagram. */
	struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, 6),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, 0, map_fd),
		INSN(0, 0, 0, 0, 0), /* second half of the 64-bit load: value offset 0 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_1, BPF_REG_2, 0, BPF_ADD),
		INSN(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, -1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static const char license[] = "GPL";
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uintptr_t)license;
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

int udp_zero_csum_attach(int fd, struct udp_zero_csum *zc)
{
	zc->map_fd = -1;
	zc->count = NULL;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	a.map_flags = BPF_F_MMAPABLE;
	int map_fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	if (map_fd < 0)
		return -errno;
	int err;
	void *mem = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto err_map;
	}
	int prog_fd = udp_zero_csum_prog(map_fd);
	if (prog_fd < 0) {
		err = -errno;
		goto err_unmap;
	}
	/* The socket holds the program (and the program the map) from here. */
	int ret = setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog_fd, sizeof(prog_fd));
	err = -errno;
	close(prog_fd);
	if (ret < 0)
		goto err_unmap;
	zc->map_fd = map_fd;
	zc->count = mem;
	return 0;

err_unmap:
	munmap(mem, (size_t)sysconf(_SC_PAGESIZE));
err_map:
	close(map_fd);
	return err;
}

uint64_t udp_zero_csum_read(const struct udp_zero_csum *zc)
{
	return zc->count ? __atomic_load_n(zc->count, __ATOMIC_RELAXED) : 0;
}

void udp_zero_csum_close(struct udp_zero_csum *zc)
{
	if (zc->count)
		munmap((void *)zc->count, (size_t)sysconf(_SC_PAGESIZE));
	if (zc->map_fd >= 0)
		close(zc->map_fd);
	zc->map_fd = -1;
	zc->count = NULL;
}
