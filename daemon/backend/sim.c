// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sim.c - simulated accelerators, so that scheduling policies,
 * multi-GPU placement, transfers and eviction are tested, with real
 * results, on machines without a GPU.
 *
 * A simulated device is a budget of host memory (its "device memory"),
 * a strength (cores x core clock x memory clock) and links: to the host
 * (bandwidth, latency) and to its peers (bandwidth, latency, or none, in
 * which case a device-to-device copy goes through host memory and costs
 * a D2H plus an H2D).  Copies are memcpy; kernels are the host twins
 * (twins.h).  Every operation sleeps until the time it would have taken
 * on the modelled hardware has passed (times time_scale), measured from
 * when it started: so the relative order in which work finishes on
 * several devices is the modelled one, whatever the host's real speed,
 * and a run with time_scale 0.01 keeps that order at a hundredth of the
 * wall time.  The fences report the modelled, unscaled device time of
 * the launches.
 *
 * Lanes (the "lanes" key, default 4): each space has that many modelled
 * queues.  Work runs on the host when it is queued, in queue order (so
 * results are what the order of submission makes them, deterministic
 * whatever the timing); its *modelled* start and end are computed as on
 * a GPU with one copy engine per direction and one compute engine per
 * device: an operation starts when its lane is done with what was
 * queued before it and the engine it needs is free, and takes its
 * modelled time (times time_scale) of wall time from then.  So copies
 * of one lane overlap kernels of another, kernels of one device run one
 * after another, and devices overlap.  A fence passes when the wall
 * clock reaches the end of the work before it on its lane; lane_wait
 * moves a lane's "done" time to the fence's; copy_d2d starts after both
 * lanes are done.  sync and fence_wait sleep until then.  Nothing
 * sleeps on queuing any more: the engine's fences make it wait.
 *
 * In place (host_device_ptr): a registered host range is read at its
 * own address; inplace_max is the size whose transfer time on the host
 * link equals a copy's fixed latency (h2d_latency_ns x h2d_bandwidth),
 * capped at 64 KiB: below it, the copy's latency is what a copy costs.
 *
 * Model:
 *   copy host<->device   h2d_latency_ns + bytes / h2d_bandwidth
 *   copy device<->peer   peer_latency_ns + bytes / peer_bandwidth (when
 *                        both devices have peer=yes), else D2H + H2D
 *   copy in one device   bytes / memory bandwidth (between two spaces)
 *   kernel               launch_ns + max(flops / (cores x core_khz x
 *                        flops_per_cycle), bytes / (mem_khz x
 *                        mem_bus_bytes)), with flops and bytes from the
 *                        host kernel's cost function
 *
 * Configuration (pd_backend_ops.init's string): "" for the default, two
 * equal devices; a string containing '=' is the configuration itself
 * (key=value items separated by newlines, ';' or ','); anything else is
 * the path of a file of key=value lines.  '#' starts a comment.  Keys:
 *
 *   devices          number of devices (1..PD_MAX_DEVICES; default 2)
 *   time_scale       wall time per modelled time (default 1; the
 *                    PTASK_SIM_SCALE environment variable overrides it)
 *   launch_ns        fixed cost of a launch (default 5000)
 *   h2d_bandwidth    bytes/s host<->device (default 12G)
 *   h2d_latency_ns   (default 10000)
 *   peer             yes/no: devices copy to each other directly
 *                    (default no, as PTask's GTX 580s)
 *   peer_bandwidth   bytes/s (default 20G)
 *   peer_latency_ns  (default 5000)
 *   lanes            lanes per space (1..PD_MAX_LANES; default 4)
 *   untimed_extra_ns an untimed launch's fence reports this much more
 *                    than its modelled time, as cuda's estimate counts
 *                    what else the device ran meanwhile; above 0 the
 *                    backend says its untimed times are estimates
 *                    (pd_backend.untimed_estimated).  Default 0.  For
 *                    tests of what the engine charges.
 *   collateral_launch  N: the machine's Nth launch fails as MPS fails a
 *                    client whose server another client's fault reset
 *                    (CUDA_ERROR_MPS_CLIENT_TERMINATED, 810): the job
 *                    fails, and is queued again (0: never, the default)
 *   fault_launch     N: the machine's Nth launch faults, as a CUDA kernel
 *                    that faults: it is accepted, and the first fence
 *                    after it on its lane fails (-EIO); 0: never (the
 *                    default).  For tests of what a fault leaves.
 *   name, cores, core_khz, mem_khz, memory, flops_per_cycle,
 *   mem_bus_bytes, peer
 *                    per device: bare, they set every device's default;
 *                    as devN.key (devN.cores=8) only device N's.
 *                    Defaults: simN, 16, 1500000, 2000000, 1Gi, 2, 64.
 *
 * Numbers take a suffix: k M G T (powers of 1000) or Ki Mi Gi Ti
 * (powers of 1024): memory=512Mi, h2d_bandwidth=12G.
 *
 * Held launches (backend.h): a launch with pd_launch.hold is kept, its
 * parameters copied, and run (the twin, then the model, as any launch)
 * when its lane is flushed; a fence_defer after it passes only then.  A
 * sequence flushed PD_SHAPE_BUILD_AFTER times before is counted as
 * replayed (flush returns 1), as cuda's graph would be; the model is the
 * same either way.  fence_wait on a deferred fence not flushed yet
 * returns -EDEADLK, so an engine that waits for what it never queued
 * fails its test instead of hanging.
 *
 * Locking: sim->lock guards every device's used-memory count and engine
 * times, and every space's lanes' fences (fence_poll comes from any thread, and
 * copy_d2d reads the source space's lane).  A space's allocations have
 * their own lock (host.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uapi/ptask.h"
#include "daemon/backend/held.h"
#include "daemon/backend/host.h"

#define SIM_CONFIG_MAX		(64 * 1024)
#define SIM_DEFAULT_LANES	4
#define SIM_FENCE_RING		1024	/* remembered per lane */
#define SIM_INPLACE_CAP		(64 * 1024)

/**
 * struct sim_dev_cfg - one simulated device
 * @name: its name
 * @cores: simulated multiprocessors
 * @core_khz: core clock
 * @mem_khz: memory clock
 * @memory: device memory bytes (the budget of mem_alloc)
 * @flops_per_cycle: arithmetic per core per clock
 * @mem_bus_bytes: bytes moved per memory clock
 * @peer: takes part in direct peer copies
 */
struct sim_dev_cfg {
	char name[64];
	double cores;
	double core_khz;
	double mem_khz;
	double memory;
	double flops_per_cycle;
	double mem_bus_bytes;
	bool peer;
};

/**
 * struct sim_cfg - the whole simulated machine
 * @ndev: devices
 * @time_scale: wall ns slept per modelled ns
 * @launch_ns: fixed cost of a launch
 * @h2d_bandwidth: bytes/s between host and a device
 * @h2d_latency_ns: fixed cost of a host<->device copy
 * @peer: devices copy to each other directly
 * @peer_bandwidth: bytes/s between two devices
 * @peer_latency_ns: fixed cost of a peer copy
 * @lanes: lanes per space
 * @fault_launch: the launch (counted from 1 over the machine) that
 *	faults; 0: none
 * @collateral_launch: the launch that fails as an MPS reset does; 0: none
 * @untimed_extra_ns: added to an untimed launch's reported time
 * @def: device defaults (bare keys)
 * @dev: each device
 * @dev_set: per device, a bit per field of struct sim_dev_cfg set by a
 *	devN.key line (those win over @def)
 */
struct sim_cfg {
	unsigned int ndev;
	double time_scale;
	double launch_ns;
	double h2d_bandwidth;
	double h2d_latency_ns;
	bool peer;
	double peer_bandwidth;
	double peer_latency_ns;
	unsigned int lanes;
	double fault_launch;
	double collateral_launch;
	double untimed_extra_ns;
	struct sim_dev_cfg def;
	struct sim_dev_cfg dev[PD_MAX_DEVICES];
	uint32_t dev_set[PD_MAX_DEVICES];
};

/* A device's engines, each free from a wall time on. */
enum sim_engine { SE_H2D, SE_D2H, SE_COMPUTE, __SE_MAX };

/**
 * struct sim_state - a sim backend instance (pd_backend.priv)
 * @reg: host_register ranges (first: pd_hostreg_* take be->priv)
 * @lock: guards @used, @free_ns and every space's lanes
 * @cfg: the configuration
 * @used: device memory allocated on each device, over all its spaces
 * @free_ns: when each engine of each device is free (wall ns)
 * @launches: launches run so far (cfg.fault_launch)
 */
struct sim_state {
	struct pd_hostreg reg;
	pthread_mutex_t lock;
	struct sim_cfg cfg;
	uint64_t launches;
	uint64_t used[PD_MAX_DEVICES];
	uint64_t free_ns[PD_MAX_DEVICES][__SE_MAX];
};

/**
 * struct sim_fence - one fence of a lane
 * @ticket: its ticket (0: slot unused)
 * @pass_ns: wall time it passes
 * @gpu_ns: modelled time of the launches it covers
 * @reported: a poll or wait gave @gpu_ns already
 * @deferred: made by fence_defer and its lane not flushed since: it
 *	never passes until then (@pass_ns is UINT64_MAX)
 * @upto: deferred: launches held on its lane when it was made (the
 *	flush gives it their time)
 * @failed: a launch held with it failed at the flush: polls and waits
 *	say -EIO, as cuda's do once a space failed
 */
struct sim_fence {
	uint64_t ticket;
	uint64_t pass_ns;
	uint64_t gpu_ns;
	bool reported;
	bool deferred;
	uint32_t upto;
	bool failed;
};

/**
 * struct sim_lane - one modelled queue of a space
 * @done_ns: wall time when everything queued on it so far is done
 * @pending_gpu_ns: modelled launch time since its last fence
 * @last: the last ticket given
 * @ring: fences by ticket % SIM_FENCE_RING (allocated on first fence)
 * @held: launches held until a flush (the space's queuing thread's)
 * @faulted: a launch since its last fence faulted (cfg.fault_launch)
 */
struct sim_lane {
	uint64_t done_ns;
	uint64_t pending_gpu_ns;
	uint64_t last;
	struct sim_fence *ring;
	struct pd_held_lane held;
	bool faulted;
};

/**
 * struct sim_space - one space on a simulated device
 * @mem: its allocations (first: the helpers take a pointer to it)
 * @sim: the backend
 * @dev: the device
 * @lanes: its lanes (sim->lock, but for their held launches)
 * @shapes: the sequences its lanes flushed (the queuing thread's)
 */
struct sim_space {
	struct pd_hostspace mem;
	struct sim_state *sim;
	uint32_t dev;
	struct sim_lane lanes[PD_MAX_LANES];
	struct pd_shapes shapes;
};

enum sim_field {
	SF_NAME, SF_CORES, SF_CORE_KHZ, SF_MEM_KHZ, SF_MEMORY,
	SF_FLOPS_PER_CYCLE, SF_MEM_BUS_BYTES, SF_PEER, __SF_MAX,
};

static const char *const sim_field_names[__SF_MAX] = {
	[SF_NAME] = "name", [SF_CORES] = "cores",
	[SF_CORE_KHZ] = "core_khz", [SF_MEM_KHZ] = "mem_khz",
	[SF_MEMORY] = "memory", [SF_FLOPS_PER_CYCLE] = "flops_per_cycle",
	[SF_MEM_BUS_BYTES] = "mem_bus_bytes", [SF_PEER] = "peer",
};

static void sim_defaults(struct sim_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->ndev = 2;
	c->time_scale = 1.0;
	c->launch_ns = 5000;
	c->h2d_bandwidth = 12e9;
	c->h2d_latency_ns = 10000;
	c->peer = false;
	c->peer_bandwidth = 20e9;
	c->peer_latency_ns = 5000;
	c->lanes = SIM_DEFAULT_LANES;
	c->def.cores = 16;
	c->def.core_khz = 1500000;
	c->def.mem_khz = 2000000;
	c->def.memory = 1024.0 * 1024 * 1024;
	c->def.flops_per_cycle = 2;
	c->def.mem_bus_bytes = 64;
	c->def.peer = true;
}

/* A number with an optional k/M/G/T or Ki/Mi/Gi/Ti suffix; >= 0. */
static int parse_number(const char *s, double *out)
{
	static const struct { const char *sfx; double mul; } sfx[] = {
		{ "Ki", 1024.0 }, { "Mi", 1048576.0 },
		{ "Gi", 1073741824.0 }, { "Ti", 1099511627776.0 },
		{ "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
		{ "T", 1e12 }, { "", 1.0 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(end, sfx[i].sfx)) {
			*out = v * sfx[i].mul;
			return isfinite(*out) ? 0 : -EINVAL;
		}
	return -EINVAL;
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1"))
		*out = true;
	else if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int set_dev_field(struct sim_dev_cfg *d, enum sim_field f,
			 const char *value)
{
	double *num[__SF_MAX] = {
		[SF_CORES] = &d->cores, [SF_CORE_KHZ] = &d->core_khz,
		[SF_MEM_KHZ] = &d->mem_khz, [SF_MEMORY] = &d->memory,
		[SF_FLOPS_PER_CYCLE] = &d->flops_per_cycle,
		[SF_MEM_BUS_BYTES] = &d->mem_bus_bytes,
	};
	double v;
	int err;

	if (f == SF_NAME) {
		if (!value[0] || strlen(value) >= sizeof(d->name))
			return -EINVAL;
		strcpy(d->name, value);
		return 0;
	}
	if (f == SF_PEER)
		return parse_bool(value, &d->peer);
	err = parse_number(value, &v);
	if (err)
		return err;
	/* Cores and clocks travel as u32 (struct pd_device_info). */
	if (f != SF_MEMORY && (v > UINT32_MAX || v <= 0))
		return -EINVAL;
	*num[f] = v;
	return 0;
}

static int field_of(const char *key)
{
	int f;

	for (f = 0; f < __SF_MAX; f++)
		if (!strcmp(key, sim_field_names[f]))
			return f;
	return -EINVAL;
}

/* One key=value item, both trimmed and non-empty. */
static int sim_set(struct sim_cfg *c, const char *key, const char *value)
{
	struct { const char *key; double *v; } machine[] = {
		{ "time_scale", &c->time_scale },
		{ "launch_ns", &c->launch_ns },
		{ "h2d_bandwidth", &c->h2d_bandwidth },
		{ "h2d_latency_ns", &c->h2d_latency_ns },
		{ "peer_bandwidth", &c->peer_bandwidth },
		{ "peer_latency_ns", &c->peer_latency_ns },
		{ "fault_launch", &c->fault_launch },
		{ "collateral_launch", &c->collateral_launch },
		{ "untimed_extra_ns", &c->untimed_extra_ns },
	};
	unsigned long n;
	char *end;
	size_t i;
	int f;

	if (!strcmp(key, "devices")) {
		errno = 0;
		n = strtoul(value, &end, 10);
		if (errno || *end || n < 1 || n > PD_MAX_DEVICES)
			return -EINVAL;
		c->ndev = (unsigned int)n;
		return 0;
	}
	if (!strcmp(key, "lanes")) {
		errno = 0;
		n = strtoul(value, &end, 10);
		if (errno || *end || n < 1 || n > PD_MAX_LANES)
			return -EINVAL;
		c->lanes = (unsigned int)n;
		return 0;
	}
	if (!strcmp(key, "peer"))
		return parse_bool(value, &c->peer);
	for (i = 0; i < sizeof(machine) / sizeof(machine[0]); i++) {
		if (strcmp(key, machine[i].key))
			continue;
		if (parse_number(value, machine[i].v))
			return -EINVAL;
		/* A zero bandwidth would divide by zero. */
		if (strstr(key, "bandwidth") && *machine[i].v <= 0)
			return -EINVAL;
		return 0;
	}
	if (!strncmp(key, "dev", 3) && isdigit((unsigned char)key[3])) {
		errno = 0;
		n = strtoul(key + 3, &end, 10);
		if (errno || *end != '.' || n >= PD_MAX_DEVICES)
			return -EINVAL;
		f = field_of(end + 1);
		if (f < 0 || set_dev_field(&c->dev[n], f, value))
			return -EINVAL;
		c->dev_set[n] |= 1U << f;
		return 0;
	}
	f = field_of(key);
	if (f < 0 || f == SF_PEER || f == SF_NAME)
		return -EINVAL;
	return set_dev_field(&c->def, f, value);
}

static void copy_field(struct sim_dev_cfg *to, const struct sim_dev_cfg *from,
		       enum sim_field f)
{
	switch (f) {
	case SF_NAME:
		memcpy(to->name, from->name, sizeof(to->name));
		break;
	case SF_CORES:
		to->cores = from->cores;
		break;
	case SF_CORE_KHZ:
		to->core_khz = from->core_khz;
		break;
	case SF_MEM_KHZ:
		to->mem_khz = from->mem_khz;
		break;
	case SF_MEMORY:
		to->memory = from->memory;
		break;
	case SF_FLOPS_PER_CYCLE:
		to->flops_per_cycle = from->flops_per_cycle;
		break;
	case SF_MEM_BUS_BYTES:
		to->mem_bus_bytes = from->mem_bus_bytes;
		break;
	case SF_PEER:
		to->peer = from->peer;
		break;
	case __SF_MAX:
		break;
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Parse @text (modified in place) into @c, which holds the defaults. */
static int sim_parse(struct sim_cfg *c, char *text)
{
	char *save = NULL, *item;
	unsigned int i;
	int f;

	for (item = strtok_r(text, "\n;,", &save); item;
	     item = strtok_r(NULL, "\n;,", &save)) {
		char *hash = strchr(item, '#'), *eq, *key, *value;

		if (hash)
			*hash = '\0';
		item = trim(item);
		if (!*item)
			continue;
		eq = strchr(item, '=');
		if (!eq) {
			fprintf(stderr, "ptaskd: sim: '%s' is not key=value\n",
				item);
			return -EINVAL;
		}
		*eq = '\0';
		key = trim(item);
		value = trim(eq + 1);
		if (!*key || !*value || sim_set(c, key, value)) {
			fprintf(stderr, "ptaskd: sim: bad setting %s=%s\n",
				key, value);
			return -EINVAL;
		}
	}
	for (i = 0; i < c->ndev; i++) {
		struct sim_dev_cfg d = c->def;

		snprintf(d.name, sizeof(d.name), "sim%u", i);
		for (f = 0; f < __SF_MAX; f++)
			if (c->dev_set[i] & (1U << f))
				copy_field(&d, &c->dev[i], f);
		c->dev[i] = d;
	}
	return 0;
}

/* The configuration text @config names: itself, a file, or nothing. */
static int sim_load(struct sim_cfg *c, const char *config)
{
	char *text;
	size_t len = 0;
	FILE *f;
	int err;

	sim_defaults(c);
	if (!config || !config[0])
		return sim_parse(c, (char[]){ "" });
	if (strchr(config, '=')) {
		text = strdup(config);
		if (!text)
			return -ENOMEM;
	} else {
		f = fopen(config, "re");
		if (!f) {
			err = -errno;
			fprintf(stderr, "ptaskd: sim: %s: %s\n", config,
				strerror(errno));
			return err;
		}
		text = malloc(SIM_CONFIG_MAX + 1);
		if (!text) {
			fclose(f);
			return -ENOMEM;
		}
		len = fread(text, 1, SIM_CONFIG_MAX + 1, f);
		err = ferror(f) ? -EIO : 0;
		fclose(f);
		if (!err && len > SIM_CONFIG_MAX)
			err = -EFBIG;
		if (err) {
			fprintf(stderr, "ptaskd: sim: %s: %s\n", config,
				strerror(-err));
			free(text);
			return err;
		}
		text[len] = '\0';
	}
	err = sim_parse(c, text);
	free(text);
	return err;
}

static int sim_init(struct pd_backend *be, const char *config)
{
	struct sim_state *sim = calloc(1, sizeof(*sim));
	const char *scale = getenv("PTASK_SIM_SCALE");
	unsigned int i, j;
	int err;

	if (!sim)
		return -ENOMEM;
	err = sim_load(&sim->cfg, config);
	if (err)
		goto out_free;
	if (scale && *scale) {
		err = parse_number(scale, &sim->cfg.time_scale);
		if (err) {
			fprintf(stderr, "ptaskd: sim: bad PTASK_SIM_SCALE %s\n",
				scale);
			goto out_free;
		}
	}
	err = -pthread_mutex_init(&sim->lock, NULL);
	if (err)
		goto out_free;
	err = pd_hostspace_init(&sim->reg.ranges);
	if (err) {
		pthread_mutex_destroy(&sim->lock);
		goto out_free;
	}
	sim->reg.ranges.borrowed = true;
	be->ndev = sim->cfg.ndev;
	for (i = 0; i < be->ndev; i++) {
		const struct sim_dev_cfg *d = &sim->cfg.dev[i];
		struct pd_device_info *info = &be->info[i];

		memset(info, 0, sizeof(*info));
		snprintf(info->name, sizeof(info->name), "%s", d->name);
		info->kind = PTASK_ACCEL_SIM;
		info->memory = (uint64_t)d->memory;
		info->cores = (uint32_t)d->cores;
		info->core_khz = (uint32_t)d->core_khz;
		info->mem_khz = (uint32_t)d->mem_khz;
		for (j = 0; j < be->ndev; j++)
			info->peer[j] = i != j && sim->cfg.peer && d->peer &&
					sim->cfg.dev[j].peer;
		info->lanes = sim->cfg.lanes;
		info->inplace_max = (uint64_t)(sim->cfg.h2d_latency_ns *
					       sim->cfg.h2d_bandwidth / 1e9);
		if (info->inplace_max > SIM_INPLACE_CAP)
			info->inplace_max = SIM_INPLACE_CAP;
	}
	pd_backend_rank(be);
	be->priv = sim;
	be->wall_per_gpu_ns = sim->cfg.time_scale;
	be->untimed_estimated = sim->cfg.untimed_extra_ns > 0;
	return 0;

out_free:
	free(sim);
	return err;
}

static void sim_fini(struct pd_backend *be)
{
	struct sim_state *sim = be->priv;

	pd_hostspace_fini(&sim->reg.ranges);
	pthread_mutex_destroy(&sim->lock);
	free(sim);
	be->priv = NULL;
}

static int sim_space_open(struct pd_backend *be, uint32_t dev,
			  uint64_t owner, void **space)
{
	struct sim_space *s;
	int err;

	(void)owner;
	if (dev >= be->ndev)
		return -ENODEV;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = pd_hostspace_init(&s->mem);
	if (err) {
		free(s);
		return err;
	}
	s->dev = dev;
	s->sim = be->priv;
	*space = s;
	return 0;
}

static int flush_all(struct pd_backend *be, struct sim_space *s);

static void sim_space_close(struct pd_backend *be, void *space)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t bytes;
	uint32_t l;

	flush_all(be, s);
	bytes = pd_hostspace_fini(&s->mem);
	pd_shapes_free(&s->shapes);
	for (l = 0; l < PD_MAX_LANES; l++)
		pd_held_free(&s->lanes[l].held);

	pthread_mutex_lock(&sim->lock);
	sim->used[s->dev] -= bytes;
	pthread_mutex_unlock(&sim->lock);
	for (l = 0; l < PD_MAX_LANES; l++)
		free(s->lanes[l].ring);
	free(s);
}

static int sim_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
			 uint64_t *dptr)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t limit = be->info[s->dev].memory;
	int err = 0;

	pthread_mutex_lock(&sim->lock);
	if (bytes > limit || sim->used[s->dev] > limit - bytes)
		err = -ENOMEM;
	else
		sim->used[s->dev] += bytes;
	pthread_mutex_unlock(&sim->lock);
	if (err)
		return err;
	err = pd_hostspace_alloc(&s->mem, bytes, dptr);
	if (err) {
		pthread_mutex_lock(&sim->lock);
		sim->used[s->dev] -= bytes;
		pthread_mutex_unlock(&sim->lock);
	}
	return err;
}

static void sim_mem_free(struct pd_backend *be, void *space, uint64_t dptr)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t bytes = pd_hostspace_free(&s->mem, dptr);

	pthread_mutex_lock(&sim->lock);
	sim->used[s->dev] -= bytes;
	pthread_mutex_unlock(&sim->lock);
}

/* Modelled ns of moving @bytes over a link. */
static double link_ns(double bytes, double bandwidth, double latency_ns)
{
	return latency_ns + bytes * 1e9 / bandwidth;
}

/*
 * Model an operation of @model_ns on @lane of @s using engine @eng of
 * its device (and, for a copy between spaces, ordered after lane
 * @other_lane of @other too): its wall end is when the lane and the
 * engine are both free, plus the scaled time.  Locked (sim->lock).
 */
static void model_locked(struct sim_state *sim, struct sim_space *s,
			 uint32_t lane, enum sim_engine eng, double model_ns,
			 const struct sim_space *other, uint32_t other_lane)
{
	struct sim_lane *ln = &s->lanes[lane];
	uint64_t start = pd_now_ns(), *free_ns = &sim->free_ns[s->dev][eng];
	double wall = model_ns * sim->cfg.time_scale;

	if (ln->done_ns > start)
		start = ln->done_ns;
	if (*free_ns > start)
		start = *free_ns;
	if (other && other->lanes[other_lane].done_ns > start)
		start = other->lanes[other_lane].done_ns;
	ln->done_ns = start + (wall >= 1.0 ? (uint64_t)wall : 0);
	*free_ns = ln->done_ns;
}

static void model(struct sim_state *sim, struct sim_space *s, uint32_t lane,
		  enum sim_engine eng, double model_ns)
{
	pthread_mutex_lock(&sim->lock);
	model_locked(sim, s, lane, eng, model_ns, NULL, 0);
	pthread_mutex_unlock(&sim->lock);
}

static bool bad_lane(const struct pd_backend *be, const struct sim_space *s,
		     uint32_t lane)
{
	return lane >= be->info[s->dev].lanes;
}

static int flush_lane(struct pd_backend *be, struct sim_space *s,
		      uint32_t lane);

static int sim_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t dst, const void *src, size_t bytes)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	if (flush_lane(be, s, lane) < 0)
		return -EIO;
	if (!pd_hostspace_holds(&s->mem, dst, bytes))
		return -EFAULT;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	model(sim, s, lane, SE_H2D, link_ns((double)bytes,
					    sim->cfg.h2d_bandwidth,
					    sim->cfg.h2d_latency_ns));
	return 0;
}

static int sim_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
			void *dst, uint64_t src, size_t bytes)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	if (flush_lane(be, s, lane) < 0)
		return -EIO;
	if (!pd_hostspace_holds(&s->mem, src, bytes))
		return -EFAULT;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	model(sim, s, lane, SE_D2H, link_ns((double)bytes,
					    sim->cfg.h2d_bandwidth,
					    sim->cfg.h2d_latency_ns));
	return 0;
}

static int sim_copy_d2d(struct pd_backend *be, void *dst_space,
			uint32_t dst_lane, uint64_t dst, void *src_space,
			uint32_t src_lane, uint64_t src, size_t bytes)
{
	struct sim_state *sim = be->priv;
	struct sim_space *ds = dst_space, *ss = src_space;
	const struct sim_dev_cfg *dev = &sim->cfg.dev[ds->dev];
	double model_ns;

	if (bad_lane(be, ds, dst_lane) || bad_lane(be, ss, src_lane))
		return -EINVAL;
	if (flush_lane(be, ds, dst_lane) < 0 || flush_lane(be, ss, src_lane) < 0)
		return -EIO;
	if (!pd_hostspace_holds(&ds->mem, dst, bytes) ||
	    !pd_hostspace_holds(&ss->mem, src, bytes))
		return -EFAULT;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
	if (ds->dev == ss->dev)
		model_ns = (double)bytes * 1e9 /
			   (dev->mem_khz * 1e3 * dev->mem_bus_bytes);
	else if (be->info[ds->dev].peer[ss->dev])
		model_ns = link_ns((double)bytes, sim->cfg.peer_bandwidth,
				   sim->cfg.peer_latency_ns);
	else
		model_ns = 2 * link_ns((double)bytes, sim->cfg.h2d_bandwidth,
				       sim->cfg.h2d_latency_ns);
	pthread_mutex_lock(&sim->lock);
	model_locked(sim, ds, dst_lane, SE_H2D, model_ns, ss, src_lane);
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

/* A kernel's buffers: its space's, or registered host memory in place. */
static uint64_t sim_extent(void *ctx, const void *p)
{
	struct sim_space *s = ctx;
	uint64_t n = pd_hostspace_extent(&s->mem, (uint64_t)(uintptr_t)p);

	return n ? n : pd_hostspace_extent(&s->sim->reg.ranges,
					   (uint64_t)(uintptr_t)p);
}

/* Run a launch now: its twin, then the model of its time. */
static int launch_now(struct pd_backend *be, struct sim_space *s,
		      uint32_t lane, void *kernel,
		      const struct pd_launch *launch)
{
	struct sim_state *sim = be->priv;
	const struct sim_dev_cfg *dev = &sim->cfg.dev[s->dev];
	const struct ptask_twin *k = kernel;
	struct ptask_twin_call call;
	struct ptask_twin_cost cost;
	double compute, memory, model_ns;
	int err;

	pd_twin_call_init(&call, launch, sim_extent, s);
	err = k->cost(&call, &cost);
	if (err)
		return err;
	err = k->run(&call);
	if (err)
		return err;
	compute = (double)cost.flops * 1e9 /
		  (dev->cores * dev->core_khz * 1e3 * dev->flops_per_cycle);
	memory = (double)cost.bytes * 1e9 /
		 (dev->mem_khz * 1e3 * dev->mem_bus_bytes);
	model_ns = sim->cfg.launch_ns + (compute > memory ? compute : memory);
	pthread_mutex_lock(&sim->lock);
	model_locked(sim, s, lane, SE_COMPUTE, model_ns, NULL, 0);
	s->lanes[lane].pending_gpu_ns += (uint64_t)model_ns +
		(launch->untimed ? (uint64_t)sim->cfg.untimed_extra_ns : 0);
	++sim->launches;
	if (sim->launches == (uint64_t)sim->cfg.fault_launch) {
		s->lanes[lane].faulted = true;
		/* as CUDA_ERROR_ILLEGAL_ADDRESS, whose fault it models */
		pd_backend_note_error(700);
	}
	if (sim->launches == (uint64_t)sim->cfg.collateral_launch) {
		s->lanes[lane].faulted = true;
		pd_backend_note_error(810);	/* _MPS_CLIENT_TERMINATED */
	}
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

static int sim_launch(struct pd_backend *be, void *space, uint32_t lane,
		      void *kernel, const struct pd_launch *launch)
{
	struct sim_space *s = space;
	struct pd_held_lane *h;
	int err;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	h = &s->lanes[lane].held;
	if (!launch->hold || !launch->untimed) {
		if (flush_lane(be, s, lane) < 0)
			return -EIO;
		return launch_now(be, s, lane, kernel, launch);
	}
	err = pd_held_add(h, kernel, launch);
	if (err == -ENOSPC) {
		if (flush_lane(be, s, lane) < 0)
			return -EIO;
		err = pd_held_add(h, kernel, launch);
	}
	return err;
}

/*
 * The deferred fences of @ln whose launches ran (upto == @done): they
 * pass when those are done, with their time; @failed once a launch of
 * the flush failed (the whole space would have, on cuda).  Locked.
 */
static void deferred_pass_locked(struct sim_lane *ln, uint32_t done,
				 bool failed)
{
	const struct pd_held_lane *h = &ln->held;
	uint64_t t;

	for (t = h->first_deferred; t && t <= h->last_deferred; t++) {
		struct sim_fence *f = &ln->ring[t % SIM_FENCE_RING];

		if (f->ticket != t || !f->deferred || f->upto != done)
			continue;
		f->deferred = false;
		f->failed = failed || ln->faulted;
		ln->faulted = false;
		f->pass_ns = ln->done_ns;
		f->gpu_ns = ln->pending_gpu_ns;
		ln->pending_gpu_ns = 0;
	}
}

/*
 * Flush @lane of @s: run what it holds in order, each deferred fence
 * passing after the launches before it.  1 when the sequence was one
 * seen PD_SHAPE_BUILD_AFTER times before (a replay), 0, or -errno: a
 * held launch failed (its twin refused it); its deferred fences pass
 * all the same, and the lane's later fences too, but the jobs whose
 * launches failed must not be trusted, so the whole space is as good
 * as faulted: the caller fails the job it is queuing.
 */
static int flush_lane(struct pd_backend *be, struct sim_space *s,
		      uint32_t lane)
{
	struct sim_state *sim = be->priv;
	struct sim_lane *ln = &s->lanes[lane];
	struct pd_held_lane *h = &ln->held;
	struct pd_shape *shape = NULL;
	int replayed = 0, err = 0, e;
	uint32_t i;

	if (!h->n && !h->first_deferred)
		return 0;
	if (h->n >= 2) {
		shape = pd_shapes_see(&s->shapes, h);
		if (shape && shape->seen > PD_SHAPE_BUILD_AFTER)
			replayed = 1;
	}
	pthread_mutex_lock(&sim->lock);
	deferred_pass_locked(ln, 0, false);
	pthread_mutex_unlock(&sim->lock);
	for (i = 0; i < h->n; i++) {
		e = launch_now(be, s, lane, h->v[i].kernel, &h->v[i].l);
		if (e && !err)
			err = e;
		pthread_mutex_lock(&sim->lock);
		deferred_pass_locked(ln, i + 1, err != 0);
		pthread_mutex_unlock(&sim->lock);
	}
	pd_held_clear(h);
	return err ? err : replayed;
}

static int flush_all(struct pd_backend *be, struct sim_space *s)
{
	uint32_t l;
	int err = 0, e;

	for (l = 0; l < be->info[s->dev].lanes; l++) {
		e = flush_lane(be, s, l);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

static int sim_flush(struct pd_backend *be, void *space, uint32_t lane)
{
	struct sim_space *s = space;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	return flush_lane(be, s, lane);
}

static void sim_kernel_unload(struct pd_backend *be, void *space,
			      void *kernel)
{
	struct sim_space *s = space;

	flush_all(be, s);
	pd_shapes_drop_kernel(&s->shapes, kernel);
	pd_twin_kernel_unload(be, space, kernel);
}

/* Sleep until every lane of @s is done; the launch time no fence took. */
static int sim_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t until = 0, ns = 0;
	uint32_t l;
	int err = flush_all(be, s);

	pthread_mutex_lock(&sim->lock);
	for (l = 0; l < be->info[s->dev].lanes; l++) {
		if (s->lanes[l].done_ns > until)
			until = s->lanes[l].done_ns;
		ns += s->lanes[l].pending_gpu_ns;
		s->lanes[l].pending_gpu_ns = 0;
	}
	pthread_mutex_unlock(&sim->lock);
	pd_sleep_until(until);
	if (gpu_ns)
		*gpu_ns = ns;
	return err < 0 ? -EIO : 0;
}

/* A fence on @lane of @s: now, or @deferred until the lane's flush. */
static int fence_make(struct pd_backend *be, struct sim_space *s,
		      uint32_t lane, bool deferred, uint64_t *ticket)
{
	struct sim_state *sim = be->priv;
	struct sim_lane *ln;
	struct sim_fence *f;
	int err = 0;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	ln = &s->lanes[lane];
	if (!deferred && flush_lane(be, s, lane) < 0)
		return -EIO;
	pthread_mutex_lock(&sim->lock);
	if (!ln->ring) {
		ln->ring = calloc(SIM_FENCE_RING, sizeof(*ln->ring));
		if (!ln->ring)
			err = -ENOMEM;
	}
	if (!err) {
		*ticket = ++ln->last;
		f = &ln->ring[*ticket % SIM_FENCE_RING];
		f->ticket = *ticket;
		f->reported = false;
		f->deferred = deferred;
		f->failed = false;
		if (!deferred) {
			f->failed = ln->faulted;
			ln->faulted = false;
		}
		if (deferred) {
			f->pass_ns = UINT64_MAX;
			f->gpu_ns = 0;
			f->upto = ln->held.n;
			if (!ln->held.first_deferred)
				ln->held.first_deferred = *ticket;
			ln->held.last_deferred = *ticket;
		} else {
			f->pass_ns = ln->done_ns;
			f->gpu_ns = ln->pending_gpu_ns;
			ln->pending_gpu_ns = 0;
		}
	}
	pthread_mutex_unlock(&sim->lock);
	return err;
}

static int sim_fence(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t *ticket)
{
	return fence_make(be, space, lane, false, ticket);
}

static int sim_fence_defer(struct pd_backend *be, void *space, uint32_t lane,
			   uint64_t *ticket)
{
	return fence_make(be, space, lane, true, ticket);
}

/*
 * When fence @ticket of @ln passes (*@pass_ns), and its slot (NULL when
 * the ring forgot it: an older fence passed no later than the oldest
 * one remembered).  Locked.  -EINVAL for a ticket never given.
 */
static int fence_find_locked(struct sim_lane *ln, uint64_t ticket,
			     uint64_t *pass_ns, struct sim_fence **slot)
{
	struct sim_fence *f;

	if (!ticket || ticket > ln->last || !ln->ring)
		return -EINVAL;
	f = &ln->ring[ticket % SIM_FENCE_RING];
	if (f->ticket == ticket) {
		*pass_ns = f->pass_ns;
		*slot = f;
		return 0;
	}
	/* The oldest remembered one: the ticket after the ring's span. */
	f = &ln->ring[(ln->last + 1) % SIM_FENCE_RING];
	*pass_ns = f->ticket ? f->pass_ns : 0;
	*slot = NULL;
	return 0;
}

static int sim_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	struct sim_fence *f;
	uint64_t pass, ns = 0;
	int ret;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	ret = fence_find_locked(&s->lanes[lane], ticket, &pass, &f);
	if (!ret && f && f->failed)
		ret = -EIO;
	else if (!ret && pd_now_ns() >= pass) {
		ret = 1;
		if (f && !f->reported) {
			ns = f->gpu_ns;
			f->reported = true;
		}
	}
	pthread_mutex_unlock(&sim->lock);
	if (ret == 1 && gpu_ns)
		*gpu_ns = ns;
	return ret;
}

static int sim_fence_wait(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	struct sim_fence *f;
	uint64_t pass;
	int err;

	if (bad_lane(be, s, lane))
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	err = fence_find_locked(&s->lanes[lane], ticket, &pass, &f);
	if (!err && f && f->deferred)
		err = -EDEADLK;
	pthread_mutex_unlock(&sim->lock);
	if (err)
		return err;
	pd_sleep_until(pass);
	return sim_fence_poll(be, space, lane, ticket, gpu_ns);
}

static int sim_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
			 uint32_t from, uint64_t ticket)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	struct sim_fence *f;
	uint64_t pass;
	int err;

	if (bad_lane(be, s, lane) || bad_lane(be, s, from))
		return -EINVAL;
	/* same lane: in order already; else held work is queued first */
	if (from != lane &&
	    (flush_lane(be, s, from) < 0 || flush_lane(be, s, lane) < 0))
		return -EIO;
	pthread_mutex_lock(&sim->lock);
	err = fence_find_locked(&s->lanes[from], ticket, &pass, &f);
	if (!err && from != lane && pass > s->lanes[lane].done_ns)
		s->lanes[lane].done_ns = pass;
	pthread_mutex_unlock(&sim->lock);
	return err;
}

const struct pd_backend_ops pd_backend_sim = {
	.name = "sim",
	.init = sim_init,
	.fini = sim_fini,
	.space_open = sim_space_open,
	.space_close = sim_space_close,
	.host_register = pd_hostreg_register,
	.host_unregister = pd_hostreg_unregister,
	.mem_alloc = sim_mem_alloc,
	.mem_free = sim_mem_free,
	.copy_h2d = sim_copy_h2d,
	.copy_d2h = sim_copy_d2h,
	.copy_d2d = sim_copy_d2d,
	.kernel_load = pd_twin_kernel_load,
	.kernel_unload = sim_kernel_unload,
	.launch = sim_launch,
	.sync = sim_sync,
	.fence = sim_fence,
	.fence_poll = sim_fence_poll,
	.fence_wait = sim_fence_wait,
	.lane_wait = sim_lane_wait,
	.host_device_ptr = pd_hostreg_device_ptr,
	.fence_defer = sim_fence_defer,
	.flush = sim_flush,
};
