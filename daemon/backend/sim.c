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
 * wall time.  sync reports the modelled, unscaled
 * device time of the launches.
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
 *   name, cores, core_khz, mem_khz, memory, flops_per_cycle,
 *   mem_bus_bytes, peer
 *                    per device: bare, they set every device's default;
 *                    as devN.key (devN.cores=8) only device N's.
 *                    Defaults: simN, 16, 1500000, 2000000, 1Gi, 2, 64.
 *
 * Numbers take a suffix: k M G T (powers of 1000) or Ki Mi Gi Ti
 * (powers of 1024): memory=512Mi, h2d_bandwidth=12G.
 *
 * Locking: sim->lock guards every device's used-memory count (spaces of
 * one device may be used by different threads in principle, and fini may
 * run anywhere).  A space's own fields are its worker's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uapi/ptask.h"
#include "daemon/backend/host.h"

#define SIM_CONFIG_MAX		(64 * 1024)

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
	struct sim_dev_cfg def;
	struct sim_dev_cfg dev[PD_MAX_DEVICES];
	uint32_t dev_set[PD_MAX_DEVICES];
};

/**
 * struct sim_state - a sim backend instance (pd_backend.priv)
 * @lock: guards @used
 * @cfg: the configuration
 * @used: device memory allocated on each device, over all its spaces
 */
struct sim_state {
	pthread_mutex_t lock;
	struct sim_cfg cfg;
	uint64_t used[PD_MAX_DEVICES];
};

/**
 * struct sim_space - one space on a simulated device
 * @mem: its allocations (first: the helpers take a pointer to it)
 * @dev: the device
 * @pending_gpu_ns: modelled time of the launches since the last sync
 * @fence_issued: fences made (placeholder, replaced by branch pipe)
 * @fence_ns: device time not yet taken by a fence poll (placeholder)
 */
struct sim_space {
	struct pd_hostspace mem;
	uint32_t dev;
	uint64_t pending_gpu_ns;
	_Atomic uint64_t fence_issued;
	_Atomic uint64_t fence_ns;
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
		info->lanes = 1;	/* placeholder, replaced by branch pipe */
		info->inplace_max = 0;
		for (j = 0; j < be->ndev; j++)
			info->peer[j] = i != j && sim->cfg.peer && d->peer &&
					sim->cfg.dev[j].peer;
	}
	pd_backend_rank(be);
	be->priv = sim;
	be->wall_per_gpu_ns = sim->cfg.time_scale;
	return 0;

out_free:
	free(sim);
	return err;
}

static void sim_fini(struct pd_backend *be)
{
	struct sim_state *sim = be->priv;

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
	*space = s;
	return 0;
}

static void sim_space_close(struct pd_backend *be, void *space)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t bytes = pd_hostspace_fini(&s->mem);

	pthread_mutex_lock(&sim->lock);
	sim->used[s->dev] -= bytes;
	pthread_mutex_unlock(&sim->lock);
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

/* Sleep out the scaled modelled time of an operation begun at @start. */
static void sim_wait(const struct sim_state *sim, uint64_t start,
		     double model_ns)
{
	double wall = model_ns * sim->cfg.time_scale;

	if (wall >= 1.0)
		pd_sleep_until(start + (uint64_t)wall);
}

static int sim_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t dst, const void *src, size_t bytes)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t start = pd_now_ns();

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
	if (!pd_hostspace_holds(&s->mem, dst, bytes))
		return -EFAULT;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	sim_wait(sim, start, link_ns((double)bytes, sim->cfg.h2d_bandwidth,
				     sim->cfg.h2d_latency_ns));
	return 0;
}

