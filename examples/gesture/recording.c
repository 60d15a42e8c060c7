// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * recording.c - catusb's recording files.
 *
 * Layout (little-endian; every frame the same size, so frame i is at a
 * known offset and a reader can seek):
 *
 *   header (64 bytes)
 *     0  magic "PTGREC01"         32  nframes (>= 1)
 *     8  version (1)              36  frame_bytes = ncams * w * h * 2
 *    12  header_bytes             40  seed (u64; informative)
 *    16  ncams (1..4)             48  crc32 of the header (this field as
 *    20  width, 24 height             0) and the camera table
 *    28  fps                      52  reserved (12 bytes, zero)
 *   camera table: ncams x struct gesture_cam (80 bytes each)
 *   frame record, nframes times:
 *     magic 'GFRM' (u32), index (u32), payload bytes (u32), crc32 of
 *     the payload (u32); payload: camera 0's w x h u16 depths (mm, 0 =
 *     no reading), then camera 1's, ...
 *
 * Every check has its own message: a person handed a broken file learns
 * what is wrong and where (tests/gesture/run.sh feeds each case).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gesture.h"

#define REC_MAGIC	"PTGREC01"
#define REC_VERSION	1
#define REC_HEADER	64
#define FRAME_MAGIC	0x4d524647u	/* "GFRM" */
#define FRAME_HEADER	16
#define SIDE_MIN	16
#define SIDE_MAX	4096

struct rec_header {
	char magic[8];
	uint32_t version, header_bytes, ncams, width, height, fps, nframes;
	uint32_t frame_bytes;
	uint64_t seed;
	uint32_t crc;
	uint8_t reserved[12];
};
_Static_assert(sizeof(struct rec_header) == REC_HEADER, "header layout");
_Static_assert(sizeof(struct gesture_cam) == 80, "camera layout");

struct frame_header {
	uint32_t magic, index, bytes, crc;
};

struct gesture_rec {
	char *path;
	int fd;
	struct gesture_rig rig;
	uint32_t nframes, frame_bytes, header_bytes;
	void *buf;	/* one frame record */
};

