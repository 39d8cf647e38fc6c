/* The worker thread: its loop, its view of the control side, and the
 * request queue the control thread talks to it through (worker.h). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>

#include "dp/user/worker_internal.h"
#include "util/vlog.h"

uint64_t vxd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t vxd_src_data(enum vxd_src_kind kind, unsigned index)
{
	return (uint64_t)kind << 32 | index;
}

int vxd_worker_watch(struct vxd_worker *w, enum vxd_src_kind kind, unsigned index, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = vxd_src_data(kind, index) };
	return epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

void vxd_worker_unwatch(struct vxd_worker *w, int fd)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int64_t vxd_workers_call(struct vxd_worker *const *ws, unsigned n, const struct vxd_req *req, unsigned *failed_at)
{
	int64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		struct vxd_req r = *req;
		int64_t ret = vxd_worker_call(ws[i], &r);
		if (ret < 0) {
			if (failed_at)
				*failed_at = i;
			return ret;
		}
		sum += ret;
	}
	if (failed_at)
		*failed_at = n;
	return sum;
}

int vxd_worker_cpu_now(void)
{
	return sched_getcpu();
}

static void vxd_worker_wake(struct vxd_worker *w)
{
	uint64_t one = 1;
	if (write(w->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the worker will wake. */
	}
}

/* ---- requests ----------------------------------------------------------- */

/* Queues req; false when the thread is not running (then the caller runs
 * it itself). */
static bool vxd_worker_submit(struct vxd_worker *w, struct vxd_req *req)
{
	req->result = 0;
	req->done = false;
	req->next = NULL;
	pthread_mutex_lock(&w->req_lock);
	if (!w->running) {
		pthread_mutex_unlock(&w->req_lock);
		return false;
	}
	*w->req_tail = req;
	w->req_tail = &req->next;
	atomic_store(&w->req_pending, true);
	pthread_mutex_unlock(&w->req_lock);
	vxd_worker_wake(w);
	return true;
}

static int64_t vxd_worker_wait(struct vxd_worker *w, struct vxd_req *req)
{
	pthread_mutex_lock(&w->req_lock);
	while (!req->done)
		pthread_cond_wait(&w->req_cond, &w->req_lock);
	pthread_mutex_unlock(&w->req_lock);
	return req->result;
}

int64_t vxd_worker_call(struct vxd_worker *w, struct vxd_req *req)
{
	if (!vxd_worker_submit(w, req)) {
		vxd_worker_execute(w, req);
		return req->result;
	}
	return vxd_worker_wait(w, req);
}

void vxd_workers_call_each(struct vxd_worker *const *ws, unsigned n, struct vxd_req *reqs)
{
	bool queued[VXD_MAX_WORKERS];
	for (unsigned i = 0; i < n; i++)
		queued[i] = vxd_worker_submit(ws[i], &reqs[i]);
	for (unsigned i = 0; i < n; i++) {
		if (queued[i])
			vxd_worker_wait(ws[i], &reqs[i]);
		else
			vxd_worker_execute(ws[i], &reqs[i]);
	}
}

/* At a batch boundary: run every queued request. */
static void vxd_worker_serve(struct vxd_worker *w)
{
	if (!atomic_load_explicit(&w->req_pending, memory_order_acquire))
		return;
	pthread_mutex_lock(&w->req_lock);
	struct vxd_req *req = w->req_head;
	w->req_head = NULL;
	w->req_tail = &w->req_head;
	atomic_store(&w->req_pending, false);
	pthread_mutex_unlock(&w->req_lock);
	while (req) {
		struct vxd_req *next = req->next;
		vxd_worker_execute(w, req);
		w->requests++;
		pthread_mutex_lock(&w->req_lock);
		req->done = true;
		pthread_cond_broadcast(&w->req_cond);
		pthread_mutex_unlock(&w->req_lock);
		req = next;
	}
}

/* ---- the loop ------------------------------------------------------------ */

/* How long epoll may sleep: until the next held GRO run is due, at most
 * VXD_IDLE_TIMEOUT_MS (FDB ageing runs on that beat). */
static void vxd_worker_timeout(struct vxd_worker *w, struct timespec *ts)
{
	uint64_t sleep_ns = VXD_IDLE_TIMEOUT_MS * 1000000ull;
	uint64_t due = w->gro ? gro_next_expiry_ns(w->gro) : UINT64_MAX;
	if (due != UINT64_MAX) {
		uint64_t now = w->clock();
		uint64_t left = due > now ? due - now : 0;
		if (left < sleep_ns)
			sleep_ns = left;
	}
	ts->tv_sec = (time_t)(sleep_ns / 1000000000ull);
	ts->tv_nsec = (long)(sleep_ns % 1000000000ull);
}

/* Asks epoll for EPOLLOUT on the fd a socket's blocked backlog waits for
 * (its own fd, or a send socket of its srcport range), and stops asking
 * once the backlog has drained. */