static int sim_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
			void *dst, uint64_t src, size_t bytes)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	uint64_t start = pd_now_ns();

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
	if (!pd_hostspace_holds(&s->mem, src, bytes))
		return -EFAULT;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	sim_wait(sim, start, link_ns((double)bytes, sim->cfg.h2d_bandwidth,
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
	uint64_t start = pd_now_ns();
	double model;

	if (dst_lane != 0 || src_lane != 0)
		return -EINVAL; /* placeholder: one lane */
	if (!pd_hostspace_holds(&ds->mem, dst, bytes) ||
	    !pd_hostspace_holds(&ss->mem, src, bytes))
		return -EFAULT;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
	if (ds->dev == ss->dev)
		model = (double)bytes * 1e9 /
			(dev->mem_khz * 1e3 * dev->mem_bus_bytes);
	else if (be->info[ds->dev].peer[ss->dev])
		model = link_ns((double)bytes, sim->cfg.peer_bandwidth,
				sim->cfg.peer_latency_ns);
	else
		model = 2 * link_ns((double)bytes, sim->cfg.h2d_bandwidth,
				    sim->cfg.h2d_latency_ns);
	sim_wait(sim, start, model);
	return 0;
}

static uint64_t sim_extent(void *ctx, const void *p)
{
	struct sim_space *s = ctx;

	return pd_hostspace_extent(&s->mem, (uint64_t)(uintptr_t)p);
}

static int sim_launch(struct pd_backend *be, void *space, uint32_t lane,
		      void *kernel, const struct pd_launch *launch)
{
	struct sim_state *sim = be->priv;
	struct sim_space *s = space;
	const struct sim_dev_cfg *dev = &sim->cfg.dev[s->dev];
	const struct ptask_twin *k = kernel;
	struct ptask_twin_call call;
	struct ptask_twin_cost cost;
	uint64_t start = pd_now_ns();
	double compute, memory, model;
	int err;

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
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
	model = sim->cfg.launch_ns + (compute > memory ? compute : memory);
	sim_wait(sim, start, model);
	s->pending_gpu_ns += (uint64_t)model;
	return 0;
}

/* Every operation already finished (they run synchronously). */
static int sim_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct sim_space *s = space;

	(void)be;
	if (gpu_ns)
		*gpu_ns = s->pending_gpu_ns;
	s->pending_gpu_ns = 0;
	return 0;
}

/*
 * Placeholder, replaced by branch pipe: one lane, and every operation has
 * finished when it returns, so a fence passes as it is made; its device
 * time is what sync reports then, taken by the first poll that sees it.
 */
static int sim_fence(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t *ticket)
{
	struct sim_space *s = space;
	uint64_t ns = 0;
	int err;

	if (lane != 0)
		return -EINVAL;
	err = sim_sync(be, space, &ns);
	if (err)
		return err;
	atomic_fetch_add(&s->fence_ns, ns);
	*ticket = atomic_fetch_add(&s->fence_issued, 1) + 1;
	return 0;
}

static int sim_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct sim_space *s = space;

	(void)be;
	if (lane != 0 || !ticket || ticket > atomic_load(&s->fence_issued))
		return -EINVAL;
	ticket = atomic_exchange(&s->fence_ns, 0);
	if (gpu_ns)
		*gpu_ns = ticket;
	return 1;
}

static int sim_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
			 uint32_t from, uint64_t ticket)
{
	struct sim_space *s = space;

	(void)be;
	if (lane != 0 || from != 0 || ticket > atomic_load(&s->fence_issued))
		return -EINVAL;
	return 0;
}

static int sim_host_device_ptr(struct pd_backend *be, void *space,
			       void *host, size_t bytes, uint64_t *dptr)
{
	(void)be;
	(void)space;
	(void)bytes;
	*dptr = (uint64_t)(uintptr_t)host;
	return 0;
}

const struct pd_backend_ops pd_backend_sim = {
	.name = "sim",
	.init = sim_init,
	.fini = sim_fini,
	.space_open = sim_space_open,
	.space_close = sim_space_close,
	.mem_alloc = sim_mem_alloc,
	.mem_free = sim_mem_free,
	.copy_h2d = sim_copy_h2d,
	.copy_d2h = sim_copy_d2h,
	.copy_d2d = sim_copy_d2d,
	.kernel_load = pd_twin_kernel_load,
	.kernel_unload = pd_twin_kernel_unload,
	.launch = sim_launch,
	.sync = sim_sync,
	/* placeholders, replaced by branch pipe */
	.fence = sim_fence,
	.fence_poll = sim_fence_poll,
	.fence_wait = sim_fence_poll,
	.lane_wait = sim_lane_wait,
	.host_device_ptr = sim_host_device_ptr,
};