uint32_t gesture_crc32(uint32_t crc, const void *data, size_t len)
{
	static uint32_t table[256];
	static int ready;
	const uint8_t *p = data;
	size_t i;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		uint32_t n, c;
		int k;

		for (n = 0; n < 256; n++) {
			for (c = n, k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[n] = c;	/* the same values from any thread */
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t header_crc(const struct rec_header *h,
			   const struct gesture_cam *cams)
{
	struct rec_header copy = *h;

	copy.crc = 0;
	return gesture_crc32(gesture_crc32(0, &copy, sizeof(copy)), cams,
			     h->ncams * sizeof(*cams));
}

/* See gesture.h. */
int gesture_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read exactly @n bytes at @off; *@got tells how many there were. */
static int read_at(int fd, void *p, size_t n, off_t off, size_t *got)
{
	char *c = p;

	*got = 0;
	while (*got < n) {
		ssize_t r = pread(fd, c + *got, n - *got, off + (off_t)*got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

int gesture_rec_write(const char *path, const struct gesture_rig *rig,
		      uint64_t seed, uint32_t nframes)
{
	const size_t plane = (size_t)rig->width * rig->height;
	const size_t payload = gesture_rig_frame_pixels(rig) * sizeof(uint16_t);
	struct gesture_scene *scene = NULL;
	struct rec_header h = { .magic = REC_MAGIC };
	uint16_t *frame, *depth[GESTURE_CAMS_MAX];
	uint32_t i, k;
	int fd, err;

	frame = malloc(payload);
	if (!frame)
		return -ENOMEM;
	for (k = 0; k < rig->ncams; k++)
		depth[k] = frame + k * plane;
	err = gesture_scene_open(rig, seed, &scene);
	if (err)
		goto err_free;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		goto err_scene;
	}
	h.version = REC_VERSION;
	h.header_bytes = REC_HEADER + rig->ncams * sizeof(struct gesture_cam);
	h.ncams = rig->ncams;
	h.width = rig->width;
	h.height = rig->height;
	h.fps = rig->fps;
	h.nframes = nframes;
	h.frame_bytes = (uint32_t)payload;
	h.seed = seed;
	h.crc = header_crc(&h, rig->cam);
	err = gesture_write_all(fd, &h, sizeof(h));
	if (!err)
		err = gesture_write_all(fd, rig->cam, rig->ncams * sizeof(rig->cam[0]));
	for (i = 0; i < nframes && !err; i++) {
		struct frame_header fh = { FRAME_MAGIC, i, (uint32_t)payload, 0 };

		gesture_scene_render(scene, i, depth);
		fh.crc = gesture_crc32(0, frame, payload);
		err = gesture_write_all(fd, &fh, sizeof(fh));
		if (!err)
			err = gesture_write_all(fd, frame, payload);
	}
	if (close(fd) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "%s: writing: %s\n", path, strerror(-err));
err_scene:
	gesture_scene_close(scene);
err_free:
	free(frame);
	return err;
}

/* "<path>: <message>" on stderr; returns -EINVAL (the file is bad). */
static int bad(const struct gesture_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct gesture_rec *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", r->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static bool cam_ok(const struct gesture_cam *c, const struct rec_header *h)
{
	const float *f = &c->fx;
	size_t i;

	for (i = 0; i < offsetof(struct gesture_cam, width) / sizeof(float); i++)
		if (!__builtin_isfinite(f[i]))
			return false;
	return c->fx > 0.0f && c->fy > 0.0f && c->width == (int32_t)h->width &&
	       c->height == (int32_t)h->height && c->zmin_mm >= 0.0f &&
	       c->zmax_mm > c->zmin_mm && __builtin_isfinite(c->zmax_mm);
}

/* The header's fields, in the order a reader depends on them. */
static int check_header(struct gesture_rec *r, const struct rec_header *h,
			size_t got)
{
	uint64_t frame_bytes;

	if (got >= sizeof(h->magic) && memcmp(h->magic, REC_MAGIC, 8))
		return bad(r, "not a gesture recording (bad magic)");
	if (got < sizeof(*h))
		return bad(r, "truncated: the header has %zu of %zu bytes",
			   got, sizeof(*h));
	if (h->version != REC_VERSION)
		return bad(r, "recording version %u, this program reads %u",
			   h->version, REC_VERSION);
	if (h->ncams < GESTURE_CAMS_MIN || h->ncams > GESTURE_CAMS_MAX)
		return bad(r, "corrupt header: %u cameras (%d..%d)", h->ncams,
			   GESTURE_CAMS_MIN, GESTURE_CAMS_MAX);
	if (h->width < SIDE_MIN || h->width > SIDE_MAX ||
	    h->height < SIDE_MIN || h->height > SIDE_MAX)
		return bad(r, "corrupt header: image %ux%u (each side %d..%d)",
			   h->width, h->height, SIDE_MIN, SIDE_MAX);
	if (h->fps < 1 || h->fps > 1000)
		return bad(r, "corrupt header: %u frames per second", h->fps);
	if (h->nframes < 1)
		return bad(r, "corrupt header: no frames");
	frame_bytes = (uint64_t)h->ncams * h->width * h->height * 2;
	if (h->frame_bytes != frame_bytes)
		return bad(r, "corrupt header: %u bytes per frame, %llu expected",
			   h->frame_bytes, (unsigned long long)frame_bytes);
	if (h->header_bytes != REC_HEADER + h->ncams * sizeof(struct gesture_cam))
		return bad(r, "corrupt header: header of %u bytes", h->header_bytes);
	return 0;
}

int gesture_rec_open(const char *path, struct gesture_rec **out)
{
	struct rec_header h;
	struct gesture_rec *r;
	uint64_t want, have;
	struct stat st;
	size_t got;
	uint32_t k;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->path = strdup(path);
	if (!r->path) {
		err = -ENOMEM;
		goto err_free;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		goto err_free_path;
	}
	memset(&h, 0, sizeof(h));
	err = read_at(r->fd, &h, sizeof(h), 0, &got);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		goto err_close;
	}
	err = check_header(r, &h, got);
	if (err)
		goto err_close;
	err = read_at(r->fd, r->rig.cam, h.ncams * sizeof(r->rig.cam[0]),
		      sizeof(h), &got);
	if (!err && got < h.ncams * sizeof(r->rig.cam[0]))
		err = bad(r, "truncated: the camera table has %zu of %zu bytes",
			  got, h.ncams * sizeof(r->rig.cam[0]));
	if (!err && header_crc(&h, r->rig.cam) != h.crc)
		err = bad(r, "corrupt header: checksum mismatch");
	for (k = 0; k < h.ncams && !err; k++)
		if (!cam_ok(&r->rig.cam[k], &h))
			err = bad(r, "corrupt header: camera %u's parameters", k);
	if (err)
		goto err_close;
	if (fstat(r->fd, &st)) {
		err = -errno;
		goto err_close;
	}
	want = h.header_bytes + (uint64_t)h.nframes * (FRAME_HEADER + h.frame_bytes);
	have = (uint64_t)st.st_size;
	if (have < want) {
		uint64_t whole = (have - h.header_bytes) / (FRAME_HEADER + h.frame_bytes);

		err = bad(r, "truncated: %llu of %u frames whole (frame %llu has %llu of %u bytes)",
			  (unsigned long long)whole, h.nframes,
			  (unsigned long long)whole,
			  (unsigned long long)((have - h.header_bytes) %
					       (FRAME_HEADER + h.frame_bytes)),
			  FRAME_HEADER + h.frame_bytes);
		goto err_close;
	}
	if (have > want) {
		err = bad(r, "corrupt: %llu bytes after the last frame",
			  (unsigned long long)(have - want));
		goto err_close;
	}
	r->buf = malloc(FRAME_HEADER + (size_t)h.frame_bytes);
	if (!r->buf) {
		err = -ENOMEM;
		goto err_close;
	}
	r->rig.ncams = h.ncams;
	r->rig.width = h.width;
	r->rig.height = h.height;
	r->rig.fps = h.fps;
	r->nframes = h.nframes;
	r->frame_bytes = h.frame_bytes;
	r->header_bytes = h.header_bytes;
	*out = r;
	return 0;

err_close:
	close(r->fd);
err_free_path:
	free(r->path);
err_free:
	free(r);
	return err;
}

const struct gesture_rig *gesture_rec_rig(const struct gesture_rec *r)
{
	return &r->rig;
}

uint32_t gesture_rec_frames(const struct gesture_rec *r)
{
	return r->nframes;
}

int gesture_rec_read(struct gesture_rec *r, uint32_t frame,
		     uint16_t *const depth[])
{
	const size_t rec = FRAME_HEADER + (size_t)r->frame_bytes;
	const size_t plane = r->frame_bytes / r->rig.ncams;
	struct frame_header fh;
	size_t got;
	uint32_t k;
	int err;

	if (frame >= r->nframes)
		return bad(r, "frame %u asked of %u", frame, r->nframes);
	err = read_at(r->fd, r->buf, rec, r->header_bytes + (off_t)frame * rec,
		      &got);
	if (err) {
		fprintf(stderr, "%s: frame %u: %s\n", r->path, frame, strerror(-err));
		return err;
	}
	if (got < rec)	/* the file shrank since it was opened */
		return bad(r, "truncated: frame %u has %zu of %zu bytes", frame,
			   got, rec);
	memcpy(&fh, r->buf, sizeof(fh));
	if (fh.magic != FRAME_MAGIC || fh.index != frame ||
	    fh.bytes != r->frame_bytes)
		return bad(r, "frame %u: corrupt record header", frame);
	if (gesture_crc32(0, (char *)r->buf + FRAME_HEADER, r->frame_bytes) != fh.crc)
		return bad(r, "frame %u: checksum mismatch (corrupt data)", frame);
	for (k = 0; k < r->rig.ncams; k++)
		memcpy(depth[k], (char *)r->buf + FRAME_HEADER + k * plane, plane);
	return 0;
}

void gesture_rec_close(struct gesture_rec *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->buf);
	free(r->path);
	free(r);
}
