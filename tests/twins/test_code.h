/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * test_code.h - the "code" of the tests' GPU ptasks on the cpu and sim
 * backends.  Those run the host twin bound to exactly these bytes
 * (terminating NUL included: pass sizeof(ptask_test_code)), so a test
 * that sends anything else gets no twin: the wrong-twin tests do that.
 */
#ifndef PTASK_TESTS_TEST_CODE_H
#define PTASK_TESTS_TEST_CODE_H

static const char ptask_test_code[] =
	"// the tests' kernels: ptask_copy, vec_add, vec_scale (tests/twins/twin.c)\n";

#endif /* PTASK_TESTS_TEST_CODE_H */
