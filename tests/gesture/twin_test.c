// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin_test - the host twins of the gesture kernels
 * (examples/gesture/twin.c), called as ptaskd's cpu backend calls them:
 *
 *   - found by entry name and the demo's PTX in the library's table;
 *   - gesture_xform and gesture_filter (over the stacked cameras, and
 *     over one camera as the ptask graph's filter per camera runs it)
 *     give bit for bit what the example's CPU stages give (the golden
 *     test's premise);
 *   - every bad parameter is refused, in the order the code checks them:
 *     a wrong parameter count or size (-EINVAL), a shape out of range
 *     (-EINVAL), a buffer smaller than the shape says (-EFAULT), a NULL
 *     buffer (-EFAULT); and the cost functions refuse the same shapes.
 *
 * TAP output; last line "N passed, M failed, 0 skipped".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/ptask_twin.h"
#include "examples/gesture/gesture.h"

#define MAX_PARAMS	8

extern const struct ptask_twin_table gesture_twin_table;

#define W	64
#define H	48

static int n_tests, n_failed;

static void result(int ok, const char *what)
{
	n_tests++;
	n_failed += !ok;
	printf("%sok %d - %s\n", ok ? "" : "not ok ", n_tests, what);
}

/* Every host pointer of this test is a whole allocation of known size. */
struct alloc {
	const void *p;
	uint64_t bytes;
};
static struct alloc allocs[16];
static int nallocs;

static void *track(void *p, uint64_t bytes)
{
	allocs[nallocs].p = p;
	allocs[nallocs++].bytes = bytes;
	return p;
}

static uint64_t extent(void *ctx, const void *p)
{
	int i;

	(void)ctx;
	for (i = 0; i < nallocs; i++)
		if ((const char *)p >= (const char *)allocs[i].p &&
		    (const char *)p < (const char *)allocs[i].p + allocs[i].bytes)
			return allocs[i].bytes -
			       (uint64_t)((const char *)p - (const char *)allocs[i].p);
	return 0;
}

/* A launch of @n parameters: pointers (8-byte u64 addresses) or structs. */
struct call {
	struct ptask_twin_call c;
	void *params[MAX_PARAMS];
	uint32_t param_bytes[MAX_PARAMS];
	uint64_t addr[MAX_PARAMS];
};

static void call_init(struct call *k)
{
	memset(k, 0, sizeof(*k));
	k->c.params = k->params;
	k->c.param_bytes = k->param_bytes;
	k->c.extent = extent;
}

static void arg_ptr(struct call *k, const void *p)
{
	uint32_t i = k->c.nparams++;

	k->addr[i] = (uint64_t)(uintptr_t)p;
	k->params[i] = &k->addr[i];
	k->param_bytes[i] = sizeof(uint64_t);
}

static void arg_val(struct call *k, void *v, uint32_t bytes)
{
	uint32_t i = k->c.nparams++;

	k->params[i] = v;
	k->param_bytes[i] = bytes;
}

/* The twin of @entry for the demo's PTX, as ptaskd would find it. */
static const struct ptask_twin *twin(const char *entry)
{
	const struct ptask_twin_table *t = &gesture_twin_table;
	size_t len = (size_t)(gesture_ptx_end - gesture_ptx);
	uint32_t i;

	for (i = 0; i < t->count; i++)
		if (!strcmp(t->twins[i].entry, entry) &&
		    (size_t)(t->twins[i].code_end - t->twins[i].code) == len &&
		    !memcmp(t->twins[i].code, gesture_ptx, len))
			return &t->twins[i];
	return NULL;
}

static int run(const char *entry, struct call *k)
{
	const struct ptask_twin *t = twin(entry);

	return t ? t->run(&k->c) : -ENOENT;
}

/* The cost function (the sim backend's model) with the same parameters. */
static int cost(const char *entry, struct call *k)
{
	const struct ptask_twin *t = twin(entry);
	struct ptask_twin_cost c;

	return t ? t->cost(&k->c, &c) : -ENOENT;
}

int main(void)
{
	const size_t plane = (size_t)W * H;
	struct gesture_rig rig;
	struct gesture_scene *scene;
	struct gesture_filter_shape shape, bad, one;
	struct gesture_cam cam, badcam;
	uint16_t *depth[2];
	struct gesture_point *cloud, *ref, *out, *ref_out;
	struct call k;
	int i;

	/* a small rig: the defaults' optics scaled to W x H */
	gesture_rig_default(&rig, 2);
	rig.width = W;
	rig.height = H;
	for (i = 0; i < 2; i++) {
		rig.cam[i].width = W;
		rig.cam[i].height = H;
		rig.cam[i].fx = rig.cam[i].fy = 525.0f * W / GESTURE_WIDTH;
		rig.cam[i].cx = (W - 1) / 2.0f;
		rig.cam[i].cy = (H - 1) / 2.0f;
	}
	if (gesture_scene_open(&rig, 7, &scene))
		return 1;
	depth[0] = track(malloc(2 * plane * 2), 2 * plane * 2);
	depth[1] = depth[0] + plane;
	cloud = track(calloc(2 * plane, sizeof(*cloud)), 2 * plane * sizeof(*cloud));
	out = track(calloc(2 * plane, sizeof(*out)), 2 * plane * sizeof(*out));
	ref = calloc(2 * plane, sizeof(*ref));
	ref_out = calloc(2 * plane, sizeof(*ref_out));
	gesture_scene_render(scene, 18, depth);	/* mid-push: hand near */
	gesture_filter_shape_init(&shape, &rig);
	for (i = 0; i < 2; i++) {
		gesture_xform_rows(&rig.cam[i], depth[i], ref + i * plane, 0, H);
		gesture_filter_rows(&shape, ref + i * plane, ref_out + i * plane, 0, H);
	}

	/* --- results equal the example's CPU stages --------------------- */
	for (i = 0; i < 2; i++) {
		cam = rig.cam[i];
		call_init(&k);
		arg_ptr(&k, depth[i]);
		arg_ptr(&k, cloud + i * plane);
		arg_val(&k, &cam, sizeof(cam));
		result(run("gesture_xform", &k) == 0 &&
		       !memcmp(cloud + i * plane, ref + i * plane, plane * sizeof(*cloud)),
		       "gesture_xform: bit-identical to gesture_xform_rows");
	}
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, out);
	arg_val(&k, &shape, sizeof(shape));
	result(run("gesture_filter", &k) == 0 &&
	       !memcmp(out, ref_out, 2 * plane * sizeof(*out)),
	       "gesture_filter (stacked): bit-identical to gesture_filter_rows");
	result(cost("gesture_filter", &k) == 0, "gesture_filter's cost: 0 for good parameters");
	memset(out, 0, 2 * plane * sizeof(*out));
	one = shape;
	one.ncams = 1;
	for (i = 0; i < 2; i++) {
		call_init(&k);
		arg_ptr(&k, cloud + i * plane);
		arg_ptr(&k, out + i * plane);
		arg_val(&k, &one, sizeof(one));
		result(run("gesture_filter", &k) == 0 &&
		       !memcmp(out + i * plane, ref_out + i * plane, plane * sizeof(*out)),
		       "gesture_filter (one camera, as a filter ptask per camera): bit-identical to gesture_filter_rows");
	}
	result(gesture_twin_table.abi == PTASK_TWIN_ABI && gesture_twin_table.count == 2 &&
	       !twin("gesture_nope") && !twin("gesture_filter2"),
	       "the table: twin ABI, two twins, no others");

	/* --- bad parameters: xform ----------------------------------------- */
	cam = rig.cam[0];
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, cloud);
	arg_val(&k, &cam, sizeof(cam) - 4);
	result(run("gesture_xform", &k) == -EINVAL, "xform: camera parameter of 76 bytes: -EINVAL");
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, cloud);
	result(run("gesture_xform", &k) == -EINVAL, "xform: no camera parameter: -EINVAL");
	badcam = cam;
	badcam.width = 0;
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, cloud);
	arg_val(&k, &badcam, sizeof(badcam));
	result(run("gesture_xform", &k) == -EINVAL, "xform: width 0: -EINVAL");
	result(cost("gesture_xform", &k) == -EINVAL, "xform's cost: width 0: -EINVAL");
	badcam = cam;
	badcam.height = 20000;
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, cloud);
	arg_val(&k, &badcam, sizeof(badcam));
	result(run("gesture_xform", &k) == -EINVAL, "xform: height 20000: -EINVAL");
	call_init(&k);
	arg_val(&k, &i, sizeof(i));	/* a 4-byte value where a pointer goes */
	arg_ptr(&k, cloud);
	arg_val(&k, &cam, sizeof(cam));
	result(run("gesture_xform", &k) == -EINVAL, "xform: depth passed by value: -EINVAL");
	badcam = cam;
	badcam.height = 4 * H;	/* more rows than the buffers hold */
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, cloud);
	arg_val(&k, &badcam, sizeof(badcam));
	result(run("gesture_xform", &k) == -EFAULT, "xform: depth buffer smaller than the image: -EFAULT");
	call_init(&k);
	arg_ptr(&k, depth[0]);
	arg_ptr(&k, NULL);
	arg_val(&k, &cam, sizeof(cam));
	result(run("gesture_xform", &k) == -EFAULT, "xform: NULL cloud: -EFAULT");

	/* --- bad parameters: filters ----------------------------------------- */
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, out);
	arg_val(&k, &shape, sizeof(shape) - 4);
	result(run("gesture_filter", &k) == -EINVAL, "filter: shape of 12 bytes: -EINVAL");
	bad = shape;
	bad.ncams = 5;
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, out);
	arg_val(&k, &bad, sizeof(bad));
	result(run("gesture_filter", &k) == -EINVAL, "filter: 5 cameras: -EINVAL");
	result(cost("gesture_filter", &k) == -EINVAL, "filter's cost: 5 cameras: -EINVAL");
	bad.ncams = 0;
	result(run("gesture_filter", &k) == -EINVAL, "filter: 0 cameras: -EINVAL");
	bad = shape;
	bad.inv_sigma2 = -1.0f;
	result(run("gesture_filter", &k) == -EINVAL, "filter: negative 1/sigma^2: -EINVAL");
	bad = shape;
	bad.width = -3;
	result(run("gesture_filter", &k) == -EINVAL, "filter: width -3: -EINVAL");
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, out + plane);	/* room for one camera's plane */
	arg_val(&k, &shape, sizeof(shape));
	result(run("gesture_filter", &k) == -EFAULT, "filter: output smaller than the stack: -EFAULT");
	call_init(&k);
	arg_ptr(&k, cloud + plane);	/* one camera's plane left */
	arg_ptr(&k, out);
	arg_val(&k, &shape, sizeof(shape));
	result(run("gesture_filter", &k) == -EFAULT, "filter: input smaller than the stack: -EFAULT");
	call_init(&k);
	arg_ptr(&k, &bad);	/* memory outside any allocation */
	arg_ptr(&k, out);
	arg_val(&k, &one, sizeof(one));
	result(run("gesture_filter", &k) == -EFAULT, "filter: an input outside device memory: -EFAULT");
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, NULL);
	arg_val(&k, &one, sizeof(one));
	result(run("gesture_filter", &k) == -EFAULT, "filter: NULL output: -EFAULT");
	call_init(&k);
	arg_ptr(&k, cloud);
	arg_ptr(&k, cloud + plane);
	arg_ptr(&k, out);
	arg_val(&k, &shape, sizeof(shape));
	result(run("gesture_filter", &k) == -EINVAL, "filter: four parameters, the shape not third: -EINVAL");

	printf("1..%d\n", n_tests);
	printf("%d passed, %d failed, 0 skipped\n", n_tests - n_failed, n_failed);
	gesture_scene_close(scene);
	free(depth[0]);
	free(cloud);
	free(out);
	free(ref);
	free(ref_out);
	return n_failed ? 1 : 0;
}
