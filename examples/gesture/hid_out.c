// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * hid_out.c - where hidinput's events go: a uinput device (an absolute
 * pointer with a left button, "ptask gesture pointer", which evtest and
 * the desktop see like any mouse), or lines on a stream when there is no
 * /dev/uinput (or the caller asks for them).
 *
 * Only moves and buttons reach uinput (ENTER and LEAVE have no evdev
 * meaning); every event reaches the printed stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/uinput.h>

#include "gesture.h"

int gesture_hid_mode_parse(const char *s, enum gesture_hid_mode *m)
{
	static const char *const names[] = { "auto", "uinput", "print", "none" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*m = (enum gesture_hid_mode)i;
			return 0;
		}
	return -EINVAL;
}

static int abs_setup(int fd, unsigned int code, int max)
{
	struct uinput_abs_setup a = {
		.code = code,
		.absinfo = { .minimum = 0, .maximum = max },
	};

	return ioctl(fd, UI_ABS_SETUP, &a);
}

/* A pointer device on /dev/uinput; -errno when the kernel says no. */
static int uinput_open(void)
{
	struct uinput_setup setup = {
		.id = { .bustype = BUS_VIRTUAL, .vendor = 0x7074, .product = 0x6773 },
		.name = "ptask gesture pointer",
	};
	int fd, err = 0;

	fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) || ioctl(fd, UI_SET_KEYBIT, BTN_LEFT) ||
	    ioctl(fd, UI_SET_EVBIT, EV_ABS) ||
	    ioctl(fd, UI_SET_ABSBIT, ABS_X) || ioctl(fd, UI_SET_ABSBIT, ABS_Y) ||
	    abs_setup(fd, ABS_X, GESTURE_SCREEN_W_PX - 1) ||
	    abs_setup(fd, ABS_Y, GESTURE_SCREEN_H_PX - 1) ||
	    ioctl(fd, UI_DEV_SETUP, &setup) || ioctl(fd, UI_DEV_CREATE))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int gesture_hid_open(struct gesture_hid *h, enum gesture_hid_mode mode,
		     FILE *print_to)
{
	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->out = print_to ? print_to : stdout;
	if (mode == GESTURE_HID_AUTO || mode == GESTURE_HID_UINPUT) {
		int fd = uinput_open();

		if (fd >= 0) {
			h->fd = fd;
			h->mode = GESTURE_HID_UINPUT;
			return 0;
		}
		if (mode == GESTURE_HID_UINPUT) {
			fprintf(stderr, "gesture: /dev/uinput: %s\n", strerror(-fd));
			return fd;
		}
		/* there but refused (permissions, an old kernel): say so */
		if (fd != -ENOENT)
			fprintf(stderr, "gesture: /dev/uinput: %s; printing the events instead\n",
				strerror(-fd));
		mode = GESTURE_HID_PRINT;
	}
	h->mode = mode;
	return 0;
}

static int put(int fd, unsigned int type, unsigned int code, int value)
{
	struct input_event ie = { .type = type, .code = code, .value = value };

	return write(fd, &ie, sizeof(ie)) == sizeof(ie) ? 0 : -errno;
}

int gesture_hid_emit(struct gesture_hid *h, const struct gesture_events *e)
{
	uint32_t i;
	int err = 0;

	if (h->mode == GESTURE_HID_PRINT && e->n) {
		/* at once: a reader follows them live, and a stage process
		 * may be ended (pipes) without a chance to flush */
		gesture_events_write(h->out, e);
		if (fflush(h->out))
			return -errno;
	}
	if (h->mode != GESTURE_HID_UINPUT)
		return 0;
	for (i = 0; i < e->n && !err; i++) {
		const struct gesture_event *ev = &e->ev[i];

		switch (ev->type) {
		case GESTURE_EV_MOVE:
			err = put(h->fd, EV_ABS, ABS_X, ev->x);
			err = err ? err : put(h->fd, EV_ABS, ABS_Y, ev->y);
			break;
		case GESTURE_EV_DOWN:
		case GESTURE_EV_UP:
			err = put(h->fd, EV_KEY, BTN_LEFT,
				  ev->type == GESTURE_EV_DOWN);
			break;
		default:
			continue;
		}
		err = err ? err : put(h->fd, EV_SYN, SYN_REPORT, 0);
	}
	/* a reader too slow for the device's queue is not our failure */
	return err == -EAGAIN ? 0 : err;
}

void gesture_hid_close(struct gesture_hid *h)
{
	if (h->fd >= 0) {
		ioctl(h->fd, UI_DEV_DESTROY);
		close(h->fd);
	}
	h->fd = -1;
	if (h->mode == GESTURE_HID_PRINT)
		fflush(h->out);
}
