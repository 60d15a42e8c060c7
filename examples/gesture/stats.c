// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * stats.c - what a run measures: per-frame latency (capture -> events),
 * and, from a sampler thread every 100 ms, the CPU time, threads and
 * memory of every tracked process (this one, the pipes' children,
 * ptaskd) from /proc, and the GPU's utilization and memory from NVML
 * (libnvidia-ml.so.1, loaded at run time; absent: shown as "-").
 * The sampler also prints progress on stderr.
 *
 * CPU time counts only the measured window (from gesture_stats_begin,
 * after set-up: CUDA contexts, graphs, module loads), so one-off costs do
 * not weigh on a short run; GPU memory counts from gesture_stats_open,
 * before set-up, so contexts and buffers made then count.
 *
 * The sampler's own CPU time is not the implementation's: it runs in
 * this process, so it is taken out of this process's (its thread's
 * getrusage).  Reading smaps_rollup of a process with CUDA's mappings
 * is not cheap: profiled on an H200 (2026-11-27), the sampler was 28% of
 * the ptask implementation's client CPU in real time (3.4% of a core:
 * it reads ptaskd's too), more than the other implementations pay.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "run.h"

#define SAMPLE_MS	100
#define PROGRESS_MS	500

/* NVML's types, from its documentation (the ABI is stable). */
struct nvml_util { unsigned int gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };

struct nvml {
	void *lib;
	void *dev;
	int (*init)(void);
	int (*shutdown)(void);
	int (*handle)(unsigned int index, void **dev);
	int (*util)(void *dev, struct nvml_util *u);
	int (*mem)(void *dev, struct nvml_mem *m);
};

struct proc_sample {
	uint64_t utime, stime;	/* clock ticks */
	uint32_t threads;
	uint64_t pss_kb;
	bool ok;
};

struct gesture_stats {
	const struct gesture_cfg *cfg;
	struct gesture_result r;
	size_t frame_bytes;
	pid_t pids[GESTURE_PIDS_MAX];
	unsigned int npids;
	struct proc_sample first[GESTURE_PIDS_MAX], last[GESTURE_PIDS_MAX];
	double *lat_ms;
	uint32_t nlat;
	uint64_t first_capture, last_done;

	struct nvml nvml;
	unsigned long long gpu_mem_base, gpu_mem_max;
	double gpu_util_sum;
	uint32_t gpu_util_n;

	pthread_t sampler;
	bool sampling;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;		/* under @lock */
	uint32_t progress;	/* frames done, under @lock */
	uint32_t max_threads;
	uint64_t max_pss_kb;
	double sampler_user_s, sampler_sys_s;	/* its CPU, once joined */
};

static void nvml_open(struct nvml *n)
{
	memset(n, 0, sizeof(*n));
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib)
		return;
	n->init = (int (*)(void))dlsym(n->lib, "nvmlInit_v2");
	n->shutdown = (int (*)(void))dlsym(n->lib, "nvmlShutdown");
	n->handle = (int (*)(unsigned int, void **))
		dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->util = (int (*)(void *, struct nvml_util *))
		dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	n->mem = (int (*)(void *, struct nvml_mem *))
		dlsym(n->lib, "nvmlDeviceGetMemoryInfo");
	if (!n->init || !n->shutdown || !n->handle || !n->util || !n->mem ||
	    n->init() != 0) {
		dlclose(n->lib);
		n->lib = NULL;
		return;
	}
	if (n->handle(0, &n->dev) != 0) {
		n->shutdown();
		dlclose(n->lib);
		n->lib = NULL;
	}
}

static void nvml_close(struct nvml *n)
{
	if (!n->lib)
		return;
	n->shutdown();
	dlclose(n->lib);
	n->lib = NULL;
}

/* utime, stime, threads from /proc/PID/stat; Pss from smaps_rollup. */
static void proc_read(pid_t pid, struct proc_sample *s)
{
	char path[64], buf[4096], *p;
	unsigned long long ut, st;
	long threads;
	FILE *f;
	size_t n;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld",
			 &ut, &st, &threads) != 3)
		return;
	s->utime = ut;
	s->stime = st;
	s->threads = (uint32_t)threads;
	s->ok = true;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Pss: %llu kB", &ut) == 1) {
			s->pss_kb = ut;
			break;
		}
	fclose(f);
}

