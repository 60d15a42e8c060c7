// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * main.c - the gesture program: a table of subcommands.
 *
 *   gesture record --out FILE [--frames N] [--cams K] [--seed S]
 *   gesture verify FILE
 *   gesture run --impl host|handcode|pipes|modular|ptask [options]
 *   gesture table CSV
 *   gesture gpucheck [--frames N]
 *
 * See Documentation/gesture.md and `gesture help`.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "main.h"

#define FRAMES_MAX	1000000u

int gesture_parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi,
		      uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "gesture: %s: '%s' is not a number in %u..%u\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || s[0] == '-') {
		fprintf(stderr, "gesture: %s: '%s' is not a number\n", opt, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "frames", required_argument, NULL, 'n' },
		{ "cams", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	uint32_t frames = 300, cams = GESTURE_CAMS_DEFAULT;
	uint64_t seed = 1;
	struct gesture_rig rig;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1 && !err) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': err = gesture_parse_u32("--frames", optarg, 1, FRAMES_MAX, &frames); break;
		case 'c': err = gesture_parse_u32("--cams", optarg, 2, GESTURE_CAMS_MAX, &cams); break;
		case 's': err = parse_u64("--seed", optarg, &seed); break;
		default: return 2;
		}
	}
	if (err)
		return 2;
	if (!out || optind != argc) {
		fprintf(stderr, "gesture record: usage: --out FILE [--frames N] [--cams K] [--seed S]\n");
		return 2;
	}
	gesture_rig_default(&rig, cams);
	return gesture_rec_write(out, &rig, seed, frames) ? 1 : 0;
}

/* Read every frame of a recording: its checksums prove it whole. */
static int cmd_verify(int argc, char **argv)
{
	struct gesture_rec *rec;
	uint16_t *buf, *depth[GESTURE_CAMS_MAX];
	const struct gesture_rig *rig;
	size_t plane;
	uint32_t i, k;
	int err;

	if (argc != 2) {
		fprintf(stderr, "gesture verify: usage: FILE\n");
		return 2;
	}
	err = gesture_rec_open(argv[1], &rec);
	if (err)
		return 1;
	rig = gesture_rec_rig(rec);
	plane = (size_t)rig->width * rig->height;
	buf = malloc(gesture_rig_frame_pixels(rig) * sizeof(*buf));
	if (!buf) {
		gesture_rec_close(rec);
		return 1;
	}
	for (k = 0; k < rig->ncams; k++)
		depth[k] = buf + k * plane;
	for (i = 0; i < gesture_rec_frames(rec) && !err; i++)
		err = gesture_rec_read(rec, i, depth);
	if (!err)
		printf("%s: %u frames, %u cameras of %ux%u at %u fps: ok\n",
		       argv[1], gesture_rec_frames(rec), rig->ncams, rig->width,
		       rig->height, rig->fps);
	free(buf);
	gesture_rec_close(rec);
	return err ? 1 : 0;
}

static const struct {
	const char *name;
	int (*fn)(const struct gesture_cfg *cfg, struct gesture_result *r);
} impls[] = {
	{ "host", gesture_impl_host },
	{ "handcode", gesture_impl_handcode },
	{ "pipes", gesture_impl_pipes },
	{ "modular", gesture_impl_modular },
	{ "ptask", gesture_impl_ptask },
};

