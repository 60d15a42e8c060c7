// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * passwd.c - read a password (sources in passwd.h).  The first line is
 * the password, without its line end; an empty password is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "passwd.h"

/* One line from @fd, byte by byte so nothing after it is consumed. */
static int read_line(int fd, char *pw, size_t pwsz)
{
	size_t n = 0;

	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0 || c == '\n')
			break;
		if (n + 1 >= pwsz)
			return -E2BIG;
		pw[n++] = c;
	}
	if (n && pw[n - 1] == '\r')
		n--;
	pw[n] = '\0';
	return n ? 0 : -ENODATA;
}

static int read_tty(const char *prompt, char *pw, size_t pwsz)
{
	struct termios old, quiet;
	int fd, ret;

	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (tcgetattr(fd, &old)) {
		ret = -errno;
		goto out;
	}
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	/* echo off before the prompt shows: whatever is typed after it is unseen */
	if (tcsetattr(fd, TCSAFLUSH, &quiet) || write(fd, prompt, strlen(prompt)) < 0) {
		ret = -errno;
		goto out;
	}
	ret = read_line(fd, pw, pwsz);
	tcsetattr(fd, TCSAFLUSH, &old);
	if (write(fd, "\n", 1) < 0)
		ret = ret ? ret : -errno;
out:
	close(fd);
	return ret;
}

static int read_once(const char *passfile, const char *prompt, char *pw, size_t pwsz)
{
	int fd, ret;

	if (passfile && strcmp(passfile, "-")) {
		fd = open(passfile, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = read_line(fd, pw, pwsz);
		close(fd);
		return ret;
	}
	if (!passfile && isatty(STDIN_FILENO))
		return read_tty(prompt, pw, pwsz);
	return read_line(STDIN_FILENO, pw, pwsz);
}

/**
 * eg_password_read() - get a password
 * @passfile: file to read it from, "-" for stdin, NULL for tty/stdin
 * @prompt: prompt shown on the terminal
 * @confirm: from a terminal, ask twice and require the same answer
 * @pw: destination
 * @pwsz: its size
 *
 * Return: 0, -ENODATA for an empty password, -EINVAL when the two
 * entries differ, -E2BIG, -errno.
 */
int eg_password_read(const char *passfile, const char *prompt, int confirm, char *pw,
		     size_t pwsz)
{
	char again[EG_PASS_MAX];
	int ret;

	ret = read_once(passfile, prompt, pw, pwsz);
	if (ret || !confirm || passfile || !isatty(STDIN_FILENO))
		return ret;
	ret = read_once(NULL, "Repeat password: ", again, sizeof(again));
	if (!ret && strcmp(pw, again))
		ret = -EINVAL;
	OPENSSL_cleanse(again, sizeof(again));
	return ret;
}