static void sample(struct gesture_stats *st, struct proc_sample *into)
{
	uint64_t pss = 0;
	uint32_t threads = 0;
	unsigned int i;

	for (i = 0; i < st->npids; i++) {
		struct proc_sample s;

		proc_read(st->pids[i], &s);
		if (!s.ok)
			continue;	/* exited: its last sample stands */
		if (into)
			into[i] = s;
		threads += s.threads;
		pss += s.pss_kb;
	}
	if (threads > st->max_threads)
		st->max_threads = threads;
	if (pss > st->max_pss_kb)
		st->max_pss_kb = pss;
	if (st->nvml.lib) {
		struct nvml_util u;
		struct nvml_mem m;

		if (st->nvml.util(st->nvml.dev, &u) == 0) {
			st->gpu_util_sum += u.gpu;
			st->gpu_util_n++;
		}
		if (st->nvml.mem(st->nvml.dev, &m) == 0 && m.used > st->gpu_mem_max)
			st->gpu_mem_max = m.used;
	}
}

/* @first: the first capture (0: none yet); @done: frames done. */
static void progress(struct gesture_stats *st, uint64_t first, uint32_t done,
		     bool last)
{
	const double s = (gesture_now_ns() - first) / 1e9;
	const bool tty = isatty(STDERR_FILENO);

	if (!st->cfg->progress || (!tty && !last))
		return;
	fprintf(stderr, "%s  %-8s %-13s %5u/%u frames  %6.1f fps%s",
		tty ? "\r" : "", st->cfg->impl,
		st->cfg->mode == GESTURE_REALTIME ? "realtime" : "unconstrained",
		done, st->cfg->frames, first && s > 0 ? done / s : 0.0,
		last ? "\n" : "");
}

static void *sampler(void *arg)
{
	struct gesture_stats *st = arg;
	uint64_t next_progress = gesture_now_ns();
	struct timespec ts;
	struct rusage ru;

	pthread_mutex_lock(&st->lock);
	while (!st->stop) {
		const uint32_t done = st->progress;
		const uint64_t first = st->first_capture;

		pthread_mutex_unlock(&st->lock);
		sample(st, st->last);
		if (gesture_now_ns() >= next_progress) {
			progress(st, first, done, false);
			next_progress += PROGRESS_MS * 1000000ull;
		}
		pthread_mutex_lock(&st->lock);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += SAMPLE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (!st->stop)
			pthread_cond_timedwait(&st->cond, &st->lock, &ts);
	}
	pthread_mutex_unlock(&st->lock);
	/* read by gesture_stats_end after the join */
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		st->sampler_user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		st->sampler_sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	return NULL;
}

int gesture_stats_open(const struct gesture_cfg *cfg,
		       const struct gesture_rig *rig,
		       struct gesture_stats **out)
{
	struct gesture_stats *st;
	pthread_condattr_t ca;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->lat_ms = calloc(cfg->frames ? cfg->frames : 1, sizeof(double));
	if (!st->lat_ms) {
		free(st);
		return -ENOMEM;
	}
	st->cfg = cfg;
	st->frame_bytes = gesture_rig_frame_pixels(rig) * sizeof(uint16_t);
	pthread_mutex_init(&st->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cond, &ca);
	pthread_condattr_destroy(&ca);
	st->pids[st->npids++] = getpid();
	/*
	 * The GPU's memory before the implementation sets up anything (its
	 * contexts, buffers, ptaskd's views), so gpuMB shows all of it; CPU
	 * time, by contrast, counts from gesture_stats_begin.
	 */
	if (!cfg->cpu)
		nvml_open(&st->nvml);
	if (st->nvml.lib) {
		struct nvml_mem m;

		if (st->nvml.mem(st->nvml.dev, &m) == 0)
			st->gpu_mem_base = st->gpu_mem_max = m.used;
	}
	*out = st;
	return 0;
}

void gesture_stats_track(struct gesture_stats *st, pid_t pid)
{
	if (st->npids < GESTURE_PIDS_MAX)
		st->pids[st->npids++] = pid;
}

int gesture_stats_begin(struct gesture_stats *st)
{
	int err;

	sample(st, st->first);
	memcpy(st->last, st->first, sizeof(st->last));
	err = -pthread_create(&st->sampler, NULL, sampler, st);
	st->sampling = !err;
	return err;
}

