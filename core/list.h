/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * list.h - the core's doubly linked list: the kernel's own <linux/list.h>
 * in ptask.ko, a small equivalent (core/user/list.h) in user space.
 * Include ptask_os.h first.
 */
#ifndef PTASK_LIST_H
#define PTASK_LIST_H

#ifdef __KERNEL__
#include <linux/list.h>

#define ptask_list			list_head
#define ptask_container_of		container_of
#define ptask_list_init			INIT_LIST_HEAD
#define ptask_list_empty		list_empty
#define ptask_list_add_tail		list_add_tail
/* Unlinks and leaves the node pointing at itself: a second del is safe. */
#define ptask_list_del			list_del_init
#define ptask_list_entry		list_entry
#define ptask_list_first		list_first_entry
#define ptask_list_for_each		list_for_each
#define ptask_list_for_each_safe	list_for_each_safe
#else
#include "user/list.h"
#endif

#endif /* PTASK_LIST_H */