static void vxd_worker_out_set(struct vxd_worker *w, unsigned i, int main_fd, int fd, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLOUT : 0, .data.u64 = vxd_src_data(VXD_SRC_SOCK, i) };
	if (fd == main_fd) {
		ev.events |= EPOLLIN;
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, fd, &ev);
	} else if (on) {
		epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
	} else {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
	}
}

static void vxd_worker_track_blocked(struct vxd_worker *w)
{
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
		struct vxlan_sock *sock = w->view->socks[i].sock;
		if (sock)
			sock = vxlan_sock_lane(sock, w->index);
		if (sock != w->out_sock[i]) {
			/* A new socket in the slot: the old one's fds went with it. */
			w->out_sock[i] = sock;
			w->out_fd[i] = -1;
		}
		if (!sock)
			continue;
		int want = vxlan_sock_tx_wait_fd(sock);
		if (want == w->out_fd[i])
			continue;
		int main_fd = vxlan_sock_fd(sock);
		if (w->out_fd[i] >= 0)
			vxd_worker_out_set(w, i, main_fd, w->out_fd[i], false);
		if (want >= 0)
			vxd_worker_out_set(w, i, main_fd, want, true);
		w->out_fd[i] = want;
	}
}

/* True when an event was traffic (not only the wake-up eventfd). */
static bool vxd_worker_events(struct vxd_worker *w, const struct epoll_event *events, int n)
{
	bool traffic = false;
	for (int i = 0; i < n; i++) {
		enum vxd_src_kind kind = (enum vxd_src_kind)(events[i].data.u64 >> 32);
		unsigned index = (unsigned)events[i].data.u64;
		traffic |= kind != VXD_SRC_WAKE;
		if (kind == VXD_SRC_FRAME && index < VXD_MAX_PORTS && w->view->ports[index]) {
			if (events[i].events & (EPOLLERR | EPOLLHUP))
				dp_frame_lost(w, w->view->ports[index]);
			else
				dp_frame_input(w, w->view->ports[index]);
		} else if (kind == VXD_SRC_SOCK && index < VXD_MAX_SOCKS) {
			if (events[i].events & EPOLLOUT)
				dp_sock_writable(w, index);
			if (events[i].events & (EPOLLIN | EPOLLERR))
				dp_sock_input(w, index);
		} else if (kind == VXD_SRC_WAKE) {
			uint64_t v;
			if (read(w->wake_fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: someone else read it. */
			}
		}
	}
	return traffic;
}

/* poll-us: a worker that handled traffic less than poll-us ago polls its
 * sources (epoll with a zero timeout, staying online) instead of sleeping,
 * so that the answer to a request it just forwarded is read without a
 * wake-up; past that it sleeps as usual, so an idle switch costs nothing. */
static bool vxd_worker_should_poll(const struct vxd_worker *w)
{
	return w->poll_ns && w->clock() - w->last_traffic_ns < w->poll_ns;
}

/* The rule counters as large as the view's table needs (flower_table.h):
 * grown here, when a new table shows up, never while counting.  A failed
 * growth is retried next turn; meanwhile the new slots go uncounted. */
static void vxd_worker_fit_counters(struct vxd_worker *w)
{
	uint32_t need = flower_table_n_slots(w->view->flower);
	if (__builtin_expect(need > w->fcounters->n, 0) && flower_counters_reserve(w->fcounters, need) < 0) {
		static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 60);
		VLOG_ERR_RL(&rl, "worker", "rule counters: no memory for %u slots", need);
	}
}

static void vxd_worker_turn(struct vxd_worker *w)
{
	struct epoll_event events[VXD_MAX_EVENTS];
	struct timespec timeout = { 0, 0 };
	bool polling = vxd_worker_should_poll(w);
	if (!polling) {
		vxd_worker_timeout(w, &timeout);
		qsbr_offline(w->reader);
	}
	int n = epoll_pwait2(w->epfd, events, VXD_MAX_EVENTS, &timeout, NULL);
	if (!polling)
		qsbr_online(w->qsbr, w->reader);
	w->view = qsbr_load(w->view_slot);
	w->fwd.vnis = w->view->vnis;
	w->poll_ns = (uint64_t)w->view->knobs.poll_us * 1000;
	vxd_worker_fit_counters(w);
	w->loops++;
	if (n < 0 && errno != EINTR) {
		static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 60);
		VLOG_ERR_RL(&rl, "worker", "epoll_pwait2: %s", strerror(errno));
	}
	bool traffic = n > 0 && vxd_worker_events(w, events, n);
	if (polling) {
		w->polls++;
		w->poll_hits += traffic;
		/* Leave the CPU to whatever else is runnable on it (the VM a
		 * reply is for, on a machine with few cores). */
		if (!traffic)
			sched_yield();
	}
	dp_gro_complete(w, !w->view->knobs.gro);
	vxd_worker_track_blocked(w);
	uint64_t now = w->clock();
	if (traffic)
		w->last_traffic_ns = now;
	/* One worker ages the shared FDB. */
	if (w->index == 0 && now - w->last_age_ns > 1000000000ull) {
		fdb_age(w->fdb, now);
		w->last_age_ns = now;
	}
	vxd_worker_serve(w);
	w->view = NULL;
	qsbr_quiesce(w->qsbr, w->reader);
}