void gesture_stats_frame(struct gesture_stats *st, uint32_t frame,
			 uint64_t capture_ns, uint64_t done_ns)
{
	(void)frame;
	pthread_mutex_lock(&st->lock);
	if (!st->first_capture || capture_ns < st->first_capture)
		st->first_capture = capture_ns;
	if (done_ns > st->last_done)
		st->last_done = done_ns;
	if (st->nlat < st->cfg->frames)
		st->lat_ms[st->nlat++] = (done_ns - capture_ns) / 1e6;
	st->progress = st->nlat;
	pthread_mutex_unlock(&st->lock);
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @q quantile of the sorted @v (nearest rank). */
static double quantile(const double *v, uint32_t n, double q)
{
	uint32_t rank;

	if (!n)
		return 0.0;
	rank = (uint32_t)(q * n + 0.999999);
	return v[rank ? rank - 1 : 0];
}

void gesture_stats_end(struct gesture_stats *st, struct gesture_result *r)
{
	const long hz = sysconf(_SC_CLK_TCK);
	uint64_t ut = 0, stime = 0;
	double secs;
	unsigned int i;

	if (st->sampling) {
		pthread_mutex_lock(&st->lock);
		st->stop = true;
		pthread_cond_signal(&st->cond);
		pthread_mutex_unlock(&st->lock);
		pthread_join(st->sampler, NULL);
		st->sampling = false;
	}
	sample(st, st->last);
	progress(st, st->first_capture, st->nlat, true);
	memset(r, 0, sizeof(*r));
	snprintf(r->impl, sizeof(r->impl), "%s", st->cfg->impl);
	snprintf(r->mode, sizeof(r->mode), "%s",
		 st->cfg->mode == GESTURE_REALTIME ? "realtime" : "unconstrained");
	snprintf(r->backend, sizeof(r->backend), "%s", st->cfg->cpu ? "cpu" : "cuda");
	r->frames = st->nlat;
	secs = st->last_done > st->first_capture ?
	       (st->last_done - st->first_capture) / 1e9 : 0.0;
	r->seconds = secs;
	r->fps = secs > 0 ? st->nlat / secs : 0.0;
	r->mb_s = r->fps * st->frame_bytes / 1e6;
	qsort(st->lat_ms, st->nlat, sizeof(double), cmp_double);
	r->lat_med_ms = quantile(st->lat_ms, st->nlat, 0.5);
	r->lat_p99_ms = quantile(st->lat_ms, st->nlat, 0.99);
	for (i = 0; i < st->npids; i++) {
		if (!st->first[i].ok || !st->last[i].ok)
			continue;
		ut += st->last[i].utime - st->first[i].utime;
		stime += st->last[i].stime - st->first[i].stime;
	}
	if (secs > 0 && hz > 0) {
		double user = (double)ut / hz - st->sampler_user_s;
		double sys = (double)stime / hz - st->sampler_sys_s;

		/* ticks are 1/hz s: the difference may dip below 0 */
		r->cpu_user = 100.0 * (user > 0 ? user : 0) / secs;
		r->cpu_sys = 100.0 * (sys > 0 ? sys : 0) / secs;
	}
	r->gpu_util = st->gpu_util_n ? st->gpu_util_sum / st->gpu_util_n : -1.0;
	r->gpu_mem_mb = st->nvml.lib ?
			(st->gpu_mem_max - st->gpu_mem_base) / 1048576.0 : -1.0;
	r->threads = st->max_threads;
	r->rss_mb = st->max_pss_kb / 1024.0;
	nvml_close(&st->nvml);
}

void gesture_stats_close(struct gesture_stats *st)
{
	if (!st)
		return;
	nvml_close(&st->nvml);
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
	free(st->lat_ms);
	free(st);
}

#define CSV_HEADER "impl,mode,backend,frames,events,seconds,fps,mb_s," \
	"lat_med_ms,lat_p99_ms,cpu_user_pct,cpu_sys_pct,gpu_util_pct," \
	"gpu_mem_mb,threads,mem_mb\n"

int gesture_result_append_csv(const char *path, const struct gesture_result *r)
{
	FILE *f = fopen(path, "ae");
	int err = 0;

	if (!f)
		return -errno;
	if (ftell(f) == 0)
		fputs(CSV_HEADER, f);
	fprintf(f, "%s,%s,%s,%u,%u,%.3f,%.2f,%.2f,%.3f,%.3f,%.1f,%.1f,%.1f,%.1f,%u,%.1f\n",
		r->impl, r->mode, r->backend, r->frames, r->events, r->seconds,
		r->fps, r->mb_s, r->lat_med_ms, r->lat_p99_ms, r->cpu_user,
		r->cpu_sys, r->gpu_util, r->gpu_mem_mb, r->threads, r->rss_mb);
	if (fclose(f))
		err = -errno;
	return err;
}
