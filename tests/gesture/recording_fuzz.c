// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * recording_fuzz.c - libFuzzer target for catusb's recording reader
 * (examples/gesture/recording.c): open the input as a recording and read
 * every frame.  Any verdict is fine; a crash, a leak, undefined
 * behaviour or an allocation beyond the input's size is not.
 *
 * The first input byte lets the fuzzer past the checksums: bit 0 sets
 * the header's CRC to the right one, bit 1 every frame's, so the checks
 * behind them (sizes, counts, camera parameters, record headers) get
 * explored too.  The rest is the file.  Seed: tests/gesture/corpus/
 * (a 1-camera 16x16 recording of 2 frames).  Built and run briefly by
 * tests/gesture/run.sh (make check-gesture).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "examples/gesture/gesture.h"

#define HDR		64
#define CAM		80
#define FRAME_HDR	16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Put right checksums where @fix asks, as recording.c computes them. */
static void fix_crcs(uint8_t *f, size_t n, unsigned int fix)
{
	uint32_t ncams, fb, nframes, crc, i;
	size_t hb, off;

	if (n < HDR)
		return;
	ncams = get32(f + 16);
	nframes = get32(f + 32);
	fb = get32(f + 36);
	if (ncams > GESTURE_CAMS_MAX)
		return;
	hb = HDR + (size_t)ncams * CAM;
	if ((fix & 1) && n >= hb) {
		memset(f + 48, 0, 4);
		crc = gesture_crc32(gesture_crc32(0, f, HDR), f + HDR, hb - HDR);
		memcpy(f + 48, &crc, 4);
	}
	if (!(fix & 2))
		return;
	for (i = 0, off = hb; i < nframes && off + FRAME_HDR + fb <= n;
	     i++, off += FRAME_HDR + fb) {
		crc = gesture_crc32(0, f + off + FRAME_HDR, fb);
		memcpy(f + off + 12, &crc, 4);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t *depth[GESTURE_CAMS_MAX], *buf;
	const struct gesture_rig *rig;
	struct gesture_rec *rec;
	char path[64];
	uint8_t *copy;
	uint32_t i, k;
	int fd;

	if (size < 1)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	fix_crcs(copy, size - 1, data[0]);
	fd = memfd_create("rec", MFD_CLOEXEC);
	if (fd < 0 || write(fd, copy, size - 1) != (ssize_t)(size - 1)) {
		if (fd >= 0)
			close(fd);
		free(copy);
		return 0;
	}
	free(copy);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (gesture_rec_open(path, &rec) == 0) {
		rig = gesture_rec_rig(rec);
		/* whatever the header says, it was checked against the size */
		if (gesture_rig_frame_pixels(rig) * 2 > size)
			__builtin_trap();
		buf = malloc(gesture_rig_frame_pixels(rig) * 2);
		for (k = 0; buf && k < rig->ncams; k++)
			depth[k] = buf + k * (size_t)rig->width * rig->height;
		for (i = 0; buf && i < gesture_rec_frames(rec); i++)
			if (gesture_rec_read(rec, i, depth))
				break;
		free(buf);
		gesture_rec_close(rec);
	}
	close(fd);
	return 0;
}