static void print_result(const struct gesture_result *r)
{
	printf("%s %s (%s): %u frames in %.2f s: %.1f fps, %.1f MB/s, latency median %.2f ms, p99 %.2f ms, CPU user %.1f%% sys %.1f%%, %u threads, %.1f MB, %u events\n",
	       r->impl, r->mode, r->backend, r->frames, r->seconds, r->fps,
	       r->mb_s, r->lat_med_ms, r->lat_p99_ms, r->cpu_user, r->cpu_sys,
	       r->threads, r->rss_mb, r->events);
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "impl", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "frames", required_argument, NULL, 'n' },
		{ "cams", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "recording", required_argument, NULL, 'r' },
		{ "events", required_argument, NULL, 'e' },
		{ "csv", required_argument, NULL, 'v' },
		{ "hid", required_argument, NULL, 'h' },
		{ "hid-log", required_argument, NULL, 'l' },
		{ "cpu", no_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 'S' },
		{ "daemon-pid", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct gesture_cfg cfg = {
		.mode = GESTURE_UNCONSTRAINED, .frames = 1000,
		.ncams = GESTURE_CAMS_DEFAULT, .seed = 1, .progress = true,
	};
	const char *hid_log = NULL;
	struct gesture_result r;
	uint32_t pid = 0;
	size_t i;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1 && !err) {
		switch (c) {
		case 'i': cfg.impl = optarg; break;
		case 'm':
			if (!strcmp(optarg, "realtime"))
				cfg.mode = GESTURE_REALTIME;
			else if (!strcmp(optarg, "unconstrained"))
				cfg.mode = GESTURE_UNCONSTRAINED;
			else {
				fprintf(stderr, "gesture: --mode: '%s': realtime or unconstrained\n", optarg);
				err = -EINVAL;
			}
			break;
		case 'n': err = gesture_parse_u32("--frames", optarg, 1, FRAMES_MAX, &cfg.frames); break;
		case 'c': err = gesture_parse_u32("--cams", optarg, 2, GESTURE_CAMS_MAX, &cfg.ncams); break;
		case 's': err = parse_u64("--seed", optarg, &cfg.seed); break;
		case 'r': cfg.recording = optarg; break;
		case 'e': cfg.events_path = optarg; break;
		case 'v': cfg.csv_path = optarg; break;
		case 'h':
			err = gesture_hid_mode_parse(optarg, &cfg.hid);
			if (err)
				fprintf(stderr, "gesture: --hid: '%s': auto, uinput, print or none\n", optarg);
			break;
		case 'l': hid_log = optarg; break;
		case 'C': cfg.cpu = true; break;
		case 'S': cfg.socket = optarg; break;
		case 'p': err = gesture_parse_u32("--daemon-pid", optarg, 1, INT_MAX, &pid); break;
		case 'q': cfg.progress = false; break;
		default: return 2;
		}
	}
	if (err)
		return 2;
	if (optind != argc || !cfg.impl) {
		fprintf(stderr, "gesture run: usage: --impl host|handcode|pipes|modular|ptask [options]; see 'gesture help'\n");
		return 2;
	}
	cfg.daemon_pid = (pid_t)pid;
	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
		if (!strcmp(cfg.impl, impls[i].name))
			break;
	if (i == sizeof(impls) / sizeof(impls[0])) {
		fprintf(stderr, "gesture: --impl: '%s': host, handcode, pipes, modular or ptask\n", cfg.impl);
		return 2;
	}
	if (hid_log) {
		cfg.hid_log = fopen(hid_log, "we");
		if (!cfg.hid_log) {
			fprintf(stderr, "gesture: %s: %s\n", hid_log, strerror(errno));
			return 1;
		}
	}
	err = impls[i].fn(&cfg, &r);
	if (cfg.hid_log)
		fclose(cfg.hid_log);
	if (err == -ENODEV) {
		fprintf(stderr, "gesture: %s: cannot run here (no GPU); skipped\n", cfg.impl);
		return 77;
	}
	if (err) {
		fprintf(stderr, "gesture: %s: %s\n", cfg.impl, strerror(-err));
		return 1;
	}
	print_result(&r);
	return 0;
}

static int cmd_help(int argc, char **argv);

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "--out FILE [--frames N] [--cams K] [--seed S]: write a generated recording" },
	{ "verify", cmd_verify, "FILE: check a recording's every frame" },
	{ "run", cmd_run, "--impl host|handcode|pipes|modular|ptask\n"
	  "\t[--mode realtime|unconstrained] [--frames N] [--cams K] [--seed S]\n"
	  "\t[--recording FILE] [--events FILE] [--csv FILE] [--hid auto|uinput|print|none]\n"
	  "\t[--hid-log FILE] [--cpu] [--socket PATH] [--daemon-pid PID] [--quiet]" },
	{ "table", gesture_cmd_table, "CSV: print the results table of a CSV of runs" },
	{ "gpucheck", gesture_cmd_gpucheck, "[--frames N]: GPU stage outputs against the CPU's (77: no GPU)" },
	{ "help", cmd_help, ": this" },
};

static int cmd_help(int argc, char **argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	printf("usage: gesture COMMAND [ARGS]\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %s %s\n", cmds[i].name, cmds[i].help);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		cmd_help(0, NULL);
		return 2;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gesture: unknown command '%s'; try 'gesture help'\n", argv[1]);
	return 2;
}