static __thread bool vxd_on_worker;

void vxd_worker_cpu(uint64_t *user_us, uint64_t *sys_us)
{
	struct rusage ru;
	*user_us = *sys_us = 0;
	if (!vxd_on_worker || getrusage(RUSAGE_THREAD, &ru) < 0)
		return;
	*user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
	*sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
}

static void *vxd_worker_main(void *arg)
{
	struct vxd_worker *w = arg;
	vxd_on_worker = true;
	while (!atomic_load(&w->stop))
		vxd_worker_turn(w);
	/* Requests that raced the stop run on the caller's side from now on. */
	pthread_mutex_lock(&w->req_lock);
	w->running = false;
	pthread_mutex_unlock(&w->req_lock);
	w->view = qsbr_load(w->view_slot);
	w->fwd.vnis = w->view ? w->view->vnis : NULL;
	vxd_worker_serve(w);
	w->view = NULL;
	qsbr_offline(w->reader);
	return NULL;
}

/* ---- life cycle ----------------------------------------------------------- */

static int vxd_worker_init(struct vxd_worker *w, const struct vxd_worker_config *cfg)
{
	w->qsbr = cfg->qsbr;
	w->view_slot = cfg->view;
	w->clock = cfg->clock ? cfg->clock : vxd_now_ns;
	w->epfd = w->wake_fd = -1;
	pthread_mutex_init(&w->req_lock, NULL);
	pthread_cond_init(&w->req_cond, NULL);
	w->req_tail = &w->req_head;
	txq_set_init(&w->txqs);
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
		w->out_fd[i] = -1;
	w->pool_size = cfg->pool_size;
	w->index = cfg->index;
	w->cpu_pinned = cfg->cpu;
	w->node = cfg->node;
	int err = pkt_pool_create(cfg->pool_size, &w->pool);
	if (err < 0)
		return err;
	w->fdb = cfg->fdb;
	fwd_init(&w->fwd, w->fdb, NULL);
	err = vxd_worker_gro_rebuild(w, GRO_DEFAULT_MAX_SIZE, 0);
	if (err < 0)
		return err;
	err = flow_cache_create(FLOW_CACHE_DEFAULT_ENTRIES, &w->fcache);
	if (err < 0)
		return err;
	err = flow_cache_create(DP_EGRESS_CACHE_ENTRIES, &w->fcache_egress);
	if (err < 0)
		return err;
	w->fcounters = calloc(1, sizeof(*w->fcounters));
	if (!w->fcounters)
		return -ENOMEM;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->wake_fd < 0)
		return -errno;
	err = vxd_worker_watch(w, VXD_SRC_WAKE, 0, w->wake_fd);
	if (err < 0)
		return err;
	return qsbr_register(w->qsbr, &w->reader);
}

static int vxd_worker_start(struct vxd_worker *w)
{
	/* Signals go to the control thread, whose loop they must wake. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->running = true;
	int err = pthread_create(&w->thread, NULL, vxd_worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		w->running = false;
		return -err;
	}
	char name[16];
	snprintf(name, sizeof(name), "vxd-worker%u", w->index);
	pthread_setname_np(w->thread, name);
	if (w->cpu_pinned >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu_pinned, &set);
		err = pthread_setaffinity_np(w->thread, sizeof(set), &set);
		if (err)
			VLOG_WARN("worker", "worker %u: cannot pin to CPU %d: %s", w->index, w->cpu_pinned, strerror(err));
	}
	return 0;
}

int vxd_worker_create(const struct vxd_worker_config *cfg, struct vxd_worker **out)
{
	struct vxd_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	int err = vxd_worker_init(w, cfg);
	if (err == 0)
		err = vxd_worker_start(w);
	if (err < 0) {
		vxd_worker_destroy(w);
		return err;
	}
	*out = w;
	return 0;
}

void vxd_worker_destroy(struct vxd_worker *w)
{
	if (!w)
		return;
	bool joinable = w->running;
	atomic_store(&w->stop, true);
	if (joinable) {
		vxd_worker_wake(w);
		pthread_join(w->thread, NULL);
	}
	dp_flush_all(w);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		struct vxd_wport *wp = &w->ports[i];
		if (wp->port)
			port_io_fini(wp->port, &wp->io);
		wp->port = NULL;
	}
	if (w->reader)
		qsbr_unregister(w->qsbr, w->reader);
	gro_destroy(w->gro);
	flow_cache_destroy(w->fcache);
	flow_cache_destroy(w->fcache_egress);
	if (w->fcounters)
		flower_counters_fini(w->fcounters);
	free(w->fcounters);
	pkt_pool_destroy(w->pool);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	pthread_mutex_destroy(&w->req_lock);
	pthread_cond_destroy(&w->req_cond);
	free(w);
}
